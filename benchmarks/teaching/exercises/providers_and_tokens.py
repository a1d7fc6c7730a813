"""Checks of notebook 01's exercises (providers and tokens); each computes its right value with the toolkit.

1. :func:`check_auto_choice`: the provider family ``choose_auto_spec`` picks in two environments.
2. :func:`check_ledger_total`: a ledger's total ``cost_usd`` with one unpriced call, and what it says.
3. :func:`check_cache_repeats`: which repeats of a cached request reach the model again.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_providers import CachingProvider, ResponseCache, ScriptedProvider, choose_auto_spec
from agent_providers.registry import KNOWN_PREFIXES
from agent_schemas import TokenUsage, UsageLedger
from benchmarks.teaching.grading import Verdict, grade_answers

__all__ = ["CACHE_REPEATS", "COST_MEANINGS", "EXERCISE_ENVIRONMENTS", "EXERCISE_CALLS", "check_auto_choice",
           "check_cache_repeats", "check_ledger_total"]

#: Exercise 1's environments (made-up key values: never sent anywhere).
EXERCISE_ENVIRONMENTS: dict[str, dict[str, str]] = {
    "a": {"ANTHROPIC_API_KEY": "sk-ant-not-a-real-key", "OPENAI_API_KEY": "sk-not-a-real-key"},
    "b": {"OPENAI_API_KEY": "sk-not-a-real-key", "OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"},
}
#: Exercise 2's calls: (model, cost in USD or None when the model is not in the price table).
EXERCISE_CALLS: tuple[tuple[str, float | None], ...] = (("priced-a", 0.002), ("priced-b", 0.002), ("not-in-table", None))
#: Exercise 2's choices for what the run cost, relative to the ledger's total.
COST_MEANINGS = ("exactly that", "at least that", "at most that")


def check_auto_choice(answer: Any) -> Verdict:
    """Exercise 1: ``answer = {"a": family, "b": family}``, the prefix of the spec ``choose_auto_spec`` picks
    in :data:`EXERCISE_ENVIRONMENTS` (one of ``agent_providers.registry.KNOWN_PREFIXES``)."""
    expected = {name: choose_auto_spec(env).spec.split("/", 1)[0] for name, env in EXERCISE_ENVIRONMENTS.items()}
    return grade_answers(1, answer, expected, options={name: KNOWN_PREFIXES for name in expected},
                         what="the provider family picked in each environment", hint="the rule's order is printed in section 2: override, "
                         "Anthropic key, OpenAI key (only without a base URL), base URL, embedded model.")


def check_ledger_total(answer: Any) -> Verdict:
    """Exercise 2: ``answer = {"total cost_usd": number, "what the run cost": one of COST_MEANINGS}`` for a
    :class:`UsageLedger` holding :data:`EXERCISE_CALLS` (500 input and 50 output tokens each); USD within 1e-9."""
    ledger = UsageLedger()
    for model, price in EXERCISE_CALLS:
        ledger.record("ensemble", "forecaster", model, TokenUsage(input_tokens=500, output_tokens=50, calls=1, cost_usd=price))
    total = ledger.total().cost_usd
    unpriced = any(r["cost_usd"] is None for r in ledger.to_records())
    expected = {"total cost_usd": total, "what the run cost": "at least that" if unpriced else "exactly that"}
    return grade_answers(2, answer, expected, tolerance=1e-9, options={"what the run cost": COST_MEANINGS},
                         what="the ledger's total", hint="a known cost plus an unknown one: section 4 prints what "
                         "TokenUsage does with None, and the third call did cost something.")


#: Exercise 3's repeats of the first request: (messages changed?, options changed).
CACHE_REPEATS: tuple[str, ...] = ("the same request", "temperature=0.0 added", "max_tokens 50 -> 51",
                                  "a trailing space in the question")


def _reaches_model(messages: Sequence[dict[str, str]]) -> dict[str, bool]:
    """Which repeats of a request sent once through a CachingProvider reach the model (run in a scratch cache)."""
    base = {"max_tokens": 50, "seed": 0}
    spaced = [*messages[:-1], {**messages[-1], "content": messages[-1]["content"] + " "}]
    repeats = {CACHE_REPEATS[0]: (messages, base), CACHE_REPEATS[1]: (messages, {**base, "temperature": 0.0}),
               CACHE_REPEATS[2]: (messages, {**base, "max_tokens": 51}), CACHE_REPEATS[3]: (spaced, base)}
    with tempfile.TemporaryDirectory(prefix="fr-check-cache-") as scratch:
        inner = ScriptedProvider(responder=lambda msgs: "ok")
        cache = CachingProvider(inner, ResponseCache(Path(scratch)))
        cache.complete(list(messages), **base)
        out = {}
        for name, (msgs, options) in repeats.items():
            before = len(inner.requests)
            cache.complete(list(msgs), **options)
            out[name] = len(inner.requests) > before
    return out


def check_cache_repeats(answer: Any, messages: Sequence[dict[str, str]]) -> Verdict:
    """Exercise 3: ``answer = {repeat: True if it reaches the model}`` for every repeat in :data:`CACHE_REPEATS`
    of ``messages`` (the notebook's chat messages), sent once through a ``CachingProvider``."""
    return grade_answers(3, answer, _reaches_model(messages), what="whether each repeat reaches the model again",
                         hint="section 5 lists what the cache key covers; a repeat is free only if it is the same "
                         "request in every part.")
