"""ResponseCache / CachingProvider (plain JSON only, degrades instead of failing), prices from genai-prices,
and keeping API keys out of reprs and cache files."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3

import diskcache
import pytest

from agent_providers import ScriptedProvider
from agent_providers.anthropic_provider import AnthropicProvider
from agent_providers.cache import CachingProvider, ResponseCache, cache_key
from agent_providers.openai_provider import OpenAIProvider
from agent_providers.pricing import PRICE_SOURCE, PRICES_AS_OF, cost_usd, price_for
from agent_providers.retry import RetryingProvider, RetryPolicy
from agent_schemas import ChatMessage, Completion, ProviderOverloaded, TokenUsage

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


# --- plain JSON only: a planted pickle never runs, anything unusable is a miss --------------------


class _PicklePayload:
    """Unpickling this creates ``path``: the proof that code in a cache entry ran."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _key_for(cp: CachingProvider) -> str:
    from agent_providers.base import normalise_messages

    return cp.key(normalise_messages(MSG), json_schema=None, temperature=None, max_tokens=None, seed=None)


def test_planted_pickle_entry_never_runs_and_is_a_miss(tmp_path, caplog):
    marker = tmp_path / "PAYLOAD_RAN"
    cdir = tmp_path / "shared-cache"
    cp = CachingProvider(ScriptedProvider(["fresh answer"]), ResponseCache(cdir))
    key = _key_for(cp)
    with diskcache.Cache(str(cdir)) as planted:  # what someone with write access to the folder could do
        planted.set(key, _PicklePayload(marker))
    with caplog.at_level(logging.WARNING, logger="agent_providers.cache"):
        c = cp.complete(MSG)
    assert not marker.exists()  # no code ran
    assert c.text == "fresh answer" and not c.from_cache  # a miss: the provider answered
    assert cp.stats() == {"hits": 0, "misses": 1} and cp.cache.unusable_entries == 1
    assert "pickle" in caplog.text
    # control: the payload is real, diskcache's own get would have run it
    other = tmp_path / "control"
    with diskcache.Cache(str(other)) as plain:
        plain.set(key, _PicklePayload(marker))
        plain.get(key)
    assert marker.exists()


@pytest.mark.parametrize(
    "stored",
    ["not json {", json.dumps({"text": 1}), json.dumps([1, 2]), b"\xff\xfe bytes", 42, 3.5, "x" * 70_000],
    ids=["not-json", "json-not-a-completion", "json-array", "non-utf8-bytes", "int", "float", "large-text-file"],
)
def test_anything_but_a_completion_json_is_a_miss(tmp_path, stored):
    cdir = tmp_path / "c"
    cp = CachingProvider(ScriptedProvider(["fresh"]), ResponseCache(cdir))
    with diskcache.Cache(str(cdir)) as planted:
        planted.set(_key_for(cp), stored)
    c = cp.complete(MSG)
    assert c.text == "fresh" and not c.from_cache
    assert cp.complete(MSG).from_cache  # the fresh answer replaced the unusable entry


def test_value_file_outside_the_cache_folder_is_not_read(tmp_path):
    cdir = tmp_path / "c"
    cp = CachingProvider(ScriptedProvider(["fresh"]), ResponseCache(cdir))
    good = Completion(text="planted", usage=TokenUsage(calls=1), model="m", provider="scripted")
    outside = tmp_path / "outside.json"
    outside.write_text(good.model_dump_json())
    with diskcache.Cache(str(cdir)) as planted:
        planted.set(_key_for(cp), "x" * 70_000)  # stored as a value file (MODE_TEXT)
    con = sqlite3.connect(str(cdir / "cache.db"))
    con.execute("UPDATE Cache SET filename = ?", (str(outside),))
    con.commit()
    con.close()
    assert cp.complete(MSG).text == "fresh" and cp.cache.unusable_entries == 1


def test_values_are_stored_as_plain_json_text(tmp_path):
    cp = CachingProvider(ScriptedProvider(["0.4"]), ResponseCache(tmp_path / "c"))
    cp.complete(MSG)
    cp.cache.close()
    con = sqlite3.connect(str(tmp_path / "c" / "cache.db"))
    ((mode, value),) = con.execute("SELECT mode, value FROM Cache").fetchall()
    con.close()
    assert mode == diskcache.core.MODE_RAW and isinstance(value, str)
    assert Completion.model_validate_json(value).text == "0.4"


def test_cache_database_is_created_on_first_use_only(tmp_path):
    cache = ResponseCache(tmp_path / "c")
    CachingProvider(ScriptedProvider(["a"]), cache)
    assert not (tmp_path / "c").exists()
    cache.get("0" * 64)
    assert (tmp_path / "c" / "cache.db").exists()


# --- cache failures degrade to uncached, with one warning ------------------------------------------


def test_locked_database_degrades_to_uncached_and_returns_the_paid_answer(tmp_path, caplog):
    cdir = tmp_path / "c"
    cache = ResponseCache(cdir, timeout_s=0.2)
    assert len(cache) == 0  # creates the database
    other_writer = sqlite3.connect(str(cdir / "cache.db"), timeout=0, isolation_level=None)
    other_writer.execute("BEGIN EXCLUSIVE")  # another run holds the write lock
    inner = ScriptedProvider(["paid 1", "paid 2", "paid 3"])
    cp = CachingProvider(inner, cache)
    try:
        with caplog.at_level(logging.WARNING, logger="agent_providers.cache"):
            answers = [cp.complete([{"role": "user", "content": f"q{i}"}]).text for i in range(3)]
    finally:
        other_writer.execute("ROLLBACK")
        other_writer.close()
    assert answers == ["paid 1", "paid 2", "paid 3"]  # every paid call's completion returned
    assert not cache.enabled
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "database is locked" in warnings[0].getMessage()
    assert "without the cache" in warnings[0].getMessage()


