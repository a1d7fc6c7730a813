"""Every billed token is counted on every failure path, and nothing untyped leaves a provider.

The adapters run on the real SDKs against the loopback fake server; the server's own count of the replies
it served (``FakeAPI.billed``) is the oracle for the usage the provider layer reports.
"""

from __future__ import annotations

import asyncio
import logging

import pytest

from agent_providers import get_provider, spent_usage
from agent_providers.anthropic_provider import AnthropicProvider
from agent_providers.openai_provider import OpenAIProvider
from agent_providers.retry import RetryingProvider, RetryPolicy
from agent_schemas import (
    EmptyResponse,
    ProviderError,
    ProviderOverloaded,
    ResponseRefused,
    ResponseTruncated,
    TokenUsage,
    UnexpectedProviderError,
    UnreadableResponse,
    UsageLedger,
)

pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

MSG = [{"role": "user", "content": "Will it rain in Paris on 2026-12-24?"}]
#: No waiting between attempts (the delays themselves are tested in test_retry.py).
NO_WAIT = RetryPolicy(max_attempts=4, base_delay_s=0.0, max_delay_s=0.0, jitter=0.0)
#: gpt-4.1-mini (the snapshot gpt-4.1-mini-2025-04-14 is listed under it): $0.40 in, $1.60 out per 1e6 tokens.
GPT41_MINI_100_20 = (100 * 0.40 + 20 * 1.60) / 1e6


def openai(fake_api, fake_key, retry=NO_WAIT):
    return get_provider("openai/gpt-4.1-mini", api_key=fake_key, base_url=f"{fake_api.url}/v1", timeout_s=5, retry=retry)


def anthropic(fake_api, fake_key, retry=NO_WAIT):
    return get_provider("anthropic/claude-haiku-4-5", api_key=fake_key, base_url=fake_api.url, timeout_s=5, retry=retry)


# --- empty answers: billed, retried, every attempt counted -----------------------------------------


def test_null_content_retried_four_times_reports_four_billed_calls(fake_api, fake_key, openai_reply):
    # the case: content null with usage 100/20, retried until attempts run out
    for _ in range(4):
        fake_api.enqueue_reply(200, openai_reply(None, prompt=100, completion=20))
    with pytest.raises(EmptyResponse) as ei:
        openai(fake_api, fake_key).complete(MSG)
    u = spent_usage(ei.value)
    assert (u.calls, u.input_tokens, u.output_tokens) == (4, 400, 80)
    assert u.cost_usd == pytest.approx(4 * GPT41_MINI_100_20)
    assert ei.value.details["attempts"] == 4 and len(fake_api.requests) == 4


def test_anthropic_empty_content_keeps_its_usage(fake_api, fake_key, anthropic_reply):
    fake_api.enqueue_reply(200, anthropic_reply("", input_tokens=100, output_tokens=20))
    with pytest.raises(EmptyResponse) as ei:
        anthropic(fake_api, fake_key, retry=False).complete(MSG)
    assert ei.value.usage == TokenUsage(
        input_tokens=100, output_tokens=20, cache_read_tokens=0, cache_write_tokens=0, calls=1,
        cost_usd=(100 * 1.0 + 20 * 5.0) / 1e6,  # claude-haiku-4-5: $1 in, $5 out per 1e6 tokens
    )


def test_completion_after_empty_answers_carries_every_billed_attempt(fake_api, fake_key, openai_reply):
    fake_api.enqueue_reply(200, openai_reply(None, prompt=100, completion=20))
    fake_api.enqueue_reply(200, openai_reply("", prompt=90, completion=1))
    fake_api.enqueue_reply(200, openai_reply("p_yes 0.3", prompt=50, completion=10))
    c = openai(fake_api, fake_key).complete(MSG)
    assert c.text == "p_yes 0.3" and c.attempts == 3
    assert (c.usage.calls, c.usage.input_tokens, c.usage.output_tokens) == (3, 240, 31)


def test_async_path_sums_the_same_way(fake_api, fake_key, anthropic_reply):
    fake_api.enqueue_reply(200, anthropic_reply("", input_tokens=40, output_tokens=1))
    fake_api.enqueue_reply(200, anthropic_reply("fine", input_tokens=45, output_tokens=9))
    c = asyncio.run(anthropic(fake_api, fake_key).acomplete(MSG))
    assert (c.usage.calls, c.usage.input_tokens, c.usage.output_tokens, c.attempts) == (2, 85, 10, 2)


# --- refusals: typed, not retried, usage kept ------------------------------------------------------


