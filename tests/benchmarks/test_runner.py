import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_schemas import DataValidationError
from benchmarks.harness.config import RunConfig
from tests.doubles.faults import FaultInjectingProvider
from benchmarks.questions import load_forecastbench
from benchmarks.report import write_report
from benchmarks.harness.runner import BenchmarkRunner
from benchmarks.run_folder import read_results
from agent_providers import scripted_world

ROOT = Path(__file__).resolve().parents[2]


def questions(n, seed=1):
    return load_forecastbench(question_type="market", one_per_source_question=True, sample_n=n, seed=seed)


def run(tmp_path, qs, *, run_id="r", factory=None, resume=False, **cfg):
    config = RunConfig(output_dir=str(tmp_path), run_id=run_id, search="none", providers=["scripted"], **cfg)
    runner = BenchmarkRunner(config, provider_factory=factory or (lambda spec: scripted_world.provider()),
                             questions=qs, progress=False, retry_sleep=lambda s: None)
    import asyncio

    summary = asyncio.run(runner.arun(resume=resume))
    return runner, summary


def test_run_writes_one_record_per_question_with_every_method_and_baseline(tmp_path):
    qs = questions(6)
    runner, summary = run(tmp_path, qs)
    records = read_results(runner.run_dir / "results.jsonl")
    assert [r["question_id"] for r in sorted(records, key=lambda r: r["question_id"])] == sorted(q.id for q in qs)
    assert summary.n_ok == 6 and summary.n_failed == 0
    r = records[0]
    assert set(r["methods"]) == {"mean", "median", "min", "geomean_odds", "extremized", "debate", "supervisor", "pipeline"}
    assert set(r["baselines"]) == {"crowd", "superforecaster_median", "base_rate", "always_0.5"}
    assert r["baselines"]["always_0.5"]["p_yes"] == 0.5
    q = next(q for q in qs if q.id == r["question_id"])
    assert r["baselines"]["crowd"]["p_yes"] == pytest.approx(q.crowd_p_yes)
    members = [f["p_yes"] for f in r["trace"]["forecasts"]]
    assert r["methods"]["mean"]["p_yes"] == pytest.approx(sum(members) / 3)
    assert r["methods"]["min"]["p_yes"] == pytest.approx(min(members))
    assert r["methods"]["pipeline"]["p_yes"] == pytest.approx(r["trace"]["final_p_yes"])
    manifest = json.loads((runner.run_dir / "manifest.json").read_text())
    assert set(manifest["question_status"].values()) == {"done"}
    assert manifest["seed"] == 0 and manifest["providers"][0]["spec"] == "scripted"
    assert manifest["config"]["pipeline"]["n_members"] == 3 and manifest["config"]["pipeline"]["max_tokens"] == 512


def test_a_spread_gate_scores_the_reconciliation_methods_under_their_own_labels(tmp_path):
    from benchmarks.report.costs import cost_tables
    from benchmarks.run_folder import load_run

    qs = questions(8)
    runner, summary = run(tmp_path, qs, reconcile_min_spread=0.45)
    records = read_results(runner.run_dir / "results.jsonl")
    assert summary.n_ok == 8
    for r in records:
        assert set(r["methods"]) == {"mean", "median", "min", "geomean_odds", "extremized",
                                     "debate_gated", "supervisor_gated", "pipeline_gated"}
        gate = r["trace"]["reconcile_gate"]
        members = [f["p_yes"] for f in r["trace"]["forecasts"]]
        assert gate["min_spread"] == 0.45 and gate["spread"] == pytest.approx(max(members) - min(members))
        assert gate["reconciled"] is (gate["spread"] >= 0.45) is (r["trace"]["debate"] is not None)
        pipeline = r["methods"]["pipeline_gated"]
        assert pipeline["p_yes"] == pytest.approx(r["trace"]["final_p_yes"])
        if not gate["reconciled"]:  # the members agreed: each reconciliation row is the clipped mean, at no cost
            assert r["methods"]["debate_gated"]["p_yes"] == r["methods"]["mean"]["p_yes"] == pipeline["p_yes"]
            assert r["methods"]["debate_gated"]["note"].startswith("debate not run: the members agree (spread ")
            assert r["methods"]["debate_gated"]["extra_usage"]["calls"] == 0 and gate["reason"] in pipeline["note"]
    reconciled = [r["trace"]["reconcile_gate"]["reconciled"] for r in records]
    assert any(reconciled) and not all(reconciled)  # the scripted world's members agree on some questions only
    methods, _ = cost_tables([load_run(runner.run_dir)])
    walls = methods.set_index("label")["wall_time_s"]
    assert walls["pipeline_gated"] > walls["mean"]  # the specialists' wall time is attributed to the gated labels
    board = write_report([runner.run_dir], tmp_path / "report").leaderboard
    assert {"debate_gated", "supervisor_gated", "pipeline_gated"} <= set(board["label"])


