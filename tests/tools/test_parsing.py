"""Parsing model answers: JSON extraction and probability validation, with real answer shapes."""

import datetime as dt
import json
import math

import pytest

from agent_schemas import EvidenceItem, ForecastParseError
from agent_tools import (
    FORECAST_JSON_SCHEMA,
    ParsedForecast,
    extract_json_objects,
    parse_forecast,
    parse_json,
    parse_probability,
    probability_schema,
    strip_reasoning,
)

# --- extraction ------------------------------------------------------------------------------------


def test_multiline_fenced_answer_with_prose():
    text = (
        "Here is my forecast.\n```json\n{\n  \"p_yes\": 0.42,\n  \"rationale\": \"Polls tightened.\",\n"
        "  \"key_evidence\": []\n}\n```\nHope this helps."
    )
    f = parse_forecast(text)
    assert f == ParsedForecast(p_yes=0.42, rationale="Polls tightened.", key_evidence=[],
                               data={"p_yes": 0.42, "rationale": "Polls tightened.", "key_evidence": []})


def test_one_line_fenced_answer():
    assert parse_forecast('```json {"p_yes": 0.07, "rationale": "rare"}```').p_yes == 0.07


def test_reasoning_block_object_is_not_taken():
    text = (
        "<think>First guess {\"p_yes\": 0.9}. Actually the base rate is low.</think>\n"
        '{"p_yes": 0.2, "rationale": "base rate"}'
    )
    f = parse_forecast(text)
    assert f.p_yes == 0.2
    assert f.rationale == "base rate"


def test_reasoning_tag_variant_and_orphan_closing_tag():
    assert parse_forecast('<reasoning>{"p_yes": 0.8}</reasoning> answer: {"p_yes": 0.3}').p_yes == 0.3
    # chat templates that open <think> in the prompt leave only the closing tag in the answer
    assert parse_forecast('draft {"p_yes": 0.8} ... </think>\n{"p_yes": 0.25}').p_yes == 0.25


def test_answer_only_inside_reasoning_is_an_error_not_a_guess():
    text = '<think>I would say {"p_yes": 0.6}</think>'
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast(text)
    assert ei.value.field == "json"
    assert ei.value.raw_text == text
    # an unclosed reasoning block (cut off) is reasoning too
    with pytest.raises(ForecastParseError):
        parse_forecast('<think>so {"p_yes": 0.6} maybe')


def test_the_one_object_with_the_prob_field_is_the_answer():
    text = (
        'Format: {"p_yes": <float>}. Sources: {"source_url": "https://a.org"}. '
        'Final: {"p_yes": 0.31, "rationale": "x"} and metadata {"tokens": 12}'
    )
    assert parse_forecast(text).p_yes == 0.31
    assert parse_json(text, required_keys=("p_yes",)) == {"p_yes": 0.31, "rationale": "x"}
    # without required keys every object is a candidate: these differ
    with pytest.raises(ForecastParseError):
        parse_json(text)


def test_nested_object_is_not_listed_separately():
    objs = extract_json_objects('{"outer": {"p_yes": 0.9}, "p_yes": 0.1}')
    assert objs == [{"outer": {"p_yes": 0.9}, "p_yes": 0.1}]
    assert parse_forecast('{"outer": {"p_yes": 0.9}, "p_yes": 0.1}').p_yes == 0.1


def test_trailing_commas_are_repaired():
    text = '{"p_yes": 0.55, "rationale": "ok", "key_evidence": [{"claim": "c", "source_url": null, "published": null},],}'
    f = parse_forecast(text)
    assert f.p_yes == 0.55
    assert f.key_evidence == [EvidenceItem(claim="c")]


def test_backticks_inside_string_do_not_cut_the_object():
    text = '```json\n{"p_yes": 0.61, "rationale": "the doc says ``` run `make` ``` then {done}"}\n```'
    f = parse_forecast(text)
    assert f.p_yes == 0.61
    assert f.rationale == "the doc says ``` run `make` ``` then {done}"


def test_braces_inside_string_are_handled_by_the_scanner():
    text = 'Answer: {"rationale": "sets like {a, b} and a } stray brace", "p_yes": 0.12} done'
    f = parse_forecast(text)
    assert f.p_yes == 0.12
    assert f.rationale == "sets like {a, b} and a } stray brace"


def test_trailing_comma_with_brace_in_string():
    text = '{"rationale": "x}, y", "p_yes": 0.5,}'
    assert parse_forecast(text).p_yes == 0.5


