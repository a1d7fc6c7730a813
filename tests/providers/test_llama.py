"""Real llama.cpp: the embedded LocalLlamaProvider and an OpenAI-compatible llama_cpp.server on loopback.

Skipped (with the reason) only when llama-cpp-python is not importable.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request

import pytest

from agent_providers import get_provider
from agent_schemas import BadRequest, EmptyResponse, ProviderOverloaded, ResponseTruncated
from tests.helpers import NEEDS_LLAMA

pytestmark = NEEDS_LLAMA

FORECAST_SCHEMA = {
    "type": "object",
    "properties": {
        "p_yes_percent": {"type": "integer", "enum": list(range(101))},
        "rationale": {"type": "string", "maxLength": 80},
    },
    "required": ["p_yes_percent", "rationale"],
}
QUESTION = [
    {"role": "system", "content": "You are a forecaster. Answer in JSON."},
    {"role": "user", "content": "Will it snow in Oslo on some day next January? Give p_yes_percent and a short rationale."},
]


@pytest.fixture(scope="module")
def local():
    from agent_providers.local_llama import LocalLlamaProvider

    return LocalLlamaProvider()  # default threads: cores - 1


def test_local_forecast_follows_schema_with_token_counts(local):
    c = local.complete(QUESTION, json_schema=FORECAST_SCHEMA, max_tokens=160, temperature=0.0)
    obj = json.loads(c.text)
    assert set(obj) == {"p_yes_percent", "rationale"}
    assert isinstance(obj["p_yes_percent"], int) and 0 <= obj["p_yes_percent"] <= 100
    assert isinstance(obj["rationale"], str)
    assert c.usage.input_tokens > 0 and c.usage.output_tokens > 0
    assert c.usage.cost_usd == 0.0 and c.usage.calls == 1
    assert c.provider == "local/smollm2-q8_0" and c.model == "smollm2-q8_0"  # default weights (gguf_weights)
    assert c.latency_s > 0


def test_model_is_loaded_once_and_shared(local):
    from agent_providers.local_llama import loaded_model_count

    before = loaded_model_count()
    again = get_provider("local/smollm2")
    assert type(again).__name__ == "LocalLlamaProvider"  # never wrapped in the retry layer (see get_provider)
    assert again.llama is local.llama and again.lock is local.lock
    assert loaded_model_count() == before


def test_same_seed_same_answer_also_when_concurrent_calls_run_on_two_contexts(local):
    schema = {"type": "object", "properties": {"p_yes_percent": {"type": "integer", "enum": list(range(101))}},
              "required": ["p_yes_percent"]}

    async def two():
        return await asyncio.gather(
            *(local.acomplete(QUESTION, json_schema=schema, max_tokens=30, seed=5, temperature=0.8) for _ in range(2))
        )

    a, b = asyncio.run(two())
    assert a.text == b.text
    assert (a.usage.input_tokens, a.usage.output_tokens) == (b.usage.input_tokens, b.usage.output_tokens)
    assert 0 <= json.loads(a.text)["p_yes_percent"] <= 100


def test_prompt_prefix_reuse_is_reported_as_cache_reads_and_observed(local):
    from agent_providers.local_llama import observe_calls

    shared = "Background for every call: " + "the market opened at 40 percent and moved little. " * 8
    first = [{"role": "system", "content": shared}, {"role": "user", "content": "Say yes."}]
    second = [{"role": "system", "content": shared}, {"role": "user", "content": "Now say no, briefly."}]
    other = [{"role": "system", "content": "Unrelated."}, {"role": "user", "content": "Say no."}]
    yes_no = {"type": "object", "properties": {"yes": {"type": "boolean"}}, "required": ["yes"]}
    with observe_calls() as calls:
        a, b, c = (local.complete(m, json_schema=yes_no, max_tokens=20, temperature=0.0) for m in (other, first, second))
    # the chat template opens every prompt with "<|im_start|>system\n": the first tokens are always shared
    assert 0 < b.usage.cache_read_tokens < 10
    # the second prompt repeats the first one's system message: its tokens (over 100) are not evaluated again
    sys_tokens = len(local.llama.tokenize(shared.encode(), add_bos=False))
    assert sys_tokens > 100 and c.usage.cache_read_tokens >= sys_tokens
    assert c.usage.cache_read_tokens < c.usage.input_tokens
    assert [(x.prompt_tokens, x.cached_tokens, x.output_tokens) for x in calls] == [
        (u.input_tokens, u.cache_read_tokens, u.output_tokens) for u in (a.usage, b.usage, c.usage)]
    assert all(x.seconds > 0 and x.wait_s >= 0 and x.error is None for x in calls)
    assert calls[2].messages[1].content == "Now say no, briefly."


def test_pattern_in_schema_does_not_break_the_grammar(local):
    schema = {
        "type": "object",
        "properties": {"date": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$", "maxLength": 12}},
        "required": ["date"],
    }
    c = local.complete([{"role": "user", "content": "Today's date as JSON."}], json_schema=schema, max_tokens=40)
    assert set(json.loads(c.text)) == {"date"}


def test_token_limit_raises_truncated(local):
    with pytest.raises(ResponseTruncated) as ei:
        local.complete([{"role": "user", "content": "Write a long story about a forecaster."}], max_tokens=3)
    assert ei.value.stop_reason == "length" and ei.value.text


def test_bad_model_path_is_bad_request(tmp_path):
    from agent_providers.local_llama import LocalLlamaProvider

    with pytest.raises(BadRequest, match="not found"):
        LocalLlamaProvider(str(tmp_path / "missing.gguf"))
    with pytest.raises(BadRequest, match=r"\.gguf"):
        LocalLlamaProvider(str(tmp_path / "weights.bin"))


# --- OpenAI-compatible llama_cpp.server on 127.0.0.1 ------------------------------------------------


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    from agent_providers.local_llama import smollm2_path

    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_path()), "--model_alias", "smollm2",
        "--host", "127.0.0.1", "--port", str(port), "--n_threads", "2", "--n_ctx", "2048",
    ]
    log_path = tmp_path_factory.mktemp("llama_server") / "server.log"
    log_file = open(log_path, "wb")  # llama.cpp logs ~200 kB at load: a pipe would fill up and block it
    proc = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT, env={**os.environ, "NO_PROXY": "*"})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {log_path.read_text(errors='replace')[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/v1/models", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not start within 90 s")
            time.sleep(0.3)
        yield f"{url}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log_file.close()


def test_server_text_and_usage_match_the_raw_response(llama_server):
    import httpx2

    from agent_providers.openai_provider import OpenAIProvider

    raw_usage: list[dict] = []

    def keep_usage(response):
        response.read()
        raw_usage.append(json.loads(response.text)["usage"])

    client = httpx2.Client(event_hooks={"response": [keep_usage]})
    p = OpenAIProvider("smollm2", base_url=llama_server, compatible=True, http_client=client)
    c = p.complete([{"role": "user", "content": "Say hello in five words."}], max_tokens=40, temperature=0.0, seed=1)
    assert c.text.strip()
    (raw,) = raw_usage
    assert raw["prompt_tokens"] > 0 and raw["completion_tokens"] > 0
    assert c.usage.input_tokens == raw["prompt_tokens"]
    assert c.usage.output_tokens == raw["completion_tokens"]
    assert c.usage.total_tokens == raw["total_tokens"]
    assert c.usage.cost_usd is None
    p.close()


def test_server_json_object_schema_is_enforced(llama_server):
    # default "auto": the OpenAI json_schema form is rejected by llama_cpp.server, the fallback is used
    p = get_provider(f"openai-compatible/smollm2@{llama_server}", retry=False)
    c = p.complete(QUESTION, json_schema=FORECAST_SCHEMA, max_tokens=160, temperature=0.0)
    obj = json.loads(c.text)
    assert 0 <= obj["p_yes_percent"] <= 100 and isinstance(obj["p_yes_percent"], int)
    assert p.compatible_json_format == "json_object_schema"


def test_server_rejects_the_openai_json_schema_form(llama_server):
    # llama_cpp.server only knows {"type": "json_object", "schema": ...}; it answers the OpenAI form with an
    # HTTP 500 carrying a validation error (so it surfaces as ProviderOverloaded, a server quirk)
    p = get_provider(f"openai-compatible/smollm2@{llama_server}", retry=False, compatible_json_format="json_schema")
    with pytest.raises(ProviderOverloaded) as ei:
        p.complete(QUESTION, json_schema=FORECAST_SCHEMA, max_tokens=20)
    assert ei.value.status_code == 500
    assert "response_format" in str(ei.value)


def test_empty_local_answer_keeps_its_usage(local):
    # the shape llama-cpp-python's create_chat_completion returns, with an empty answer
    resp = {"id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": "smollm2",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "  "}, "logprobs": None,
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 1, "total_tokens": 13}}
    with pytest.raises(EmptyResponse) as ei:
        local.to_completion(resp)
    assert (ei.value.usage.calls, ei.value.usage.input_tokens, ei.value.usage.output_tokens) == (1, 12, 1)


def test_a_prompt_longer_than_the_context_is_a_bad_request_and_the_default_context_holds_2400_tokens():
    from agent_providers.local_llama import DEFAULT_N_CTX, LocalLlamaProvider

    long_prompt = [{"role": "user", "content": "Evidence: the index rose again. " * 340 + "Answer yes or no."}]
    small = LocalLlamaProvider(n_ctx=1024, n_slots=1, n_threads=1)
    with pytest.raises(BadRequest, match=r"Requested tokens \(\d{4}\) exceed context window of 1024"):
        small.complete(long_prompt, max_tokens=4, temperature=0.0)
    default = LocalLlamaProvider(n_slots=1, n_threads=1)
    assert default.n_ctx == DEFAULT_N_CTX == 4096
    c = default.complete(long_prompt, max_tokens=2, temperature=0.0)  # about 2,400 tokens: over the old 2,048
    assert 2048 < c.usage.input_tokens < 2700


@pytest.mark.parametrize("weights", ["packaged", "q8_0"])
def test_an_answer_does_not_depend_on_what_the_context_held_before(weights):
    """The same prompt and seed give the same answer on a fresh context, on one holding the whole prompt
    (the last prompt token is evaluated again, alone), and on one holding only a shared system prompt
    (local_llama.history_independent). Without it the Q8_0 weights answered the repeated call otherwise."""
    from agent_providers.local_llama import LocalLlamaProvider

    p = LocalLlamaProvider(n_threads=1, n_slots=1, weights=weights)
    snow = [{"role": "system", "content": "You are a careful forecaster."},
            {"role": "user", "content": "Will it snow in Oslo on some day next January? Answer briefly."}]
    ecb = [{"role": "system", "content": "You are a careful forecaster."},
           {"role": "user", "content": "Will the ECB cut rates in March? Answer briefly."}]

    def answer(messages, **options):
        try:
            return p.complete(messages, max_tokens=24, **options).text
        except ResponseTruncated as stopped:  # free text runs past 24 tokens
            return stopped.text

    for options in ({"temperature": 0.0}, {"temperature": 0.8, "seed": 3}):
        p.llama.reset()
        fresh = answer(snow, **options)
        again = answer(snow, **options)  # the context holds the whole prompt
        after_other = (answer(ecb, **options), answer(snow, **options))[1]  # it holds the system prompt only
        assert fresh == again == after_other and len(fresh) > 20


def test_no_token_inside_a_prompt_is_evaluated_alone_whatever_n_batch_leaves_over():
    """With a small ``n_batch`` a prompt's batches can leave one token over; evaluated alone it changed the
    answer (2 of these 9 prompts before the fix): a fresh context, one after another prompt sharing the
    system message, and one holding the whole prompt answer alike."""
    from agent_providers.local_llama import LocalLlamaProvider

    p = LocalLlamaProvider(n_threads=1, n_slots=1, n_batch=16)
    system = {"role": "system", "content": "You are a careful forecaster. Background: the market opened at forty "
                                           "percent and moved little over the week."}
    other = [system, {"role": "user", "content": "Something else entirely."}]

    def answer(messages, **options):
        try:
            return p.complete(messages, **options).text
        except ResponseTruncated as stopped:
            return stopped.text

    for k in range(9):  # prompt lengths over two n_batch periods
        question = [system, {"role": "user", "content": "Question " + "x " * k + "Will it snow in Oslo next January? Answer briefly."}]
        p.llama.reset()
        fresh = answer(question, max_tokens=20, temperature=0.8, seed=1)
        answer(other, max_tokens=2, temperature=0.0)
        after_other = answer(question, max_tokens=20, temperature=0.8, seed=1)
        again = answer(question, max_tokens=20, temperature=0.8, seed=1)
        assert fresh == after_other == again, k
