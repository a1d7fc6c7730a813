"""RetryingProvider with an injected sleep and seeded jitter: exact delays and attempt accounting."""

from __future__ import annotations

import asyncio
import random

import pytest

from agent_providers import ScriptedProvider
from agent_providers.retry import RetryingProvider, RetryPolicy
from agent_schemas import (
    AuthenticationFailed,
    EmptyResponse,
    ProviderConnectionError,
    ProviderOverloaded,
    ProviderTimeout,
    RateLimited,
    ResponseTruncated,
)

MSG = [{"role": "user", "content": "Will it rain tomorrow?"}]


def overloaded(retry_after_s=None):
    return ProviderOverloaded("529 Overloaded", retry_after_s=retry_after_s, status_code=529)


def test_backoff_without_jitter_doubles_and_caps():
    slept: list[float] = []
    inner = ScriptedProvider([overloaded(), overloaded(), overloaded(), overloaded(), "ok"])
    rp = RetryingProvider(inner, RetryPolicy(max_attempts=5, base_delay_s=10, max_delay_s=25, jitter=0.0), sleep=slept.append)
    c = rp.complete(MSG)
    assert slept == [10.0, 20.0, 25.0, 25.0]
    assert c.attempts == 5 and c.text == "ok"


def test_seeded_jitter_gives_exact_reproducible_delays():
    slept: list[float] = []
    inner = ScriptedProvider([ProviderTimeout("t"), ProviderConnectionError("c"), EmptyResponse("e"), "ok"])
    policy = RetryPolicy(max_attempts=4, base_delay_s=1.0, max_delay_s=30.0, jitter=0.2, seed=42)
    RetryingProvider(inner, policy, sleep=slept.append).complete(MSG)
    # oracle: the same generator drawn by hand; delay_n = 2**(n-1) * (1 + 0.2 * u_n)
    rng = random.Random(42)
    expected = [b * (1 + 0.2 * rng.uniform(-1, 1)) for b in (1.0, 2.0, 4.0)]
    assert slept == pytest.approx(expected, abs=1e-12)
    # and concretely for seed 42 (u = 0.2789, -0.9499, -0.4499):
    assert slept == pytest.approx([1.0557, 1.6200, 3.6401], abs=1e-4)
    # same seed, same delays
    slept2: list[float] = []
    inner2 = ScriptedProvider([ProviderTimeout("t"), ProviderTimeout("t"), ProviderTimeout("t"), "ok"])
    RetryingProvider(inner2, policy, sleep=slept2.append).complete(MSG)
    assert slept2 == slept


def test_retry_after_is_honoured_and_capped():
    slept: list[float] = []
    inner = ScriptedProvider([RateLimited("429", retry_after_s=7), RateLimited("429", retry_after_s=300), "ok"])
    rp = RetryingProvider(inner, RetryPolicy(max_delay_s=30, seed=1), sleep=slept.append)
    assert rp.complete(MSG).attempts == 3
    assert slept == [7.0, 30.0]


def test_overloaded_retry_after_is_used():
    slept: list[float] = []
    inner = ScriptedProvider([overloaded(retry_after_s=3.5), "ok"])
    RetryingProvider(inner, RetryPolicy(seed=0), sleep=slept.append).complete(MSG)
    assert slept == [3.5]


def test_gives_up_after_max_attempts_and_reraises_last_error():
    slept: list[float] = []
    errors = [overloaded(), overloaded(), overloaded()]
    inner = ScriptedProvider(errors)
    rp = RetryingProvider(inner, RetryPolicy(max_attempts=3, jitter=0.0), sleep=slept.append)
    with pytest.raises(ProviderOverloaded) as ei:
        rp.complete(MSG)
    assert ei.value is errors[-1]
    assert ei.value.details["attempts"] == 3
    assert slept == [1.0, 2.0]
    assert rp.stats() == {"calls": 3, "ok": 0, "retries": 2, "failures": 1}


@pytest.mark.parametrize(
    "error", [AuthenticationFailed("401"), ResponseTruncated("cut", stop_reason="length"), ValueError("bug")]
)
def test_non_retryable_errors_are_not_retried(error):
    slept: list[float] = []
    inner = ScriptedProvider([error, "never reached"])
    rp = RetryingProvider(inner, sleep=slept.append)
    with pytest.raises(type(error)):
        rp.complete(MSG)
    assert slept == [] and inner.remaining == 1
    assert rp.stats() == {"calls": 1, "ok": 0, "retries": 0, "failures": 1}


def test_counters_add_up_over_many_requests():
    inner = ScriptedProvider([overloaded(), "a", "b", RateLimited("x"), RateLimited("x"), "c", AuthenticationFailed("no")])
    rp = RetryingProvider(inner, RetryPolicy(jitter=0.0), sleep=lambda s: None)
    texts = [rp.complete(MSG).text for _ in range(3)]
    with pytest.raises(AuthenticationFailed):
        rp.complete(MSG)
    assert texts == ["a", "b", "c"]
    s = rp.stats()
    assert s == {"calls": 7, "ok": 3, "retries": 3, "failures": 1}
    assert s["calls"] == s["ok"] + s["retries"] + s["failures"]


def test_async_path_uses_async_sleep():
    slept: list[float] = []

    async def fake_sleep(s: float) -> None:
        slept.append(s)

    inner = ScriptedProvider([overloaded(), overloaded(), "ok"])
    rp = RetryingProvider(inner, RetryPolicy(jitter=0.0, base_delay_s=0.5), async_sleep=fake_sleep, sleep=None)
    c = asyncio.run(rp.acomplete(MSG))
    assert c.attempts == 3 and slept == [0.5, 1.0]


def test_wrapper_keeps_spec_and_usage():
    inner = ScriptedProvider([overloaded(), "forty two"])
    rp = RetryingProvider(inner, RetryPolicy(jitter=0.0), sleep=lambda s: None)
    c = rp.complete(MSG)
    assert rp.spec == "scripted"
    assert c.usage == inner.usage_for(inner.requests[-1]["messages"], "forty two")
    assert c.usage.input_tokens == 6  # ceil(22 / 4)


@pytest.mark.parametrize(
    ("kw", "field"),
    [({"max_attempts": 0}, "max_attempts"), ({"base_delay_s": -1}, "base_delay_s"),
     ({"max_delay_s": 0.5}, "max_delay_s"), ({"jitter": 1.5}, "jitter")],
)
def test_policy_validation_names_the_field(kw, field):
    with pytest.raises(ValueError, match=field):
        RetryPolicy(**kw)