@pytest.mark.parametrize(
    ("which", "body_kw", "text"),
    [
        ("anthropic", {"text": "", "stop": "refusal"}, ""),
        ("anthropic", {"text": "I can't help with that.", "stop": "refusal"}, "I can't help with that."),
        ("openai", {"content": None, "refusal": "I'm sorry, I can't assist."}, "I'm sorry, I can't assist."),
        ("openai", {"content": "The answer is", "finish": "content_filter"}, "The answer is"),
    ],
    ids=["anthropic-refusal-empty", "anthropic-refusal-text", "openai-message-refusal", "openai-content-filter"],
)
def test_refusal_is_typed_not_retried_and_keeps_usage(fake_api, fake_key, openai_reply, anthropic_reply, which, body_kw, text):
    if which == "anthropic":
        kw = dict(body_kw)
        fake_api.enqueue_reply(200, anthropic_reply(kw.pop("text"), input_tokens=70, output_tokens=5, **kw))
        p = anthropic(fake_api, fake_key)
    else:
        kw = dict(body_kw)
        fake_api.enqueue_reply(200, openai_reply(kw.pop("content"), prompt=70, completion=5, **kw))
        p = openai(fake_api, fake_key)
    fake_api.enqueue_reply(200, openai_reply("never fetched"))
    with pytest.raises(ResponseRefused) as ei:
        p.complete(MSG)
    assert not ei.value.retryable and len(fake_api.requests) == 1
    assert ei.value.text == text
    u = spent_usage(ei.value)
    assert (u.calls, u.input_tokens, u.output_tokens) == (1, 70, 5)


def test_truncated_answer_is_not_retried_and_keeps_usage(fake_api, fake_key, openai_reply):
    fake_api.enqueue_reply(200, openai_reply('{"p_yes_percent": 5', finish="length", prompt=80, completion=16))
    with pytest.raises(ResponseTruncated) as ei:
        openai(fake_api, fake_key).complete(MSG)
    assert len(fake_api.requests) == 1
    assert (ei.value.usage.calls, ei.value.usage.input_tokens, ei.value.usage.output_tokens) == (1, 80, 16)


# --- unreadable 200 replies: typed, retried, counted ----------------------------------------------

UNREADABLE = {
    "html": "<html><body>502 Bad Gateway</body></html>",
    "empty": "",
    "cut-off-json": '{"id": "chatcmpl-1", "choices": [{"index": 0, "mess',
    "json-array": "[1, 2]",
    "json-null": "null",
    "not-utf8": b'{"id": "msg_1", "content": "\xff\xfe"}',
}


@pytest.mark.parametrize("kind", list(UNREADABLE))
@pytest.mark.parametrize("make", [OpenAIProvider, AnthropicProvider], ids=["openai", "anthropic"])
def test_unreadable_body_is_a_typed_error_with_one_billed_call(fake_api, fake_key, make, kind):
    fake_api.enqueue_reply(200, UNREADABLE[kind])
    base = f"{fake_api.url}/v1" if make is OpenAIProvider else fake_api.url
    p = make(api_key=fake_key, base_url=base, timeout_s=5)
    with pytest.raises(UnreadableResponse) as ei:
        p.complete(MSG)
    assert ei.value.retryable
    assert ei.value.usage == TokenUsage(calls=1)  # a 2xx answer, tokens unknown


OPENAI_USAGE = '"usage": {"prompt_tokens": 12, "completion_tokens": 3}'
ANTHROPIC_USAGE = '"stop_reason": "end_turn", "usage": {"input_tokens": 12, "output_tokens": 3}'
WRONG_SHAPES = {
    "openai-choices-not-a-list": ("openai", '{"choices": "x", %s}' % OPENAI_USAGE),
    "openai-message-not-an-object": ("openai", '{"choices": [{"message": "hi", "finish_reason": "stop"}], %s}' % OPENAI_USAGE),
    "openai-content-not-text": ("openai", '{"choices": [{"message": {"content": 42}, "finish_reason": "stop"}], %s}' % OPENAI_USAGE),
    "anthropic-content-not-a-list": ("anthropic", '{"content": 5, %s}' % ANTHROPIC_USAGE),
    "anthropic-block-not-an-object": ("anthropic", '{"content": ["hi"], %s}' % ANTHROPIC_USAGE),
    "anthropic-text-not-text": ("anthropic", '{"content": [{"type": "text", "text": 7}], %s}' % ANTHROPIC_USAGE),
}


@pytest.mark.parametrize("case", list(WRONG_SHAPES))
def test_wrong_shapes_are_unreadable_and_keep_the_usage_they_report(fake_api, fake_key, case):
    which, body = WRONG_SHAPES[case]
    fake_api.enqueue_reply(200, body)
    make = openai if which == "openai" else anthropic
    with pytest.raises(UnreadableResponse) as ei:
        make(fake_api, fake_key, retry=False).complete(MSG)
    assert (ei.value.usage.calls, ei.value.usage.input_tokens, ei.value.usage.output_tokens) == (1, 12, 3)


