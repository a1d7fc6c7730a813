"""The embedded model (real llama.cpp, SmolLM2-135M) answering a multiple-choice and a numeric question through each
kind's answer schema (issue 36, item 2): what llama.cpp's JSON-schema grammar enforces holds on every raw answer,
and the kind's reader turns each answer into the forecast computed here by hand or into a typed
ForecastParseError, never into a silently repaired one.

What the grammar enforces (checked on the raw text): every property, in schema order, and no other; an integer
enum 0..100 per option; a JSON number per percentile. What it cannot (checked on the reader): that the percents add
up to 100, that the percentiles do not decrease, that they lie within a closed bound, that they are > 0 on a log
scale. Each call is short (the answer properties only, a two-line prompt): about a second each.

Skipped (with the reason) only when llama-cpp-python is not importable.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from agent_schemas import ForecastParseError
from agent_schemas.kinds import ChoiceSpec, NumericSpec, kind_of
from agent_schemas.kinds.multiple_choice import FIELD, SUM_TOLERANCE
from agent_schemas.kinds.numeric.answers import FIELDS, cdf_from_percentiles
from tests.helpers import NEEDS_LLAMA

pytestmark = NEEDS_LLAMA

SEEDS = (0, 1)
#: Labels a grammar must write verbatim: quotes, a backslash, an apostrophe, an en dash, a non-ASCII letter, and two labels
#: that differ only in punctuation (llama.cpp derives rule names from property names).
CHOICE = ChoiceSpec(options=('Will "Inside Out 2" win?', "2025–2026 Suns", "Zoë's team", "A-B", "A B", "C:\\temp"))
CLOSED = NumericSpec(lower=0, upper=100, unit="admissions")
LOG_OPEN = NumericSpec(lower=8.0, upper=20.0, open_lower=True, open_upper=True, log_scale=True)


@pytest.fixture(scope="module")
def local():
    from agent_providers.local_llama import LocalLlamaProvider

    return LocalLlamaProvider()


def answer(local, spec, seed: int, max_tokens: int) -> tuple[str, dict]:
    """The model's raw answer text to ``spec``'s answer schema, and its JSON object (parsed with ``object_pairs_hook``
    so that a repeated key would show)."""
    kind = kind_of(spec)
    props = kind.answer_properties(spec)
    schema = {"type": "object", "properties": props, "required": list(props)}
    prompt = "\n".join(["Question: how will this turn out?", *kind.question_lines(spec),
                        f"Answer with one JSON object: {{{kind.answer_template(spec)}}}"])
    c = local.complete([{"role": "system", "content": "You are a forecaster. Answer in JSON."}, {"role": "user", "content": prompt}],
                       json_schema=schema, max_tokens=max_tokens, temperature=0.9, seed=seed)
    assert c.stop_reason != "length", c.text
    return c.text, json.loads(c.text, object_pairs_hook=lambda pairs: pairs)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_multiple_choice_answer_has_every_option_once_as_an_integer_percent_and_reads_or_fails_typed(local, seed):
    text, pairs = answer(local, CHOICE, seed, max_tokens=120)
    [(field, given)] = pairs
    assert field == FIELD
    assert [k for k, _ in given] == list(CHOICE.options)  # every option, in order, verbatim, no other key
    percents = [v for _, v in given]
    assert all(type(v) is int and 0 <= v <= 100 for v in percents)  # the integer enum
    kind = kind_of(CHOICE)
    total = sum(percents)
    if abs(total - 100) <= 100 * SUM_TOLERANCE:
        np.testing.assert_allclose(kind.read_answer(CHOICE, json.loads(text), raw_text=text), np.array(percents) / total)
    else:  # the one thing the grammar cannot enforce: the sum
        with pytest.raises(ForecastParseError, match=re.escape(f"add up to {total:.4g}%, not 100%")) as err:
            kind.read_answer(CHOICE, json.loads(text), raw_text=text)
        assert err.value.raw_text == text


def expected_numeric(spec: NumericSpec, values: list[float]) -> str | None:
    """The first problem the reader must name in stated percentiles, by hand (None: a valid answer)."""
    for i in range(1, len(values)):
        if values[i] < values[i - 1]:
            return f"{FIELDS[i]} ("
    for f, v in zip(FIELDS, values):
        if (not spec.open_lower and v < spec.lower) or (not spec.open_upper and v > spec.upper) or (spec.log_scale and v <= 0):
            return f"{f} ("
    return None


@pytest.mark.parametrize("spec", [CLOSED, LOG_OPEN], ids=["closed", "log-open"])
@pytest.mark.parametrize("seed", SEEDS)
def test_a_numeric_answer_states_every_percentile_as_a_number_and_reads_or_fails_typed(local, spec, seed):
    text, pairs = answer(local, spec, seed, max_tokens=300)
    assert [k for k, _ in pairs] == list(FIELDS)  # every percentile, in order, no other key
    values = [v for _, v in pairs]
    assert all(type(v) in (int, float) and np.isfinite(v) for v in values)  # a JSON number, never a string or NaN
    kind = kind_of(spec)
    problem = expected_numeric(spec, [float(v) for v in values])
    if problem is None:
        np.testing.assert_allclose(kind.read_answer(spec, json.loads(text), raw_text=text), cdf_from_percentiles(spec, values))
    else:  # order, closed bounds, a log scale's positivity: the reader's, never repaired
        with pytest.raises(ForecastParseError, match=re.escape(problem)):
            kind.read_answer(spec, json.loads(text), raw_text=text)