def test_report_scores_match_direct_computation(tmp_path):
    from sklearn.metrics import brier_score_loss

    qs = questions(8)
    runner, _ = run(tmp_path, qs)
    rep = write_report([runner.run_dir], tmp_path / "out", n_resamples=200)
    table = rep.leaderboard.set_index("label")
    records = read_results(runner.run_dir / "results.jsonl")
    y = [r["outcome"] for r in records]
    from sklearn.metrics import log_loss

    mean = [r["methods"]["mean"]["p_yes"] for r in records]
    assert table.loc["mean", "brier"] == pytest.approx(brier_score_loss(y, mean))
    assert table.loc["mean", "log_loss"] == pytest.approx(log_loss(y, mean))
    assert table.loc["pipeline", "brier"] == pytest.approx(brier_score_loss(y, [r["methods"]["pipeline"]["p_yes"] for r in records]))
    assert table.loc["crowd", "brier"] == pytest.approx(brier_score_loss(y, [r["baselines"]["crowd"]["p_yes"] for r in records]))
    assert (tmp_path / "out" / "report.html").read_text().count("<svg") >= 4  # the viewer's inline figures
    # the audit table sums the records' audits: every prompt sent was scanned, nothing was found
    audit = rep.markdown.split("## Leakage audit over the prompts actually sent (findings must be 0)")[1].strip().splitlines()
    row = dict(zip([c.strip() for c in audit[0].strip("|").split("|")], [c.strip() for c in audit[2].strip("|").split("|")]))
    assert row["questions"] == "8" and row["failed_questions"] == "0" and row["findings"] == "0"
    assert int(row["prompts_scanned"]) == sum(len(r["trace"]["recorded_calls"]) for r in records) > 8 * 3
    csv = (tmp_path / "out" / "leaderboard.csv").read_text()
    assert "pipeline" in csv and "debate" in csv


def test_fault_injected_run_completes_and_counts_reconcile(tmp_path):
    qs = questions(40, seed=2)
    rates = {"rate_limit": 0.06, "overload": 0.04, "timeout": 0.04, "malformed_json": 0.03, "truncation": 0.03}
    injectors = []

    def factory(spec):
        p = FaultInjectingProvider(scripted_world.provider(), rates, seed=7)
        injectors.append(p)
        return p

    runner, summary = run(tmp_path, qs, factory=factory, concurrency=8)
    records = read_results(runner.run_dir / "results.jsonl")
    assert len(records) == 40 and len({r["question_id"] for r in records}) == 40
    assert summary.n_ok + summary.n_failed == 40
    stats = runner.stack.provider_stats()
    assert stats["calls"] == stats["ok"] + stats["failures"] + stats["retries"]
    inj = injectors[0]
    assert stats["calls"] == inj.passed + sum(inj.injected.values())
    # parse failures (malformed JSON, truncation) are not retried and show up as typed member/turn failures
    failed = [f for r in records for f in r["trace"]["forecasts"] if f["status"] == "failed"]
    errors = [f["error"]["type"] for f in failed]
    n_parse = inj.injected["malformed_json"] + inj.injected["truncation"]
    assert n_parse > 0 and errors, "the injected faults must reach the members"
    assert set(errors) <= {"ForecastParseError", "ResponseTruncated", "RateLimited", "ProviderOverloaded", "ProviderTimeout"}
    # an unreadable answer is one failed member, never retried; a transient error fails a member only when retries ran out
    assert sum(e in ("ForecastParseError", "ResponseTruncated") for e in errors) <= n_parse
    assert sum(e in ("RateLimited", "ProviderOverloaded", "ProviderTimeout") for e in errors) <= stats["failures"]
    for f in failed:  # a failed member keeps what it spent: an unreadable answer was billed
        assert f["p_yes"] is None
        if f["error"]["type"] in ("ForecastParseError", "ResponseTruncated"):
            assert f["usage"]["calls"] == 1 and f["usage"]["output_tokens"] > 0
    for r in records:
        for name, m in r["methods"].items():
            assert (m["status"] == "ok") == (m["p_yes"] is not None), (name, m)
        if r["status"] == "failed":
            assert r["error"]["type"] == "EnsembleFailed"


