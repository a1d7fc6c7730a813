"""Credentials stay out of everything the toolkit writes, and keys go only to the host they belong to.

Checked on the real files a benchmark run writes (manifest.json, results.jsonl, the cache) and on the log
records captured at INFO (what ``--debug`` shows), with the real SDKs against the loopback fake server.
"""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from agent_providers import auto_provider, get_provider, redact_spec
from agent_providers.credentials import is_secret_query_param, query_env_var
from agent_providers.openai_provider import COMPATIBLE_PLACEHOLDER_KEY, OPENAI_API_BASE, OpenAIProvider
from agent_schemas import AuthenticationFailed, BadRequest, UnknownProvider

QKEY = "QKEY-qs-secret-77"
ENV_KEY = "sk-ENV-OPENAI-KEY-must-stay-home-1234"
MSG = [{"role": "user", "content": "q"}]


# --- redact_spec ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("openai-compatible/m@http://user:S3CRET@127.0.0.1:8000/v1?key=QKEY",
         "openai-compatible/m@http://127.0.0.1:8000/v1?key=***"),
        ("openai-compatible/m@https://h.example/v1?api-version=2024-06-01&api_key=abc#frag",
         "openai-compatible/m@https://h.example/v1?api-version=2024-06-01&api_key=***"),
        ("openai-compatible/m@http://h:1/v1?token=t&sig=s&x=sk-live-123&mode=fast",
         "openai-compatible/m@http://h:1/v1?token=***&sig=***&x=***&mode=fast"),
        ("openai-compatible/m@http://[::1]:8080/v1?access_token=a", "openai-compatible/m@http://[::1]:8080/v1?access_token=***"),
        # issue 35: a key in the path, as a segment, after a segment named like a key, or as a ';' parameter
        ("openai-compatible/m@http://h:1/v2/Ab3dE9fGh1JkL2mN4pQr5StU6vWx7Yz8/v1", "openai-compatible/m@http://h:1/v2/***/v1"),
        ("openai-compatible/m@http://h:1/v1/sk-" "proj-AbCdEf0123456789GhIj", "openai-compatible/m@http://h:1/v1/***"),
        ("openai-compatible/m@http://h:1/key/k9-secret-77/v1", "openai-compatible/m@http://h:1/key/***/v1"),
        ("openai-compatible/m@http://h:1/v1;key=K-1234-abcd/chat", "openai-compatible/m@http://h:1/v1;key=***/chat"),
        ("openai-compatible/m@http://h:1/v1;api_key=K-1234-abcd;v=2?api-version=2024-06-01",
         "openai-compatible/m@http://h:1/v1;api_key=***;v=2?api-version=2024-06-01"),
        ("openai-compatible/m@http://h:1/v1/models/qwen2-5-7b-instruct-2024-09-19",
         "openai-compatible/m@http://h:1/v1/models/qwen2-5-7b-instruct-2024-09-19"),
        ("openai-compatible/m@http://h:1/v1", "openai-compatible/m@http://h:1/v1"),
        ("anthropic/claude-sonnet-4-6", "anthropic/claude-sonnet-4-6"),
        ("local/smollm2", "local/smollm2"),
        ("scripted", "scripted"),
    ],
)
def test_redact_spec(spec, expected):
    assert redact_spec(spec) == expected
    assert redact_spec(expected) == expected  # idempotent


def test_secret_query_params_by_name_and_by_value():
    for name in ("key", "api_key", "api-key", "apikey", "token", "access_token", "sig", "password", "x-api-key", "auth"):
        assert is_secret_query_param(name, "v"), name
    for name, value in (("api-version", "2024-06-01"), ("model", "gpt-4o-mini-2024-07-18"), ("mode", "fast"),
                        ("design", "x")):
        assert not is_secret_query_param(name, value), name
    assert is_secret_query_param("x", "sk-proj-abc")
    assert is_secret_query_param("x", "123e4567-e89b-12d3-a456-426614174000")
    assert query_env_var("api-key") == "OPENAI_COMPATIBLE_QUERY_API_KEY"


# --- keys go only where they belong --------------------------------------------------------------


def compatible(fake_api, query: str = "", **kw) -> OpenAIProvider:
    return OpenAIProvider("m", base_url=f"{fake_api.url}/v1{query}", compatible=True, timeout_s=5, **kw)


