"""OpenAIProvider against recorded Chat Completions bodies served from a loopback server."""

from __future__ import annotations

import pytest

from agent_providers import get_provider
from agent_providers.openai_provider import DEFAULT_OPENAI_MODEL, OpenAIProvider
from agent_providers.retry import RetryingProvider, RetryPolicy
from agent_schemas import (
    AuthenticationFailed,
    BadRequest,
    EmptyResponse,
    ProviderOverloaded,
    RateLimited,
    ResponseTruncated,
)

SCHEMA = {
    "type": "object",
    "properties": {"p_yes_percent": {"type": "integer", "enum": list(range(101))}, "rationale": {"type": "string"}},
    "required": ["p_yes_percent", "rationale"],
}


def make(fake_api, fake_key, **kw) -> OpenAIProvider:
    return OpenAIProvider("gpt-4.1-mini", api_key=fake_key, base_url=f"{fake_api.url}/v1", timeout_s=5, **kw)


def test_cached_and_reasoning_tokens_are_subsets_not_added(fake_api, fake_key):
    fake_api.enqueue_file("openai_cached_reasoning.json")
    c = make(fake_api, fake_key).complete(
        [{"role": "system", "content": "Forecast."}, {"role": "user", "content": "Rate cut in March?"}],
        json_schema=SCHEMA,
        temperature=0.2,
        max_tokens=400,
        seed=11,
    )
    u = c.usage
    assert (u.input_tokens, u.output_tokens) == (2006, 300)  # not 2006 + 1920, not 300 + 192
    assert (u.cache_read_tokens, u.reasoning_tokens) == (1920, 192)
    assert u.cache_write_tokens is None
    assert u.total_tokens == 2306
    # gpt-4.1-mini: (2006 - 1920) x $0.40 + 1920 x $0.10 + 300 x $1.60 per 1e6 tokens = $0.0007064
    assert u.cost_usd == pytest.approx(0.0007064)
    assert c.model == "gpt-4.1-mini-2025-04-14"
    assert c.stop_reason == "stop"
    assert '"p_yes_percent": 35' in c.text


def test_request_body_fields(fake_api, fake_key):
    fake_api.enqueue_file("openai_cached_reasoning.json")
    make(fake_api, fake_key).complete(
        [{"role": "system", "content": "Forecast."}, {"role": "user", "content": "q", "cache": True}],
        json_schema=SCHEMA,
        temperature=0.2,
        max_tokens=400,
        seed=11,
    )
    (req,) = fake_api.requests
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == f"Bearer {fake_key}"
    body = req.json
    assert body["messages"] == [{"role": "system", "content": "Forecast."}, {"role": "user", "content": "q"}]
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": SCHEMA, "strict": False},
    }
    assert body["max_completion_tokens"] == 400 and "max_tokens" not in body
    assert (body["temperature"], body["seed"]) == (0.2, 11)


