"""No failure chooses what a method is compared on (issue 29, fault 4), from the user's side: the CLI.

A simulated run of 60 questions is copied; in the copy the supervisor "fails" on its 9 worst questions
(its rows become failed rows, as a real failure writes them). Before the fix the common set shrank to
the 51 questions the supervisor answered, for every method, and ``leaderboard A B`` scored A's complete
supervisor on B's 51 survivors too.
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

runner = CliRunner()


def brier(p, o) -> float:
    return float(np.mean((np.asarray(p, float) - np.asarray(o, float)) ** 2))


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path, list[dict], list[str]]:
    root = tmp_path_factory.mktemp("runs")
    res = runner.invoke(app, ["run", "-p", "sim", "--n", "60", "-o", str(root), "--run-id", "a", "--no-progress", "--no-report"])
    assert res.exit_code == 0, res.output
    a = root / "a"
    records = [json.loads(line) for line in (a / "results.jsonl").read_text().splitlines()]
    assert len(records) == 60 and all(r["methods"]["supervisor"]["status"] == "ok" for r in records)
    worst = sorted(records, key=lambda r: -(r["methods"]["supervisor"]["p_yes"] - r["outcome"]) ** 2)[:9]
    failed = [r["question_id"] for r in worst]
    b = root / "b"
    shutil.copytree(a, b)
    manifest = json.loads((b / "manifest.json").read_text())
    (b / "manifest.json").write_text(json.dumps({**manifest, "run_id": "b"}))
    lines = []
    for r in records:
        if r["question_id"] in failed:
            r = json.loads(json.dumps(r))
            r["methods"]["supervisor"].update(p_yes=None, status="failed", note="supervisor failed: timed out")
        lines.append(json.dumps(r))
    (b / "results.jsonl").write_text("\n".join(lines) + "\n")
    return a, b, records, failed


def board(path: Path) -> pd.DataFrame:
    return pd.read_csv(path / "leaderboard.csv").set_index("label")


def test_a_supervisor_failing_on_its_worst_questions_leaves_every_method_on_all_60(runs, tmp_path):
    _, b, records, failed = runs
    res = runner.invoke(app, ["leaderboard", str(b), "-o", str(tmp_path / "b"), "--n-resamples", "200"])
    assert res.exit_code == 0, res.output
    t = board(tmp_path / "b")
    assert (t.loc[t["ranked"], "n"] == 60).all()  # no method is scored on the supervisor's 51 survivors
    o = [r["outcome"] for r in records]
    mean = [r["methods"]["mean"]["p_yes"] for r in records]
    sup = [r["methods"]["mean"]["p_yes"] if r["question_id"] in failed else r["methods"]["supervisor"]["p_yes"] for r in records]
    assert t.loc["mean", "brier"] == pytest.approx(brier(mean, o))
    assert (t.loc["supervisor", "n_fallback"], t.loc["supervisor", "n_answered"]) == (9, 51)
    assert t.loc["supervisor", "brier"] == pytest.approx(brier(sup, o))  # its failures scored as the ensemble mean
    assert t.loc["supervisor", "delta_brier_vs_baseline"] == pytest.approx(brier(sup, o) - brier(mean, o))
    assert "scored as its fallback: the run's ensemble mean for an LLM method" in res.stdout
    row = next(line for line in res.stdout.splitlines() if line.startswith("|") and "| supervisor " in line)
    assert [c.strip() for c in row.strip("|").split("|")][2:5] == ["60", "51", "9"]  # n, n_answered, n_fallback


def test_comparing_two_runs_scores_the_complete_supervisor_on_its_own_60_not_the_others_survivors(runs, tmp_path):
    a, b, records, failed = runs
    res = runner.invoke(app, ["leaderboard", str(a), str(b), "-o", str(tmp_path / "ab"), "--n-resamples", "200"])
    assert res.exit_code == 0, res.output
    t = board(tmp_path / "ab")
    o = [r["outcome"] for r in records]
    complete = [r["methods"]["supervisor"]["p_yes"] for r in records]
    assert (t.loc["a:supervisor", "n"], t.loc["a:supervisor", "n_fallback"]) == (60, 0)
    assert t.loc["a:supervisor", "brier"] == pytest.approx(brier(complete, o))
    assert (t.loc["b:supervisor", "n"], t.loc["b:supervisor", "n_fallback"]) == (60, 9)
    survivors = [r for r in records if r["question_id"] not in failed]
    assert t.loc["a:supervisor", "brier"] != pytest.approx(
        brier([r["methods"]["supervisor"]["p_yes"] for r in survivors], [r["outcome"] for r in survivors]))
