"""RetryingProvider with an injected sleep and seeded jitter: exact delays, attempt and usage accounting,
unusable Retry-After values, and get_provider's default retry layer."""

from __future__ import annotations

import asyncio
import math
import random

import pytest

from agent_providers import ScriptedProvider, get_provider, spent_usage
from agent_providers.anthropic_provider import AnthropicProvider
from agent_providers.errors_map import parse_retry_after
from agent_providers.openai_provider import OpenAIProvider
from agent_providers.retry import RetryingProvider, RetryPolicy
from agent_schemas import (
    AuthenticationFailed,
    EmptyResponse,
    ProviderConnectionError,
    ProviderOverloaded,
    ProviderTimeout,
    RateLimited,
    ResponseRefused,
    ResponseTruncated,
    TokenUsage,
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


# --- usage of failed attempts is summed, never lost ---------------------------------------------------


def billed(n_in: int, n_out: int) -> TokenUsage:
    return TokenUsage(input_tokens=n_in, output_tokens=n_out, calls=1, cost_usd=0.0)


def test_completion_after_billed_failures_carries_their_usage():
    inner = ScriptedProvider([EmptyResponse("e", usage=billed(10, 2)), overloaded(), EmptyResponse("e", usage=billed(7, 0)), "ok"])
    c = RetryingProvider(inner, RetryPolicy(jitter=0.0), sleep=lambda s: None).complete(MSG)
    own = inner.usage_for(inner.requests[-1]["messages"], "ok")
    assert c.attempts == 4
    assert c.usage == billed(10, 2) + billed(7, 0) + own
    assert c.usage.calls == 3  # the 529 was not billed


def test_exhausted_retries_raise_with_the_summed_usage():
    errors = [EmptyResponse("e1", usage=billed(5, 1)), EmptyResponse("e2", usage=billed(6, 2)), EmptyResponse("e3", usage=billed(7, 3))]
    rp = RetryingProvider(ScriptedProvider(errors), RetryPolicy(max_attempts=3, jitter=0.0), sleep=lambda s: None)
    with pytest.raises(EmptyResponse) as ei:
        rp.complete(MSG)
    assert ei.value is errors[-1]
    assert spent_usage(ei.value) == billed(18, 6).model_copy(update={"calls": 3})


def test_non_retryable_error_after_billed_attempts_carries_all_of_them():
    refused = ResponseRefused("no", stop_reason="content_filter", usage=billed(9, 1))
    rp = RetryingProvider(ScriptedProvider([EmptyResponse("e", usage=billed(4, 0)), refused, "never"]),
                          RetryPolicy(jitter=0.0), sleep=lambda s: None)
    with pytest.raises(ResponseRefused):
        rp.complete(MSG)
    assert (refused.usage.calls, refused.usage.input_tokens, refused.usage.output_tokens) == (2, 13, 1)
    assert refused.details["attempts"] == 2


def test_an_untyped_error_after_a_billed_attempt_still_carries_the_usage():
    bug = ValueError("a bug in a scripted responder")
    rp = RetryingProvider(ScriptedProvider([EmptyResponse("e", usage=billed(4, 1)), bug]), RetryPolicy(jitter=0.0),
                          sleep=lambda s: None)
    with pytest.raises(ValueError):
        rp.complete(MSG)
    assert spent_usage(bug) == billed(4, 1)


def test_nothing_billed_means_no_usage_attached():
    err = overloaded()
    rp = RetryingProvider(ScriptedProvider([err]), RetryPolicy(max_attempts=1), sleep=lambda s: None)
    with pytest.raises(ProviderOverloaded):
        rp.complete(MSG)
    assert err.usage is None and spent_usage(err) == TokenUsage()


# --- Retry-After values that are not a delay -------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "nan"}, None), ({"retry-after": "NaN"}, None), ({"retry-after": "inf"}, None),
        ({"retry-after": "-inf"}, None), ({"retry-after": "1e400"}, None), ({"retry-after": "-5"}, None),
        ({"retry-after": "garbage"}, None), ({"retry-after": ""}, None), ({"retry-after": "-0"}, 0.0),
        ({"retry-after-ms": "nan"}, None), ({"retry-after-ms": "nan", "retry-after": "3"}, 3.0),
        ({"retry-after-ms": "-100", "retry-after": "inf"}, None), ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "2"}, 2.0), ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
        ({"retry-after": "Mon, 99 Foo 2015 07:28:00 GMT"}, None),
    ],
)
def test_parse_retry_after_accepts_only_finite_non_negative_delays(headers, expected):
    got = parse_retry_after(headers)
    assert got == expected and (got is None or (math.isfinite(got) and got >= 0 and math.copysign(1, got) == 1))


