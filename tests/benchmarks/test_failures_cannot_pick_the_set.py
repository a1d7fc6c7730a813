"""A failure never improves a method's standing (issue 29, fault 4; issue 35, item 1), from the user's side: the CLI.

A simulated run of 60 questions is copied; in each copy a method "fails" on questions chosen against it (its rows
become failed rows, as a real failure writes them): its k worst questions, or the 11 where it was most worse than
``mean``. Timeouts fall on hard questions in practice (long debates, long searches). Compared with the run where
it answered everything, it must not gain: no better rank, no better paired difference to ``mean``, no higher Brier
Index. Before issue 35 a failure was scored as the ensemble mean (the baseline): failing on its 11 most-worse
questions made the supervisor 1st at -0.021 [-0.035, -0.009] against -0.008 [-0.026, +0.009] complete. Scored at
ForecastBench's 0.5 instead, 2 failures of 60 would make it 1st (``rank_forecastbench`` below). Before issue 29 the
common set shrank to the questions the supervisor answered, for every method.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from benchmarks.cli import app
from benchmarks.viewer import page

runner = CliRunner()

#: (method, which questions fail): the k worst by the method's Brier, or "worse11": the 11 where it most exceeds mean's.
PLANTED = [("supervisor", 1), ("supervisor", 2), ("supervisor", 3), ("supervisor", 9), ("supervisor", "worse11"),
           ("supervisor", 25), ("debate", 3), ("debate", "worse11")]


def brier(p, o) -> float:
    return float(np.mean((np.asarray(p, float) - np.asarray(o, float)) ** 2))


def planted(records: list[dict], method: str, which: int | str) -> list[str]:
    """The question ids chosen against ``method``."""
    def loss(r, m):
        return (r["methods"][m]["p_yes"] - r["outcome"]) ** 2

    if which == "worse11":
        order = sorted(records, key=lambda r: -(loss(r, method) - loss(r, "mean")))[:11]
    else:
        order = sorted(records, key=lambda r: -loss(r, method))[:which]
    return [r["question_id"] for r in order]


def copy_with_failures(a: Path, dest: Path, records: list[dict], method: str, failed: list[str]) -> Path:
    shutil.copytree(a, dest)
    for name in ("leaderboard.csv", "leaderboard.md", "report.html", "fitted.jsonl"):
        (dest / name).unlink(missing_ok=True)
    manifest = json.loads((dest / "manifest.json").read_text())
    (dest / "manifest.json").write_text(json.dumps({**manifest, "run_id": dest.name}))
    lines = []
    for r in records:
        if r["question_id"] in failed:
            r = json.loads(json.dumps(r))
            r["methods"][method].update(p_yes=None, status="failed", note=f"{method} failed: timed out")
        lines.append(json.dumps(r))
    (dest / "results.jsonl").write_text("\n".join(lines) + "\n")
    return dest


@pytest.fixture(scope="module", autouse=True)
def figures_not_built():
    """The page's figures are the viewer's part (tests/benchmarks/test_plots.py) and take most of a report's time."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(page, "_figure", lambda fid, title, caption, build: page.FigureView(fid, title, caption, None, "not drawn"))
        yield


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, list[dict], Path]:
    root = tmp_path_factory.mktemp("runs")
    res = runner.invoke(app, ["run", "-p", "sim", "--n", "60", "-o", str(root), "--run-id", "a", "--no-progress", "--no-report"])
    assert res.exit_code == 0, res.output
    a = root / "a"
    records = [json.loads(line) for line in (a / "results.jsonl").read_text().splitlines()]
    assert len(records) == 60 and all(r["methods"][m]["status"] == "ok" for r in records for m in ("supervisor", "debate"))
    return a, records, root


def board(runs_dir: Path, out: Path, *folders: Path) -> tuple[pd.DataFrame, str]:
    res = runner.invoke(app, ["leaderboard", *map(str, folders), "-o", str(out), "--n-resamples", "100"])
    assert res.exit_code == 0, res.output
    return pd.read_csv(out / "leaderboard.csv").set_index("label"), " ".join(res.stdout.split())  # caption lines wrap


@pytest.fixture(scope="module")
def complete(runs) -> pd.DataFrame:
    a, _, root = runs
    return board(root, root / "complete", a)[0]