def test_corrupt_database_file_degrades_to_uncached(tmp_path, caplog):
    cdir = tmp_path / "c"
    cdir.mkdir()
    (cdir / "cache.db").write_bytes(b"this is not an sqlite database" * 100)
    cp = CachingProvider(ScriptedProvider(["a", "b"]), ResponseCache(cdir))
    with caplog.at_level(logging.WARNING, logger="agent_providers.cache"):
        assert [cp.complete(MSG).text, cp.complete(MSG).text] == ["a", "b"]
    assert len(caplog.records) == 1 and not cp.cache.enabled


def test_unwritable_cache_folder_degrades_to_uncached(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    cp = CachingProvider(ScriptedProvider(["a"]), ResponseCache(blocker / "cache"))
    assert cp.complete(MSG).text == "a" and not cp.cache.enabled


def test_two_processes_style_sharing_of_one_folder_works(tmp_path):
    # two runs sharing a cache folder: separate ResponseCache objects on the same database
    first = CachingProvider(ScriptedProvider(["shared"]), ResponseCache(tmp_path / "c"))
    second = CachingProvider(ScriptedProvider([]), ResponseCache(tmp_path / "c"))
    first.complete(MSG)
    assert second.complete(MSG).text == "shared" and first.cache.enabled and second.cache.enabled


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


# Prices below: the providers' pricing pages as listed by genai-prices 0.2.3 (USD per 1e6 tokens).
@pytest.mark.parametrize(
    ("model", "inp", "out"),
    [
        ("openai/gpt-4o-2024-05-13", 5.00, 15.00),  # the May 2024 snapshot: not the gpt-4o alias's price
        ("openai/gpt-4o", 2.50, 10.00),
        ("openai/gpt-4o-2024-08-06", 2.50, 10.00),  # the snapshot the alias pointed to
        ("openai/gpt-4.1-mini", 0.40, 1.60),
        ("openai/gpt-4.1-mini-2025-04-14", 0.40, 1.60),
        ("anthropic/claude-sonnet-4-6", 3.00, 15.00),
        ("anthropic/claude-haiku-4-5-20251001", 1.00, 5.00),
    ],
)
def test_exact_snapshot_prices(model, inp, out):
    u = TokenUsage(input_tokens=1000, output_tokens=100, calls=1)
    assert cost_usd(model, u) == pytest.approx((1000 * inp + 100 * out) / 1e6, rel=1e-12)


@pytest.mark.parametrize("model", ["openai/gpt-4o-2099-01-01", "openai/gpt-4.1-mini-2026-01-01", "openai/gpt-99",
                                   "anthropic/claude-imaginary-9", "openai-compatible/qwen@http://127.0.0.1:8000/v1",
                                   "openai/claude-haiku-4-5"])
def test_unknown_model_or_snapshot_costs_none_not_the_alias_price(model):
    assert cost_usd(model, TokenUsage(input_tokens=1000, output_tokens=100, calls=1)) is None


def test_batch_pricing_is_half_of_list_where_listed():
    u = TokenUsage(input_tokens=1000, output_tokens=100, calls=1)
    for model in ("openai/gpt-4.1-mini", "anthropic/claude-haiku-4-5"):
        assert cost_usd(model, u, batch=True) == pytest.approx(cost_usd(model, u) / 2, rel=1e-12)


def test_adapter_prices_the_snapshot_the_reply_reports(fake_api, fake_key, openai_reply):
    # asked for the alias, answered by the May 2024 snapshot: billed at that snapshot's price
    fake_api.enqueue_reply(200, openai_reply("ok", prompt=1000, completion=100, model="gpt-4o-2024-05-13"))
    c = OpenAIProvider("gpt-4o", api_key=fake_key, base_url=f"{fake_api.url}/v1").complete(MSG)
    assert c.model == "gpt-4o-2024-05-13"
    assert c.usage.cost_usd == pytest.approx((1000 * 5.00 + 100 * 15.00) / 1e6)


def test_the_key_is_the_sha256_of_the_canonical_json_of_the_request():
    """The key is assembled from pieces (issue 38); it equals the SHA-256 of ``json.dumps(doc, sort_keys=True,
    separators=(",", ":"), ensure_ascii=False)``, so caches and recorded request keys written before stay valid."""
    import hashlib
    import json

    from agent_providers.cache import CACHE_FORMAT_VERSION, _schema_json, cache_key

    def reference(spec, model, messages, *, json_schema, temperature, max_tokens, seed):
        doc = {"v": CACHE_FORMAT_VERSION, "spec": spec, "model": model,
               "messages": [{"role": m.role, "content": m.content, "cache": m.cache} for m in messages],
               "json_schema": _schema_json(json_schema), "temperature": temperature, "max_tokens": max_tokens, "seed": seed}
        return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")).hexdigest()

    messages = [ChatMessage(role="system", content='quotes " and \\ and é, ☃ \u2028 \x00 \t'),
                ChatMessage(role="user", content="two\nlines", cache=True), ChatMessage(role="assistant", content="")]
    for options in (dict(json_schema=None, temperature=None, max_tokens=None, seed=None),
                    dict(json_schema={"type": "object", "properties": {"é": {"enum": list(range(101))}}}, temperature=0.1,
                         max_tokens=512, seed=7),
                    dict(json_schema={}, temperature=1e-7, max_tokens=0, seed=-1)):
        for spec, model in (("openai/gpt-4.1-mini", "gpt-4.1-mini"), ('odd "spec"/ü', "")):
            for msgs in (messages, messages[:1], list(messages)):
                assert cache_key(spec, model, msgs, **options) == reference(spec, model, msgs, **options)
