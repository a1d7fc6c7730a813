"""Multiple-choice and numeric questions where a user meets them on the command line (issue 36, item 8):
`questions list/show --kind`, `forecast --kind` (every step explained, the trace saved), and `export RUN --format
panel` of a run of each kind, which `aggregate` reads back with the same scores. Bad input: one line, exit 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from agent_research import CombinationRule
from agent_schemas.kinds import KINDS
from benchmarks.cli import app
from benchmarks.harness.one_forecast import ForecastFile
from benchmarks.questions.browse import every_bundled_question, resolve_question, short_id
from benchmarks.questions.bundled_kinds import load_bundled
from benchmarks.run_folder import read_results
from tests.helpers import one_line_error

cli = CliRunner()
NON_BINARY = ("multiple_choice", "numeric")


# --- questions ------------------------------------------------------------------------------------------------


def test_short_ids_are_unique_over_the_bundled_questions_of_every_kind():
    qs = every_bundled_question()
    counts = {k: sum(q.kind.name == k for q in qs) for k in KINDS}
    assert counts == {"binary": 18021, "multiple_choice": 25, "numeric": 15603}
    assert len({short_id(q.id) for q in qs}) == len(qs)


def test_questions_list_and_show_a_question_of_each_kind():
    res = cli.invoke(app, ["questions"])
    assert res.exit_code == 0, res.output
    assert "other kinds: 25 multiple-choice (questions list --kind multiple_choice); 15,603 numeric" in " ".join(res.stdout.split())
    res = cli.invoke(app, ["questions", "list", "--kind", "multiple_choice", "--limit", "0"])
    assert res.exit_code == 0, res.output
    assert "25 of 25 questions match" in res.stderr
    listed = set(re.findall(r"^ ([0-9a-f]{8}) ", res.stdout, flags=re.M))
    assert listed == {short_id(q.id) for q in load_bundled("multiple_choice")}

    mc = next(q for q in load_bundled("multiple_choice") if q.crowd_forecast is not None)
    res = cli.invoke(app, ["questions", "show", short_id(mc.id)])
    assert res.exit_code == 0, res.output
    seen, held = res.stdout.split("HELD BACK FROM FORECASTERS")
    assert "kind multiple_choice" in seen and all(f"- {o}" in seen for o in mc.spec.options)
    text = " ".join(held.split())
    assert f"outcome: {mc.spec.options[mc.outcome]} ({mc.outcome})" in text
    assert mc.kind.forecast_text(mc.spec, np.asarray(mc.crowd_forecast)) in text  # the sibling markets' prices

    num = load_bundled("numeric")[0]
    res = cli.invoke(app, ["questions", "show", short_id(num.id)])
    assert res.exit_code == 0, res.output
    seen, held = res.stdout.split("HELD BACK FROM FORECASTERS")
    assert "kind numeric" in seen and "The answer is a number, in the range" in " ".join(seen.split())
    assert f"outcome: {num.kind.outcome_text(num.spec, num.outcome)}\n" in held


# --- forecast --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", NON_BINARY)
def test_forecast_of_each_kind_explains_every_step_and_saves_the_trace(tmp_path, kind):
    res = cli.invoke(app, ["forecast", "-p", "sim", "--kind", kind, "--search", "none", "-o", str(tmp_path / "f")])
    assert res.exit_code == 0, res.output
    [saved] = (tmp_path / "f").glob("*.json")
    record = ForecastFile.model_validate_json(saved.read_text())
    q, trace = record.question, record.trace
    k, spec = q.kind, q.spec
    assert k.name == kind and trace.question.spec == spec and trace.status == "ok"
    out = " ".join(res.stdout.split())  # long lines are wrapped to the terminal

    def said(vector) -> str:
        return k.forecast_text(spec, np.asarray(vector))

    for f in trace.forecasts:
        assert f"{f.agent_id} [{f.persona}, sim] {said(f.distribution)}" in out
    for method, pooled in trace.aggregates.items():
        assert f"{method}: {said(pooled)}" in out
    assert f"starts from the aggregate {said(trace.debate.aggregate_distribution)}" in out
    assert f"decision: {said(trace.supervisor.distribution)}, confidence stated {trace.supervisor.confidence}" in out
    final, _ = CombinationRule().combine(trace.aggregate_distribution, trace.debate, trace.supervisor, spec)
    np.testing.assert_allclose(trace.final_distribution, final)  # the pipeline's arithmetic, as explained
    assert f"FINAL {said(final)}" in out
    assert f"held back from the agents: outcome {k.outcome_text(spec, q.outcome)}" in out


def test_forecast_of_a_question_id_takes_its_kind_and_a_contradicting_kind_is_one_line(tmp_path):
    num = load_bundled("numeric")[0]
    res = cli.invoke(app, ["forecast", "-p", "sim", "-q", short_id(num.id), "--search", "none", "--no-save"])
    assert res.exit_code == 0, res.output
    assert "FINAL median " in res.stdout
    mc = load_bundled("multiple_choice")[0]
    res = cli.invoke(app, ["forecast", "-p", "sim", "-q", short_id(mc.id), "--kind", "numeric", "-o", str(tmp_path / "f")])
    one_line_error(res, f"question {short_id(mc.id)} is multiple_choice, not --kind numeric")
    assert not (tmp_path / "f").exists()
    assert resolve_question(short_id(mc.id)).id == mc.id


# --- export --format panel, read back by aggregate ----------------------------------------------------------------


@pytest.mark.parametrize("kind, suffix", [("multiple_choice", ".csv"), ("numeric", ".jsonl")])
def test_export_panel_of_a_kind_run_reads_back_with_the_same_scores(tmp_path, kind, suffix):
    runs = tmp_path / "runs"
    res = cli.invoke(app, ["run", "--kind", kind, "-p", "sim", "--n", "5", "-o", str(runs), "--run-id", "r",
                           "--no-progress"])
    assert res.exit_code == 0, res.output
    panel = tmp_path / f"panel{suffix}"
    res = cli.invoke(app, ["export", str(runs / "r"), "--format", "panel", "-o", str(panel)])
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == str(panel) and f"read it back: forecast-reconcile aggregate {panel}" in res.stderr
    rows = pd.read_json(panel, lines=True) if suffix == ".jsonl" else pd.read_csv(panel)
    assert list(rows.columns) == ["question_id", "forecaster", "distribution", "reasoning", "date", "model"]
    members = {(r["question_id"], f["agent_id"]): f["distribution"] for r in read_results(runs / "r" / "results.jsonl")
               for f in r["trace"]["forecasts"] if f["status"] == "ok"}
    assert len(rows) == len(members) == 15
    for r in rows.to_dict("records"):  # every member's forecast exactly as the run stored it
        assert json.loads(r["distribution"]) == members[(r["question_id"], r["forecaster"])]

    res = cli.invoke(app, ["aggregate", str(panel), "-o", str(tmp_path / "agg"), "--run-id", "a", "--no-progress",
                           "--n-resamples", "20"])
    assert res.exit_code == 0, res.output
    assert "SIMULATED" in res.stdout  # the model column keeps it
    ran = pd.read_csv(runs / "r" / f"leaderboard_{kind}.csv").set_index("label")
    read_back = pd.read_csv(tmp_path / "agg" / "a" / f"leaderboard_{kind}.csv").set_index("label")
    pools = list(KINDS[kind].default_methods) + ["uniform"]
    assert set(pools) <= set(read_back.index) and set(pools) <= set(ran.index)
    scores = [c for c in ("brier", "log_loss", "rps", "crps", "baseline_score", "coverage_90") if c in ran.columns]
    pd.testing.assert_frame_equal(read_back.loc[pools, ["n", *scores]], ran.loc[pools, ["n", *scores]], rtol=1e-12)

    # `leaderboard RUN` of a kind's run prints and writes that kind's table (it printed the binary one and failed)
    res = cli.invoke(app, ["leaderboard", str(runs / "r"), "-o", str(tmp_path / "lb")])
    assert res.exit_code == 0, res.output
    primary = KINDS[kind].primary_score
    assert f"{primary} [95%]" in res.stdout and f"leaderboard_{kind}.csv" in res.stdout
    again = pd.read_csv(tmp_path / "lb" / f"leaderboard_{kind}.csv").set_index("label")
    assert again.loc["mean", primary] == pytest.approx(ran.loc["mean", primary])


def test_a_bad_kind_panel_without_questions_is_one_line_with_exit_2(tmp_path):
    mc = load_bundled("multiple_choice")[0]
    k = len(mc.spec.options)
    cases = [
        (f'question_id,forecaster,distribution\nnot-an-id,a,"{[1 / k] * k}"\n', ["data row 1 (line 2)", "column 'question_id'",
                                                                                 "no question of the bundled questions has this id"]),
        (f'question_id,forecaster,distribution\n{short_id(mc.id)},a,"[1.0]"\n', ["data row 1 (line 2)", "column 'distribution'",
                                                                                 f"one probability per option ({k})"]),
        (f'question_id,forecaster,distribution\n{short_id(mc.id)},a,"{[0.9] * k}"\n', ["data row 1 (line 2)", "column 'distribution'",
                                                                                       "not 1"]),
    ]
    for i, (content, needles) in enumerate(cases):
        panel = tmp_path / f"p{i}.csv"
        panel.write_text(content)
        one_line_error(cli.invoke(app, ["aggregate", str(panel), "-o", str(tmp_path / "runs")]), str(panel), *needles)
    assert not (tmp_path / "runs").exists()
