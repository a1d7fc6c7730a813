"""Every provider wrapper is a :class:`WrappingProvider`: the inner provider's identity, its close, and
the call options passed through unchanged (sync and async)."""

from __future__ import annotations

import asyncio

import pytest

from agent_providers import CachingProvider, ResponseCache, RetryingProvider, ScriptedProvider, WrappingProvider
from agent_providers.recording import RecordingProvider
from agent_research.frameworks.bridge import ProviderClock, TimedProvider
from tests.doubles.faults import FaultInjectingProvider

OPTIONS = dict(json_schema={"type": "object"}, temperature=0.3, max_tokens=77, seed=5)


class Closable(ScriptedProvider):
    name = "closable"
    supports_json_schema = True
    needs_key = True
    key_env_var = "CLOSABLE_KEY"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, model="m1", **kwargs)
        self.closed = 0

    def close(self):
        self.closed += 1


WRAPPERS = {
    "retry": lambda p, tmp: RetryingProvider(p),
    "cache": lambda p, tmp: CachingProvider(p, ResponseCache(tmp / "c")),
    "recording": lambda p, tmp: RecordingProvider(p, "forecaster"),
    "faults": lambda p, tmp: FaultInjectingProvider(p, {}, seed=0),
    "timed": lambda p, tmp: TimedProvider(p, ProviderClock()),
}


@pytest.mark.parametrize("kind", WRAPPERS)
def test_wrapper_has_the_inner_identity_passes_options_and_closes_the_inner(kind, tmp_path):
    inner = Closable(responder=lambda msgs: "answer")
    w = WRAPPERS[kind](inner, tmp_path)
    assert isinstance(w, WrappingProvider)
    assert (w.spec, w.model, w.name) == ("scripted/m1", "m1", "closable")
    assert (w.supports_json_schema, w.needs_key, w.key_env_var) == (True, True, "CLOSABLE_KEY")
    assert w.complete([{"role": "user", "content": "a"}], **OPTIONS).text == "answer"
    assert asyncio.run(w.acomplete([{"role": "user", "content": "b"}], **OPTIONS)).text == "answer"
    assert [{k: r[k] for k in OPTIONS} for r in inner.requests] == [OPTIONS, OPTIONS]
    assert [r["messages"][0].content for r in inner.requests] == ["a", "b"]
    w.close()
    assert inner.closed == 1


def test_a_plain_wrapper_passes_every_call_through():
    inner = ScriptedProvider(["x"])
    w = WrappingProvider(inner)
    c = w.complete([{"role": "user", "content": "q"}], **OPTIONS)
    assert c.text == "x" and c.usage == inner.usage_for(inner.requests[0]["messages"], "x")
    assert repr(w) == "WrappingProvider(ScriptedProvider(spec='scripted'))"
