"""Multiple-choice and numeric questions through the harness and the commands a user meets: question files with a
kind column and the kind's columns, bad input as one line with exit 2, RunConfig.kind, the question selection,
per-kind baselines, records, leaderboard_<kind>.csv, `score` of a file of option probabilities or percentiles, and
binary left as it was. Values are hand-computed."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from agent_schemas import DataValidationError
from agent_schemas.kinds import KINDS
from benchmarks.cli import app
from benchmarks.harness.config import RunConfig
from benchmarks.harness.runner import BenchmarkRunner
from benchmarks.harness.selection import QuestionSelection
from benchmarks.questions import load_questions_file
from benchmarks.report import write_report
from benchmarks.report.kind_score_file import read_kind_rows, score_kind_file
from benchmarks.run_folder import read_results
from benchmarks.scoring.kind_table import kind_table
from tests.doubles import kind_world
from tests.helpers import one_line_error

FIXTURES = Path(__file__).parent / "fixtures"
MC_FILE = FIXTURES / "questions_multiple_choice.csv"
NUM_FILE = FIXTURES / "questions_numeric.csv"
MC, NUM = KINDS["multiple_choice"], KINDS["numeric"]
cli = CliRunner()


def write(tmp_path: Path, text: str, name: str = "qs.csv") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


# --- question files ------------------------------------------------------------------------------------

def test_question_files_of_each_kind_read_their_specs_outcomes_and_crowds():
    mc = load_questions_file(MC_FILE)
    assert len(mc) == 12 and {q.kind.name for q in mc} == {"multiple_choice"}
    q = mc[0]
    assert q.spec.options == ("Arsenal", "Liverpool", "Manchester City", "Other") and not q.spec.ordered
    assert q.outcome == 0 and q.crowd_forecast == [0.4, 0.3, 0.2, 0.1]
    assert mc[2].spec.ordered and mc[2].outcome == 2  # "Hold", the third option
    num = load_questions_file(NUM_FILE)  # no kind column: the range columns make every row numeric
    assert len(num) == 12 and {q.kind.name for q in num} == {"numeric"}
    s = num[3].spec
    assert (s.lower, s.upper, s.open_lower, s.open_upper, s.unit, s.log_scale) == (1.0, 10000.0, False, True, "billion USD", True)
    assert num[3].outcome == 420.0
    assert load_questions_file(FIXTURES / "questions_sample.csv")[0].kind.name == "binary"  # binary files unchanged


HEAD = "id,question,forecast_date,kind,options,range_min,range_max,outcome\n"


@pytest.mark.parametrize(("body", "needles"), [
    # an outcome that is no option
    ("a,Who wins?,2025-01-01,multiple_choice,A|B|C,,,D\n",
     ["data row 1 (line 2)", "column 'outcome'", "not an option", "'D'"]),
    # a numeric outcome beyond a closed bound
    ("a,How many?,2025-01-01,numeric,,0,100,150\n",
     ["data row 1 (line 2)", "column 'outcome'", "above the closed upper bound", "'150'"]),
    # an unknown kind
    ("a,When?,2025-01-01,date,,,,\n", ["column 'kind'", "unknown question kind 'date'", "'date'"]),
    # a spec column of another kind than the row's
    ("a,How many?,2025-01-01,numeric,A|B,0,100,5\n", ["column 'options'", "row's kind is numeric"]),
    # one option only
    ("a,Who wins?,2025-01-01,multiple_choice,A,,,A\n", ["column 'options'", "2 to 30 options"]),
    # a range that is not one
    ("a,How many?,2025-01-01,numeric,,10,5,\n", ["column 'range_max'", "above range_min", "'5'"]),
    ("a,How many?,2025-01-01,numeric,,ten,5,\n", ["column 'range_min'", "must be a number", "'ten'"]),
])
def test_a_bad_cell_of_a_kind_is_one_line_naming_file_row_column_value(tmp_path, body, needles):
    p = write(tmp_path, HEAD + body)
    with pytest.raises(DataValidationError) as ei:
        load_questions_file(p)
    msg = str(ei.value)
    assert msg.startswith(str(p)) and "\n" not in msg
    for n in needles:
        assert n in msg, (n, msg)


def test_a_file_mixing_kinds_without_a_kind_column_is_refused_at_the_first_row_of_another_kind(tmp_path):
    p = write(tmp_path, "id,question,forecast_date,options,range_min,range_max,outcome\n"
                        "a,How many?,2025-01-01,,0,100,5\n"
                        "b,Who wins?,2025-01-01,A|B,,,A\n")
    with pytest.raises(DataValidationError) as ei:
        load_questions_file(p)
    msg = str(ei.value)
    assert "data row 2 (line 3)" in msg and "column 'options'" in msg and "mixes kinds without a 'kind' column" in msg
    assert "data row 1 (line 2) is numeric" in msg and "'A|B'" in msg
    # the same rows with a kind column are fine
    p2 = write(tmp_path, "id,question,forecast_date,kind,options,range_min,range_max,outcome\n"
                         "a,How many?,2025-01-01,numeric,,0,100,5\n"
                         "b,Who wins?,2025-01-01,multiple_choice,A|B,,,B\n", "ok.csv")
    a, b = load_questions_file(p2)
    assert (a.kind.name, a.outcome, b.kind.name, b.outcome) == ("numeric", 5.0, "multiple_choice", 1)


def test_a_crowd_forecast_that_is_no_forecast_of_the_question_is_refused(tmp_path):
    p = write(tmp_path, "id,question,forecast_date,options,outcome,crowd_forecast\n"
                        'a,Who wins?,2025-01-01,A|B,A,"[0.7, 0.7]"\n')
    with pytest.raises(DataValidationError) as ei:
        load_questions_file(p)
    assert "column 'crowd_forecast'" in str(ei.value) and "sum to 1.4" in str(ei.value)


def test_run_with_a_bad_question_file_exits_2_with_one_line(tmp_path):
    p = write(tmp_path, HEAD + "a,Who wins?,2025-01-01,multiple_choice,A|B|C,,,D\n")
    res = cli.invoke(app, ["run", "--kind", "multiple_choice", "-p", "scripted", "--questions", str(p), "-o", str(tmp_path / "runs"),
                           "--no-progress"])
    one_line_error(res, str(p), "data row 1 (line 2)", "column 'outcome'", "'D'")
    assert not (tmp_path / "runs").exists()


# --- the kind seam's harness methods --------------------------------------------------------------------------

def test_worst_cases_are_valid_forecasts_scored_at_the_worst():
    mc = load_questions_file(MC_FILE)
    for q in mc:
        w = MC.check_forecast(q.spec, MC.worst_case(q.spec, q.outcome))
        assert w[q.outcome] == 0.0
        assert MC.score([q.spec], w[None], [q.outcome])["brier"][0] == pytest.approx(2.0)  # (0-1)^2 + (1-0)^2
    for q in load_questions_file(NUM_FILE):
        w = NUM.check_forecast(q.spec, NUM.worst_case(q.spec, q.outcome))  # the 0.001 beyond an open bound kept
        worst = NUM.score([q.spec], w[None], [q.outcome])["crps"][0]
        assert worst > NUM.score([q.spec], NUM.uninformed(q.spec)[None], [q.outcome])["crps"][0]
    assert KINDS["binary"].worst_case(KINDS["binary"].spec_type(), 1).tolist() == [0.0]


# --- config and selection ----------------------------------------------------------------------------------

def test_run_config_kind_sets_methods_and_baselines_and_a_binary_manifest_is_unchanged():
    numeric = RunConfig(kind="numeric")
    assert numeric.methods == ["mean", "quantile_average", "median", "least_confident", "debate", "supervisor", "pipeline"]
    assert numeric.baselines == ["crowd", "uniform"] and numeric.model_dump()["kind"] == "numeric"
    assert RunConfig.model_validate(numeric.model_dump()).kind == "numeric"
    assert "kind" not in RunConfig().model_dump(mode="json")  # binary: the manifest's config as before kinds
    with pytest.raises(ValueError, match="no pooling rule of numeric questions"):
        RunConfig(kind="numeric", methods=["geomean_odds"])
    with pytest.raises(ValueError, match="unknown question kind 'date'"):
        RunConfig(kind="date")


def test_selection_keeps_the_run_kind_and_says_when_there_is_none(monkeypatch):
    from benchmarks.harness import selection

    for kind, expected in (("numeric", 15_603), ("multiple_choice", 25)):
        cfg = RunConfig(kind=kind, providers=["sim"], sample_n=None)
        qs = QuestionSelection(cfg, ["sim"]).questions()
        assert len(qs) == expected and {q.spec.kind for q in qs} == {kind}
        sample = QuestionSelection(RunConfig(kind=kind, providers=["sim"], sample_n=7, seed=3), ["sim"]).questions()
        assert len(sample) == 7 and {q.spec.kind for q in sample} == {kind}
    dated = RunConfig(kind="numeric", providers=["sim"], sample_n=None, forecast_date_to="2025-01-31")
    assert {q.forecast_date.isoformat() <= "2025-01-31" for q in QuestionSelection(dated, ["sim"]).questions()} == {True}
    monkeypatch.delitem(selection.BUNDLED_QUESTIONS, "numeric")
    with pytest.raises(DataValidationError) as ei:
        QuestionSelection(RunConfig(kind="numeric", providers=["scripted"]), ["scripted"]).questions()
    assert str(ei.value).startswith("no bundled numeric questions yet") and "--questions FILE" in str(ei.value)
    cfg = RunConfig(kind="numeric", questions_file=str(MC_FILE), providers=["scripted"], sample_n=None)
    with pytest.raises(DataValidationError, match="holds no numeric question .*run it with --kind multiple_choice"):
        QuestionSelection(cfg, ["scripted"]).questions()
    cfg = RunConfig(kind="multiple_choice", questions_file=str(MC_FILE), providers=["scripted"], sample_n=None)
    assert len(QuestionSelection(cfg, ["scripted"]).questions()) == 12


# --- a run of each kind, its records and its leaderboard ---------------------------------------------------

def run_kind(tmp_path: Path, kind: str, path: Path):
    qs = load_questions_file(path)
    cfg = RunConfig(kind=kind, questions_file=str(path), providers=["scripted"], search="none", sample_n=None,
                    output_dir=str(tmp_path), run_id=kind)
    runner = BenchmarkRunner(cfg, provider_factory=lambda spec: kind_world.provider(qs), progress=False, retry_sleep=lambda s: None)
    summary = asyncio.run(runner.arun())
    return qs, runner.run_dir, summary


def test_a_numeric_run_records_distributions_and_scores_its_own_leaderboard(tmp_path):
    qs, run_dir, summary = run_kind(tmp_path, "numeric", NUM_FILE)
    assert summary.n_ok == 12
    records = {r["question_id"]: r for r in read_results(run_dir / "results.jsonl")}
    r = records["nu-01"]
    assert r["outcome"] == 4.16 and set(r["methods"]) == {"mean", "quantile_average", "median", "least_confident", "debate",
                                                          "supervisor", "pipeline"}
    assert all(len(m["distribution"]) == 201 and "p_yes" not in m for m in r["methods"].values())
    assert set(r["baselines"]) == {"crowd", "uniform"} and r["baselines"]["crowd"]["status"] == "unavailable"
    members = np.array([f["distribution"] for f in r["trace"]["forecasts"]])
    np.testing.assert_allclose(r["methods"]["mean"]["distribution"], members.mean(axis=0))  # the linear pool
    rep = write_report([run_dir], tmp_path / "rep", n_resamples=100)
    board = pd.read_csv(tmp_path / "rep" / "leaderboard_numeric.csv")
    assert (tmp_path / "rep" / "leaderboard_numeric.md").exists() and "Leaderboard: numeric questions (12" in rep.markdown
    uniform = board.set_index("label").loc["uniform"]
    # Hand-computed: the uniform CDF over a closed range has CRPS 1/3 + y^2 - y at location y; with open bounds its 5%
    # tails sit at the bounds (threshold-weighted CRPS): F = 0.05 + 0.9 (or 0.95) y'... checked on the closed ones.
    closed = [q for q in qs if not (q.spec.open_lower or q.spec.open_upper)]
    assert len(closed) == 2
    for q in closed:
        y = (q.outcome - q.spec.lower) / (q.spec.upper - q.spec.lower)
        got = NUM.score([q.spec], NUM.uninformed(q.spec)[None], [q.outcome])["crps"][0]
        assert got == pytest.approx(1 / 3 + y * y - y)
    per_q = [NUM.score([q.spec], NUM.uninformed(q.spec)[None], [q.outcome])["crps"][0] for q in qs]
    assert uniform["crps"] == pytest.approx(np.mean(per_q)) and uniform["baseline_score"] == pytest.approx(0.0, abs=1e-9)
    assert {"crps", "log_loss", "mean_pit", "coverage_50", "coverage_90", "crps_low", "delta_vs_mean", "cost_usd"} <= set(board.columns)
    # 12 questions are 12 clusters, below the floor of ranks (as for binary): listed best first, no rank
    assert board["rank"].isna().all() and board.loc[board["type"] == "method", "too_small_to_rank"].all()
    assert list(board["crps"]) == sorted(board["crps"]) and board.loc[board["label"] == "mean", "delta_vs_mean"].isna().all()
    from benchmarks.scoring.kind_table import kind_forecasts, kind_table
    from benchmarks.run_folder.load import load_run

    frame = kind_forecasts(load_run(run_dir).records, NUM, run_id=run_dir.name)
    ranked = kind_table(frame, NUM, n_resamples=50, min_clusters_to_rank=12)
    assert ranked["rank"].iloc[0] == 1 and not ranked["too_small_to_rank"].any()
    assert list(ranked.dropna(subset=["rank"])["rank"]) == list(range(1, ranked["rank"].notna().sum() + 1))
    assert "Leaderboard: numeric questions" in (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")


def test_a_multiple_choice_run_scores_the_uniform_baseline_as_computed_by_hand(tmp_path):
    qs, run_dir, summary = run_kind(tmp_path, "multiple_choice", MC_FILE)
    assert summary.n_ok == 12
    write_report([run_dir], tmp_path / "rep", n_resamples=100)
    board = pd.read_csv(tmp_path / "rep" / "leaderboard_multiple_choice.csv").set_index("label")
    k = np.array([len(q.spec.options) for q in qs])
    # uniform over K options: Brier (1 - 1/K)^2 + (K - 1)/K^2 = 1 - 1/K; log loss ln K
    assert board.loc["uniform", "brier"] == pytest.approx(np.mean(1 - 1 / k))
    assert board.loc["uniform", "log_loss"] == pytest.approx(np.mean(np.log(k)))
    assert board.loc["uniform", "n_rps"] == 5  # RPS only on the 5 ordered questions
    crowd = [q for q in qs if q.crowd_forecast is not None]
    assert board.loc["crowd", "n"] == len(crowd) == 7 and pd.isna(board.loc["crowd", "rank"])  # not on every question
    brier = [sum((p - (i == q.outcome)) ** 2 for i, p in enumerate(q.crowd_forecast)) for q in crowd]
    assert board.loc["crowd", "brier"] == pytest.approx(np.mean(brier))


def test_a_failed_method_is_scored_as_the_worst_case(tmp_path):
    qs = load_questions_file(MC_FILE)[:3]
    rows = []
    for q in qs:
        for label in ("mean", "debate"):
            failed = label == "debate" and q is qs[0]
            rows.append({"run_id": "", "label": label, "type": "method", "question_id": q.id, "cluster": q.id, "outcome": q.outcome,
                         "spec": q.spec, "forecast": None if failed else MC.uninformed(q.spec), "status": "failed" if failed else "ok",
                         "note": ""})
    board = kind_table(pd.DataFrame(rows), MC, n_resamples=50).set_index("label")
    k = np.array([len(q.spec.options) for q in qs])
    assert board.loc["debate", "n_imputed"] == 1 and board.loc["debate", "n"] == 3
    assert board.loc["debate", "brier"] == pytest.approx((2.0 + (1 - 1 / k[1]) + (1 - 1 / k[2])) / 3)
    assert board.loc["debate", "delta_vs_mean"] == pytest.approx((2.0 - (1 - 1 / k[0])) / 3)
    with pytest.raises(DataValidationError, match="kinds are never scored together"):
        kind_table(pd.DataFrame(rows), NUM)


# --- score FILE --questions QS ------------------------------------------------------------------------------

def test_score_a_file_of_option_probabilities_and_of_percentiles(tmp_path):
    qs = write(tmp_path, "id,question,forecast_date,kind,options,range_min,range_max,outcome\n"
                         "m1,Who wins?,2025-01-01,multiple_choice,A|B|C,,,A\n"
                         "n1,How many?,2025-01-01,numeric,,0,100,40\n")
    fc = write(tmp_path, "question_id,probabilities,percentile_5,percentile_10,percentile_25,percentile_50,percentile_75,percentile_90,percentile_95\n"
                         'm1,"{""A"": 50, ""B"": 30, ""C"": 20}",,,,,,,\n'
                         "n1,,10,20,30,40,50,60,70\n", "fc.csv")
    result = score_kind_file(fc, qs, n_resamples=20)
    boards = {rep.kind.name: rep.table.set_index("label") for rep in result.reports}
    assert set(boards) == {"multiple_choice", "numeric"}  # each kind on its own
    mc = boards["multiple_choice"]
    assert mc.loc["yours", "brier"] == pytest.approx(0.25 + 0.09 + 0.04)
    assert mc.loc["yours", "log_loss"] == pytest.approx(math.log(2))
    assert mc.loc["uniform", "brier"] == pytest.approx(2 / 3)
    num = boards["numeric"]
    # the stated median is the outcome (location 0.4): F = (1 - MIX_UNIFORM) * 0.5 + MIX_UNIFORM * 0.4, the minimum mass
    # every CDF read from percentiles mixes in (agent_schemas.kinds.numeric.answers)
    assert num.loc["yours", "mean_pit"] == pytest.approx(0.99 * 0.5 + 0.01 * 0.4)
    assert num.loc["yours", "crps"] < num.loc["uniform", "crps"]
    res = cli.invoke(app, ["score", str(fc), "--questions", str(qs), "--n-resamples", "20", "-o", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "out" / "leaderboard_numeric.csv").exists() and (tmp_path / "out" / "leaderboard_multiple_choice.md").exists()


@pytest.mark.parametrize(("row", "needles"), [
    ('m1,"{""A"": 50, ""D"": 30, ""C"": 20}",,,,,,,', ["column 'probabilities'", "'D' is not an option"]),
    ('m1,"{""A"": 50, ""B"": 40, ""C"": 20}",,,,,,,', ["column 'probabilities'", "add up to 110%"]),
    ("n1,,10,20,50,40,60,70,80", ["column 'percentile_50'", "below percentile_25"]),
    ("n1,,-5,20,30,40,50,60,70", ["column 'percentile_5'", "'-5'"]),
    ('n1,"{""A"": 100}",,,,,,,', ["question n1 is numeric", "percentile_5"]),
])
def test_a_bad_forecast_row_is_one_line_with_exit_2(tmp_path, row, needles):
    qs = write(tmp_path, "id,question,forecast_date,kind,options,range_min,range_max,outcome\n"
                         "m1,Who wins?,2025-01-01,multiple_choice,A|B|C,,,A\n"
                         "n1,How many?,2025-01-01,numeric,,0,100,40\n")
    fc = write(tmp_path, "question_id,probabilities,percentile_5,percentile_10,percentile_25,percentile_50,percentile_75,percentile_90,percentile_95\n"
                         + row + "\n", "fc.csv")
    res = cli.invoke(app, ["score", str(fc), "--questions", str(qs)])
    one_line_error(res, str(fc), "data row 1 (line 2)", *needles)


# --- binary stays as it was ------------------------------------------------------------------------------------

def test_binary_files_still_read_outcomes_as_before(tmp_path):
    p = write(tmp_path, "id,question,forecast_date,outcome\na,Will it?,2025-01-01,maybe\n")
    with pytest.raises(DataValidationError) as ei:
        load_questions_file(p)
    assert str(ei.value) == (f"{p}: data row 1 (line 2), column 'outcome': outcome must be 0 or 1 (or yes/no, true/false) "
                             "(value 'maybe')")
    q = load_questions_file(write(tmp_path, "id,question,forecast_date,outcome\na,Will it?,2025-01-01,Yes\n", "y.csv"))[0]
    assert q.outcome == 1 and q.kind.name == "binary" and q.crowd_forecast is None


# --- aggregate PANEL --questions QS -----------------------------------------------------------------------------

PERCENTILE_HEAD = "question_id,forecaster,percentile_5,percentile_10,percentile_25,percentile_50,percentile_75,percentile_90,percentile_95\n"


def test_aggregate_a_numeric_panel_pools_the_members_as_the_kind_does(tmp_path):
    qs = write(tmp_path, "id,question,forecast_date,range_min,range_max,outcome\n"
                         "n1,How many?,2025-01-01,0,100,40\n"
                         "n2,How many more?,2025-01-01,0,100,70\n")
    panel = write(tmp_path, PERCENTILE_HEAD + "n1,ann,10,20,30,40,50,60,70\n"
                                            "n1,bob,30,35,45,55,65,75,80\n"
                                            "n2,ann,40,45,55,65,75,85,90\n"
                                            "n2,bob,5,10,20,30,40,50,60\n", "panel.csv")
    res = cli.invoke(app, ["aggregate", str(panel), "--questions", str(qs), "-o", str(tmp_path / "runs"), "--run-id", "p",
                           "--no-progress", "--n-resamples", "20"])
    assert res.exit_code == 0, res.output
    board = pd.read_csv(tmp_path / "runs" / "p" / "leaderboard_numeric.csv").set_index("label")
    assert set(board.index) == {"mean", "quantile_average", "median", "least_confident", "uniform"}  # no crowd in the file
    questions = load_questions_file(qs)
    rows, _ = read_kind_rows(panel, qs, by="forecaster", by_default=None)
    members = {(r["question"].id, r["who"]): r["forecast"] for r in rows}
    linear = np.vstack([(members[(q.id, "ann")] + members[(q.id, "bob")]) / 2 for q in questions])  # the linear pool
    crps = NUM.score([q.spec for q in questions], linear, [q.outcome for q in questions])["crps"]
    assert board.loc["mean", "crps"] == pytest.approx(crps.mean())


def test_a_panel_mixing_kinds_is_one_line_with_exit_2(tmp_path):
    qs = write(tmp_path, "id,question,forecast_date,kind,options,range_min,range_max,outcome\n"
                         "m1,Who wins?,2025-01-01,multiple_choice,A|B,,,A\n"
                         "n1,How many?,2025-01-01,numeric,,0,100,40\n")
    panel = write(tmp_path, "question_id,forecaster,distribution,percentile_5,percentile_10,percentile_25,percentile_50,percentile_75,"
                            "percentile_90,percentile_95\n"
                            'n1,ann,,10,20,30,40,50,60,70\nm1,ann,"[0.6, 0.4]",,,,,,,\n', "panel.csv")
    res = cli.invoke(app, ["aggregate", str(panel), "--questions", str(qs), "-o", str(tmp_path / "runs"), "--no-progress"])
    one_line_error(res, str(panel), "data row 2 (line 3)", "column 'question_id'", "one kind of question", "'m1'")
    assert not (tmp_path / "runs").exists()
