"""The answer parser value by value (issue 18): every error says what and why, repairs touch only what they must,
evidence fields are read under their documented names, and the schemas are exactly what the grammar needs."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from agent_schemas import EvidenceItem, ForecastParseError
from agent_tools import extract_json_objects, parse_forecast, parse_json, parse_probability, probability_schema, strip_reasoning
from agent_schemas import SearchResult
from agent_tools.parsing import (CLAIM_CHARS, RATIONALE_CHARS, evidence_item_schema, evidence_list_schema,
                                 forecast_json_schema, parse_evidence, text_schema)

# --- probabilities: every refusal names the field, the value and the reason ---------------------------------------


@pytest.mark.parametrize("value, field, message", [
    (None, "p_yes", "p_yes is missing, got None"),
    (True, "p_yes", "p_yes must be a number, not a boolean, got True"),
    ("likely", "p_yes", "p_yes is not a number, got 'likely'"),
    ("%", "p_yes", "p_yes is not a number, got '%'"),
    (10 ** 400, "p_yes", "p_yes is out of range, got " + str(10 ** 400)),
    ([0.3], "p_yes", "p_yes must be a number, not list, got [0.3]"),
    (float("nan"), "p_yes", "p_yes must be finite, got nan"),
    ("-inf", "p_yes", "p_yes must be finite, got '-inf'"),
    (100.5, "p_yes_percent", "p_yes_percent must be a percentage in [0, 100], got 100.5"),
    ("101%", "p_yes", "p_yes must be a percentage in [0, 100], got '101%'"),
    (-1, "bull_p_yes_percent", "bull_p_yes_percent must be a percentage in [0, 100], got -1"),
    (0.35, "p_yes_percent", "p_yes_percent is ambiguous in a percent field (a fraction or a percent below 1?); "
                            "write fractions as p_yes or with a % sign, got 0.35"),
    (1.5, "p_yes", "p_yes must be a probability in [0, 1] (no clamping), got 1.5"),
    (-0.0001, "p_yes", "p_yes must be a probability in [0, 1] (no clamping), got -0.0001"),
])
def test_refusals_say_what_and_why(value, field, message):
    with pytest.raises(ForecastParseError) as ei:
        parse_probability(value, field=field, raw_text="the answer")
    assert ei.value.message == message
    assert (ei.value.field, ei.value.raw_text) == (field, "the answer")
    assert ei.value.value is value or ei.value.value == value or value != value


def test_the_default_field_and_raw_text():
    with pytest.raises(ForecastParseError) as ei:
        parse_probability("2")
    assert (ei.value.field, ei.value.raw_text, ei.value.value) == ("p_yes", "'2'", "2")


@pytest.mark.parametrize("value, kwargs, expected", [
    (100, {"field": "p_yes_percent"}, 1.0),
    (100.0, {"field": "p_yes_percent"}, 1.0),
    ("100%", {}, 1.0),
    ("0.5%", {"field": "p_yes_percent"}, 0.005),  # a % sign is explicit: not ambiguous
    (" 35 %", {}, 0.35),
    (1, {"field": "p_yes_percent"}, 0.01),
    (0, {"field": "p_yes_percent"}, 0.0),
    (1.5, {"field": "p_yes_percent"}, 0.015),  # a decimal percent above 1 is not ambiguous
    (35, {"percent": True}, 0.35),  # forced percent units
    (0.35, {"field": "p_yes_percent", "percent": False}, 0.35),  # forced fraction units
    (1.0, {}, 1.0),
    ("1", {}, 1.0),
    (0.999, {}, 0.999),
])
def test_accepted_forms(value, kwargs, expected):
    assert parse_probability(value, **kwargs) == pytest.approx(expected, abs=1e-15)


def test_forced_fractions_refuse_percent_values():
    with pytest.raises(ForecastParseError, match="must be a probability in"):
        parse_probability(35, field="p_yes_percent", percent=False)


# --- forecasts: candidates must agree; the last one gives the text -----------------------------------------------


def test_agreement_is_within_half_a_percentage_point():
    assert parse_forecast('{"p_yes": 0.0, "p_yes_percent": "0.5%"}').p_yes == 0.005  # 0.005 apart: one answer
    f = parse_forecast('{"p_yes": 0.35} then {"p_yes": 0.354, "rationale": "  second  "}')
    assert (f.p_yes, f.rationale) == (0.354, "second")  # the last value and text
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast('{"p_yes": 0.35} then {"p_yes": 0.356}')
    assert ei.value.message == "the answer gives 2 different probabilities (0.35, 0.356): refusing to pick one"
    assert (ei.value.field, ei.value.value, ei.value.raw_text) == ("p_yes", [0.35, 0.356], '{"p_yes": 0.35} then {"p_yes": 0.356}')


def test_objects_without_the_probability_are_not_candidates():
    f = parse_forecast('{"p_yes": 0.4, "rationale": "r"} {"p_yes": null, "rationale": "no value"} {"notes": "x"}')
    assert (f.p_yes, f.rationale) == (0.4, "r")
    f = parse_forecast('{"bull_p_yes_percent": 70, "argument": "up"}', prob_field="bull_p_yes")
    assert (f.p_yes, f.data) == (0.7, {"bull_p_yes_percent": 70, "argument": "up"})


def test_a_missing_probability_names_the_field():
    text = '{"probability": 0.3}'
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast(text, prob_field="bear_p_yes")
    assert ei.value.message == f"no JSON object in the answer has any of ['bear_p_yes', 'bear_p_yes_percent']: {text!r}"
    assert (ei.value.field, ei.value.value, ei.value.raw_text) == ("bear_p_yes", None, text)
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast('{"p_yes": null}')
    assert ei.value.message == "p_yes is missing: '{\"p_yes\": null}'" and (ei.value.field, ei.value.value) == ("p_yes", None)
    long = '{"p_yes": null}' + " " * 300
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast(long)
    assert (ei.value.message, ei.value.raw_text) == (f"p_yes is missing: {long[:200]!r}", long)


def test_a_structured_rationale_is_kept_as_json_text():
    f = parse_forecast('{"p_yes": 0.2, "rationale": {"why": "café", "n": 2}}')
    assert f.rationale == '{"why": "café", "n": 2}'
    assert parse_forecast('{"p_yes": 0.2, "rationale": null}').rationale == ""


# --- JSON extraction and repair ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ('{"r": "a \\" }, b", "p_yes": 0.5,}', {"r": 'a " }, b', "p_yes": 0.5}),  # escaped quote inside a repaired span
    ('{"r": "x,}", "p_yes": 0.5,}', {"r": "x,}", "p_yes": 0.5}),  # a comma in a string is not a trailing comma
    ('{"r": "a\\\\", "p_yes": 0.5,}', {"r": "a\\", "p_yes": 0.5}),  # an escaped backslash ends before the quote
    ('{"l": [1, 2,  ], "p_yes": 0.5 ,\n}', {"l": [1, 2], "p_yes": 0.5}),
    ("{'r': 'it\\'s {x}', 'p_yes': 0.5,}", {"r": "it's {x}", "p_yes": 0.5}),  # a Python literal, repaired
    ('{"r": "70% sure", "p_yes": 70%}', {"r": "70% sure", "p_yes": "70%"}),  # bare percent quoted, not the one in text
    ('{"r": "say \\"5%\\"", "p_yes": 5 %}', {"r": 'say "5%"', "p_yes": "5%"}),
    ("{'r': '8%', 'p_yes': 8%}", {"r": "8%", "p_yes": "8%"}),
    ('{"p_yes": 0.1, "a": [1, {"b": 2}],}', {"p_yes": 0.1, "a": [1, {"b": 2}]}),
])
def test_repairs_change_only_what_breaks_json(text, expected):
    assert extract_json_objects(text) == [expected]


def test_objects_are_listed_in_order_and_unreadable_spans_skipped_whole():
    text = 'a {"x": 1} b {"y": 1 2} c {"z": {"w": 1}} d [1, 2] e {"v": 3}'
    assert extract_json_objects(text) == [{"x": 1}, {"z": {"w": 1}}, {"v": 3}]
    assert extract_json_objects('{"a": 1} {"b": ') == [{"a": 1}]  # an unclosed object ends the scan
    assert extract_json_objects("no braces") == [] and extract_json_objects("{'a': True, 'b': None}") == [{"a": True, "b": None}]
    # a bare word cannot be read: the object is skipped whole (its inner object too), the scan goes on after it
    assert extract_json_objects('{"a": X, "c": {"d": 1}} then {"b": 1}') == [{"b": 1}]
    assert extract_json_objects("{1: 2,}") == [{1: 2}]  # no quote at all: a Python literal, repaired
    assert extract_json_objects('{"p_yes": 0.3,}; more') == [{"p_yes": 0.3}]  # the repaired span ends at its brace


def test_parse_json_returns_the_one_object_with_a_key():
    text = '{"queries": ["a"]} {"other": 1} {"queries": ["a"]} {"tail": 0}'
    assert parse_json(text, required_keys=("queries",)) == {"queries": ["a"]}  # one object given twice
    assert parse_json(text, required_keys=("missing", "other")) == {"other": 1}
    assert parse_json('{"tail": 0} {"tail": 0}') == {"tail": 0}
    with pytest.raises(ForecastParseError) as ei:
        parse_json(text, required_keys=("disagreements", "x"))
    assert ei.value.message == f"no JSON object in the answer has any of ['disagreements', 'x']: {text!r}"
    assert (ei.value.field, ei.value.value) == ("disagreements", None)
    long = '{"a": 1}' + " " * 300
    with pytest.raises(ForecastParseError) as ei:
        parse_json(long, required_keys=("b",))
    assert ei.value.message.endswith(repr(long[:200])) and ei.value.raw_text == long
    with pytest.raises(ForecastParseError) as ei:
        parse_json(text, required_keys=("tail", "queries"))
    assert ei.value.message == f"the answer gives 3 JSON objects with tail or queries that differ: refusing to pick one: {text!r}"
    assert (ei.value.field, ei.value.value) == ("tail", [{"queries": ["a"]}, {"queries": ["a"]}, {"tail": 0}])


@pytest.mark.parametrize("text, message", [
    ("plain words " * 30, "no JSON object found in the answer: " + repr(("plain words " * 30)[:200])),
    ("<think>{\"p_yes\": 0.3}</think> none", "no JSON object found in the answer after the reasoning block: "
                                            "'<think>{\"p_yes\": 0.3}</think> none'"),
    ('{"a": "b {"c": 1}"}', "the answer's JSON object could not be read (unescaped quotes, unclosed braces?); nothing "
                            "inside it is used: '{\"a\": \"b {\"c\": 1}\"}'"),
    ('<think>x</think>{"p_yes": ', "the answer's JSON object after the reasoning block could not be read (unescaped "
                                   "quotes, unclosed braces?); nothing inside it is used: '<think>x</think>{\"p_yes\": '"),
])
def test_no_readable_object_is_one_clear_error(text, message):
    with pytest.raises(ForecastParseError) as ei:
        parse_json(text)
    assert ei.value.message == message and (ei.value.field, ei.value.raw_text) == ("json", text)


def test_an_answer_that_is_not_text_is_refused():
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast(None)
    assert ei.value.message == "answer must be text, got NoneType"
    assert (ei.value.field, ei.value.raw_text, ei.value.value) == ("json", "None", None)
    with pytest.raises(ForecastParseError) as ei:
        parse_json({"p_yes": 0.3})
    assert (ei.value.message, ei.value.raw_text, ei.value.value) == ("answer must be text, got dict", "{'p_yes': 0.3}", {"p_yes": 0.3})


def test_an_unreadable_object_in_a_long_answer_is_quoted_to_200_characters():
    text = '{"p_yes": X}' + " " * 300
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast(text)
    assert ei.value.message == ("the answer's JSON object could not be read (unescaped quotes, unclosed braces?); nothing "
                                f"inside it is used: {text[:200]!r}") and ei.value.raw_text == text


@pytest.mark.parametrize("text, answer", [
    ("<think>a</think>B<thinking>c</thinking>D", "\nB\nD"),
    ("<Think foo='1'>a</ THINK >b", "\nb"),
    ("draft </think> mid </reasoning> final", " final"),  # everything before the last closing tag
    ("answer <analysis>cut off", "answer "),
    ("x </think> y <scratchpad> z", " y "),
    ("no tags", "no tags"),
])
def test_strip_reasoning(text, answer):
    assert strip_reasoning(text) == answer


# --- evidence ---------------------------------------------------------------------------------------------------------------


def test_evidence_fields_are_read_under_their_documented_names():
    items = parse_evidence([
        {"claim": " A ", "source_url": " https://a.example ", "published": "2024-07-10", "title": " T "},
        {"text": "B", "url": "https://b.example", "date": "2024-07-11T23:30:00-02:00"},
        {"evidence": "C", "source_url": "N/A", "url": "https://c.example", "published": 1700000000, "title": "null"},
        {"claim": "D", "source_url": "None", "title": ""},
        {"claim": {"nested": 1}}, {"claim": ["x"]}, {"claim": "   "}, {"title": "no claim"}, 7, "  ", "E ",
        {"claim": 42, "published": "  "},
    ])
    assert items == [
        EvidenceItem(claim="A", source_url="https://a.example", published=dt.date(2024, 7, 10), title="T"),
        EvidenceItem(claim="B", source_url="https://b.example", published=dt.date(2024, 7, 12)),  # read in UTC
        EvidenceItem(claim="C", source_url="https://c.example"),  # a number is not a date string
        EvidenceItem(claim="D"),
        EvidenceItem(claim="E"),
        EvidenceItem(claim="42"),
    ]


@pytest.mark.parametrize("value, claims", [
    (None, []), ("single claim", ["single claim"]), ({"claim": "one"}, ["one"]), (17, []), ("", []),
    ([{"claim": "a"}, None, {"claim": "b"}], ["a", "b"]),
])
def test_evidence_shapes(value, claims):
    assert [e.claim for e in parse_evidence(value)] == claims


# --- schemas -------------------------------------------------------------------------------------------------------------------


def test_schemas_are_exactly_what_the_grammar_needs():
    assert (RATIONALE_CHARS, CLAIM_CHARS) == (200, 120)
    default = "Probability that the question resolves Yes, as an integer percent (0-100)."
    assert probability_schema() == {"p_yes_percent": {"type": "integer", "enum": list(range(101)), "description": default}}
    assert probability_schema("x_percent", description="Bull's view.") == {
        "x_percent": {"type": "integer", "enum": list(range(101)), "description": "Bull's view."}}
    with pytest.raises(ValueError, match="^field must end with '_percent' \\(percent units are read from the name\\), got 'p'$"):
        probability_schema("p")
    assert text_schema() == {"type": "string", "maxLength": 200} and text_schema(50) == {"type": "string", "maxLength": 50}
    assert evidence_list_schema() == {"type": "array", "maxItems": 2, "items": evidence_item_schema(0)}
    assert evidence_list_schema(0)["maxItems"] == 0
    assert evidence_list_schema(1, 3) == {"type": "array", "maxItems": 1, "items": evidence_item_schema(3)}
    # no URL and no date: a number of the prompt's numbered sources (0 cites none)
    assert evidence_item_schema(3) == {"type": "object", "properties": {
        "claim": {"type": "string", "maxLength": 120}, "source": {"type": "integer", "enum": [0, 1, 2, 3]}},
        "required": ["claim", "source"]}
    assert evidence_item_schema()["properties"]["source"] == {"type": "integer", "enum": [0]}
    with pytest.raises(ValueError, match="^n_sources must be >= 0, got -1$"):
        evidence_item_schema(-1)
    schema = forecast_json_schema(1, 80)
    assert schema == {"type": "object", "properties": {"rationale": {"type": "string", "maxLength": 80},
                                                       "key_evidence": evidence_list_schema(1),
                                                       "confidence": {"type": "string", "enum": ["high", "medium", "low"]},
                                                       "p_yes_percent": probability_schema()["p_yes_percent"]},
                      "required": ["rationale", "key_evidence", "confidence", "p_yes_percent"]}
    assert list(schema["properties"]) == ["rationale", "key_evidence", "confidence", "p_yes_percent"]  # reasons first, number last
    assert forecast_json_schema() is forecast_json_schema()  # one shared object
    assert forecast_json_schema(2, n_sources=4)["properties"]["key_evidence"] == evidence_list_schema(2, 4)
    assert json.dumps(forecast_json_schema()).count('"maxLength": 120') == 1


SHOWN = [SearchResult(title="A", url="https://ex.org/a", snippet="s", source="news"),
         SearchResult(title="B", url="https://ex.org/b", snippet="s", source="news")]


@pytest.mark.parametrize("source, url", [
    (1, "https://ex.org/a"), (2, "https://ex.org/b"),
    ("2", "https://ex.org/b"), ("[1]", "https://ex.org/a"), (" 2 ", "https://ex.org/b"),  # lenient spellings of a number
    (0, None), (3, None), (-1, None), (True, None), (1.0, None), ("two", None), (None, None),  # cites nothing
    ("²", None), ("١", None), ("9" * 5000, None), (10 ** 12, None),  # not ASCII digits, too long, out of range
])
def test_a_cited_number_becomes_the_numbered_sources_url(source, url):
    (item,) = parse_evidence([{"claim": "c", "source": source}], SHOWN)
    assert item.source_url == url


def test_a_number_wins_over_a_written_url_and_a_url_alone_is_kept():
    items = parse_evidence([{"claim": "n", "source": 2, "source_url": "https://made.up/x"},
                            {"claim": "u", "source": 0, "source_url": "https://made.up/y"},
                            {"claim": "w", "url": "https://ex.org/a"}], SHOWN)
    assert [e.source_url for e in items] == ["https://ex.org/b", "https://made.up/y", "https://ex.org/a"]
    assert [e.source_url for e in parse_evidence([{"claim": "c", "source": 1}])] == [None]  # nothing was shown
    parsed = parse_forecast('{"p_yes_percent": 30, "key_evidence": [{"claim": "c", "source": 1}]}', sources=SHOWN[1:])
    assert parsed.key_evidence == [EvidenceItem(claim="c", source_url="https://ex.org/b", title="B")]  # and its (no) date


def test_a_number_past_pythons_digit_limit_is_read_as_unreadable_not_raised():
    with pytest.raises(ForecastParseError):
        parse_forecast('{"p_yes_percent": 30, "x": ' + "9" * 5000 + "}")
    parsed = parse_forecast('{"x": ' + "9" * 5000 + '} {"p_yes_percent": 30}')  # the unreadable object is skipped
    assert parsed.p_yes == 0.3