def test_openai_api_key_is_never_sent_to_a_compatible_server(fake_api, openai_reply, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
    fake_api.enqueue_reply(200, openai_reply("ok"))
    compatible(fake_api).complete(MSG)  # plain http, loopback
    (req,) = fake_api.requests
    assert req.headers["authorization"] == f"Bearer {COMPATIBLE_PLACEHOLDER_KEY}"
    assert ENV_KEY not in json.dumps(req.headers)


def test_a_compatible_server_gets_a_key_only_on_purpose(fake_api, openai_reply, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-meant-for-the-local-server-1")
    fake_api.enqueue_reply(200, openai_reply("ok"))
    fake_api.enqueue_reply(200, openai_reply("ok"))
    compatible(fake_api).complete(MSG)
    compatible(fake_api, api_key="explicit-key-xyz").complete(MSG)
    assert [r.headers["authorization"] for r in fake_api.requests] == [
        "Bearer sk-meant-for-the-local-server-1", "Bearer explicit-key-xyz"]


def test_openai_base_url_in_the_environment_does_not_redirect_the_openai_key(monkeypatch, fake_api):
    monkeypatch.setenv("OPENAI_BASE_URL", f"{fake_api.url}/v1")
    p = OpenAIProvider("gpt-4.1-mini", api_key=ENV_KEY)
    assert str(p._client.base_url).rstrip("/") == OPENAI_API_BASE
    assert fake_api.requests == []


def test_401_from_a_compatible_server_without_a_key_says_how_to_send_one(fake_api, monkeypatch):
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
    fake_api.enqueue_reply(401, {"error": {"message": "Invalid API key"}})
    with pytest.raises(AuthenticationFailed, match="OPENAI_COMPATIBLE_API_KEY"):
        compatible(fake_api).complete(MSG)


# --- query strings and user info in a compatible base URL ----------------------------------------


def test_query_key_is_sent_as_a_query_parameter_not_pasted_into_the_path(fake_api, openai_reply):
    fake_api.enqueue_reply(200, openai_reply("ok"))
    p = compatible(fake_api, f"?key={QKEY}&api-version=2024-06-01")
    p.complete(MSG)
    (req,) = fake_api.requests
    assert req.path == f"/v1/chat/completions?key={QKEY}&api-version=2024-06-01"
    assert p.spec == f"openai-compatible/m@{fake_api.url}/v1?key=***&api-version=2024-06-01"
    assert QKEY not in repr(p) and QKEY not in repr(get_provider(f"openai-compatible/m@{fake_api.url}/v1?key={QKEY}"))


def test_user_info_in_the_url_is_refused_without_echoing_it(fake_api):
    with pytest.raises(BadRequest) as ei:
        get_provider(f"openai-compatible/m@http://user:S3CRET@127.0.0.1:{fake_api.url.rsplit(':', 1)[1]}/v1?key={QKEY}")
    text = str(ei.value)
    assert "user:password@host" in text and "OPENAI_COMPATIBLE_API_KEY" in text
    assert "S3CRET" not in text and QKEY not in text and fake_api.requests == []


def test_malformed_specs_are_reported_redacted():
    with pytest.raises(UnknownProvider) as ei:
        get_provider(f"openai-compatible/@http://u:S3CRET@h:1/v1?key={QKEY}")
    assert "S3CRET" not in str(ei.value) and QKEY not in str(ei.value)
    with pytest.raises(BadRequest) as ei:
        get_provider(f"openai-compatible/m@ftp://h/v1?key={QKEY}")
    assert QKEY not in str(ei.value)


def test_redacted_spec_gets_its_secret_back_from_the_environment(fake_api, openai_reply, monkeypatch):
    redacted = f"openai-compatible/m@{fake_api.url}/v1?key=***"
    monkeypatch.delenv("OPENAI_COMPATIBLE_QUERY_KEY", raising=False)
    with pytest.raises(AuthenticationFailed, match="OPENAI_COMPATIBLE_QUERY_KEY"):
        get_provider(redacted)
    monkeypatch.setenv("OPENAI_COMPATIBLE_QUERY_KEY", QKEY)
    fake_api.enqueue_reply(200, openai_reply("ok"))
    p = get_provider(redacted)
    p.complete(MSG)
    assert fake_api.requests[0].path == f"/v1/chat/completions?key={QKEY}"
    assert p.spec == redacted


def test_info_logs_never_hold_the_query_key_or_the_api_key(fake_api, openai_reply, caplog):
    fake_api.enqueue_reply(200, openai_reply("ok"))
    fake_api.enqueue_reply(503, {"error": {"message": "busy"}})
    p = compatible(fake_api, f"?key={QKEY}", api_key="sk-local-server-key-000")
    with caplog.at_level(logging.DEBUG):
        p.complete(MSG)
        with pytest.raises(Exception):
            p.complete(MSG)
    http_logs = [r.getMessage() for r in caplog.records if r.name == "httpx2"]
    assert any("chat/completions?key=***" in m for m in http_logs)  # the URL was logged, redacted
    assert QKEY not in caplog.text and "sk-local-server-key-000" not in caplog.text


def test_auto_provider_debug_log_shows_the_spec_redacted(caplog, monkeypatch):
    monkeypatch.delenv("OPENAI_COMPATIBLE_QUERY_KEY", raising=False)
    env = {"OPENAI_BASE_URL": f"http://127.0.0.1:9/v1?key={QKEY}", "OPENAI_API_KEY": ENV_KEY}
    with caplog.at_level(logging.INFO, logger="agent_providers.registry"):
        p = auto_provider(env)
    assert "auto_provider picked openai-compatible/default@http://127.0.0.1:9/v1?key=***" in caplog.text
    assert QKEY not in caplog.text and ENV_KEY not in caplog.text
    assert QKEY not in repr(p.auto_choice) and p.auto_choice.spec.endswith("key=***")


# --- a benchmark run: manifest, results, cache and logs hold only redacted specs -------------------


def test_run_files_and_logs_never_hold_credentials_and_resume_reads_them_from_the_environment(
    tmp_path, fake_api, openai_reply, caplog, monkeypatch
):
    from benchmarks.harness.config import RunConfig
    from benchmarks.questions import load_forecastbench
    from benchmarks.harness.runner import BenchmarkRunner
    from benchmarks.run_folder import read_results

    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)  # must not travel to the compatible server
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-compat-key-ABCDEF-123")
    monkeypatch.delenv("OPENAI_COMPATIBLE_QUERY_KEY", raising=False)
    answer = json.dumps({"rationale": "steady", "p_yes_percent": 40, "key_evidence": []})
    fake_api.answer_by_default(200, openai_reply(answer, prompt=50, completion=12))
    spec = f"openai-compatible/m@{fake_api.url}/v1?key={QKEY}"
    qs = load_forecastbench(question_type="market", sample_n=2, seed=3)
    config = RunConfig(providers=[spec], output_dir=str(tmp_path), run_id="cred", search="none", n_members=2,
                       methods=["mean", "median"], baselines=["always_0.5"])
    runner = BenchmarkRunner(config, questions=qs, progress=False)
    with caplog.at_level(logging.INFO):
        summary = asyncio.run(runner.arun())
    assert summary.n_ok == 2 and len(fake_api.requests) == 4
    assert {r.path for r in fake_api.requests} == {f"/v1/chat/completions?key={QKEY}"}  # the key did go out
    assert {r.headers["authorization"] for r in fake_api.requests} == {"Bearer sk-compat-key-ABCDEF-123"}

    files = [f for f in runner.run_dir.rglob("*") if f.is_file()]
    assert {f.name for f in files} >= {"manifest.json", "results.jsonl", "cache.db"}
    for f in files:
        data = f.read_bytes()
        for secret in (QKEY, ENV_KEY, "sk-compat-key-ABCDEF-123"):
            assert secret.encode() not in data, f"{secret} in {f}"
    manifest = json.loads((runner.run_dir / "manifest.json").read_text())
    redacted = f"openai-compatible/m@{fake_api.url}/v1?key=***"
    assert manifest["config"]["providers"] == [redacted] and manifest["providers"][0]["spec"] == redacted
    assert manifest["prices"].startswith("genai-prices")
    assert {f["model"] for r in read_results(runner.run_dir / "results.jsonl") for f in r["trace"]["forecasts"]} == {redacted}
    for secret in (QKEY, ENV_KEY, "sk-compat-key-ABCDEF-123"):
        assert secret not in caplog.text
    assert any("?key=***" in r.getMessage() for r in caplog.records if r.name == "httpx2")

    # resume, as `run --resume` does: the config comes back from the manifest, redacted
    resumed = RunConfig.model_validate(manifest["config"])
    with pytest.raises(AuthenticationFailed, match="OPENAI_COMPATIBLE_QUERY_KEY"):
        BenchmarkRunner(resumed, questions=qs, progress=False).stack.build()
    monkeypatch.setenv("OPENAI_COMPATIBLE_QUERY_KEY", QKEY)
    again = BenchmarkRunner(resumed, questions=qs, progress=False)
    summary = asyncio.run(again.arun(resume=True))
    assert summary.n_done_before == 2
    n = len(fake_api.requests)
    again.stack.providers[0].complete([{"role": "user", "content": "a new question"}])
    assert fake_api.requests[n].path == f"/v1/chat/completions?key={QKEY}"
    assert QKEY not in (runner.run_dir / "manifest.json").read_text()
