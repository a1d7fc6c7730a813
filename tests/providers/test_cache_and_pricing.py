"""ResponseCache / CachingProvider, the price table, and keeping API keys out of reprs and cache files."""

from __future__ import annotations

import asyncio

import pytest

from agent_providers import ScriptedProvider
from agent_providers.anthropic_provider import AnthropicProvider
from agent_providers.cache import CachingProvider, ResponseCache, cache_key
from agent_providers.openai_provider import OpenAIProvider
from agent_providers.pricing import PRICE_SOURCE, PRICES_AS_OF, cost_usd, price_for
from agent_providers.retry import RetryingProvider, RetryPolicy
from agent_schemas import ChatMessage, ProviderOverloaded, TokenUsage

MSG = [{"role": "system", "content": "You forecast."}, {"role": "user", "content": "Will X happen by 2027?"}]


# --- cache -----------------------------------------------------------------------------------------


def test_second_call_is_served_from_cache_with_original_usage(tmp_path):
    inner = ScriptedProvider(["p_yes = 0.3"])
    cp = CachingProvider(inner, ResponseCache(tmp_path / "c"))
    first = cp.complete(MSG, temperature=0.0, max_tokens=64, seed=1)
    second = cp.complete(MSG, temperature=0.0, max_tokens=64, seed=1)
    assert len(inner.requests) == 1  # 0 inner calls for the second request
    assert second.text == first.text == "p_yes = 0.3"
    assert second.usage == first.usage
    assert second.usage.input_tokens == 4 + 6  # ceil(13/4) + ceil(22/4)
    assert (second.from_cache, second.attempts) == (True, 0)
    assert (first.from_cache, first.attempts) == (False, 1)
    assert cp.stats() == {"hits": 1, "misses": 1}


def test_cache_persists_across_instances(tmp_path):
    CachingProvider(ScriptedProvider(["0.8"]), ResponseCache(tmp_path)).complete(MSG)
    inner = ScriptedProvider([])  # would raise ScriptExhausted if called
    c = CachingProvider(inner, ResponseCache(tmp_path)).complete(MSG)
    assert c.text == "0.8" and c.from_cache and inner.requests == []


@pytest.mark.parametrize(
    "change",
    [
        {"temperature": 0.7},
        {"max_tokens": 10},
        {"seed": 2},
        {"json_schema": {"type": "object"}},
        {"messages": [*MSG[:1], {"role": "user", "content": "Will X happen by 2028?"}]},
        {"messages": [{"role": "user", "content": MSG[0]["content"]}, MSG[1]]},  # role changed
        {"messages": [{**MSG[0], "cache": True}, MSG[1]]},  # cache flag changed
    ],
)
def test_any_request_change_is_a_miss(tmp_path, change):
    inner = ScriptedProvider(["a", "b"])
    cp = CachingProvider(inner, ResponseCache(tmp_path))
    cp.complete(MSG)
    kwargs = {k: v for k, v in change.items() if k != "messages"}
    c = cp.complete(change.get("messages", MSG), **kwargs)
    assert c.text == "b" and not c.from_cache
    assert cp.stats() == {"hits": 0, "misses": 2}


def test_key_depends_on_provider_spec_and_model():
    msgs = [ChatMessage(role="user", content="q")]
    kw = dict(json_schema=None, temperature=None, max_tokens=None, seed=None)
    k1 = cache_key("openai/gpt-4.1-mini", "gpt-4.1-mini", msgs, **kw)
    k2 = cache_key("anthropic/claude-haiku-4-5", "claude-haiku-4-5", msgs, **kw)
    assert k1 != k2 and len(k1) == 64
    assert k1 == cache_key("openai/gpt-4.1-mini", "gpt-4.1-mini", msgs, **kw)


def test_errors_are_not_cached(tmp_path):
    inner = ScriptedProvider([ProviderOverloaded("529"), "recovered"])
    cp = CachingProvider(inner, ResponseCache(tmp_path))
    with pytest.raises(ProviderOverloaded):
        cp.complete(MSG)
    assert len(cp.cache) == 0
    assert cp.complete(MSG).text == "recovered"
    assert len(cp.cache) == 1