def test_python_literal_dict_is_read():
    assert parse_forecast("{'p_yes': 0.4, 'rationale': 'single quotes'}").p_yes == 0.4


def test_no_json_at_all():
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast("I think it is fairly likely, maybe 70%.")
    assert ei.value.field == "json"
    assert ei.value.raw_text == "I think it is fairly likely, maybe 70%."


def test_parse_json_queries_object():
    assert parse_json('```json\n{"queries": ["a b", "c"]}\n```') == {"queries": ["a b", "c"]}


def test_strip_reasoning_keeps_answer():
    assert strip_reasoning("<THINK>x</THINK>ans").strip() == "ans"


# --- probabilities ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value, expected", [
    (0, 0.0), (1, 1.0), (0.354, 0.354), ("0.25", 0.25), ("35.4%", 0.354), (" 100 % ", 1.0), ("0%", 0.0),
])
def test_valid_probabilities(value, expected):
    assert parse_probability(value, raw_text="t") == pytest.approx(expected, abs=1e-12)


def test_percent_field():
    assert parse_forecast('{"p_yes_percent": 35, "rationale": "r"}').p_yes == 0.35
    assert parse_forecast('{"p_yes_percent": 0}').p_yes == 0.0
    assert parse_forecast('{"p_yes_percent": 100}').p_yes == 1.0
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast('{"p_yes_percent": 135}')
    assert (ei.value.field, ei.value.value) == ("p_yes_percent", 135)
    # a fraction in a percent field is ambiguous: rejected, not read as 0.35% or 35%
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast('{"p_yes_percent": 0.35}')
    assert (ei.value.field, ei.value.value) == ("p_yes_percent", 0.35)
    assert parse_forecast('{"p_yes_percent": 35.0}').p_yes == 0.35
    assert parse_forecast('{"p_yes_percent": "35.5%"}').p_yes == pytest.approx(0.355)


def test_huge_integer_is_an_error_not_an_overflow():
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast('{"p_yes": ' + "9" * 400 + "}")
    assert ei.value.field == "p_yes"


@pytest.mark.parametrize("value", [1.198, 12489, -0.01, "1.5", "150%", "-3%"])
def test_out_of_range_is_an_error_not_clamped(value):
    text = json.dumps({"p_yes": value})
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast(text)
    assert ei.value.field == "p_yes"
    assert ei.value.value == value
    assert ei.value.raw_text == text


@pytest.mark.parametrize("literal, check", [
    ("NaN", lambda v: isinstance(v, float) and math.isnan(v)),
    ("Infinity", lambda v: v == math.inf),
    ("-Infinity", lambda v: v == -math.inf),
    ("true", lambda v: v is True),
    ("false", lambda v: v is False),
    ('"likely"', lambda v: v == "likely"),
    ('"nan"', lambda v: v == "nan"),
    ("[0.3]", lambda v: v == [0.3]),
])
def test_non_numeric_probabilities_rejected(literal, check):
    text = '{"p_yes": ' + literal + ', "rationale": "r"}'
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast(text)
    assert ei.value.field == "p_yes"
    assert check(ei.value.value)
    assert ei.value.raw_text == text


def test_missing_p_yes():
    text = '{"probability": 0.3, "rationale": "wrong key"}'
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast(text)
    assert ei.value.field == "p_yes"
    assert ei.value.value is None
    assert ei.value.raw_text == text
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast('{"p_yes": null}')
    assert ei.value.field == "p_yes"


def test_custom_prob_field():
    assert parse_forecast('{"bull_p_yes": 0.7}', prob_field="bull_p_yes").p_yes == 0.7
    assert parse_forecast('{"p_yes_percent": 64, "argument": "a"}', prob_field="p_yes").data["argument"] == "a"


def test_parse_probability_default_raw_text_and_type_errors():
    with pytest.raises(ForecastParseError) as ei:
        parse_probability({"v": 1})
    assert ei.value.raw_text == "{'v': 1}"
    with pytest.raises(ForecastParseError):
        parse_probability(None)


# --- evidence and rationale ------------------------------------------------------------------------


