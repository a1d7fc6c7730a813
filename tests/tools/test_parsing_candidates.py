"""One answer or none (issue 29, fault 2): a duplicate answer key, two candidate answers, or an answer only an
example could supply is a ForecastParseError saying why, never the value of a draft, an example or a quoted
object; the legitimate answers next to them still parse."""

from __future__ import annotations

import json

import pytest

from agent_providers import ScriptedProvider
from agent_research import ForecasterAgent, prompts as forecaster_prompts
from agent_schemas import AgentSummary, ForecastParseError
from agent_specialists import DebateAgent, SupervisorAgent, prompts as specialist_prompts
from agent_tools import extract_json_objects, parse_forecast, parse_json
from tests.helpers import make_question

# --- the five silent values of the issue: each gave the value after "->" with no error ------------------------------

#: (a) a duplicate key: json.loads keeps the last -> 0.20
DUPLICATE_KEY = '{"rationale": "base rate", "p_yes_percent": 90, "confidence": "low", "p_yes_percent": 20}'
#: (b) an answer broken by unescaped quotes, then an example object in prose -> 0.50 (the example's)
BROKEN_THEN_EXAMPLE = ('{"rationale": "the "favourite" usually wins", "p_yes_percent": 20}\n'
                       'A valid answer looks like {"p_yes_percent": 50}.')
#: (c) a thinking draft, then a final answer broken by unescaped quotes -> 0.70 (the draft's)
DRAFT_THEN_BROKEN = ('Let me think. Draft: {"p_yes_percent": 70}\n'
                     'Final answer: {"rationale": "the "base rate" is low", "p_yes_percent": 20}')
#: (d) an answer, then a revision that never closes (cut off) -> 0.30 (the first)
ANSWER_THEN_UNCLOSED_REVISION = ('{"p_yes_percent": 30, "rationale": "polls"}\n'
                                 'On reflection, revised: {"rationale": "the base rate is higher", "p_yes_percent": 6')
#: (e) a format example, then the real answer, which never closes -> 0.50 (the example's)
EXAMPLE_THEN_UNCLOSED_ANSWER = ('Example: {"p_yes_percent": 50, "rationale": "..."}\n'
                                'My answer: {"rationale": "polls lean no", "p_yes_percent": 2')

_BROKEN = "that could not be read (unescaped quotes?) besides 1 readable one: "
_UNCLOSED = "that never closes (cut off, or a revision?) after 1 readable one: "
_NONE_TAKEN = "a readable one may be an example, a draft or a quoted object, so none is taken: "

SILENT_VALUES = {
    "duplicate key": (DUPLICATE_KEY, "p_yes_percent", [90, 20],
                      "the answer's JSON object gives 'p_yes_percent' 2 times with different values (90, 20): "
                      "refusing to pick one"),
    "broken answer then example": (
        BROKEN_THEN_EXAMPLE, "p_yes", '{"rationale": "the "favourite" usually wins", "p_yes_percent": 20}',
        "the answer has a JSON object with p_yes or p_yes_percent " + _BROKEN + _NONE_TAKEN
        + repr('{"rationale": "the "favourite" usually wins", "p_yes_percent": 20}')),
    "draft then broken answer": (
        DRAFT_THEN_BROKEN, "p_yes", '{"rationale": "the "base rate" is low", "p_yes_percent": 20}',
        "the answer has a JSON object with p_yes or p_yes_percent " + _BROKEN + _NONE_TAKEN
        + repr('{"rationale": "the "base rate" is low", "p_yes_percent": 20}')),
    "answer then unclosed revision": (
        ANSWER_THEN_UNCLOSED_REVISION, "p_yes", '{"rationale": "the base rate is higher", "p_yes_percent": 6',
        "the answer has a JSON object " + _UNCLOSED + _NONE_TAKEN
        + repr('{"rationale": "the base rate is higher", "p_yes_percent": 6')),
    "example then unclosed answer": (
        EXAMPLE_THEN_UNCLOSED_ANSWER, "p_yes", '{"rationale": "polls lean no", "p_yes_percent": 2',
        "the answer has a JSON object " + _UNCLOSED + _NONE_TAKEN + repr('{"rationale": "polls lean no", "p_yes_percent": 2')),
}


@pytest.mark.parametrize("text, field, value, message", SILENT_VALUES.values(), ids=SILENT_VALUES.keys())
def test_the_five_silent_values_are_typed_errors_with_their_reason(text, field, value, message):
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast(text)
    assert ei.value.message == message
    assert (ei.value.field, ei.value.value, ei.value.raw_text) == (field, value, text)