def test_policy_ignores_an_unusable_hint_and_backs_off():
    policy = RetryPolicy(base_delay_s=1.0, jitter=0.0)
    rng = random.Random(0)
    for bad in (float("nan"), float("inf"), -3.0):
        assert policy.delay_s(2, RateLimited("429", retry_after_s=bad), rng) == 2.0


@pytest.mark.parametrize("value", ["nan", "inf", "-5", "garbage"])
def test_retry_after_nan_over_http_gives_backoff_delays_not_nan(fake_api, fake_key, value):
    for _ in range(3):
        fake_api.enqueue_file("openai_429.json", status=429, headers={"retry-after": value})
    slept: list[float] = []
    p = OpenAIProvider("gpt-4.1-mini", api_key=fake_key, base_url=f"{fake_api.url}/v1", timeout_s=5)
    rp = RetryingProvider(p, RetryPolicy(max_attempts=3, base_delay_s=1.0, jitter=0.0), sleep=slept.append)
    with pytest.raises(RateLimited) as ei:
        rp.complete(MSG)
    assert ei.value.retry_after_s is None
    assert slept == [1.0, 2.0]


# --- get_provider: the one retry layer by default ------------------------------------------------


def test_get_provider_anthropic_retries_a_529_by_default(fake_api, fake_key, monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr("agent_providers.retry.time.sleep", slept.append)
    fake_api.enqueue_file("anthropic_529.json", status=529)
    fake_api.enqueue_file("anthropic_cache_usage.json")
    p = get_provider("anthropic/claude-haiku-4-5", api_key=fake_key, base_url=fake_api.url, timeout_s=5)
    c = p.complete(MSG)
    assert isinstance(p, RetryingProvider) and p.policy == RetryPolicy()
    assert c.attempts == 2 and len(fake_api.requests) == 2
    assert len(slept) == 1 and 0.8 <= slept[0] <= 1.2  # RetryPolicy(): 1 s base backoff, jitter 0.2
    assert p.spec == "anthropic/claude-haiku-4-5" and p.key_env_var == "ANTHROPIC_API_KEY"


def test_get_provider_retry_opt_out_and_custom_policy(fake_api, fake_key):
    fake_api.enqueue_file("anthropic_529.json", status=529)
    bare = get_provider("anthropic/claude-haiku-4-5", api_key=fake_key, base_url=fake_api.url, retry=False)
    assert isinstance(bare, AnthropicProvider)
    with pytest.raises(ProviderOverloaded):
        bare.complete(MSG)
    assert len(fake_api.requests) == 1
    policy = RetryPolicy(max_attempts=2, base_delay_s=0.0, max_delay_s=0.0)
    custom = get_provider("openai/gpt-4.1-mini", api_key=fake_key, retry=policy)
    assert isinstance(custom, RetryingProvider) and custom.policy is policy
    compatible = get_provider("openai-compatible/m@http://127.0.0.1:9/v1")
    assert isinstance(compatible, RetryingProvider) and isinstance(compatible.inner, OpenAIProvider)


def test_scripted_is_never_wrapped():
    assert type(get_provider("scripted")) is ScriptedProvider
    assert type(get_provider("scripted/other", retry=RetryPolicy())) is ScriptedProvider


def test_runner_stacks_exactly_one_retry_layer(tmp_path, monkeypatch, fake_key):
    from benchmarks.harness.config import RunConfig
    from benchmarks.harness.runner import BenchmarkRunner

    monkeypatch.setenv("OPENAI_API_KEY", fake_key)
    runner = BenchmarkRunner(RunConfig(providers=["openai/gpt-4.1-mini"], output_dir=str(tmp_path), run_id="r"),
                             progress=False)
    (p,) = runner.stack.build()
    chain = []
    while p is not None:
        chain.append(type(p).__name__)
        p = getattr(p, "inner", None)
    # cache -> spend meter -> retry -> rate limit -> adapter (benchmarks.harness.cost_cap): a cache hit is never paid,
    # the meter sees retried attempts' usage, and every attempt waits for the provider's limiter (issue 14)
    assert chain == ["CachingProvider", "MeteredProvider", "RetryingProvider", "RateLimitedProvider", "OpenAIProvider"]
    assert chain.count("RetryingProvider") == 1
