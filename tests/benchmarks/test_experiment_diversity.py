"""``experiment diversity`` (issue 37, item 4): the grid on the simulator recovers the simulator's members' error
correlation (closed form: agent_providers.simulator.error_correlation_of) and its known best arm; the paired
differences are the differences of the Brier scores on the same questions; the grid is priced before anything is
called and refused over --max-cost."""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from benchmarks.cli import app
from benchmarks.experiments import diversity as grid
from benchmarks.harness.config import RunConfig
from benchmarks.scoring import brier_score
from benchmarks.viewer.terminal import MAX_WIDTH

cli = CliRunner()
#: A simulation whose arms differ clearly: one family shares rho = 0.6, two families nothing (cross_family = 0), the same
#: search results a further 0.3. Closed form, every member shown the same results: one model 0.9, mixed 0.3; split (one
#: result each, disjoint): one model 0.6, mixed 0. Anchors of k = 10 are seldom near 0 or 1, where integer-percent
#: answers hide the errors from the Brier score.
SPEC = "sim/k=10,noise=1.5,rho=0.6,cross_family=0,evidence_rho=0.3"
N_QUESTIONS, N_MEMBERS = 120, 3
#: How far the measured mean pairwise correlation of the members' log-odds errors may be from the closed form over the
#: questions measured (those with an anchor in [0.1, 0.9], 116 of the 120): one pair's standard error there is about
#: (1 - r^2) / sqrt(116) <= 0.1, and the mean of 3 pairs that share their errors is about as uncertain; the arms share
#: their draws, so their deviations go together. Measured (seed 0): within 0.07.
TOLERANCE = 0.15


@pytest.fixture(scope="module")
def arms(tmp_path_factory):
    """The grid's arms on the simulator with the pools alone (the members are what the closed form is about), searching
    the bundled corpus so that the split arm has results to deal."""
    folder = tmp_path_factory.mktemp("experiment")
    base = RunConfig(providers=[SPEC], n_members=N_MEMBERS, sample_n=N_QUESTIONS, seed=0, output_dir=str(folder), search="local",
                     max_results=N_MEMBERS)  # one result per member's share of a split
    plan = grid.plan_grid(base, None, evidence=grid.EVIDENCE_ARMS, methods=("mean", "geomean_odds"))
    questions = grid.grid_questions(plan)
    runs, stopped = asyncio.run(grid.arun_arms(plan, questions, folder))
    assert not stopped
    return runs, {arm.name: grid.simulator_check(run, questions) for arm, run in runs}


def brier_of(run, method: str) -> float:
    p = [r["methods"][method]["p_yes"] for r in run.records]
    return float(np.mean(brier_score(p, [r["outcome"] for r in run.records])))


def test_the_experiment_recovers_the_simulators_correlation(arms):
    _, checks = arms
    expected = {"shared-one": 0.9, "shared-mixed": 0.3}
    for arm, check in checks.items():
        assert check is not None and check.n_questions > N_QUESTIONS / 2
        if arm in expected:
            assert check.closed_form == pytest.approx(expected[arm])
        assert abs(check.measured - check.closed_form) < TOLERANCE, (arm, check)


def test_the_experiment_finds_the_closed_forms_best_arm(arms):
    runs, checks = arms
    best = grid.closed_form_best_arm(checks)
    assert best == "split-mixed"
    for method in ("mean", "geomean_odds"):
        briers = {arm.name: brier_of(run, method) for arm, run in runs}
        assert min(briers, key=briers.__getitem__) == best, (method, briers)
    assert checks["shared-one"].pooled_error_variance == pytest.approx(1.5 ** 2 * (0.9 + 0.1 / 3))


def test_each_arm_is_an_ordinary_run_on_the_same_questions(arms):
    runs, _ = arms
    ids = [[r["question_id"] for r in run.records] for _, run in runs]
    assert all(sorted(i) == sorted(ids[0]) and len(i) == N_QUESTIONS for i in ids)
    specs = {arm.name: [p["spec"] for p in run.manifest["providers"]] for arm, run in runs}
    assert specs["shared-one"] == [SPEC]
    assert specs["shared-mixed"] == [SPEC, *(SPEC.replace("rho=0.6,", f"rho=0.6,family={f},") for f in "bc")]


