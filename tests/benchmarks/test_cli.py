import asyncio

import pandas as pd
import pytest
from typer.testing import CliRunner

from benchmarks.cli import app
from benchmarks.harness.config import RunConfig
from benchmarks.questions import load_forecastbench
from benchmarks.harness.runner import BenchmarkRunner
from agent_providers import scripted_world

runner = CliRunner()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    qs = load_forecastbench(question_type="market", one_per_source_question=True, sample_n=5, seed=4)
    cfg = RunConfig(output_dir=str(out), run_id="cli", providers=["scripted"], search="none")
    r = BenchmarkRunner(cfg, provider_factory=lambda s: scripted_world.provider(), questions=qs, progress=False)
    asyncio.run(r.arun())
    return r.run_dir


def test_leaderboard_command_writes_three_files(run_dir, tmp_path):
    res = runner.invoke(app, ["leaderboard", str(run_dir), "-o", str(tmp_path), "--n-resamples", "100"])
    assert res.exit_code == 0, res.output
    rows = {ln.split()[1]: ln.split() for ln in res.stdout.splitlines() if len(ln.split()) > 3}  # the compact table
    assert "mean" in rows and "always_0.5" in rows and "| mean" not in res.stdout
    for name in ("leaderboard.csv", "leaderboard.md", "report.html"):
        assert (tmp_path / name).stat().st_size > 0
    from sklearn.metrics import brier_score_loss

    from benchmarks.run_folder import read_results

    table = pd.read_csv(tmp_path / "leaderboard.csv").set_index("label")
    records = read_results(run_dir / "results.jsonl")
    y = [r["outcome"] for r in records]
    for method in ("median", "pipeline"):  # what the file says is what the records score
        assert table.loc[method, "brier"] == pytest.approx(brier_score_loss(y, [r["methods"][method]["p_yes"] for r in records]))
    assert table.loc["mean", "n"] == 5


def test_score_command_scores_another_systems_forecasts(tmp_path):
    qs = load_forecastbench(question_type="market", sample_n=4, seed=9)
    f = tmp_path / "mine.csv"
    pd.DataFrame({"question_id": [q.id for q in qs], "p_yes": [0.3, 0.6, 0.2, 0.9]}).to_csv(f, index=False)
    res = runner.invoke(app, ["score", str(f)])
    assert res.exit_code == 0, res.output
    expected = sum((p - q.outcome) ** 2 for p, q in zip([0.3, 0.6, 0.2, 0.9], qs)) / 4
    assert f" {expected:.3f} [" in res.stdout  # the compact table's 3 decimals
    res = runner.invoke(app, ["score", str(f), "-o", str(tmp_path / "out")])
    assert pd.read_csv(tmp_path / "out" / "leaderboard.csv").set_index("method").loc["mine", "brier"] == pytest.approx(expected)


def test_score_command_rejects_probability_outside_unit_interval(tmp_path):
    f = tmp_path / "bad.csv"
    f.write_text("question_id,p_yes\nx,0.5\ny,1.198\n")
    res = runner.invoke(app, ["score", str(f)])
    assert res.exit_code == 2
    # the second data row is line 3 of the file (line 1 is the header)
    assert "data row 2 (line 3)" in res.output and "1.198" in res.output and "Traceback" not in res.output


def test_run_with_unknown_method_is_one_clean_error(tmp_path):
    res = runner.invoke(app, ["run", "--methods", "mean,majority", "-o", str(tmp_path), "--no-progress"])
    assert res.exit_code == 2
    assert "majority" in res.output and "Traceback" not in res.output
    assert not any(tmp_path.iterdir()), "nothing is written for an invalid config"


def test_resume_of_missing_run_is_a_clean_error(tmp_path):
    res = runner.invoke(app, ["run", "--resume", "nope", "-o", str(tmp_path)])
    assert res.exit_code == 2 and "manifest.json" in res.output


def test_score_command_rejects_non_binary_outcome(tmp_path):
    f = tmp_path / "bad_outcome.csv"
    f.write_text("question_id,p_yes,outcome\na,0.5,1\nb,0.2,0.7\n")
    res = runner.invoke(app, ["score", str(f)])
    assert res.exit_code == 2 and "data row 2 (line 3)" in res.output and "0.7" in res.output