@pytest.mark.parametrize("method,which", PLANTED, ids=[f"{m}-{w}" for m, w in PLANTED])
def test_failures_planted_on_a_methods_worst_questions_never_improve_its_standing(runs, complete, method, which):
    a, records, root = runs
    failed = planted(records, method, which)
    b = copy_with_failures(a, root / f"{method}-{which}", records, method, failed)
    t, stdout = board(root, root / f"{method}-{which}-out", b)
    mine, before = t.loc[method], complete.loc[method]
    assert (mine["n_imputed"], mine["n_answered"]) == (len(failed), 60 - len(failed))
    o = [r["outcome"] for r in records]
    worst = [1 - r["outcome"] if r["question_id"] in failed else r["methods"][method]["p_yes"] for r in records]
    assert mine["brier_worst_case"] == pytest.approx(brier(worst, o))  # each failure: the forecast opposite to the outcome
    assert mine["rank_worst_case"] >= before["rank"]
    if len(failed) <= 3:  # at most 5% imputed: ranked, its failures scored as the worst case
        assert mine["ranked"] and mine["brier"] == pytest.approx(brier(worst, o))
        assert mine["rank"] >= before["rank"]
        assert mine["delta_brier_vs_baseline"] >= before["delta_brier_vs_baseline"]
        assert mine["brier_index"] <= before["brier_index"]
        assert f"{method}: {len(failed)} of 60 questions imputed, scored as its worst case: rank {int(mine['rank'])}" in stdout
    else:  # listed apart: no rank, no paired difference, no Brier Index (ForecastBench leaves it off its leaderboard)
        assert not mine["ranked"] and np.isnan(mine["rank"]) and np.isnan(mine["delta_brier_vs_baseline"])
        assert np.isnan(mine["brier_index"]) and mine["brier_index_note"].startswith(f"no Brier Index: {len(failed)} of 60 questions imputed")
        assert (f"{method}: {len(failed)} of 60 questions imputed ({len(failed) / 60:.0%}, more than 5%): not ranked; with them "
                f"scored as its worst case it would rank {int(mine['rank_worst_case'])}") in stdout
    assert (t.loc[t["ranked"], "n"] == 60).all()  # nobody else is scored on the survivors
    if which == 2:  # ForecastBench's 0.5 would have let two failures choose the winner
        assert mine["rank_forecastbench"] < before["rank"]


def test_a_supervisor_failing_on_its_worst_questions_leaves_every_method_on_all_60(runs, tmp_path):
    a, records, root = runs
    failed = planted(records, "supervisor", 9)
    b = copy_with_failures(a, tmp_path / "b", records, "supervisor", failed)
    t, stdout = board(root, tmp_path / "out", b)
    o = [r["outcome"] for r in records]
    assert t.loc["mean", "brier"] == pytest.approx(brier([r["methods"]["mean"]["p_yes"] for r in records], o))
    survivors = [r for r in records if r["question_id"] not in failed]
    assert t.loc["supervisor", "brier"] == pytest.approx(  # listed apart: its own 51, shown as such
        brier([r["methods"]["supervisor"]["p_yes"] for r in survivors], [r["outcome"] for r in survivors]))
    md = (tmp_path / "out" / "leaderboard.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("|") and "| supervisor " in line)
    assert [c.strip() for c in row.strip("|").split("|")][2:5] == ["51", "51", "9"]  # n, n_answered, n_imputed
    assert " - supervisor 51/60 " in stdout  # the compact table: answered/questions of a row listed apart


def test_comparing_two_runs_scores_the_complete_supervisor_on_its_own_60_not_the_others_survivors(runs, tmp_path):
    a, records, root = runs
    failed = planted(records, "supervisor", 9)
    b = copy_with_failures(a, tmp_path / "b", records, "supervisor", failed)
    t, _ = board(root, tmp_path / "ab", a, b)
    o = [r["outcome"] for r in records]
    complete = [r["methods"]["supervisor"]["p_yes"] for r in records]
    assert (t.loc["a:supervisor", "n"], t.loc["a:supervisor", "n_imputed"], t.loc["a:supervisor", "ranked"]) == (60, 0, True)
    assert t.loc["a:supervisor", "brier"] == pytest.approx(brier(complete, o))
    assert (t.loc["b:supervisor", "n_imputed"], t.loc["b:supervisor", "ranked"]) == (9, False)
    assert t.loc["b:supervisor", "rank_worst_case"] > t.loc["a:supervisor", "rank"]
    survivors = [r for r in records if r["question_id"] not in failed]
    assert t.loc["a:supervisor", "brier"] != pytest.approx(
        brier([r["methods"]["supervisor"]["p_yes"] for r in survivors], [r["outcome"] for r in survivors]))
