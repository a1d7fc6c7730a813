"""The cost cap (``--max-cost``) and sharded runs merged by ``leaderboard`` (issue 14)."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import logging
import time

import pytest

from agent_providers import ScriptedProvider
from agent_schemas import DataValidationError
from benchmarks.harness import session as session_module
from benchmarks.harness.config import RunConfig
from benchmarks.harness.cost_cap import CostCap, record_cost
from benchmarks.harness.records import failed_trace
from benchmarks.harness.runner import BenchmarkRunner
from benchmarks.harness.selection import QuestionSelection
from benchmarks.questions import load_forecastbench
from benchmarks.report import write_report
from benchmarks.run_folder import ResultsWriteError, group_shards, read_results
from benchmarks.run_folder.shards import config_digest, parse_shard, shard_of
from agent_providers import scripted_world
from tests.helpers import SpecProvider, make_question

#: Fake price of the scripted provider: USD per token (input + output).
PRICE = 1e-5


def questions(n, seed=5):
    return load_forecastbench(question_type="market", one_per_source_question=True, sample_n=n, seed=seed)


def priced(spec):
    return ScriptedProvider(responder=scripted_world.respond, cost_per_token_usd=PRICE)


def run(tmp_path, qs, *, resume=False, factory=priced, **cfg):
    cfg.setdefault("run_id", "r")
    config = RunConfig(output_dir=str(tmp_path), search="none", providers=["scripted"], **cfg)
    runner = BenchmarkRunner(config, provider_factory=factory, questions=qs, progress=False, retry_sleep=lambda s: None)
    return runner, asyncio.run(runner.arun(resume=resume))


def test_max_cost_stops_at_the_cap_says_why_and_a_resume_with_a_higher_cap_finishes(tmp_path):
    qs = questions(12)
    full, _ = run(tmp_path, qs, run_id="full", concurrency=2)
    costs = [record_cost(r) for r in read_results(full.run_dir / "results.jsonl")]
    per_q = sum(costs) / len(costs)
    assert per_q > 0
    cap = 4.5 * per_q
    runner, summary = run(tmp_path, qs, concurrency=2, max_cost_usd=cap)
    manifest = json.loads((runner.run_dir / "manifest.json").read_text())
    done = read_results(runner.run_dir / "results.jsonl")
    paid = manifest["spend"]["paid_usd_total"]
    assert manifest["stopped"]["reason"] == "max_cost" and summary.stopped == manifest["stopped"]
    assert 3 <= len(done) <= 4, "the cap stops the run after the questions that fit"
    assert paid == pytest.approx(sum(record_cost(r) for r in done))  # every paid call belongs to a written question
    assert paid <= cap
    assert manifest["stopped"]["n_not_started"] == 12 - len(done)
    assert "would exceed the cap" in manifest["stopped"]["note"]
    assert set(manifest["question_status"].values()) == {"done", "pending"}
    # resume with a higher cap: the rest runs, nothing is paid twice, and the manifest no longer says stopped
    resumed, summary2 = run(tmp_path, qs, resume=True, concurrency=2, max_cost_usd=100 * per_q)
    manifest = json.loads((resumed.run_dir / "manifest.json").read_text())
    assert len(read_results(resumed.run_dir / "results.jsonl")) == 12 and manifest["stopped"] is None
    assert manifest["spend"]["paid_usd_total"] == pytest.approx(sum(costs), rel=1e-9)
    assert manifest["config"]["max_cost_usd"] == pytest.approx(100 * per_q)


def test_max_cost_cancels_in_flight_questions_once_the_money_paid_reaches_the_cap(tmp_path):
    qs = questions(4)
    # every question costs far more than the dry-run estimate of the scripted provider ($0): the first two start,
    # the cap is reached while they run, and they are cancelled (left pending, their calls paid and cached)
    slow = lambda spec: ScriptedProvider(responder=scripted_world.respond, cost_per_token_usd=PRICE, latency_s=0.05)
    runner, summary = run(tmp_path, qs, factory=slow, concurrency=2, max_cost_usd=PRICE * 500)
    manifest = json.loads((runner.run_dir / "manifest.json").read_text())
    assert manifest["stopped"]["reason"] == "max_cost" and manifest["stopped"]["n_cancelled"] >= 1
    assert not (runner.run_dir / "results.jsonl").exists() or len(read_results(runner.run_dir / "results.jsonl")) < 4
    assert "in_flight" not in manifest["question_status"].values()


def test_max_cost_refuses_unknown_prices(tmp_path):
    from agent_schemas import DataValidationError
    from benchmarks.harness.estimate import FullAnswerStandIn

    config = RunConfig(output_dir=str(tmp_path), run_id="u", search="none", providers=["openai-compatible/m@http://127.0.0.1:1/v1"],
                       max_cost_usd=1.0)
    runner = BenchmarkRunner(config, provider_factory=FullAnswerStandIn, questions=questions(2), progress=False)
    with pytest.raises(DataValidationError, match="--max-cost needs known prices"):
        runner.run()
    assert not (tmp_path / "u" / "results.jsonl").exists()


def test_shards_partition_the_questions_and_leaderboard_merges_them_into_the_unsharded_report(tmp_path):
    qs = questions(20, seed=8)
    assert parse_shard("2/3") == (2, 3)
    with pytest.raises(ValueError, match="0 <= i < n"):
        parse_shard("3/3")
    whole, _ = run(tmp_path, qs, run_id="whole", factory=lambda s: scripted_world.provider())
    shard_dirs = []
    for i in range(3):
        r, _ = run(tmp_path / f"machine{i}", qs, run_id="big", shard=f"{i}/3", factory=lambda s: scripted_world.provider())
        assert r.run_dir.name == f"big-shard{i}of3"
        ids = [x["question_id"] for x in read_results(r.run_dir / "results.jsonl")]
        assert ids and all(shard_of(q, 3) == i for q in ids)
        shard_dirs.append(r.run_dir)
    # the same shard copied twice (run again on another machine) is still counted once
    import shutil

    shutil.copytree(shard_dirs[0], tmp_path / "copy" / "big-shard0of3")
    groups = group_shards([*shard_dirs, tmp_path / "copy" / "big-shard0of3"])
    assert len(groups) == 1 and groups[0].run_id == "big" and groups[0].missing == []
    merged = write_report(groups, tmp_path / "merged", n_resamples=100)
    single = write_report([whole.run_dir], tmp_path / "single", n_resamples=100)
    cols = ["label", "n", "brier", "log_loss", "ece"]
    a = merged.leaderboard[cols].sort_values("label").reset_index(drop=True)
    b = single.leaderboard[cols].sort_values("label").reset_index(drop=True)
    import pandas.testing as pdt

    pdt.assert_frame_equal(a, b)
    assert int(merged.leaderboard["n_answered"].max()) == 20
    # a missing shard is reported, not guessed
    partial = group_shards(shard_dirs[:2])
    assert partial[0].missing == [2]


# --- the session's accounting, from the runner's side (hand-computed USD) ----------------------------------------


def session_of(tmp_path, n=5, factory=priced, **cfg):
    """A runner over questions q1..qn (scripted, priced) and a fresh session of it, its folder created."""
    qs = [make_question(f"q{i}") for i in range(1, n + 1)]
    config = RunConfig(output_dir=str(tmp_path), run_id="r", search="none", providers=["scripted"], n_members=2,
                       methods=["mean"], baselines=[], **cfg)
    runner = BenchmarkRunner(config, provider_factory=factory, questions=qs, progress=False, retry_sleep=lambda s: None)
    runner.stack.build()
    runner.run_dir.mkdir(parents=True, exist_ok=True)
    return runner, qs, runner.session(qs, [], {}, time.perf_counter())


def failed(session, q, message):
    """The failed record of ``q`` whose pipeline raised ``RuntimeError(message)``."""
    return session.record(q, failed_trace(q, RuntimeError(message), show_crowd=False))


def test_a_question_starts_only_while_the_money_paid_plus_the_questions_in_flight_fit_the_cap(tmp_path):
    runner, qs, s = session_of(tmp_path)
    assert s.may_start() and not s.cap_exhausted()  # no cap
    s.cap = CostCap(max_usd=1.0, paid_before_usd=0.25, prior_per_question_usd=0.25)
    runner.stack.spend.add(0.25)  # paid: 0.25 before + 0.25 now
    assert s.paid_now_usd == 0.25
    assert s.may_start()  # 0.5 + 1 x 0.25 <= 1
    s.start(qs[0])
    assert s.may_start()  # 0.5 + 2 x 0.25 = 1.0 <= 1
    s.start(qs[1])
    assert not s.may_start()  # 0.5 + 3 x 0.25 > 1
    assert s.may_start(in_flight=0)  # the batch executor counts the questions it admits itself
    assert not s.cap_exhausted()
    runner.stack.spend.add(0.5)
    assert s.cap_exhausted() and s.cap.paid_usd == 1.0


def test_a_cost_stop_is_recorded_once_with_its_figures_and_later_cancellations_update_them(tmp_path, caplog):
    runner, qs, s = session_of(tmp_path)
    s.stop_for_cost(n_cancelled=1)
    assert s.stopped is None  # no cap: nothing stops the run
    for q in qs[:3]:
        s.start(q)
    asyncio.run(s.finish(qs[0], failed(s, qs[0], "disk on fire")))
    for q in (qs[0], qs[1], qs[3]):  # cancelled: back to pending; finished and pending questions stay as they are
        s.unstart(q)
    assert s.status == {"q1": "failed", "q2": "pending", "q3": "in_flight", "q4": "pending", "q5": "pending"}
    s.cap = CostCap(max_usd=1.0, paid_before_usd=0.25, prior_per_question_usd=0.5)
    runner.stack.spend.add(0.5)
    note = ("no new question started: paid $0.7500 plus the estimate of the next question ($0.5000 each, in flight "
            "included) would exceed the cap of $1.00; resume with a higher --max-cost to continue")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="benchmarks.harness.session"):
        s.stop_for_cost(n_cancelled=1)
        expected = {"reason": "max_cost", "max_cost_usd": 1.0, "paid_usd": 0.75, "estimate_per_question_usd": 0.5,
                    "n_not_started": 3, "n_cancelled": 1, "note": note}
        assert s.stopped == expected
        runner.stack.spend.add(0.1234567)  # the questions in flight paid more before they were cancelled
        s.unstart(qs[2])
        s.stop_for_cost(n_cancelled=2)
    assert s.stopped == {**expected, "paid_usd": 0.873457, "n_not_started": 4, "n_cancelled": 3}
    assert caplog.messages == [f"{runner.run_dir}: {note}"]  # said once
    s.write_manifest()
    assert json.loads((runner.run_dir / "manifest.json").read_text())["stopped"] == s.stopped == s.summary(0).stopped
    _, _, fresh = session_of(tmp_path / "b")
    fresh.cap = CostCap(max_usd=1.0)
    fresh.stop_for_cost()  # nothing in flight was cancelled
    assert fresh.stopped["n_cancelled"] == 0 and fresh.stopped["n_not_started"] == 5


def test_the_manifest_spend_adds_earlier_sessions_this_sessions_providers_and_remote_workers(tmp_path, monkeypatch):
    runner, qs, s = session_of(tmp_path, max_cost_usd=2.0)
    s.paid_before_usd = 0.5
    runner.stack.spend.add(0.1234567)
    asyncio.run(s.finish(qs[0], failed(s, qs[0], "disk on fire"), paid_usd=0.25))  # paid by a Ray worker
    asyncio.run(s.finish(qs[1], failed(s, qs[1], "disk full"), paid_usd=0.125))
    assert s.paid_now_usd == pytest.approx(0.4984567)
    s.write_manifest()
    manifest = json.loads((runner.run_dir / "manifest.json").read_text())
    assert manifest["spend"] == {"paid_usd_total": 0.998457, "paid_usd_session": 0.498457, "max_cost_usd": 2.0}
    assert manifest["stopped"] is None and "shard" not in manifest
    assert manifest["execution"] == {"executor": "local", "batch": False, "rate_limits": {}}
    summary = s.summary(0)
    assert (summary.top_failure, summary.n_top_failure, summary.stopped) == ("UnexpectedError: RuntimeError: disk on fire", 2, None)
    # a record that cannot be written: the message counts the records written before, failed ones included
    def full(path, record):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(session_module, "append_jsonl", full)
    with pytest.raises(ResultsWriteError) as ei:
        asyncio.run(s.finish(qs[2], failed(s, qs[2], "x")))
    results = runner.run_dir / "results.jsonl"
    assert str(ei.value) == (f"could not append the record of question q3 to {results} (No space left on device); "
                             "the 2 records written before are intact: fix the cause and resume the run")
    assert ei.value.details == {"path": str(results)}


def test_a_finished_question_s_ledger_cost_becomes_the_cap_s_estimate(tmp_path):
    runner, qs, s = session_of(tmp_path)
    s.cap = CostCap(max_usd=1.0, prior_per_question_usd=0.5)
    trace = asyncio.run(runner.build_pipeline().arun(qs[0].visible()))
    record = s.record(qs[0], trace)
    cost = sum(e["cost_usd"] for e in record.ledger)
    assert cost > 0 and cost == pytest.approx(runner.stack.spend.paid_usd)  # two member calls at PRICE per token
    asyncio.run(s.finish(qs[0], record))
    assert s.cap.finished_costs == [pytest.approx(cost)] and s.cap.per_question_usd == pytest.approx(cost)


def test_a_resumed_session_continues_the_manifest_s_start_wall_time_and_spend(tmp_path):
    runner, qs, _ = session_of(tmp_path)
    manifest = runner.run_dir / "manifest.json"
    manifest.write_text(json.dumps({"created_at": "2026-01-02T03:04:05+00:00", "wall_time_s_total": 12.5,
                                    "spend": {"paid_usd_total": 0.75}}))
    s = runner.session(qs, [], {}, time.perf_counter())
    s.write_manifest()
    m = json.loads(manifest.read_text())
    assert m["created_at"] == "2026-01-02T03:04:05+00:00"
    assert m["wall_time_s_total"] == pytest.approx(12.5 + m["wall_time_s"], abs=2e-3)
    assert m["spend"]["paid_usd_total"] == 0.75 and m["spend"]["paid_usd_session"] == 0.0
    # a manifest without these fields (an older run): a new start, no earlier time, nothing paid before
    manifest.write_text(json.dumps({"question_ids": [q.id for q in qs]}))
    before = dt.datetime.now(dt.timezone.utc)
    runner.session(qs, [], {}, time.perf_counter()).write_manifest()
    m = json.loads(manifest.read_text())
    assert before <= dt.datetime.fromisoformat(m["created_at"]) <= dt.datetime.now(dt.timezone.utc)
    assert m["wall_time_s_total"] == m["wall_time_s"] and m["spend"]["paid_usd_total"] == 0.0


def test_a_resumed_session_takes_statuses_and_failure_reasons_from_the_first_record_of_each_question(tmp_path):
    runner, qs, _ = session_of(tmp_path, n=3)
    ok = {"question_id": "q1", "status": "ok", "trace": {"forecasts": [], "error": None}}
    error = {"type": "EnsembleFailed", "message": "0 of 2 members answered", "retryable": False, "details": {}}
    member = {"type": "ForecastParseError", "message": "no JSON object found", "retryable": False, "details": {}}
    bare = {"question_id": "q2", "status": "failed"}  # a record without its trace: why is unknown
    with_members = {"question_id": "q3", "status": "failed", "trace": {"forecasts": [{"error": member}, {"error": None}], "error": error}}
    s = runner.session(qs, [ok, bare, with_members, {**ok, "question_id": "q2"}], {}, time.perf_counter())
    assert s.status == {"q1": "done", "q2": "failed", "q3": "failed"} and s.n_done_before == 3
    assert s.reasons == {"q2": "unknown", "q3": "ForecastParseError: no JSON object found"}


def test_the_cost_cap_counts_earlier_sessions_finished_questions_and_the_dry_run_estimate(tmp_path, monkeypatch):
    """The prior is the dry run's estimate per question, at batch prices for a batch run (the dry run's stand-ins
    have no batch API: a batch config once failed here with "anthropic/... has no batch mode")."""
    from benchmarks.harness.estimate import estimate_run

    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-not-a-key")
    qs = [make_question(f"q{i}") for i in range(1, 4)]
    records = [{"ledger": [{"cost_usd": 0.125}, {"cost_usd": None}]}, {"ledger": [{"cost_usd": 0.25}]}]
    for batch, given in ((False, qs), (True, qs[:1])):
        config = RunConfig(output_dir=str(tmp_path / str(batch)), run_id="r", search="none", providers=["anthropic/claude-sonnet-4-5"],
                           methods=["mean"], baselines=[], max_cost_usd=2.5, batch=batch)
        runner = BenchmarkRunner(config, questions=given, progress=False)
        est = estimate_run(config, questions=given)
        prior = est.totals()["usd_batch" if batch else "usd"] / len(given)
        assert prior > 0 and len(est.questions) == len(given)
        assert runner.cost_cap(given, records) == CostCap(max_usd=2.5, paid_before_usd=0.375, prior_per_question_usd=pytest.approx(prior),
                                                          finished_costs=[0.125, 0.25])
    runner.run_dir.mkdir(parents=True)
    manifest = runner.run_dir / "manifest.json"
    for spend, paid_before in (({"paid_usd_total": 0.5}, 0.5), ({"paid_usd_total": 0.0}, 0.0), ({"paid_usd_total": None}, 0.375), (None, 0.375)):
        manifest.write_text(json.dumps({"spend": spend}))  # what earlier sessions paid, cancelled calls included
        assert runner.cost_cap(qs, records).paid_before_usd == paid_before
    # without a recorded spend, the failed records a --retry-failed set aside were paid too
    aside = {"question_id": "q1", "status": "failed", "forecast_date": "2025-11-09", "methods": {}, "baselines": {}, "trace": {},
             "ledger": [{"method": "ensemble", "role": "forecaster", "model": "anthropic/claude-sonnet-4-5", "cost_usd": 0.0625}]}
    (runner.run_dir / "results.replaced.jsonl").write_text(json.dumps(aside) + "\n")
    assert runner.cost_cap(qs, records).paid_before_usd == 0.375 + 0.0625


def test_a_cap_below_one_question_s_estimate_starts_nothing_and_says_why(tmp_path, monkeypatch):
    from benchmarks.harness import estimate
    from benchmarks.harness.estimate import estimate_run

    qs = [make_question(f"q{i}") for i in range(1, 4)]
    config = RunConfig(output_dir=str(tmp_path), run_id="r", search="none", providers=["anthropic/claude-sonnet-4-5"],
                       methods=["mean"], baselines=[], max_cost_usd=1e-4)
    prior = estimate_run(config, questions=qs, provider_factory=SpecProvider).totals()["usd"] / 3  # the run's own questions
    assert prior > 1e-4

    def no_real_adapter(spec, **kw):
        raise AssertionError(f"the cost cap built the real {spec} adapter though the runner has a provider factory")

    monkeypatch.setattr(estimate, "get_provider", no_real_adapter)
    runner = BenchmarkRunner(config, provider_factory=SpecProvider, questions=qs, progress=False)
    summary = asyncio.run(runner.arun())
    manifest = json.loads((runner.run_dir / "manifest.json").read_text())
    assert summary.stopped == manifest["stopped"] == {
        "reason": "max_cost", "max_cost_usd": 1e-4, "paid_usd": 0.0, "estimate_per_question_usd": round(prior, 6),
        "n_not_started": 3, "n_cancelled": 0,
        "note": (f"no new question started: paid $0.0000 plus the estimate of the next question (${prior:.4f} each, in flight "
                 "included) would exceed the cap of $0.00; resume with a higher --max-cost to continue")}
    assert (summary.n_ok, summary.n_failed) == (0, 0) and set(manifest["question_status"].values()) == {"pending"}
    assert not (runner.run_dir / "results.jsonl").exists() and manifest["spend"]["paid_usd_total"] == 0.0


def test_the_cost_cap_names_every_provider_without_a_price(tmp_path):
    specs = ["openai-compatible/m@http://user:pw@127.0.0.1:1/v1", "scripted", "openai-compatible/n@http://127.0.0.1:2/v1"]
    config = RunConfig(output_dir=str(tmp_path), run_id="u", search="none", providers=specs, max_cost_usd=1.5)
    runner = BenchmarkRunner(config, provider_factory=SpecProvider, questions=[make_question()], progress=False)
    with pytest.raises(DataValidationError) as ei:
        runner.cost_cap([make_question()], [])
    assert str(ei.value) == ("--max-cost needs known prices, and openai-compatible/m@http://127.0.0.1:1/v1, "
                             "openai-compatible/n@http://127.0.0.1:2/v1 has none (genai-prices): drop --max-cost or use a priced model")
    assert (ei.value.field, ei.value.value) == ("max_cost_usd", 1.5)


# --- shards -------------------------------------------------------------------------------------------------------


def test_a_shard_runs_exactly_its_questions_and_records_the_whole_selection(tmp_path):
    qs = [make_question(f"q{i}") for i in range(1, 9)]
    # shard of a question: its id's SHA-256, first 16 hex digits as an integer, modulo the shard count
    expected = {i: {q.id for q in qs if int(hashlib.sha256(q.id.encode()).hexdigest()[:16], 16) % 3 == i} for i in range(3)}
    assert all(expected.values())
    ids = [q.id for q in qs]
    digests = set()
    for i in range(3):
        r, summary = run(tmp_path, qs, run_id="big", shard=f"{i}/3", factory=lambda s: scripted_world.provider())
        assert r.run_dir == tmp_path / f"big-shard{i}of3" and r.config.run_id == f"big-shard{i}of3"
        assert {x["question_id"] for x in read_results(r.run_dir / "results.jsonl")} == expected[i] and summary.n_questions == len(expected[i])
        manifest = json.loads((r.run_dir / "manifest.json").read_text())
        assert manifest["run_id"] == f"big-shard{i}of3" and set(manifest["question_ids"]) == expected[i]
        assert manifest["shard"] == r.shard_info == {
            "index": i, "count": 3, "n_questions_all": 8,
            "selection_digest": hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16],
            "config_digest": config_digest(manifest["config"])}
        digests.add(manifest["shard"]["config_digest"])
    assert len(digests) == 1  # the shards of one run have one config
    # no shard: every question, shard 0 of 1
    mine, info = QuestionSelection(RunConfig(output_dir=str(tmp_path), run_id="w"), [], qs).shard(qs)
    assert mine == qs and (info["index"], info["count"]) == (0, 1)


def test_a_shard_without_questions_is_refused(tmp_path):
    q = make_question("q1")
    empty = next(f"{i}/3" for i in range(3) if shard_of("q1", 3) != i)
    selection = QuestionSelection(RunConfig(output_dir=str(tmp_path), run_id="s", shard=empty), [], [q])
    with pytest.raises(DataValidationError) as ei:
        selection.shard([q])
    assert (str(ei.value), ei.value.field, ei.value.value) == (f"shard {empty} holds none of the 1 selected questions", "shard", empty)
