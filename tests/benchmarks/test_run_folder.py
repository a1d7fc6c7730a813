"""One writer per run folder, failed questions that never abort a run, and writes that lose nothing."""

import asyncio
import errno
import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_providers import ScriptedProvider
from benchmarks.cli import app
from benchmarks.harness.config import RunConfig
from benchmarks.questions import load_forecastbench
from benchmarks.report import write_report
from benchmarks.harness.runner import BenchmarkRunner
from benchmarks.run_folder import LOCK_FILE, REPLACED_FILE, ResultsWriteError, RunFolderBusy, read_results
from agent_providers import scripted_world

ROOT = Path(__file__).resolve().parents[2]


def questions(n=3, seed=4):
    return load_forecastbench(question_type="market", one_per_source_question=True, sample_n=n, seed=seed)


def make_runner(tmp_path, qs, factory=None, run_id="r", **cfg):
    config = RunConfig(output_dir=str(tmp_path), run_id=run_id, search="none", providers=["scripted"], **cfg)
    return BenchmarkRunner(config, provider_factory=factory or (lambda spec: scripted_world.provider()), questions=qs,
                           progress=False, retry_sleep=lambda s: None)


def counting_factory(calls, latency_s=0.0):
    def factory(spec):
        def respond(messages):
            calls.append(1)
            return scripted_world.respond(messages)
        return ScriptedProvider(responder=respond, latency_s=latency_s)
    return factory


