"""No draft or example is an answer (issue 35, item 3), as a kind: every reasoning channel a model may write
(the table :data:`agent_tools.parsing.REASONING_CHANNELS`) hides its draft, a channel cut off before the final
answer is a ForecastParseError (never the draft's value), an unescaped ``}`` inside a broken answer's string
does not end its span so that a later example is read, and a key in typographic quotes gives a value."""

from __future__ import annotations

import pytest

from agent_schemas import ForecastParseError
from agent_tools import parse_forecast, parse_json, strip_reasoning
from agent_tools.parsing import REASONING_CHANNELS

DRAFT = 'draft: {"p_yes_percent": 70, "rationale": "draft"}'
FINAL = '{"p_yes_percent": 20, "rationale": "final"}'

# --- the issue's shapes, written as each model family writes them ----------------------------------------------------
#: (text, p_yes or None for a ForecastParseError): each row returned 0.7 (the draft's value) or lost the answer before.
LITERAL_ROWS = {
    "mistral [THINK] cut off": ("[THINK]Let me see. " + DRAFT, None),
    "mistral [THINK] closed, final after": ("[THINK]" + DRAFT + "[/THINK]" + FINAL, 0.2),
    "mistral [/THINK] only (template opened it)": (DRAFT + "[/THINK]\n" + FINAL, 0.2),
    "gpt-oss harmony analysis cut off": ("<|channel|>analysis<|message|>We need a number. " + DRAFT, None),
    "gpt-oss harmony analysis, no final channel": ("<|channel|>analysis<|message|>" + DRAFT + "<|end|>", None),
    "gpt-oss harmony analysis then final": (
        "<|channel|>analysis<|message|>" + DRAFT + "<|end|><|start|>assistant<|channel|>final<|message|>" + FINAL
        + "<|return|>", 0.2),
    "gpt-oss harmony final ended by <|end|>": (
        "<|channel|>analysis<|message|>" + DRAFT + "<|end|><|start|>assistant<|channel|>final<|message|>" + FINAL
        + "<|end|>", 0.2),
    "gpt-oss harmony constrained final": (
        "<|start|>assistant<|channel|>analysis<|message|>" + DRAFT + "<|end|><|start|>assistant<|channel|>final "
        "<|constrain|>json<|message|>" + FINAL + "<|return|>", 0.2),
    "gpt-oss harmony commentary cut off": ("<|channel|>commentary to=functions.search<|message|>" + DRAFT, None),
    "gpt-oss special tokens skipped, cut off": ("analysisWe need to estimate. " + DRAFT, None),
    "gpt-oss special tokens skipped, final": ("analysisWe need to estimate. " + DRAFT + "assistantfinal" + FINAL, 0.2),
    "seed-oss <seed:think> cut off": ("<seed:think>Hmm. " + DRAFT, None),
    "seed-oss <seed:think> closed": ("<seed:think>" + DRAFT + "</seed:think>" + FINAL, 0.2),
    "seed-oss </seed:think> only": (DRAFT + "</seed:think>" + FINAL, 0.2),
    "kimi ◁think▷ cut off": ("◁think▷" + DRAFT, None),
    "command-a <|START_THINKING|> cut off": ("<|START_THINKING|>" + DRAFT, None),
    "command-a thinking then response": ("<|START_THINKING|>" + DRAFT + "<|END_THINKING|><|START_RESPONSE|>" + FINAL
                                         + "<|END_RESPONSE|>", 0.2),
    "openthoughts begin_of_thought cut off": ("<|begin_of_thought|>" + DRAFT, None),
    "exaone <thought> cut off": ("<thought>" + DRAFT, None),
    "<reasoning> cut off": ("<reasoning>" + DRAFT, None),
    "granite thought process cut off": ("Here is my thought process:\n" + DRAFT, None),
    "granite thought process then response": ("Here is my thought process:\n" + DRAFT + "\nHere is my response:\n"
                                              + FINAL, 0.2),
    "apriel reasoning steps cut off": ("Here are my reasoning steps:\n" + DRAFT, None),
    "apriel final response": ("Here are my reasoning steps:\n" + DRAFT + "\n[BEGIN FINAL RESPONSE]\n" + FINAL
                              + "\n[END FINAL RESPONSE]", 0.2),
}


@pytest.mark.parametrize("text, p_yes", LITERAL_ROWS.values(), ids=LITERAL_ROWS.keys())
def test_each_models_reasoning_channel_hides_its_draft(text, p_yes):
    if p_yes is None:
        with pytest.raises(ForecastParseError) as ei:
            parse_forecast(text)
        assert ei.value.raw_text == text and ei.value.field == "json"
    else:
        f = parse_forecast(text)
        assert (f.p_yes, f.rationale) == (p_yes, "final")