def test_unreadable_body_then_success_counts_both_calls(fake_api, fake_key, openai_reply):
    fake_api.enqueue_reply(200, "<html>gateway</html>")
    fake_api.enqueue_reply(200, openai_reply("ok", prompt=30, completion=3))
    c = openai(fake_api, fake_key).complete(MSG)
    assert (c.usage.calls, c.usage.input_tokens, c.usage.output_tokens, c.attempts) == (2, 30, 3, 2)


# --- malformed usage: unknown fields, a warning, never an exception ------------------------------


@pytest.mark.parametrize(
    ("usage", "expected", "named"),
    [
        ({"prompt_tokens": "100", "completion_tokens": "20"}, (None, None), "usage.prompt_tokens='100'"),
        ({"prompt_tokens": -5, "completion_tokens": 20}, (None, 20), "usage.prompt_tokens=-5"),
        ({"prompt_tokens": 1.5, "completion_tokens": 20}, (None, 20), "usage.prompt_tokens=1.5"),
        ({"prompt_tokens": True, "completion_tokens": 20}, (None, 20), "usage.prompt_tokens=True"),
        ("abc", (None, None), "usage='abc'"),
        ({"prompt_tokens": 100, "completion_tokens": 20, "prompt_tokens_details": "x"}, (100, 20), "usage.prompt_tokens_details='x'"),
        ({"prompt_tokens": 100, "completion_tokens": 20, "completion_tokens_details": [1]}, (100, 20), "usage.completion_tokens_details=[1]"),
    ],
    ids=["strings", "negative", "float", "bool", "usage-not-an-object", "details-string", "details-list"],
)
def test_openai_malformed_usage_becomes_unknown_with_a_warning(fake_api, fake_key, openai_reply, caplog, usage, expected, named):
    import json

    body = json.loads(openai_reply("fine"))
    body["usage"] = usage
    fake_api.enqueue_reply(200, body)
    with caplog.at_level(logging.WARNING, logger="agent_providers.reply"):
        c = openai(fake_api, fake_key, retry=False).complete(MSG)
    assert c.text == "fine"
    assert (c.usage.input_tokens, c.usage.output_tokens, c.usage.calls) == (*expected, 1)
    assert c.usage.cost_usd is None or expected == (100, 20)  # no cost from unknown tokens
    (record,) = [r for r in caplog.records if r.name == "agent_providers.reply"]
    assert named in record.getMessage() and "openai/gpt-4.1-mini" in record.getMessage()


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        ({"input_tokens": "100", "output_tokens": 20}, (None, 20)),
        ({"input_tokens": 100, "output_tokens": -1}, (100, None)),
        ({"input_tokens": 100, "cache_read_input_tokens": "9", "output_tokens": 20}, (100, 20)),
        ([1, 2], (None, None)),
    ],
    ids=["string", "negative", "cache-read-string", "usage-a-list"],
)
def test_anthropic_malformed_usage_becomes_unknown(fake_api, fake_key, anthropic_reply, caplog, usage, expected):
    import json

    body = json.loads(anthropic_reply("fine"))
    body["usage"] = usage
    fake_api.enqueue_reply(200, body)
    with caplog.at_level(logging.WARNING, logger="agent_providers.reply"):
        c = anthropic(fake_api, fake_key, retry=False).complete(MSG)
    assert (c.usage.input_tokens, c.usage.output_tokens, c.usage.calls) == (*expected, 1)
    assert len([r for r in caplog.records if r.name == "agent_providers.reply"]) == 1


def test_well_formed_usage_logs_nothing(fake_api, fake_key, openai_reply, caplog):
    fake_api.enqueue_reply(200, openai_reply("fine"))
    with caplog.at_level(logging.WARNING):
        openai(fake_api, fake_key, retry=False).complete(MSG)
    assert not [r for r in caplog.records if r.name == "agent_providers.reply"]


# --- nothing untyped leaves an adapter -------------------------------------------------------------


@pytest.mark.parametrize("which", ["openai", "anthropic"])
def test_unexpected_sdk_exception_becomes_a_typed_error(fake_api, fake_key, monkeypatch, which):
    p = openai(fake_api, fake_key) if which == "openai" else anthropic(fake_api, fake_key)
    resource = p.inner._client.chat.completions if which == "openai" else p.inner._client.messages

    def sdk_bug(**kwargs):
        raise RuntimeError(f"SDK internals broke while holding {fake_key}")

    monkeypatch.setattr(resource.with_raw_response, "create", sdk_bug)
    with pytest.raises(UnexpectedProviderError) as ei:
        p.complete(MSG)
    assert isinstance(ei.value, ProviderError) and not ei.value.retryable
    assert ei.value.details["cause"] == "RuntimeError" and ei.value.details["attempts"] == 1
    assert fake_key not in str(ei.value) and "***" in str(ei.value)