@pytest.mark.parametrize("text", [t for t, *_ in SILENT_VALUES.values()], ids=SILENT_VALUES.keys())
def test_parse_json_refuses_the_same_answers(text):
    with pytest.raises(ForecastParseError):
        parse_json(text, required_keys=("p_yes_percent",))
    with pytest.raises(ForecastParseError):
        parse_json(text)


# --- the same kind, other shapes ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, field, values", [
    ('{"p_yes_percent": 90, "p_yes_percent": 20, "p_yes_percent": 20}', "p_yes_percent", [90, 20, 20]),  # three times
    ('{"p_yes_percent": 90, "p_yes_percent": 20,}', "p_yes_percent", [90, 20]),  # read after a repair
    ("{'p_yes_percent': 90, 'p_yes_percent': 20}", "p_yes_percent", [90, 20]),  # read as a Python literal
    ('{"p_yes": 0.9, "p_yes": 0.2}', "p_yes", [0.9, 0.2]),
    ('{"p_yes_percent": 90, "p_yes_percent": null} {"p_yes_percent": 40}', "p_yes_percent", [90, None]),
    # nested keys that matter: which source (its URL and date) a claim cites, and the stated confidence
    ('{"p_yes_percent": 20, "key_evidence": [{"claim": "c", "source": 1, "source": 2}]}', "source", [1, 2]),
    ('{"p_yes_percent": 20, "confidence": "high", "confidence": "low"}', "confidence", ["high", "low"]),
    ('{"p_yes_percent": 20, "rationale": "a", "rationale": "b"}', "rationale", ["a", "b"]),
])
def test_a_key_given_twice_with_different_values_is_an_error(text, field, values):
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast(text)
    assert (ei.value.field, ei.value.value) == (field, values)
    assert f"gives {field!r} {len(values)} times with different values" in ei.value.message


@pytest.mark.parametrize("text", [
    # a broken answer whose probability is not a number, beside a readable example
    'Example: {"p_yes_percent": 50}. Answer: {"p_yes_percent": high, "rationale": "x"}',
    # an object quoted (unescaped) in the answer's rationale breaks it; a readable quote elsewhere is no answer either
    'Member 2 wrote {"p_yes_percent": 90}. Mine: {"rationale": "member 2 wrote {"p_yes_percent": 90}", "p_yes_percent": 20}',
    # a Python-literal answer broken by an apostrophe, after a draft
    "Draft {'p_yes': 0.7}. Final {'rationale': 'it's low', 'p_yes': 0.2}",
    # a readable answer, then a second object cut off right after its brace
    '{"p_yes_percent": 30}\n{',
    # the answer's own string opens a reasoning tag: what follows it is cut, leaving the draft and an unclosed object
    'Draft {"p_yes_percent": 70}. Final {"rationale": "my <analysis> says no", "p_yes_percent": 20}',
])
def test_other_broken_candidates_beside_a_readable_one_are_errors(text):
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast(text)
    assert "a readable one may be an example, a draft or a quoted object, so none is taken" in ei.value.message


def test_an_answer_inside_reasoning_with_a_broken_final_answer_is_still_an_error():
    text = '<think>draft {"p_yes_percent": 70}</think>\n{"rationale": "the "base rate" is low", "p_yes_percent": 20}'
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast(text)
    assert ei.value.field == "json" and "could not be read" in ei.value.message


def test_a_broken_candidate_beside_objects_without_the_probability_says_it_could_not_be_read():
    text = '{"rationale": "the "favourite" wins", "p_yes_percent": 20} {"tokens": 12}'
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast(text)
    assert ei.value.field == "json" and ei.value.message.startswith("the answer's JSON object could not be read")


def test_the_messages_show_the_values_and_the_broken_object():
    long_a, long_b = "é" * 70, "b" * 60
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast(json.dumps({"p_yes_percent": 20})[:-1] + f', "rationale": "{long_a}", "rationale": "{long_b}"}}')
    shown_a, shown_b = '"' + "é" * 56 + "...", '"' + "b" * 56 + "..."  # JSON text, not escaped, cut to 60 characters
    assert ei.value.message == f"the answer's JSON object gives 'rationale' 2 times with different values ({shown_a}, {shown_b}): refusing to pick one"
    assert ei.value.value == [long_a, long_b]
    with pytest.raises(ForecastParseError) as ei:  # JSON text of 60 characters is shown whole, of 61 cut
        parse_forecast(f'{{"p_yes": 0.2, "rationale": "{"a" * 58}", "rationale": "{"b" * 59}"}}')
    assert f'("{"a" * 58}", "{"b" * 56}...)' in ei.value.message
    with pytest.raises(ForecastParseError) as ei:  # a Python literal's values need not be JSON
        parse_forecast("{'p_yes': 0.2, 'x': {1}, 'x': {2}}")
    assert ei.value.message == "the answer's JSON object gives 'x' 2 times with different values (\"{1}\", \"{2}\"): refusing to pick one"
    # a broken object beside two readable ones, quoted to 200 characters
    broken = '{"rationale": "the "favourite" wins' + "." * 300 + '", "p_yes_percent": 20}'
    text = '{"p_yes_percent": 50} {"p_yes_percent": 50} ' + broken
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast(text)
    assert ei.value.message.startswith("the answer has a JSON object with p_yes or p_yes_percent that could not be read "
                                       "(unescaped quotes?) besides 2 readable ones: ")
    assert ei.value.message.endswith(repr(broken[:200])) and ei.value.value == broken[:200] and ei.value.raw_text == text
    # without required keys any object is a candidate and any unreadable span a broken one
    with pytest.raises(ForecastParseError) as ei:
        parse_json('{"a": 1} {b}')
    assert (ei.value.field, ei.value.value) == ("json", "{b}")


