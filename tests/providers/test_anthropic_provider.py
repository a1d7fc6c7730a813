"""AnthropicProvider against recorded Messages API bodies served from a loopback server."""

from __future__ import annotations

import asyncio

import pytest

from agent_providers import get_provider
from agent_providers.anthropic_provider import DEFAULT_ANTHROPIC_MODEL, AnthropicProvider, build_request
from agent_providers.retry import RetryingProvider, RetryPolicy
from agent_schemas import (
    AuthenticationFailed,
    BadRequest,
    ChatMessage,
    EmptyResponse,
    ProviderConnectionError,
    ProviderOverloaded,
    ProviderTimeout,
    RateLimited,
    ResponseTruncated,
)

pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

SCHEMA = {
    "type": "object",
    "properties": {"p_yes_percent": {"type": "integer", "enum": list(range(101))}, "rationale": {"type": "string"}},
    "required": ["p_yes_percent", "rationale"],
}


def make(fake_api, fake_key, **kw) -> AnthropicProvider:
    return AnthropicProvider("claude-sonnet-4-5", api_key=fake_key, base_url=fake_api.url, timeout_s=5, **kw)


def test_usage_with_cache_reads_and_writes_is_normalised(fake_api, fake_key):
    fake_api.enqueue_file("anthropic_cache_usage.json")
    p = make(fake_api, fake_key)
    c = p.complete(
        [
            ChatMessage(role="system", content="You are a careful forecaster.", cache=True),
            ChatMessage(role="user", content="Will the incumbent win?"),
        ],
        json_schema=SCHEMA,
        max_tokens=500,
    )
    assert c.text.startswith('{"p_yes_percent": 62')
    assert c.stop_reason == "stop"
    assert c.model == "claude-sonnet-4-5-20250929"
    assert c.provider == "anthropic/claude-sonnet-4-5"
    u = c.usage
    # Anthropic input_tokens (21) excludes cache reads (1830) and writes (188): total prompt = 2039
    assert (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens, u.output_tokens) == (2039, 1830, 188, 393)
    assert u.reasoning_tokens is None
    assert u.calls == 1
    # 21 x $3 + 1830 x $0.30 + 188 x $3.75 + 393 x $15 per 1e6 tokens = $0.007212
    assert u.cost_usd == pytest.approx(0.007212)
    assert c.latency_s > 0


def test_request_body_has_system_blocks_cache_control_and_headers(fake_api, fake_key):
    fake_api.enqueue_file("anthropic_cache_usage.json")
    p = make(fake_api, fake_key)
    p.complete(
        [
            ChatMessage(role="system", content="Stable instructions", cache=True),
            ChatMessage(role="user", content="Long shared evidence", cache=True),
            ChatMessage(role="assistant", content="Noted."),
            ChatMessage(role="user", content="Your forecast?"),
        ],
        json_schema=SCHEMA,
        temperature=0.3,
        max_tokens=300,
    )
    (req,) = fake_api.requests
    assert req.path == "/v1/messages"
    # SDK 2.x sends the key as a bearer token; older versions used x-api-key
    assert fake_key in req.headers.get("x-api-key", "") + req.headers.get("authorization", "")
    body = req.json
    assert body["model"] == "claude-sonnet-4-5"
    assert body["max_tokens"] == 300
    assert body["temperature"] == 0.3
    assert body["system"][0] == {"type": "text", "text": "Stable instructions", "cache_control": {"type": "ephemeral"}}
    # the schema is described in a last, uncached system block
    assert "cache_control" not in body["system"][1]
    assert '"p_yes_percent"' in body["system"][1]["text"]
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "Long shared evidence", "cache_control": {"type": "ephemeral"}}
    ]
    assert body["messages"][2]["content"] == [{"type": "text", "text": "Your forecast?"}]


def test_cache_flags_ignored_when_prompt_caching_off():
    system, msgs = build_request(
        [ChatMessage(role="system", content="s", cache=True), ChatMessage(role="user", content="u", cache=True)],
        json_schema=None,
        cache_prompt_prefix=False,
    )
    assert system == [{"type": "text", "text": "s"}]
    assert msgs == [{"role": "user", "content": [{"type": "text", "text": "u"}]}]


def test_at_most_four_cache_breakpoints_keeps_the_last_four():
    msgs = [ChatMessage(role="user" if i % 2 == 0 else "assistant", content=f"m{i}", cache=True) for i in range(6)]
    _, api_messages = build_request(msgs, json_schema=None)
    flagged = [i for i, m in enumerate(api_messages) if "cache_control" in m["content"][-1]]
    assert flagged == [2, 3, 4, 5]


def test_null_cache_fields_stay_unknown_and_thinking_is_reasoning_subset(fake_api, fake_key):
    fake_api.enqueue_file("anthropic_no_cache_fields.json")
    c = make(fake_api, fake_key).complete([{"role": "user", "content": "Chance of ratification?"}])
    assert c.text == "About 15%."  # the thinking block is not part of the answer text
    assert c.stop_reason == "stop"  # stop_sequence
    u = c.usage
    assert (u.input_tokens, u.output_tokens, u.reasoning_tokens) == (12, 140, 128)
    assert u.cache_read_tokens is None and u.cache_write_tokens is None
    # claude-haiku-4-5: 12 x $1 + 140 x $5 per 1e6 tokens
    assert u.cost_usd == pytest.approx(712 / 1e6)