def test_two_writers_on_one_run_folder(tmp_path):
    qs = questions(3)
    solo_calls: list = []
    asyncio.run(make_runner(tmp_path / "solo", qs, counting_factory(solo_calls), cache=False).arun())
    calls: list = []
    outcomes: list = []
    started = threading.Barrier(2)

    def writer():
        r = make_runner(tmp_path, qs, counting_factory(calls, latency_s=0.05), cache=False)
        started.wait()
        try:
            asyncio.run(r.arun(resume=True))
            outcomes.append("ok")
        except RunFolderBusy as exc:
            outcomes.append(str(exc))

    threads = [threading.Thread(target=writer) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("ok") == 1
    busy = next(o for o in outcomes if o != "ok")
    assert str(tmp_path / "r") in busy and str(tmp_path / "r" / LOCK_FILE) in busy
    records = read_results(tmp_path / "r" / "results.jsonl")
    assert sorted(r["question_id"] for r in records) == sorted(q.id for q in qs)  # each question once
    assert len(calls) == len(solo_calls)  # the second writer made no provider call
    write_report([tmp_path / "r"], tmp_path / "rep", n_resamples=20)


def test_second_process_resuming_a_locked_folder_fails_at_once(tmp_path):
    args = ["-o", str(tmp_path), "--no-progress", "--no-report"]
    first = CliRunner().invoke(app, ["run", "-p", "scripted", "--search", "none", "--n", "2", "--run-id", "r", *args])
    assert first.exit_code == 1  # the registry's scripted provider has no answers: every question failed
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\nfrom filelock import FileLock\n"
        f"lock = FileLock({str(tmp_path / 'r' / LOCK_FILE)!r}); lock.acquire()\nprint('held', flush=True)\ntime.sleep(60)\n")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        res = CliRunner().invoke(app, ["run", "--resume", "r", *args])
        assert res.exit_code == 2
        lines = [line for line in res.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: ")
        assert f"{tmp_path / 'r'} is being written by another run" in lines[0] and LOCK_FILE in lines[0]
    finally:
        holder.kill()
        holder.wait()


def test_report_keeps_the_first_of_duplicated_records_and_warns_once(tmp_path, caplog, monkeypatch):
    from benchmarks.run_folder import load

    qs = questions(3)
    runner = make_runner(tmp_path, qs)
    asyncio.run(runner.arun())
    clean = write_report([runner.run_dir], tmp_path / "clean", n_resamples=20).leaderboard
    path = runner.run_dir / "results.jsonl"
    dup = json.loads(path.read_text().splitlines()[0])
    for m in dup["methods"].values():  # a second, different record of the first question
        m["p_yes"] = 0.5 if m["p_yes"] is not None else None
    with open(path, "a") as fh:
        fh.write(json.dumps(dup) + "\n")
    monkeypatch.setattr(load, "_WARNED_DUPLICATES", set())
    with caplog.at_level(logging.WARNING, logger="benchmarks.run_folder.load"):
        reps = [write_report([runner.run_dir], tmp_path / name, n_resamples=20) for name in ("a", "b")]
    assert all(r.leaderboard.equals(clean) for r in reps)  # the first record of each question, as if no duplicate
    assert clean.set_index("label").loc["mean", "n"] == 3
    warnings = [r.getMessage() for r in caplog.records if "duplicated question record" in r.getMessage()]
    assert warnings == [f"{runner.run_dir}: 1 duplicated question record(s) in results.jsonl; the report keeps the "
                        "first record of each question"]


def test_a_question_whose_pipeline_raises_is_a_failed_record_and_the_run_goes_on(tmp_path, caplog):
    qs = questions(4)
    runner = make_runner(tmp_path, qs, reconcile_min_spread=0.45, show_crowd=True)
    pipeline = runner.build_pipeline()
    real = pipeline.arun

    async def arun(q, **options):
        if q.id == qs[1].id:
            raise KeyError("usage")  # outside every member, turn and step boundary
        return await real(q, **options)

    pipeline.arun = arun
    runner.build_pipeline = lambda: pipeline
    with caplog.at_level(logging.WARNING, logger="benchmarks.harness.records"):
        summary = asyncio.run(runner.arun())
    assert (summary.n_ok, summary.n_failed) == (3, 1) and not summary.all_failed
    assert f"question {qs[1].id} failed with an unexpected KeyError: 'usage' (the run goes on)" in caplog.messages
    records = {r["question_id"]: r for r in read_results(runner.run_dir / "results.jsonl")}
    assert len(records) == 4
    bad = records[qs[1].id]
    assert bad["status"] == "failed" and bad["error"]["type"] == "UnexpectedError"
    assert bad["error"]["details"]["exception_type"] == "KeyError"
    assert (bad["trace"]["status"], bad["trace"]["final_source"], bad["trace"]["error"]) == ("failed", "question failed", bad["error"])
    assert all(m["status"] == "failed" for m in bad["methods"].values())
    # under the run's labels (the spread gate's), and with what the members were shown (the crowd's probability)
    assert set(bad["methods"]) == set(records[qs[0].id]["methods"]) and "debate_gated" in bad["methods"]
    assert bad["trace"]["question"]["crowd_p_yes"] == qs[1].crowd_p_yes is not None
    assert all(records[q.id]["status"] == "ok" for q in qs if q.id != qs[1].id)
    manifest = json.loads((runner.run_dir / "manifest.json").read_text())
    assert manifest["question_status"][qs[1].id] == "failed"


def test_a_failed_append_stops_the_run_cleanly_and_resume_finishes_it(tmp_path, monkeypatch):
    qs = questions(4)
    real_fsync = os.fsync
    appended = []

    def fsync(fd):
        if os.readlink(f"/proc/self/fd/{fd}").endswith("results.jsonl"):
            appended.append(fd)
            if len(appended) == 3:
                raise OSError(errno.ENOSPC, "No space left on device")
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(ResultsWriteError, match="No space left on device.*the 2 records written before are intact"):
        asyncio.run(make_runner(tmp_path, qs, concurrency=1).arun())
    path = tmp_path / "r" / "results.jsonl"
    assert path.read_bytes().endswith(b"\n") and len(read_results(path)) == 2  # the failed line was cut back
    monkeypatch.setattr(os, "fsync", real_fsync)
    summary = asyncio.run(make_runner(tmp_path, qs, concurrency=1).arun(resume=True))
    assert summary.n_done_before == 2 and summary.n_ok == 2
    assert sorted(r["question_id"] for r in read_results(path)) == sorted(q.id for q in qs)


def test_retry_failed_replaces_failed_records_and_keeps_them_aside(tmp_path, caplog):
    qs = questions(3)
    bad_text = qs[0].text

    def flaky(spec):
        def respond(messages):  # billed, unparseable answers for one question
            return "I would rather not say." if bad_text in messages[1].content else scripted_world.respond(messages)
        return ScriptedProvider(responder=respond)

    first = asyncio.run(make_runner(tmp_path, qs, flaky, cache=False).arun())
    assert (first.n_ok, first.n_failed) == (2, 1)
    assert first.top_failure.startswith("ForecastParseError: ")
    plain = asyncio.run(make_runner(tmp_path, qs, cache=False).arun(resume=True))
    assert plain.n_done_before == 3 and plain.n_ok + plain.n_failed == 0  # a plain resume keeps the failure
    with caplog.at_level(logging.INFO, logger="benchmarks.harness.runner"):
        again = asyncio.run(make_runner(tmp_path, qs, cache=False).arun(resume=True, retry_failed=True))
    assert f"{tmp_path / 'r'}: 1 failed question(s) set aside in {REPLACED_FILE}; running them again" in caplog.messages
    assert again.n_retried == 1 and (again.n_ok, again.n_failed) == (1, 0) and again.n_ok_total == 3
    records = read_results(tmp_path / "r" / "results.jsonl")
    assert sorted(r["question_id"] for r in records) == sorted(q.id for q in qs)
    assert all(r["status"] == "ok" for r in records)
    aside = read_results(tmp_path / "r" / REPLACED_FILE)
    assert [(r["question_id"], r["status"]) for r in aside] == [(qs[0].id, "failed")]
    assert sum(e["calls"] for e in aside[0]["ledger"]) == 3  # the failed attempt's usage is kept
    write_report([tmp_path / "r"], tmp_path / "rep", n_resamples=20)


def test_after_retry_failed_the_cost_tables_count_the_set_aside_records_too(tmp_path):
    from benchmarks.report.costs import cost_tables
    from benchmarks.run_folder import load_run

    qs = questions(3)
    bad_text = qs[0].text

    def flaky(spec):
        return ScriptedProvider(responder=lambda m: "I would rather not say." if bad_text in m[1].content
                                else scripted_world.respond(m))

    asyncio.run(make_runner(tmp_path, qs, flaky, cache=False).arun())
    asyncio.run(make_runner(tmp_path, qs, cache=False).arun(resume=True, retry_failed=True))
    kept, aside = read_results(tmp_path / "r" / "results.jsonl"), read_results(tmp_path / "r" / REPLACED_FILE)
    assert len(kept) == 3 and len(aside) == 1

    def total(records, method, field):
        return sum(e[field] or 0 for r in records for e in r["ledger"] if e["method"] == method)

    costs, roles = cost_tables([load_run(tmp_path / "r")])
    costs, roles = costs.set_index("method"), roles.set_index("role")
    every = kept + aside
    ens_tokens = total(every, "ensemble", "input_tokens") + total(every, "ensemble", "output_tokens")
    assert total(aside, "ensemble", "calls") == 3  # the set-aside record's three billed (unparseable) answers
    assert costs.loc["mean", "calls"] == total(every, "ensemble", "calls") == 9 + 3
    assert costs.loc["mean", "input_tokens"] + costs.loc["mean", "output_tokens"] == ens_tokens
    assert costs.loc["mean", "tokens_per_question"] == pytest.approx(ens_tokens / 3)  # divided by the questions scored
    debate = total(every, "debate", "input_tokens") + total(every, "debate", "output_tokens")
    assert costs.loc["debate", "tokens_per_question"] == pytest.approx((ens_tokens + debate) / 3)
    assert roles.loc["forecaster", "calls"] == total(every, "ensemble", "calls")
    assert (costs["unanswered_calls"] == 0).all()


def test_retry_failed_needs_resume(tmp_path):
    with pytest.raises(ValueError, match="needs resume"):
        asyncio.run(make_runner(tmp_path, questions(1)).arun(retry_failed=True))
    assert not (tmp_path / "r").exists()