@pytest.mark.parametrize("text, field, message", [
    # nothing readable, and what cannot be read gives no probability
    ('{"rationale": "the "x" one"}', "json", "the answer's JSON object could not be read"),
    # readable objects without the probability, beside an unreadable one that gives none
    ('{"probability": 0.3} {"rationale": "the "x" one"}', "p_yes", "no JSON object in the answer has any of ['p_yes', 'p_yes_percent']"),
    # braces that read as something else than an object
    ("the set {1, 2}", "json", "no JSON object found in the answer"),
])
def test_no_candidate_errors_say_which_case(text, field, message):
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast(text)
    assert ei.value.message.startswith(message) and ei.value.field == field


def test_two_different_objects_with_the_required_key_are_refused_by_parse_json():
    first = {"disagreements": [{"topic": "<text>", "query": "<search query>"}]}
    final = {"disagreements": [{"topic": "timing", "query": "ECB December"}]}
    text = f"{json.dumps(first)}\n{json.dumps(final)}"
    with pytest.raises(ForecastParseError) as ei:
        parse_json(text, required_keys=("disagreements",))
    assert ei.value.message == ("the answer gives 2 JSON objects with disagreements that differ: refusing to pick one: "
                                f"{text[:200]!r}")
    assert (ei.value.field, ei.value.value, ei.value.raw_text) == ("disagreements", [first, final], text)
    # the same object twice is one answer
    assert parse_json(f"{json.dumps(final)} again: {json.dumps(final)}", required_keys=("disagreements",)) == final
    long = f"{json.dumps(first)}\n{json.dumps(final)}" + " " * 200 + json.dumps(first)
    with pytest.raises(ForecastParseError) as ei:
        parse_json(long, required_keys=("disagreements",))
    assert ei.value.message.endswith(f"refusing to pick one: {long[:200]!r}")
    # without required keys every object is a candidate
    with pytest.raises(ForecastParseError) as ei:
        parse_json('{"a": 1} {"b": 2}')
    assert ei.value.message == "the answer gives 2 JSON objects that differ: refusing to pick one: '{\"a\": 1} {\"b\": 2}'"
    assert (ei.value.field, ei.value.value) == ("json", [{"a": 1}, {"b": 2}])
    # a disagreement whose query is given twice
    with pytest.raises(ForecastParseError) as ei:
        parse_json('{"disagreements": [{"topic": "t", "query": "a", "query": "b"}]}', required_keys=("disagreements",))
    assert (ei.value.field, ei.value.value) == ("query", ["a", "b"])


def test_extract_json_objects_lists_no_object_with_a_key_given_twice():
    assert extract_json_objects('{"a": 1, "a": 2} {"b": 1, "b": 1} {"c": {"d": 1, "d": 2}} {"e": 3}') == [{"b": 1}, {"e": 3}]


# --- the legitimate answers next to them ------------------------------------------------------------------------------


def _template(task: str) -> str:
    """The answer template a prompt shows (its last line), as a model may echo it before answering."""
    return task.strip().splitlines()[-1]