def test_default_mixed_gives_each_simulated_member_its_family():
    assert grid.default_mixed("sim", 3) == ["sim", "sim/family=b", "sim/family=c"]
    assert grid.default_mixed("sim/family=b,rho=0.5", 2) == ["sim/rho=0.5,family=b", "sim/rho=0.5"]
    with pytest.raises(ValueError, match="--mixed is needed"):
        grid.default_mixed("anthropic/claude-sonnet-4-6", 3)


def test_the_command_prints_one_compact_table(tmp_path):
    res = cli.invoke(app, ["experiment", "diversity", "-p", SPEC, "--n", "12", "--evidence", "shared", "--search", "none",
                           "-o", str(tmp_path), "--id", "x", "--no-progress", "--n-resamples", "100"], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert all(len(ln) <= MAX_WIDTH for ln in [*lines, *res.stderr.splitlines()])
    assert any("Δ vs base" in ln and "USD/q" in ln for ln in lines)
    assert sum(ln.split()[:2] == ["shared", "mixed"] for ln in lines) == 6
    assert "closed form 0.90" in res.stdout and "closed form 0.30" in res.stdout
    assert (tmp_path / "x" / "report.html").is_file() and (tmp_path / "x" / "runs" / "shared-mixed" / "manifest.json").is_file()
    record = json.loads((tmp_path / "x" / grid.EXPERIMENT_FILE).read_text())
    assert [a["name"] for a in record["arms"]] == ["shared-one", "shared-mixed"] and len(record["question_ids"]) == 12
    assert record["question_selection"]["contamination_filter"] is not None
    t = pd.read_csv(tmp_path / "x" / grid.GRID_FILE)
    assert len(t) == 2 * len(grid.GRID_METHODS) and list(t["method"][:6]) == list(grid.GRID_METHODS)
    base = t[(t["arm"] == grid.BASE_ARM) & (t["method"] == grid.BASE_METHOD)].iloc[0]
    assert base["delta_vs_base"] == 0 and np.isnan(base["delta_ci_low"])
    # every method answered every question (nothing imputed): the paired difference is the difference of the means
    assert (t["n"] == 12).all()
    np.testing.assert_allclose(t["delta_vs_base"], t["brier"] - base["brier"], atol=1e-12)
    others = t.drop(base.name)
    assert ((others["delta_ci_low"] <= others["delta_vs_base"]) & (others["delta_vs_base"] <= others["delta_ci_high"])).all()
    assert (t["usd_per_question"] == 0).all()
    one = t[t["arm"] == grid.BASE_ARM].set_index("method")["tokens_per_question"]  # the pools cost the members' calls alone
    assert one["mean"] == one["median"] == one["geomean_odds"] < one["debate"] < one["pipeline"]


MIXED_API = "anthropic/claude-sonnet-4-6:1,openai/gpt-4.1-mini:2"


def test_a_grid_over_max_cost_is_refused_before_any_call(tmp_path):
    res = cli.invoke(app, ["experiment", "diversity", "-p", "anthropic/claude-sonnet-4-6", "--mixed", MIXED_API, "--n", "20",
                           "--evidence", "shared", "--max-cost", "0.01", "-o", str(tmp_path), "--id", "x"], env={"COLUMNS": "100"})
    assert res.exit_code == 2, res.output
    assert res.stderr.count("\n") == 1 and "would exceed it (it is estimated at $" in res.stderr
    assert not (tmp_path / "x").exists()


def test_the_dry_run_prices_every_arm(tmp_path):
    res = cli.invoke(app, ["experiment", "diversity", "-p", "anthropic/claude-sonnet-4-6", "--mixed", MIXED_API, "--n", "20",
                           "--evidence", "shared", "--dry-run", "-o", str(tmp_path)], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    assert "shared-one" in res.stdout and "shared-mixed" in res.stdout and "grid: $" in res.stdout
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("args, message", [
    (["-p", "anthropic/claude-sonnet-4-6"], "--mixed is needed"),
    (["-p", "sim", "--mixed", "sim:2"], "--mixed gives 2 members but the ensemble has 3"),
    (["-p", "sim", "--evidence", "split"], "give shared first"),
    (["-p", "sim", "--evidence", "shared,split", "--search", "none"], "--evidence split"),
])
def test_bad_grids_are_one_line_exit_2(tmp_path, args, message):
    res = cli.invoke(app, ["experiment", "diversity", *args, "--n", "5", "-o", str(tmp_path)], env={"COLUMNS": "100"})
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1 and message in res.stderr
    assert not any(tmp_path.iterdir())
