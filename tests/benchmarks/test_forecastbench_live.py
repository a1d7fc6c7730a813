"""A live ForecastBench round from the user's side: run on a question set (no outcomes yet), export the forecast
set (the submission file), and score it later against the resolution set with the run's own numbers.

The question sets are the synthetic fixture (``fixtures/fb_question_set_sample.json``: markets, a dataset question
at three resolution dates, a combination question) and a real round rebuilt from the bundled table
(:func:`tests.benchmarks.forecastbench_round.write_round`). Runs use the simulator (``-p sim``), no network.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from agent_schemas import DataValidationError
from benchmarks.cli import app
from benchmarks.questions.forecastbench_submission import (
    build_forecast_set,
    check_forecast_set,
    forecast_set_table,
    run_question_sets,
    submission_file_name,
)
from benchmarks.questions import load_forecastbench_json, load_questions_file
from tests.benchmarks.forecastbench_round import write_round
from tests.benchmarks.test_cli_errors import make_run, one_line_error

FIXTURES = Path(__file__).parent / "fixtures"
QSET = FIXTURES / "fb_question_set_sample.json"
RSET = FIXTURES / "fb_resolution_set_sample.json"
cli = CliRunner()
SIM = ["-p", "sim", "--search", "none", "--no-progress"]


def run_sim(tmp_path: Path, run_id: str, *args: str):
    return cli.invoke(app, ["run", *SIM, "-o", str(tmp_path / "runs"), "--run-id", run_id, *args])


def records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def live_run(tmp_path_factory) -> tuple[Path, object]:
    """A run on the fixture question set alone (a live round): every item forecast, none resolved."""
    tmp = tmp_path_factory.mktemp("live")
    res = run_sim(tmp, "live", "--questions", str(QSET))
    return tmp / "runs" / "live", res


# --- run ---------------------------------------------------------------------------------------------


def test_question_files_read_forecastbench_question_sets_with_their_resolutions(tmp_path):
    assert [q.id for q in load_questions_file(QSET)] == [q.id for q in load_forecastbench_json(QSET)]
    assert [(q.id, q.outcome) for q in load_questions_file(QSET, RSET)] == [(q.id, q.outcome) for q in load_forecastbench_json(QSET, RSET)]
    csv = tmp_path / "q.csv"
    csv.write_text("id,question,forecast_date\na,Will A?,2025-01-01\n")
    with pytest.raises(DataValidationError, match="a resolution set goes with a ForecastBench question set"):
        load_questions_file(csv, RSET)


def test_a_live_run_forecasts_every_item_of_the_set_and_keeps_them_without_a_report(live_run):
    run_dir, res = live_run
    assert res.exit_code == 0, res.output  # was exit code 2 ("no scorable forecasts") after the run had spent its calls
    recs = records(run_dir)
    # all of the set without --n: each market once, the dataset question at each of its 3 resolution dates
    assert sorted(r["question_id"] for r in recs) == sorted([
        "fb|2025-10-26|manifold|mf1", "fb|2025-10-26|polymarket|0xabc", "fb|2025-10-26|fred|T10Y2Y|2025-11-02",
        "fb|2025-10-26|fred|T10Y2Y|2025-11-25", "fb|2025-10-26|fred|T10Y2Y|2026-01-24", "fb|2025-10-26|metaculus|123",
        "fb|2025-10-26|yfinance|AAPL|2025-11-02"])
    assert all(r["outcome"] is None and r["status"] == "ok" for r in recs)
    assert ("no report: no scorable forecasts: 0 of 7 questions have a resolved outcome; nothing to score until they resolve. "
            f"The forecasts are kept in {run_dir / 'results.jsonl'}; `forecast-reconcile export {run_dir}") in " ".join(res.stderr.split())
    assert not (run_dir / "leaderboard.csv").exists()


def test_a_run_without_mean_gets_its_report_against_its_first_method(tmp_path):
    res = run_sim(tmp_path, "p", "--methods", "pipeline", "--n", "3")
    assert res.exit_code == 0, res.output  # was exit code 2: "baseline 'mean' is not among the scored methods"
    md = (tmp_path / "runs" / "p" / "leaderboard.md").read_text()
    assert "baseline for deltas: pipeline)" in md


def test_a_question_set_with_a_missing_field_stops_the_run_before_it_starts(tmp_path):
    bad = tmp_path / "2025-10-26-llm.json"
    data = json.loads(QSET.read_text())
    del data["questions"][2]["question"]
    bad.write_text(json.dumps(data))
    one_line_error(run_sim(tmp_path, "x", "--questions", str(bad)), str(bad), "row 2, column 'question'", "missing 'question'")
    assert not (tmp_path / "runs").exists()
    one_line_error(run_sim(tmp_path, "y", "--resolutions", str(RSET)), "--resolutions", "give the question set with --questions")


# --- export --------------------------------------------------------------------------------------------


def test_export_writes_the_forecast_set_in_forecastbench_format(live_run):
    run_dir, _ = live_run
    res = cli.invoke(app, ["export", str(run_dir), "--organization", "Our Lab", "--model-organization", "Ensemble"])
    assert res.exit_code == 0, res.output
    out = Path(res.stdout.strip())
    data = json.loads(out.read_text())
    assert out == run_dir / submission_file_name("2025-10-26", "Our Lab", data["model"])
    assert out.name.startswith("2025-10-26.our-lab.forecast-reconcile-pipeline-")
    assert list(data) == ["organization", "model", "model_organization", "question_set", "forecast_due_date", "forecasts"]
    assert (data["organization"], data["model_organization"], data["question_set"], data["forecast_due_date"]) == (
        "Our Lab", "Ensemble", "2025-10-26-llm.json", "2025-10-26")
    assert data["model"].startswith("forecast-reconcile pipeline (")
    # ids and sources as the question set gives them; markets without a date; the dataset question per date; no combination
    assert [(f["id"], f["source"], f["resolution_date"]) for f in data["forecasts"]] == [
        ("mf1", "manifold", None), ("0xabc", "polymarket", None), ("T10Y2Y", "fred", "2025-11-02"),
        ("T10Y2Y", "fred", "2025-11-25"), ("T10Y2Y", "fred", "2026-01-24"), ("123", "metaculus", None),
        ("AAPL", "yfinance", "2025-11-02")]
    pipeline = {r["question_id"]: r["methods"]["pipeline"]["p_yes"] for r in records(run_dir)}
    assert [f["forecast"] for f in data["forecasts"]] == [pipeline[f"fb|2025-10-26|{f['source']}|{f['id']}" + (
        f"|{f['resolution_date']}" if f["resolution_date"] else "")] for f in data["forecasts"]]
    assert all(set(f) == {"id", "source", "forecast", "resolution_date", "reasoning"} for f in data["forecasts"])
    assert all(f["reasoning"].startswith("Simulated supervisor") for f in data["forecasts"])
    check_forecast_set(data, load_forecastbench_json(QSET))
    assert "warning: SIMULATED" in res.stderr and "7 of 7 forecasts of 2025-10-26-llm.json written" in res.stderr
    plain = cli.invoke(app, ["export", str(run_dir), "--organization", "Our Lab", "--model-organization", "Ensemble",
                             "--method", "mean", "--no-reasoning", "--model", "Mean of three", "-o", str(run_dir / "m.json")])
    assert plain.exit_code == 0, plain.output
    mean = json.loads((run_dir / "m.json").read_text())
    assert mean["model"] == "Mean of three" and {f["reasoning"] for f in mean["forecasts"]} == {""}
    assert mean["forecasts"][0]["forecast"] == records(run_dir)[[r["question_id"] for r in records(run_dir)].index(
        "fb|2025-10-26|manifold|mf1")]["methods"]["mean"]["p_yes"]


def test_a_run_on_a_relative_path_is_exported_from_another_folder(tmp_path, monkeypatch):
    (tmp_path / "round").mkdir()
    (tmp_path / "round" / "2025-10-26-llm.json").write_bytes(QSET.read_bytes())
    monkeypatch.chdir(tmp_path / "round")
    assert cli.invoke(app, ["run", *SIM, "--questions", "2025-10-26-llm.json", "--n", "2", "-o", str(tmp_path / "runs"),
                            "--run-id", "rel"]).exit_code == 0
    config = json.loads((tmp_path / "runs" / "rel" / "manifest.json").read_text())["config"]
    assert config["questions_file"] == str(tmp_path / "round" / "2025-10-26-llm.json")
    monkeypatch.chdir(tmp_path)
    res = cli.invoke(app, ["export", "runs/rel", "--organization", "o", "--model-organization", "x"])
    assert res.exit_code == 0, res.output
    assert "2 of 7 forecasts of 2025-10-26-llm.json written" in res.stderr and "have no forecast and will be imputed 0.5" in res.stderr


def test_export_refuses_runs_and_options_it_cannot_submit(tmp_path, live_run):
    bundled = make_run(tmp_path / "runs", "bundled")
    one_line_error(cli.invoke(app, ["export", str(bundled), "--organization", "a", "--model-organization", "b"]),
                   "run bundled was made on the bundled questions, not on a ForecastBench question set")
    run_dir, _ = live_run
    one_line_error(cli.invoke(app, ["export", str(run_dir), "--model-organization", "b"]), "--organization is required")
    one_line_error(cli.invoke(app, ["export", str(run_dir), "--organization", "a", "--model-organization", "b", "--method", "nope"]),
                   "--method 'nope' is not a method of run live: mean, median, min, geomean_odds, extremized, debate, supervisor, pipeline")
    one_line_error(cli.invoke(app, ["export", str(run_dir), "--organization", "a", "--model-organization", "b",
                                    "--question-set", str(tmp_path / "gone.json")]), "gone.json: not found", "--question-set")


def _record(qid: str, methods: dict[str, float | None]) -> dict:
    return {"question_id": qid, "trace": {}, "methods": {m: {"p_yes": p, "status": "ok" if p is not None else "failed"}
                                                         for m, p in methods.items()}}


def test_a_failed_method_is_written_as_the_ensemble_mean_and_a_failed_question_is_left_to_imputation():
    questions = load_forecastbench_json(QSET)
    recs = [_record("fb|2025-10-26|manifold|mf1", {"mean": 0.3, "pipeline": 0.2}),
            _record("fb|2025-10-26|polymarket|0xabc", {"mean": 0.6, "pipeline": None}),  # the reconciler failed
            _record("fb|2025-10-26|fred|T10Y2Y|2025-11-02", {"mean": None, "pipeline": None})]  # the ensemble failed
    sub = build_forecast_set({"run_id": "r"}, recs, questions, organization="o", model="m", model_organization="x")
    assert [(f["id"], f["forecast"]) for f in sub.data["forecasts"]] == [("mf1", 0.2), ("0xabc", 0.6)]
    assert sub.data["forecasts"][1]["reasoning"] == "No pipeline probability for this question: the ensemble mean, the run's fallback."
    assert (sub.n_questions, sub.n_written, sub.n_fallback) == (7, 2, 1)
    assert sub.missing == ["fred T10Y2Y at 2025-11-02", "fred T10Y2Y at 2025-11-25", "fred T10Y2Y at 2026-01-24",
                           "metaculus 123", "yfinance AAPL at 2025-11-02"]
    with pytest.raises(DataValidationError, match="question fb|2025-10-26|fred|ZZZ is not in the question set"):
        build_forecast_set({"run_id": "r"}, [_record("fb|2025-10-26|fred|ZZZ", {"pipeline": 0.5})], questions,
                           organization="o", model="m", model_organization="x")


def _valid_set() -> dict:
    return {"organization": "o", "model": "m", "model_organization": "x", "question_set": "2025-10-26-llm.json",
            "forecast_due_date": "2025-10-26",
            "forecasts": [{"id": "mf1", "source": "manifold", "forecast": 0.7, "resolution_date": None},
                          {"id": "T10Y2Y", "source": "fred", "forecast": 0.4, "resolution_date": "2025-11-25", "reasoning": "r"}]}


@pytest.mark.parametrize("change, needle", [
    (lambda d: d.pop("model_organization"), "column 'model_organization': a ForecastBench forecast set needs a non-empty 'model_organization'"),
    (lambda d: d.update(forecasts=[]), "needs a non-empty 'forecasts'"),
    (lambda d: d.update(question_set="latest-llm.json"), "reads the forecast due date from the question set's name"),
    (lambda d: d.update(forecast_due_date="2025-11-09"), "column 'forecast_due_date': differs from the due date in question_set (2025-10-26)"),
    (lambda d: d["forecasts"][0].update(forecast=1.2), "row 0, column 'forecast': forecast must be a probability in [0, 1] (value 1.2)"),
    (lambda d: d["forecasts"][0].update(forecast=float("nan")), "row 0, column 'forecast'"),
    (lambda d: d["forecasts"][0].update(source="kalshi"), "row 0, column 'source': not a ForecastBench source"),
    (lambda d: d["forecasts"][0].update(resolution_date="2025-11-02"), "row 0, column 'resolution_date': a market question has one forecast"),
    (lambda d: d["forecasts"][1].update(resolution_date="2025-11-24"), "row 1, column 'resolution_date': a dataset forecast's resolution date is the due date 2025-10-26 plus 7, 30, 90"),
    (lambda d: d["forecasts"][1].pop("resolution_date"), "row 1, column 'resolution_date'"),
    (lambda d: d["forecasts"].append(dict(d["forecasts"][1])), "row 2, column 'id': a second forecast of the same question at 2025-11-25"),
    (lambda d: d["forecasts"].append({"id": ["mf1", "0xabc"], "source": "manifold", "direction": [1, -1], "forecast": 0.5}),
     "row 2, column 'id': a combination question"),
    (lambda d: d["forecasts"][0].update(confidence=0.9), "row 0, column 'confidence': not a forecast field"),
    (lambda d: d["forecasts"].append({"id": "nope", "source": "fred", "forecast": 0.5, "resolution_date": "2025-11-02"}),
     "row 2, column 'id': no question of the question set is fred nope at 2025-11-02"),
])
def test_check_forecast_set_refuses_what_forecastbench_would_drop_or_refuse(change, needle):
    questions = load_forecastbench_json(QSET)
    check_forecast_set(_valid_set(), questions, path="s.json")  # the unchanged set is valid
    data = _valid_set()
    change(data)
    with pytest.raises(DataValidationError) as err:
        check_forecast_set(data, questions, path="s.json")
    assert str(err.value).startswith("s.json: ") and needle in str(err.value), str(err.value)


# --- scoring the submission --------------------------------------------------------------------------


def test_a_forecast_set_scores_forecastbench_s_way_missing_forecasts_imputed(tmp_path):
    f = tmp_path / "2025-10-26.o.m.json"
    data = _valid_set()
    data["forecasts"] = [{"id": "mf1", "source": "manifold", "forecast": 0.8, "resolution_date": None},
                         {"id": "T10Y2Y", "source": "fred", "forecast": 0.6, "resolution_date": "2025-11-02"},
                         {"id": "123", "source": "metaculus", "forecast": 0.1, "resolution_date": None}]  # not resolved
    f.write_text(json.dumps(data))
    table, notes, missing = forecast_set_table(f, load_forecastbench_json(QSET, RSET), load_forecastbench_json(QSET))
    # resolved: mf1 (1), 0xabc (0, no forecast), T10Y2Y at 11-02 (1), at 11-25 (0, no forecast): the missing ones are
    # left to the leaderboard's one imputation (benchmarks.scoring.ranking.impute), not filled here
    assert [(r["question_id"], r["p_yes"]) for r in table.rows] == [
        ("fb|2025-10-26|manifold|mf1|2025-12-31", 0.8), ("fb|2025-10-26|fred|T10Y2Y|2025-11-02", 0.6)]
    assert missing == ["fb|2025-10-26|polymarket|0xabc|2025-11-30", "fb|2025-10-26|fred|T10Y2Y|2025-11-25"]
    assert notes[0] == "m: 3 forecasts, 4 resolved questions scored"
    assert notes[1].startswith("2 resolved question(s) had no forecast (50.0%): imputed by the leaderboard's rule; "
                               "ForecastBench imputes 0.5")
    assert notes[2] == "1 forecast(s) of questions not resolved in the resolution set were not scored"
    res = cli.invoke(app, ["score", str(f), "--questions", str(QSET), "--resolutions", str(RSET), "--no-baselines",
                           "-o", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    row = pd.read_csv(tmp_path / "out" / "leaderboard.csv").set_index("method").loc["m"]
    hand = ((0.8 - 1) ** 2 + (0.5 - 0) ** 2 + (0.6 - 1) ** 2 + (0.5 - 0) ** 2) / 4  # 0.175: ForecastBench's figure
    assert (row["n_imputed"], row["n_answered"], bool(row["ranked"])) == (2, 2, False)  # 50% imputed: not ranked
    assert row["brier_forecastbench"] == pytest.approx(hand) and f" {hand:.4f} |" in (tmp_path / "out" / "leaderboard.md").read_text()
    assert row["brier_worst_case"] == pytest.approx(((0.8 - 1) ** 2 + 1 + (0.6 - 1) ** 2 + 1) / 4)
    assert "m: 2 of 4 questions imputed (50%, more than 5%): not ranked" in " ".join(res.stdout.split())
    one_line_error(cli.invoke(app, ["score", str(f), "--questions", str(QSET)]), "a ForecastBench forecast set is scored against its round")


def test_the_submission_scores_the_run_s_numbers_on_a_real_round(tmp_path):
    """Backtest on a real round (bundled 2025-10-26 rebuilt as ForecastBench's files): run, export, score the file
    against the resolution set: the submitted method's Brier and log loss are the run's leaderboard values."""
    q_path, r_path, sel = write_round(tmp_path, per_source=2)
    res = run_sim(tmp_path, "round", "--questions", str(q_path), "--resolutions", str(r_path))
    assert res.exit_code == 0, res.output
    run_dir = tmp_path / "runs" / "round"
    recs = records(run_dir)
    assert len(recs) == len(sel) and all(r["status"] == "ok" for r in recs)
    board = pd.read_csv(run_dir / "leaderboard.csv").set_index("label")
    exported = cli.invoke(app, ["export", str(run_dir), "--organization", "o", "--model-organization", "x", "-o",
                                str(tmp_path / "sub.json")])
    assert exported.exit_code == 0, exported.output
    sub = json.loads((tmp_path / "sub.json").read_text())
    markets = sel[sel["question_type"] == "market"]
    assert sum(f["resolution_date"] is None for f in sub["forecasts"]) == len(markets)  # one row per market question
    assert len(sub["forecasts"]) == len(sel)
    scored = cli.invoke(app, ["score", str(tmp_path / "sub.json"), "--questions", str(q_path), "--resolutions", str(r_path),
                              "-o", str(tmp_path / "scored")])
    assert scored.exit_code == 0, scored.output
    mine = pd.read_csv(tmp_path / "scored" / "leaderboard.csv").set_index("method").loc[sub["model"]]
    hand = sum((r["methods"]["pipeline"]["p_yes"] - r["outcome"]) ** 2 for r in recs) / len(recs)
    assert mine["n"] == board.loc["pipeline", "n"] == len(recs)
    assert mine["brier"] == pytest.approx(board.loc["pipeline", "brier"], abs=1e-12) == pytest.approx(hand, abs=1e-12)
    assert mine["log_loss"] == pytest.approx(board.loc["pipeline", "log_loss"], abs=1e-12)
    assert "0 resolved question(s) had no forecast" not in scored.stderr and "had no forecast" not in scored.stderr


def test_run_question_sets_loads_what_the_run_loaded(tmp_path):
    manifest = {"run_id": "r", "config": {"questions_file": str(QSET), "resolutions_file": str(RSET)}}
    ran, every = run_question_sets(manifest)
    assert [q.id for q in ran] == [q.id for q in load_forecastbench_json(QSET, RSET)]
    assert [q.id for q in every] == [q.id for q in load_forecastbench_json(QSET)]
    with pytest.raises(DataValidationError, match="run r was made on question file q.csv, not on a ForecastBench question set"):
        run_question_sets({"run_id": "r", "config": {"questions_file": "q.csv"}})