@pytest.mark.parametrize("text, p_yes, rationale", [
    ('{"rationale": "polls", "p_yes_percent": 20}', 0.2, "polls"),
    ('Here it is:\n```json\n{"rationale": "polls", "p_yes_percent": 20}\n```\n', 0.2, "polls"),
    # a draft in a reasoning block is discarded when the final answer is readable
    ('<think>draft {"p_yes_percent": 70}, then {"rationale": "the "x" one"}</think>\n{"rationale": "polls", "p_yes_percent": 20}',
     0.2, "polls"),
    ('draft {"p_yes_percent": 70} </think> {"rationale": "polls", "p_yes_percent": 20}', 0.2, "polls"),
    # the same answer twice (fenced and plain, or as a fraction and a percent) is one answer
    ('```json\n{"p_yes_percent": 20}\n```\nSo: {"p_yes_percent": 20, "rationale": "polls"}', 0.2, "polls"),
    ('{"p_yes": 0.2} {"p_yes_percent": 20, "rationale": "polls"}', 0.2, "polls"),
    # a key given twice with the same value says one thing
    ('{"p_yes_percent": 20, "rationale": "polls", "p_yes_percent": 20}', 0.2, "polls"),
    # an echoed prompt template (placeholders, not values) is no answer
    (_template(forecaster_prompts.FORECASTER_TASK) + '\n{"rationale": "polls", "p_yes_percent": 20}', 0.2, "polls"),
    (_template(specialist_prompts.SUPERVISOR_DECISION_TASK) + '\n{"rationale": "polls", "p_yes_percent": 20}', 0.2, "polls"),
    ('{"p_yes": <float>, "rationale": "..."}\n{"rationale": "polls", "p_yes_percent": 20}', 0.2, "polls"),
    # braces in prose that name no probability, before or after the answer
    ('The outcomes are {Yes, No}. {"rationale": "polls", "p_yes_percent": 20} (see {note 1})', 0.2, "polls"),
    # an object quoted with escaped quotes inside the answer's string is text
    ('{"rationale": "member 2 wrote {\\"p_yes_percent\\": 90}", "p_yes_percent": 20}', 0.2,
     'member 2 wrote {"p_yes_percent": 90}'),
    # an object without the probability (metadata), even one with a key given twice, is not a candidate
    ('{"rationale": "polls", "p_yes_percent": 20} {"tokens": 12, "tokens": 13}', 0.2, "polls"),
    # an unreadable object giving another field (a quoted debate turn's) is no candidate for p_yes
    ('{"argument": "the "favourite" wins", "bull_p_yes_percent": 70} {"rationale": "polls", "p_yes_percent": 20}',
     0.2, "polls"),
])
def test_legitimate_answers_still_parse(text, p_yes, rationale):
    f = parse_forecast(text)
    assert (f.p_yes, f.rationale) == (p_yes, rationale)


def test_legitimate_parse_json_answers():
    final = {"disagreements": [{"topic": "timing", "query": "ECB December"}]}
    assert parse_json(f"Points {{a, b}}: {json.dumps(final)}", required_keys=("disagreements",)) == final
    assert parse_json(f"```json\n{json.dumps(final)}\n```\n{json.dumps(final)}", required_keys=("disagreements",)) == final
    assert parse_json('{"queries": ["a"]} {"other": 1}', required_keys=("queries",)) == {"queries": ["a"]}
    assert parse_json('{"queries": ["a"], "n": 1, "n": 1}') == {"queries": ["a"], "n": 1}


# --- through the pipeline: a failed member, turn or step, never a default probability -----------------------------------

SUMMARIES = [AgentSummary(agent_id="member-0", p_yes=0.2, rationale="low"),
             AgentSummary(agent_id="member-1", p_yes=0.8, rationale="high")]
DISAGREE = json.dumps({"disagreements": [{"topic": "timing", "description": "early vs late", "agents": ["member-0"],
                                          "query": "ECB December 2025"}]})
BEAR = json.dumps({"argument": "no cut", "key_evidence": [], "p_yes_percent": 30})


@pytest.mark.parametrize("text", [t for t, *_ in SILENT_VALUES.values()], ids=SILENT_VALUES.keys())
def test_a_member_a_debate_turn_and_the_supervisor_fail_on_each_silent_value(text):
    llm = ScriptedProvider([text])
    f = ForecasterAgent(llm).forecast(make_question())
    assert (f.status, f.p_yes, f.error.type) == ("failed", None, "ForecastParseError")
    assert f.error.details["raw_text"] == text and f.usage == llm.usage_for(llm.requests[0]["messages"], text)

    debate = DebateAgent(ScriptedProvider([text, BEAR]), max_rounds=1).run(make_question(), SUMMARIES, 0.5)
    bull = debate.rounds[0].bull
    assert (bull.status, bull.p_yes, bull.error.type) == ("failed", None, "ForecastParseError")
    assert debate.status == "failed" and debate.p_yes is None  # never the aggregate or the bear's alone

    art = SupervisorAgent(ScriptedProvider([DISAGREE, text])).run(make_question(), SUMMARIES)
    assert (art.status, art.p_yes, art.error.type) == ("failed", None, "ForecastParseError")
    assert art.usage.calls == 2