def test_max_tokens_raises_truncated_with_partial_text(fake_api, fake_key):
    fake_api.enqueue_file("anthropic_max_tokens.json")
    with pytest.raises(ResponseTruncated) as ei:
        make(fake_api, fake_key).complete([{"role": "user", "content": "q"}], max_tokens=16)
    assert ei.value.stop_reason == "length"
    assert ei.value.text == '{"p_yes_percent": 40, "rationale": "The incumbent'
    assert not ei.value.retryable


def test_empty_content_raises_empty_response(fake_api, fake_key):
    fake_api.enqueue_file("anthropic_empty_content.json")
    with pytest.raises(EmptyResponse) as ei:
        make(fake_api, fake_key).complete([{"role": "user", "content": "q"}])
    assert ei.value.details["stop_reason"] == "end_turn"


def test_429_maps_to_rate_limited_with_retry_after(fake_api, fake_key):
    fake_api.enqueue_file("anthropic_429.json", status=429, headers={"retry-after": "7"})
    with pytest.raises(RateLimited) as ei:
        make(fake_api, fake_key).complete([{"role": "user", "content": "q"}])
    assert ei.value.retry_after_s == 7.0
    assert "50,000 input tokens per minute" in str(ei.value)
    assert len(fake_api.requests) == 1  # the SDK did not retry by itself


def test_529_twice_then_success_through_retrying_provider(fake_api, fake_key):
    fake_api.enqueue_file("anthropic_529.json", status=529)
    fake_api.enqueue_file("anthropic_529.json", status=529)
    fake_api.enqueue_file("anthropic_cache_usage.json")
    slept: list[float] = []
    rp = RetryingProvider(make(fake_api, fake_key), RetryPolicy(max_attempts=4, base_delay_s=1.0, jitter=0.0), sleep=slept.append)
    c = rp.complete([{"role": "user", "content": "q"}])
    assert c.attempts == 3
    assert c.usage.input_tokens == 2039
    assert slept == [1.0, 2.0]
    assert len(fake_api.requests) == 3
    assert rp.stats() == {"calls": 3, "ok": 1, "retries": 2, "failures": 0}


@pytest.mark.parametrize(
    ("status", "name", "error"),
    [
        (529, "anthropic_529.json", ProviderOverloaded),
        (503, "anthropic_529.json", ProviderOverloaded),
        (500, "anthropic_529.json", ProviderOverloaded),
        (401, "anthropic_401.json", AuthenticationFailed),
        (403, "anthropic_401.json", AuthenticationFailed),
        (400, "anthropic_400.json", BadRequest),
        (404, "anthropic_400.json", BadRequest),
        (422, "anthropic_400.json", BadRequest),
    ],
)
def test_status_codes_map_to_typed_errors(fake_api, fake_key, status, name, error):
    fake_api.enqueue_file(name, status=status)
    with pytest.raises(error) as ei:
        make(fake_api, fake_key).complete([{"role": "user", "content": "q"}])
    assert ei.value.details["status_code"] == status
    assert ei.value.provider == "anthropic/claude-sonnet-4-5"


def test_timeout_maps_to_provider_timeout(fake_api, fake_key):
    fake_api.enqueue_reply(200, "{}", delay_s=1.5)
    p = AnthropicProvider("claude-sonnet-4-5", api_key=fake_key, base_url=fake_api.url, timeout_s=0.3)
    with pytest.raises(ProviderTimeout) as ei:
        p.complete([{"role": "user", "content": "q"}])
    assert ei.value.timeout_s == 0.3
    assert ei.value.retryable


def test_refused_connection_maps_to_connection_error(fake_key, unused_url):
    p = AnthropicProvider("claude-sonnet-4-5", api_key=fake_key, base_url=unused_url, timeout_s=2)
    with pytest.raises(ProviderConnectionError) as ei:
        p.complete([{"role": "user", "content": "q"}])
    assert ei.value.retryable
    assert fake_key not in str(ei.value)


def test_async_complete_works(fake_api, fake_key):
    fake_api.enqueue_file("anthropic_cache_usage.json")
    c = asyncio.run(make(fake_api, fake_key).acomplete([{"role": "user", "content": "q"}]))
    assert c.usage.cache_read_tokens == 1830


def test_missing_key_is_authentication_failed(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(AuthenticationFailed, match="ANTHROPIC_API_KEY"):
        AnthropicProvider()


def test_registry_builds_default_model(fake_key):
    p = get_provider("anthropic", api_key=fake_key)
    assert isinstance(p, RetryingProvider) and isinstance(p.inner, AnthropicProvider)  # the one retry layer
    assert p.model == DEFAULT_ANTHROPIC_MODEL
    assert p.spec == f"anthropic/{DEFAULT_ANTHROPIC_MODEL}"