# --- the fault run: the server's billing is the oracle ----------------------------------------------


def test_fault_run_reported_usage_equals_what_the_server_billed(fake_api, fake_key, openai_reply, anthropic_reply):
    """Empty answers, refusals, truncations, unreadable bodies and 429/5xx/529 across retries: the calls
    and tokens the provider layer reports (completions plus the usage on raised errors) equal the
    server's count of the 200 replies it served, exactly."""
    rate_limited = '{"error": {"message": "Rate limit reached", "type": "requests"}}'
    server_error = '{"error": {"message": "The server had an error", "type": "server_error"}}'
    overloaded = '{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}'
    o_script = [
        # 1: two empty answers, then an answer
        (200, openai_reply(None, prompt=100, completion=20)), (200, openai_reply("", prompt=90, completion=0)),
        (200, openai_reply("a1", prompt=50, completion=10)),
        # 2: a refusal (not retried)
        (200, openai_reply(None, refusal="I can't", prompt=70, completion=5)),
        # 3: a 429 with a NaN retry-after, then a truncated answer (not retried)
        (429, rate_limited, {"retry-after": "nan"}), (200, openai_reply("cut", finish="length", prompt=80, completion=16)),
        # 4: 503, 429, an empty answer, 500: attempts run out
        (503, server_error), (429, rate_limited), (200, openai_reply(None, prompt=10, completion=0)), (500, server_error),
        # 5: an unreadable body, then an answer
        (200, "<html>502</html>"), (200, openai_reply("a5", prompt=30, completion=3)),
        # 6: the content filter
        (200, openai_reply("partial", finish="content_filter", prompt=60, completion=6)),
    ]
    a_script = [
        # 1: 529, an empty answer, an answer
        (529, overloaded), (200, anthropic_reply("", input_tokens=40, output_tokens=1)),
        (200, anthropic_reply("b1", input_tokens=45, output_tokens=9)),
        # 2: a refusal
        (200, anthropic_reply("No.", stop="refusal", input_tokens=33, output_tokens=2)),
        # 3: 529 four times: nothing billed
        (529, overloaded), (529, overloaded), (529, overloaded), (529, overloaded),
        # 4: truncated at max_tokens
        (200, anthropic_reply("long", stop="max_tokens", input_tokens=20, output_tokens=50)),
    ]
    for status, body, *headers in o_script + a_script:
        fake_api.enqueue_reply(status, body, headers[0] if headers else None)
    ledger = UsageLedger()
    outcomes = []
    for provider, n in ((openai(fake_api, fake_key), 6), (anthropic(fake_api, fake_key), 4)):
        for _ in range(n):
            try:
                usage = provider.complete(MSG).usage
                outcomes.append("ok")
            except ProviderError as exc:
                usage = spent_usage(exc)
                outcomes.append(type(exc).__name__)
            ledger.record("fault-run", "forecaster", provider.spec, usage)
    assert outcomes == [
        "ok", "ResponseRefused", "ResponseTruncated", "ProviderOverloaded", "ok", "ResponseRefused",
        "ok", "ResponseRefused", "ProviderOverloaded", "ResponseTruncated",
    ]
    billed = fake_api.billed()
    total = ledger.total()
    assert (total.calls, total.input_tokens, total.output_tokens) == (billed.calls, billed.input_tokens, billed.output_tokens)
    # and the oracle itself, by hand: 9 + 4 replies of 200 (the HTML one bills a call, no tokens)
    assert (billed.calls, billed.input_tokens, billed.output_tokens) == (
        9 + 4, 100 + 90 + 50 + 70 + 80 + 10 + 30 + 60 + 40 + 45 + 33 + 20, 20 + 0 + 10 + 5 + 16 + 0 + 3 + 6 + 1 + 9 + 2 + 50)
    assert fake_api.replies.empty()


def test_retry_layer_exhaustion_error_carries_summed_usage_even_for_a_non_billed_last_error(fake_api, fake_key, openai_reply):
    fake_api.enqueue_reply(200, openai_reply(None, prompt=10, completion=1))
    fake_api.enqueue_reply(503, '{"error": {"message": "busy"}}')
    p = openai(fake_api, fake_key, retry=RetryPolicy(max_attempts=2, base_delay_s=0, max_delay_s=0, jitter=0))
    with pytest.raises(ProviderOverloaded) as ei:
        p.complete(MSG)
    assert isinstance(p, RetryingProvider)
    assert (ei.value.usage.calls, ei.value.usage.input_tokens, ei.value.usage.output_tokens) == (1, 10, 1)