# --- every channel of the module's table, in each position ------------------------------------------------------------
@pytest.mark.parametrize("channel", REASONING_CHANNELS, ids=lambda c: c.name)
def test_every_channel_of_the_table(channel):
    opened = channel.opens + DRAFT
    # cut off before the final answer: an error, never the draft's value
    with pytest.raises(ForecastParseError):
        parse_forecast(opened)
    # closed with nothing after it: no answer
    with pytest.raises(ForecastParseError):
        parse_forecast(opened + channel.closes)
    # closed, then the final answer: the final answer
    assert parse_forecast(opened + channel.closes + FINAL).p_yes == 0.2
    if not channel.at_start:  # a draft in the channel after the answer (reasoning again, cut off): the answer stands
        assert parse_forecast(FINAL + "\n" + opened).p_yes == 0.2
    if channel.opened_by_template:  # the chat template wrote the opening marker: only the close is in the answer
        assert parse_forecast(DRAFT + channel.closes + FINAL).p_yes == 0.2
    assert strip_reasoning(opened + channel.closes).strip() == ""


def test_the_table_names_the_issue_channels():
    names = " ".join(c.opens for c in REASONING_CHANNELS)
    for marker in ("<think>", "[THINK]", "<|channel|>analysis<|message|>", "<seed:think>", "<reasoning>"):
        assert marker in names


def test_a_plain_answer_mentioning_analysis_is_read():
    # the skipped-special-token form of gpt-oss needs "analysis" glued to a capital at the very start
    assert parse_forecast('Analysis: polls lean no.\n' + FINAL).p_yes == 0.2
    assert parse_forecast('analysis of the base rate: ' + FINAL).p_yes == 0.2
    assert parse_forecast('My analysis: ' + FINAL + " Here is my response: done").p_yes == 0.2


# --- an unescaped } inside a broken answer's string ------------------------------------------------------------------
EXAMPLE = '\nA valid answer looks like {"p_yes_percent": 50, "rationale": "..."}.'
EARLY_CLOSE_ROWS = {
    # the broken string's } closed the span at "x}" and the scan went on to the example: 0.5 before
    "unescaped quotes then }": '{"rationale": "the "x} y" club wins", "p_yes_percent": 20}' + EXAMPLE,
    "readable prefix closed by a } in a string": '{"rationale": "set {a"} b", "p_yes_percent": 20}' + EXAMPLE,
    "nested evidence closed early": ('{"key_evidence": [{"claim": "the "cap} rule" holds"}], "p_yes_percent": 20}'
                                     + EXAMPLE),
    "single-quoted broken answer": "{'rationale': 'it's} fine', 'p_yes_percent': 20}" + EXAMPLE,
    "example first, then the broken answer": EXAMPLE + '\n{"rationale": "the "x} y" club", "p_yes_percent": 20}',
}


@pytest.mark.parametrize("text", EARLY_CLOSE_ROWS.values(), ids=EARLY_CLOSE_ROWS.keys())
def test_a_span_closed_early_never_lets_an_example_answer(text):
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast(text)
    assert ei.value.raw_text == text and ei.value.field == "p_yes"
    with pytest.raises(ForecastParseError):
        parse_json(text, required_keys=("p_yes_percent",))


def test_text_after_an_answer_without_a_key_is_still_read():
    assert parse_forecast(FINAL + ' (that is "20 percent"} in words)').p_yes == 0.2
    assert parse_forecast('{"note": "x"} then ' + FINAL).p_yes == 0.2


# --- keys in typographic quotes --------------------------------------------------------------------------------------
@pytest.mark.parametrize("key", ["“p_yes_percent”", "‘p_yes_percent’", "«p_yes_percent»", "„p_yes_percent“",
                                 "「p_yes_percent」", "＂p_yes_percent＂", "`p_yes_percent`", "‹p_yes›"])
@pytest.mark.parametrize("example_first", [False, True], ids=["answer first", "example first"])
def test_a_key_in_typographic_quotes_gives_a_value(key, example_first):
    answer = "{“rationale”: “polls”, " + key + ": 20}"
    text = EXAMPLE + "\n" + answer if example_first else answer + EXAMPLE
    with pytest.raises(ForecastParseError) as ei:
        parse_forecast(text)
    assert ei.value.field == "p_yes" and ei.value.value == answer


def test_typographic_quotes_inside_strings_of_a_valid_answer_are_read():
    assert parse_forecast('{"rationale": "the “favourite” wins", "p_yes_percent": 20}').p_yes == 0.2


def test_a_channel_that_needs_a_character_has_no_marker_without_it():
    """strip_reasoning skips a channel whose ``needs`` character a text lacks: each such channel's markers hold it,
    are found, and are no longer found once it is taken out."""
    needing = [ch for ch in REASONING_CHANNELS if ch.needs is not None]
    assert len(needing) >= 12
    for ch in needing:
        for marker, rx in ((ch.opens, ch.open_re), (ch.closes, ch.close_re)):
            assert ch.needs in marker and rx.search(marker) is not None, (ch.name, marker)
            assert rx.search(marker.replace(ch.needs, "")) is None, (ch.name, marker)