def test_compatible_server_gets_max_tokens_and_json_object_schema(fake_api):
    fake_api.enqueue_file("openai_null_details.json")
    p = OpenAIProvider(
        "smollm2", base_url=f"{fake_api.url}/v1", compatible=True, compatible_json_format="json_object_schema"
    )
    c = p.complete([{"role": "user", "content": "q"}], json_schema=SCHEMA, max_tokens=50)
    body = fake_api.requests[0].json
    assert body["max_tokens"] == 50 and "max_completion_tokens" not in body
    assert body["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert p.spec == f"openai-compatible/smollm2@{fake_api.url}/v1"
    assert c.provider == p.spec
    assert c.usage.cost_usd is None  # a compatible server's price is unknown


def test_compatible_auto_falls_back_to_json_object_form_once(fake_api):
    fake_api.enqueue_reply(422, {"detail": [{"loc": ["body", "response_format", "type"], "msg": "unexpected value"}]})
    fake_api.enqueue_file("openai_null_details.json")
    fake_api.enqueue_file("openai_null_details.json")
    p = OpenAIProvider("smollm2", base_url=f"{fake_api.url}/v1", compatible=True)
    assert p.compatible_json_format == "auto"
    p.complete([{"role": "user", "content": "q"}], json_schema=SCHEMA)
    p.complete([{"role": "user", "content": "q"}], json_schema=SCHEMA)
    formats = [r.json["response_format"]["type"] for r in fake_api.requests]
    assert formats == ["json_schema", "json_object", "json_object"]  # fell back once, then remembered
    assert p.compatible_json_format == "json_object_schema"


def test_official_openai_does_not_fall_back(fake_api, fake_key):
    fake_api.enqueue_file("openai_404.json", status=400)
    with pytest.raises(BadRequest):
        make(fake_api, fake_key).complete([{"role": "user", "content": "q"}], json_schema=SCHEMA)
    assert len(fake_api.requests) == 1


def test_null_details_give_none_not_a_crash(fake_api, fake_key):
    fake_api.enqueue_file("openai_null_details.json")
    c = make(fake_api, fake_key).complete([{"role": "user", "content": "q"}])
    u = c.usage
    assert (u.input_tokens, u.output_tokens) == (57, 17)
    assert u.cache_read_tokens is None and u.reasoning_tokens is None and u.cache_write_tokens is None
    # gpt-4o-mini: 57 x $0.15 + 17 x $0.60 per 1e6 tokens
    assert u.cost_usd == pytest.approx((57 * 0.15 + 17 * 0.60) / 1e6)


def test_missing_usage_block_gives_unknown_usage(fake_api, fake_key, recorded_body):
    body = recorded_body("openai_null_details.json")
    del body["usage"]
    fake_api.enqueue_reply(200, body)
    u = make(fake_api, fake_key).complete([{"role": "user", "content": "q"}]).usage
    assert u.input_tokens is None and u.output_tokens is None and u.calls == 1 and u.cost_usd is None


def test_length_raises_truncated(fake_api, fake_key):
    fake_api.enqueue_file("openai_length.json")
    with pytest.raises(ResponseTruncated) as ei:
        make(fake_api, fake_key).complete([{"role": "user", "content": "q"}], max_tokens=16)
    assert ei.value.text == '{"p_yes_percent": 55, "rationale": "Turnout in'


def test_null_content_with_stop_raises_empty_response(fake_api, fake_key):
    fake_api.enqueue_file("openai_null_content.json")
    with pytest.raises(EmptyResponse) as ei:
        make(fake_api, fake_key).complete([{"role": "user", "content": "q"}])
    assert ei.value.details["stop_reason"] == "stop"
    assert ei.value.retryable


def test_429_with_retry_after_then_success_waits_the_server_delay(fake_api, fake_key):
    fake_api.enqueue_file("openai_429.json", status=429, headers={"retry-after": "2"})
    fake_api.enqueue_file("openai_cached_reasoning.json")
    slept: list[float] = []
    rp = RetryingProvider(make(fake_api, fake_key), RetryPolicy(seed=0), sleep=slept.append)
    c = rp.complete([{"role": "user", "content": "q"}])
    assert slept == [2.0]
    assert c.attempts == 2
    assert rp.stats() == {"calls": 2, "ok": 1, "retries": 1, "failures": 0}


def test_429_retry_after_ms_is_preferred(fake_api, fake_key):
    fake_api.enqueue_file("openai_429.json", status=429, headers={"retry-after-ms": "240", "retry-after": "1"})
    with pytest.raises(RateLimited) as ei:
        make(fake_api, fake_key).complete([{"role": "user", "content": "q"}])
    assert ei.value.retry_after_s == pytest.approx(0.24)


def test_503_is_overloaded(fake_api, fake_key):
    fake_api.enqueue_file("openai_503.json", status=503)
    with pytest.raises(ProviderOverloaded) as ei:
        make(fake_api, fake_key).complete([{"role": "user", "content": "q"}])
    assert ei.value.status_code == 503
    assert ei.value.retry_after_s is None


def test_404_is_bad_request_and_not_retried(fake_api, fake_key):
    fake_api.enqueue_file("openai_404.json", status=404)
    slept: list[float] = []
    rp = RetryingProvider(make(fake_api, fake_key), sleep=slept.append)
    with pytest.raises(BadRequest, match="gpt-9-imaginary"):
        rp.complete([{"role": "user", "content": "q"}])
    assert slept == [] and len(fake_api.requests) == 1
    assert rp.stats() == {"calls": 1, "ok": 0, "retries": 0, "failures": 1}


def test_401_echoing_the_key_is_redacted(fake_api, fake_key):
    # worst case: a server that echoes the full key back in its error message
    fake_api.enqueue_file("openai_401.json", status=401, API_KEY=fake_key)
    with pytest.raises(AuthenticationFailed) as ei:
        make(fake_api, fake_key).complete([{"role": "user", "content": "q"}])
    assert fake_key not in str(ei.value)
    assert fake_key not in ei.value.to_info().model_dump_json()
    assert "Incorrect API key provided: ***" in str(ei.value)


def test_missing_key_is_authentication_failed(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(AuthenticationFailed, match="OPENAI_API_KEY"):
        OpenAIProvider()


def test_registry_specs(fake_key):
    p = get_provider("openai", api_key=fake_key)
    assert p.model == DEFAULT_OPENAI_MODEL == "gpt-4.1-mini"
    q = get_provider("openai-compatible/qwen2.5@http://127.0.0.1:9/v1", retry=False)
    assert isinstance(q, OpenAIProvider) and q.compatible
    assert q.spec == "openai-compatible/qwen2.5@http://127.0.0.1:9/v1"
