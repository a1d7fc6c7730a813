"""Batch mode (issue 14) against a loopback fake of both providers' batch endpoints (tests.doubles.fake_api):
the fake's objects in the documented shapes (checked against the SDKs' own types), a 20-question batch run
equal to the same run made call by call at half the cost, and a resume after kill -9 that submits nothing twice."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas.testing as pdt
import pytest

from agent_providers.anthropic_provider import AnthropicProvider
from agent_providers.batch import BatchUnsupported
from agent_providers.openai_provider import OpenAIProvider
from agent_providers import scripted_world
from benchmarks.harness.config import RunConfig
from benchmarks.harness.cost_cap import record_cost
from tests.doubles.fake_api import FakeProviderAPI
from benchmarks.questions import load_forecastbench
from benchmarks.report import write_report
from benchmarks.harness.runner import BenchmarkRunner
from benchmarks.run_folder import read_results

ROOT = Path(__file__).resolve().parents[2]
FAKE_KEY = "sk-test-FAKE-batch-0123456789"
SPECS = ["anthropic/claude-haiku-4-5", "openai/gpt-4.1-mini"]
#: The direct run is not slowed by the providers' first-tier default limits (the fake server has none).
NO_LIMITS = {"anthropic": "rpm:none,itpm:none,otpm:none", "openai": "rpm:none,tpm:none"}


@pytest.fixture(scope="module")
def server():
    s = FakeProviderAPI()
    yield s
    s.close()


@pytest.fixture(scope="module")
def direct(server, tmp_path_factory):
    """The 20 questions run call by call against the fake (shared by the module's tests): (runner, direct calls made)."""
    before = direct_calls(server)
    runner, _ = run(tmp_path_factory.mktemp("direct"), server.url, questions(), "direct")
    return runner, direct_calls(server) - before


def direct_calls(server):
    """How many direct (non-batch) model calls the fake has answered so far."""
    return sum(1 for m, p in server.seen if m == "POST" and p in ("/v1/messages", "/v1/chat/completions"))


def factory_for(url):
    def factory(spec):
        prefix, _, model = spec.partition("/")
        if prefix == "anthropic":
            return AnthropicProvider(model, api_key=FAKE_KEY, base_url=url)
        return OpenAIProvider(model, api_key=FAKE_KEY, base_url=url + "/v1")
    return factory


def questions(n=20, seed=21):
    return load_forecastbench(question_type="market", one_per_source_question=True, sample_n=n, seed=seed)


def run(tmp_path, url, qs, run_id, *, resume=False, **cfg):
    config = RunConfig(output_dir=str(tmp_path), run_id=run_id, search="none", providers=SPECS, concurrency=8,
                       rate_limits=NO_LIMITS, batch_poll_s=0.01, **cfg)
    runner = BenchmarkRunner(config, provider_factory=factory_for(url), questions=qs, progress=False, retry_sleep=lambda s: None)
    return runner, asyncio.run(runner.arun(resume=resume))


def board(run_dir, out):
    t = write_report([run_dir], out, n_resamples=200).leaderboard
    return t[["label", "n", "brier", "brier_ci_low", "brier_ci_high", "log_loss", "ece", "tokens_per_question"]]


def test_the_fakes_batch_objects_have_the_sdks_documented_shapes(server):
    from anthropic.types.messages import MessageBatch, MessageBatchIndividualResponse
    from openai.types import Batch, FileObject

    a = AnthropicProvider("claude-haiku-4-5", api_key=FAKE_KEY, base_url=server.url)
    created = a.client.messages.batches.with_raw_response.create(
        requests=[{"custom_id": "c1", "params": {"model": "claude-haiku-4-5", "max_tokens": 16,
                                                 "messages": [{"role": "user", "content": "- Question: Will it?"}]}}])
    MessageBatch.model_validate(json.loads(created.http_response.content))
    batch_id = json.loads(created.http_response.content)["id"]
    ended = json.loads(a.client.messages.batches.with_raw_response.retrieve(batch_id).http_response.content)
    MessageBatch.model_validate(ended)
    assert ended["processing_status"] == "ended" and ended["results_url"].endswith(f"/v1/messages/batches/{batch_id}/results")
    line = next(iter(a.client.messages.batches.results(batch_id)))
    MessageBatchIndividualResponse.model_validate(line.to_dict())
    assert line.result.type == "succeeded" and line.custom_id == "c1"

    o = OpenAIProvider("gpt-4.1-mini", api_key=FAKE_KEY, base_url=server.url + "/v1")
    f = o.client.files.with_raw_response.create(file=("b.jsonl", b'{"custom_id": "c1", "method": "POST", "url": "/v1/chat/completions", '
                                                                  b'"body": {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "hi"}]}}\n'),
                                                purpose="batch")
    file_obj = FileObject.model_validate(json.loads(f.http_response.content))
    b = o.client.batches.with_raw_response.create(input_file_id=file_obj.id, endpoint="/v1/chat/completions", completion_window="24h")
    Batch.model_validate(json.loads(b.http_response.content))
    done = Batch.model_validate(json.loads(o.client.batches.with_raw_response.retrieve(json.loads(b.http_response.content)["id"]).http_response.content))
    assert done.status == "completed" and done.output_file_id
    out = json.loads(o.client.files.content(done.output_file_id).text.splitlines()[0])
    assert out["custom_id"] == "c1" and out["response"]["status_code"] == 200 and out["response"]["body"]["object"] == "chat.completion"


def test_batch_run_gives_the_call_by_call_leaderboard_at_half_the_cost(server, direct, tmp_path):
    qs = questions()
    direct, n_direct_calls = direct
    calls_before, batches_before = direct_calls(server), set(server.batches)
    batched, summary = run(tmp_path, server.url, qs, "batched", batch=True)
    assert summary.n_ok == 20
    assert direct_calls(server) == calls_before, "batch mode made no direct call"
    pdt.assert_frame_equal(board(direct.run_dir, tmp_path / "a"), board(batched.run_dir, tmp_path / "b"))
    d = {r["question_id"]: r for r in read_results(direct.run_dir / "results.jsonl")}
    b = {r["question_id"]: r for r in read_results(batched.run_dir / "results.jsonl")}
    def answers(records):
        return {q: {m: (v["p_yes"], v["status"]) for m, v in r["methods"].items()} for q, r in records.items()}

    assert answers(d) == answers(b)
    tokens = lambda records: sum((e["input_tokens"] or 0) + (e["output_tokens"] or 0) for r in records.values() for e in r["ledger"])
    assert tokens(d) == tokens(b) > 0
    cost_direct, cost_batch = sum(map(record_cost, d.values())), sum(map(record_cost, b.values()))
    assert cost_direct > 0 and cost_batch == pytest.approx(cost_direct / 2, rel=1e-9)
    mine = [b for i, b in server.batches.items() if i not in batches_before]
    assert sum(len(x.requests) for x in mine) == n_direct_calls, "the same calls, each once"
    manifest = json.loads((batched.run_dir / "manifest.json").read_text())
    assert len(manifest["batches"]) == len(mine) <= 8  # members (one per provider), then <= 3 rounds x 2 providers
    assert all(x["status"] in ("ended", "completed") for x in manifest["batches"])
    assert manifest["spend"]["paid_usd_total"] == pytest.approx(cost_batch, abs=1e-6)  # rounded to 6 decimals


def test_batch_mode_says_clearly_that_other_providers_have_none(tmp_path):
    config = RunConfig(output_dir=str(tmp_path), run_id="x", search="none", providers=["scripted"], batch=True)
    runner = BenchmarkRunner(config, provider_factory=lambda s: scripted_world.provider(), questions=questions(2), progress=False)
    with pytest.raises(BatchUnsupported, match="scripted has no batch mode"):
        runner.run()
    assert not (tmp_path / "x" / "results.jsonl").exists()


def test_batch_mode_puts_each_adapter_behind_the_run_s_one_collector_and_no_rate_limiter(tmp_path):
    from agent_providers.batch import BatchingProvider

    config = RunConfig(output_dir=str(tmp_path), run_id="b", search="none", providers=SPECS, batch=True, batch_poll_s=0.25)
    r = BenchmarkRunner(config, provider_factory=factory_for("http://127.0.0.1:9"), progress=False)
    providers = r.stack.build()
    collector = r.stack.batch_collector
    for p, adapter in zip(providers, (AnthropicProvider, OpenAIProvider)):
        batching = p.inner.inner.inner  # cache -> spend meter -> retry -> batch -> adapter
        assert type(batching) is BatchingProvider and batching.collector is collector and type(batching.inner) is adapter
    assert (collector.journal, collector.poll_interval_s) == (tmp_path / "b" / "batches.jsonl", 0.25)
    assert r.stack.limiters == {} and r.stack.execution_info() == {"executor": "local", "batch": True, "rate_limits": {}}
    r.stack.build()
    assert r.stack.batch_collector is collector  # providers built again in one run: still one collector and journal
    assert not (tmp_path / "b").exists()  # nothing written before the run starts


KILL_SCRIPT = r"""
import asyncio, sys
sys.path.insert(0, {root!r})
from tests.scale.test_batch import factory_for, questions, SPECS, NO_LIMITS
from benchmarks.harness.config import RunConfig
from benchmarks.harness.runner import BenchmarkRunner
cfg = RunConfig(output_dir={out!r}, run_id="k", search="none", providers=SPECS, rate_limits=NO_LIMITS, batch=True, batch_poll_s=0.02)
r = BenchmarkRunner(cfg, provider_factory=factory_for({url!r}), questions=questions(), progress=False)
asyncio.run(r.arun())
"""


def test_batch_run_resumes_after_kill_9_without_resubmitting(server, direct, tmp_path):
    qs = questions()
    batches_before = set(server.batches)
    server.batch_polls = 10**9  # the first batches stay in progress until the process is killed
    proc = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT.format(root=str(ROOT), out=str(tmp_path), url=server.url)], cwd=ROOT)
    journal = tmp_path / "k" / "batches.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and not (journal.exists() and journal.read_text().count('"submitted"') >= 2):
        time.sleep(0.05)
    time.sleep(0.2)  # it polls the running batches
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    submitted = [json.loads(line) for line in journal.read_text().splitlines()]
    mine = {i: b for i, b in server.batches.items() if i not in batches_before}
    assert len(submitted) == 2 and len(mine) == 2, "the members' batches, one per provider, were submitted"
    manifest = json.loads((tmp_path / "k" / "manifest.json").read_text())
    assert sorted(x["batch_id"] for x in manifest["batches"]) == sorted(mine), "the batch ids are in the manifest"
    server.batch_polls = 1
    for b in mine.values():
        b.polls_left = 1  # the provider finishes them while nobody watches
    resumed, summary = run(tmp_path, server.url, qs, "k", resume=True, batch=True)
    assert summary.n_ok == 20
    ids = [cid for i, b in server.batches.items() if i not in batches_before for cid in b.requests]
    assert len(ids) == len(set(ids)), "no request was submitted twice"
    first = set(submitted[0]["custom_ids"]) | set(submitted[1]["custom_ids"])
    assert len(first) == 20 * 3  # every member of every question went in the first two batches
    pdt.assert_frame_equal(board(direct[0].run_dir, tmp_path / "a"), board(resumed.run_dir, tmp_path / "b"))