def test_key_evidence_variants():
    text = json.dumps({
        "p_yes": 0.3,
        "key_evidence": [
            {"claim": "Poll at 45%", "source_url": "https://a.org/poll", "published": "2024-07-10"},
            {"claim": "Court date set", "url": "https://b.org", "published": "last Tuesday"},
            {"claim": "Stamped", "source_url": "null", "published": "2024-07-11T23:30:00-02:00"},
            "A plain string claim",
            {"source_url": "https://no-claim.org"},
            42,
        ],
    })
    f = parse_forecast(text)
    assert f.rationale == ""
    assert f.key_evidence == [
        EvidenceItem(claim="Poll at 45%", source_url="https://a.org/poll", published=dt.date(2024, 7, 10)),
        EvidenceItem(claim="Court date set", source_url="https://b.org", published=None),
        EvidenceItem(claim="Stamped", source_url=None, published=dt.date(2024, 7, 12)),
        EvidenceItem(claim="A plain string claim"),
    ]


def test_malformed_evidence_date_does_not_fail_forecast():
    f = parse_forecast('{"p_yes": 0.2, "key_evidence": [{"claim": "c", "published": "2024-13-45"}]}')
    assert f.p_yes == 0.2
    assert f.key_evidence[0].published is None


# --- schemas ---------------------------------------------------------------------------------------


def test_forecast_schema_is_grammar_friendly():
    props = FORECAST_JSON_SCHEMA["properties"]
    assert props["p_yes_percent"]["type"] == "integer"
    assert props["p_yes_percent"]["enum"] == list(range(101))
    assert set(FORECAST_JSON_SCHEMA["required"]) == {"p_yes_percent", "rationale", "key_evidence", "confidence"}
    assert props["confidence"] == {"type": "string", "enum": ["high", "medium", "low"]}  # a string enum the grammar enforces
    assert set(props["key_evidence"]["items"]["properties"]) == {"claim", "source"}  # a number: URL and date come from sources
    dumped = json.dumps(FORECAST_JSON_SCHEMA)
    for banned in ('"pattern"', '"minimum"', '"maximum"'):
        assert banned not in dumped
    # a schema-conforming answer parses
    answer = json.dumps({"p_yes_percent": 17, "rationale": "r", "confidence": "low",
                         "key_evidence": [{"claim": "c", "source_url": None, "published": None}]})
    assert parse_forecast(answer).p_yes == 0.17 and parse_forecast(answer).confidence == "low"


def test_probability_schema_helper():
    s = probability_schema("bull_p_yes_percent")
    assert list(s) == ["bull_p_yes_percent"]
    assert s["bull_p_yes_percent"]["enum"] == list(range(101))
    with pytest.raises(ValueError, match="_percent"):
        probability_schema("p_yes")


# --- issue 10, item 6: never a value the parser cannot stand behind ---------------------------------


def test_an_object_quoted_inside_a_broken_answer_is_never_read():
    # unescaped inner quotes, as small models write them: the top-level object does not parse
    text = '{"rationale": "Member 2 wrote {"p_yes_percent": 90} earlier", "p_yes_percent": 20}'
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast(text)
    assert ei.value.field == "json" and "could not be read" in ei.value.message
    assert extract_json_objects(text) == []
    # an unclosed object ends the scan: nothing inside it is read
    with pytest.raises(ForecastParseError):
        parse_forecast('{"rationale": "the bull said {"p_yes": 0.9}", "p_yes": 0.2')


def test_disagreeing_probabilities_raise_agreeing_ones_are_one_answer():
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast('{"rationale": "r", "p_yes": 0.35, "p_yes_percent": 40}')
    assert ei.value.value == [0.35, 0.4]
    with pytest.raises(ForecastParseError):
        parse_forecast('draft {"p_yes": 0.3} final {"p_yes": 0.4}')
    assert parse_forecast('{"rationale": "r", "p_yes": 0.35, "p_yes_percent": 35}').p_yes == 0.35
    f = parse_forecast('first {"p_yes": 0.3} again {"p_yes_percent": 30, "rationale": "final"}')
    assert (f.p_yes, f.rationale) == (0.3, "final")
    # a correct answer after reasoning still parses
    assert parse_forecast('<think>maybe {"p_yes": 0.9}?</think>\n{"rationale": "r", "p_yes_percent": 12}').p_yes == 0.12


def test_recoverable_answers_are_read():
    assert parse_forecast('{"p_yes_percent": 35.4}').p_yes == pytest.approx(0.354)  # only [0, 1] is ambiguous
    assert parse_forecast('{"p_yes_percent": 1}').p_yes == 0.01
    assert parse_forecast('{"p_yes": 70%}').p_yes == pytest.approx(0.70)  # a bare percent sign is repaired
    assert parse_forecast('{"p_yes": 7.5 %, "rationale": "35% sure"}').rationale == "35% sure"
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast('{"p_yes_percent": 0.5}')  # 0.5 %, or a fraction? refused
    assert ei.value.value == 0.5
