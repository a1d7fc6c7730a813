"""The cost cap (``--max-cost``) and sharded runs merged by ``leaderboard`` (issue 14)."""

from __future__ import annotations

import asyncio
import json

import pytest

from agent_providers import ScriptedProvider
from benchmarks import scripted_world
from benchmarks.config import RunConfig
from benchmarks.cost_cap import record_cost
from benchmarks.questions import load_forecastbench
from benchmarks.report import write_report
from benchmarks.runner import BenchmarkRunner, read_results
from benchmarks.shards import group_shards, parse_shard, shard_of

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
    from benchmarks.estimate import FullAnswerStandIn

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