KILL_SCRIPT = r"""
import asyncio, sys
sys.path.insert(0, {root!r})
from benchmarks.harness.config import RunConfig
from benchmarks.harness.runner import BenchmarkRunner
from benchmarks.questions import load_forecastbench
from agent_providers import scripted_world
qs = load_forecastbench(question_type="market", one_per_source_question=True, sample_n=12, seed=3)
cfg = RunConfig(output_dir={out!r}, run_id="k", search="none", providers=["scripted"], concurrency=2)
r = BenchmarkRunner(cfg, provider_factory=lambda s: scripted_world.provider(latency_s=0.05), questions=qs, progress=False)
asyncio.run(r.arun(resume={resume}))
"""


def test_sigkill_then_resume_equals_uninterrupted_run(tmp_path):
    qs = questions(12, seed=3)
    script = KILL_SCRIPT.format(root=str(ROOT), out=str(tmp_path), resume=False)
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)
    results = tmp_path / "k" / "results.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline:
        if results.exists() and results.read_text().count("\n") >= 3:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    n_before = len(read_results(results))
    assert 3 <= n_before < 12, "the kill must land mid-run"
    # simulate a torn line from a write cut by the kill
    with open(results, "a") as fh:
        fh.write('{"question_id": "torn')
    subprocess.run([sys.executable, "-c", KILL_SCRIPT.format(root=str(ROOT), out=str(tmp_path), resume=True)], cwd=ROOT, check=True)
    resumed = read_results(results)
    assert len(resumed) == 12 and len({r["question_id"] for r in resumed}) == 12
    _, _ = run(tmp_path, qs, run_id="full", concurrency=2)
    full = {r["question_id"]: r for r in read_results(tmp_path / "full" / "results.jsonl")}
    for r in resumed:
        assert r["methods"] == full[r["question_id"]]["methods"]
    manifest = json.loads((tmp_path / "k" / "manifest.json").read_text())
    assert set(manifest["question_status"].values()) == {"done"}


def test_resume_costs_no_provider_calls_for_finished_work(tmp_path):
    qs = questions(4)
    calls = []

    def factory(spec):
        p = scripted_world.provider()
        calls.append(p)
        return p

    runner, _ = run(tmp_path, qs, factory=factory)
    n_first = len(calls[0].requests)
    # drop the last two records: as if the process died with them in flight
    path = runner.run_dir / "results.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:2]))
    runner2, summary = run(tmp_path, qs, factory=factory, resume=True)
    assert summary.n_done_before == 2
    assert len(calls[1].requests) == 0, "in-flight questions are replayed from the response cache"
    assert runner2.stack.provider_stats()["cache_hits"] > 0 and n_first > 0
    assert len(read_results(path)) == 4


def test_existing_results_without_resume_are_not_overwritten(tmp_path):
    qs = questions(2)
    runner, _ = run(tmp_path, qs)
    before = (runner.run_dir / "results.jsonl").read_bytes()
    with pytest.raises(FileExistsError):
        run(tmp_path, qs)
    assert (runner.run_dir / "results.jsonl").read_bytes() == before


def test_unknown_method_and_bad_question_file_give_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown methods \\['majority'\\]"):
        RunConfig(methods=["mean", "majority"])
    bad = tmp_path / "q.csv"
    bad.write_text("id,question,forecast_date,outcome\na,Will it?,2025-01-01,2\n")
    config = RunConfig(output_dir=str(tmp_path), run_id="bad", questions_file=str(bad), search="none", providers=["scripted"])
    runner = BenchmarkRunner(config, provider_factory=lambda s: scripted_world.provider(), progress=False)
    with pytest.raises(DataValidationError, match="outcome"):
        runner.run()
    assert not (tmp_path / "bad" / "results.jsonl").exists()