def test_async_and_with_retry_inside(tmp_path):
    inner = ScriptedProvider([ProviderOverloaded("529"), "0.55"])
    slept: list[float] = []

    async def no_sleep(s: float) -> None:
        slept.append(s)

    rp = RetryingProvider(inner, RetryPolicy(jitter=0.0), async_sleep=no_sleep)
    cp = CachingProvider(rp, ResponseCache(tmp_path))
    first = asyncio.run(cp.acomplete(MSG))
    second = asyncio.run(cp.acomplete(MSG))
    assert first.attempts == 2 and first.text == "0.55"
    assert second.attempts == 0 and second.from_cache and second.usage == first.usage
    assert len(inner.requests) == 2 and slept == [1.0]


# --- API keys never leak -----------------------------------------------------------------------


def test_api_key_not_in_repr_str_completion_or_cache_files(tmp_path, fake_api, fake_key):
    fake_api.enqueue_file("anthropic_cache_usage.json")
    fake_api.enqueue_file("openai_cached_reasoning.json")
    a = AnthropicProvider("claude-haiku-4-5", api_key=fake_key, base_url=fake_api.url)
    o = OpenAIProvider("gpt-4.1-mini", api_key=fake_key, base_url=f"{fake_api.url}/v1")
    cache = ResponseCache(tmp_path / "cache")
    texts = []
    for p in (a, o):
        wrapped = CachingProvider(RetryingProvider(p), cache)
        c = wrapped.complete(MSG)
        texts += [repr(p), str(p), repr(wrapped), str(wrapped), repr(c), c.model_dump_json()]
    cache.close()
    assert all(fake_key not in t for t in texts)
    files = [f for f in (tmp_path / "cache").rglob("*") if f.is_file()]
    assert files, "the cache wrote no file"
    assert all(fake_key.encode() not in f.read_bytes() for f in files)
    # the key was really sent, so the checks above are meaningful
    assert all(fake_key in r.headers.get("authorization", "") + r.headers.get("x-api-key", "") for r in fake_api.requests)


# --- pricing -----------------------------------------------------------------------------------


def test_price_lookup_accepts_prefix_and_listed_snapshots():
    assert price_for("anthropic/claude-sonnet-4-5-20250929") == price_for("claude-sonnet-4-5")
    assert price_for("gpt-4.1-mini-2025-04-14") == price_for("gpt-4.1-mini")  # a listed snapshot of it
    assert price_for("gpt-4.1-mini-2025-04-14").model_id == "gpt-4.1-mini"  # not gpt-4.1
    assert price_for("gpt-4.1-2025-04-14").model_id == "gpt-4.1"
    assert price_for("gpt-4.1-mini-experimental") is None
    assert price_for("mystery-model") is None
    assert len(PRICES_AS_OF) == 7 and PRICES_AS_OF[4] == "-"
    assert PRICE_SOURCE.startswith("genai-prices 0.")


def test_cost_by_hand():
    # Anthropic claude-haiku-4-5 ($1 in, $5 out, $0.10 read, $1.25 write): 1000 prompt tokens of which
    # 600 cache reads and 200 cache writes, 100 output
    u = TokenUsage(input_tokens=1000, output_tokens=100, cache_read_tokens=600, cache_write_tokens=200, calls=1)
    assert cost_usd("anthropic/claude-haiku-4-5", u) == pytest.approx((200 * 1 + 600 * 0.1 + 200 * 1.25 + 100 * 5) / 1e6)
    # OpenAI gpt-4o: cached 1.25, in 2.50, out 10
    v = TokenUsage(input_tokens=1000, output_tokens=50, cache_read_tokens=400, reasoning_tokens=20, calls=1)
    assert cost_usd("gpt-4o", v) == pytest.approx((600 * 2.5 + 400 * 1.25 + 50 * 10) / 1e6)


def test_cost_unknown_and_free():
    u = TokenUsage(input_tokens=10, output_tokens=5, calls=1)
    assert cost_usd("openai/gpt-99", u) is None
    assert cost_usd("local/smollm2", u) == 0.0
    assert cost_usd("scripted", u) == 0.0
    assert cost_usd("gpt-4o", TokenUsage(output_tokens=5)) is None  # input unknown -> cost unknown
