"""Grammar-constrained sampling on the real embedded model: "resample" (check the sampled token, filter
only on rejection) against llama-cpp-python's "filter" chain. Skipped only when llama-cpp-python is missing."""

from __future__ import annotations

import json

import pytest

from agent_schemas import BadRequest, ResponseTruncated
from tests.helpers import NEEDS_LLAMA

pytestmark = NEEDS_LLAMA

SCHEMA = {
    "type": "object",
    "properties": {
        "rationale": {"type": "string", "maxLength": 60},
        "confidence": {"type": "string", "enum": ["high", "medium", "low"]},
        "p_yes_percent": {"type": "integer", "enum": list(range(101))},
    },
    "required": ["rationale", "confidence", "p_yes_percent"],
}
PROMPTS = [
    [{"role": "system", "content": "You are a forecaster. Answer in JSON."},
     {"role": "user", "content": "Will it snow in Oslo on some day next January? Give a rationale, confidence, p_yes_percent."}],
    [{"role": "system", "content": "You are a careful analyst."},
     {"role": "user", "content": "Will the S&P 500 close higher on Friday than on Monday? Answer with JSON: rationale, "
                                 "confidence (high, medium or low) and p_yes_percent."}],
]


@pytest.fixture(scope="module")
def providers():
    from agent_providers.local_llama import LocalLlamaProvider

    return {mode: LocalLlamaProvider(n_threads=1, n_slots=1, grammar_sampling=mode) for mode in ("filter", "resample")}


def _valid(text: str) -> dict:
    obj = json.loads(text)
    assert list(obj) == ["rationale", "confidence", "p_yes_percent"]
    assert len(obj["rationale"]) <= 60
    assert obj["confidence"] in ("high", "medium", "low")
    assert obj["p_yes_percent"] in range(101)
    return obj


@pytest.mark.parametrize("prompt", PROMPTS, ids=["snow", "sp500"])
def test_greedy_answers_are_the_same_token_for_token(providers, prompt):
    answers = {mode: p.complete(prompt, json_schema=SCHEMA, max_tokens=120, temperature=0.0, seed=3)
               for mode, p in providers.items()}
    assert answers["resample"].text == answers["filter"].text
    assert answers["resample"].usage.output_tokens == answers["filter"].usage.output_tokens
    _valid(answers["resample"].text)


def test_sampled_answers_always_satisfy_the_grammar_and_rejections_are_resampled(providers):
    p = providers["resample"]
    steps = resampled = 0
    for seed in range(4):
        for prompt in PROMPTS:
            c = p.complete(prompt, json_schema=SCHEMA, max_tokens=200, temperature=0.7, seed=seed)
            _valid(c.text)
            sampler = p.llama.last_sampler  # the sampler of the call just made
            assert sampler.steps == c.usage.output_tokens + 1  # the last step samples the end of generation
            steps, resampled = steps + sampler.steps, resampled + sampler.resampled
    # the unconstrained model often wants another token than the grammar allows (e.g. a space or newline
    # after "{"): those are picked again under the grammar, and most tokens need no filtering at all
    assert 0 < resampled < steps / 2


def test_a_seed_gives_the_same_sampled_answer_twice(providers):
    p = providers["resample"]
    a = p.complete(PROMPTS[0], json_schema=SCHEMA, max_tokens=120, temperature=0.8, seed=11)
    b = p.complete(PROMPTS[0], json_schema=SCHEMA, max_tokens=120, temperature=0.8, seed=11)
    assert a.text == b.text


def test_without_a_grammar_the_chain_is_llama_cpp_pythons(providers):
    answers = {}
    for mode, p in providers.items():
        with pytest.raises(ResponseTruncated) as stopped:  # free text runs past 24 tokens
            p.complete(PROMPTS[0], max_tokens=24, temperature=0.0)
        answers[mode] = stopped.value.text
    assert answers["resample"] == answers["filter"] and len(answers["filter"]) > 40
    assert type(providers["resample"].llama.last_sampler).__name__ == "LlamaSampler"


def test_an_unknown_mode_is_refused():
    from agent_providers.llama_sampling import llama_class
    from agent_providers.local_llama import LocalLlamaProvider

    with pytest.raises(BadRequest, match="grammar_sampling must be one of resample, filter, got 'fast'"):
        LocalLlamaProvider(grammar_sampling="fast")
    with pytest.raises(ValueError, match="got 'fast'"):
        llama_class("fast")
