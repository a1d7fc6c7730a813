"""Issue 38, item 1: ``leaderboard`` never writes into a run folder it reads.

Three small simulated runs (two on the same questions, one on others) are compared; every file of every run
folder is digested before and after and must be byte-identical. The comparison goes to a new folder under
``comparisons/``, named and printed; runs that share no planned question are compared by the Brier Index alone.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from benchmarks.cli import app
from benchmarks.run_folder.comparison import check_output, comparison_folder
from benchmarks.viewer.terminal import MAX_WIDTH

cli = CliRunner()
REPO = Path(__file__).resolve().parents[2]


def changed(before: dict[str, dict[str, str]], root: Path) -> list[str]:
    """The files of the runs in ``before`` (run id -> :func:`digests`) that are new, gone or changed under ``root``."""
    out = []
    for rid, files in before.items():
        now = digests(root / rid)
        out += [f"{rid}/{name}" for name in sorted(set(files) | set(now)) if files.get(name) != now.get(name)]
    return out


def digests(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (relative path -> blake2b of its bytes)."""
    return {str(p.relative_to(folder)): hashlib.blake2b(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """runs/a and runs/b plan the same 6 questions (seed 0; 3 and 2 members); runs/c plans 6 others (seed 5).

    Each run is its own process, as on the command line: when it exits, every file of its folder is final (a run made
    in this process would leave connections of its response cache open in other threads, which close later)."""
    root = tmp_path_factory.mktemp("cmp") / "runs"
    for rid, extra in (("a", []), ("b", ["-m", "2"]), ("c", ["--seed", "5"])):
        res = subprocess.run([sys.executable, "-m", "benchmarks.cli", "run", "-p", "sim", "--n", "6", "--search", "none",
                              "-o", str(root), "--run-id", rid, "--no-progress", *extra], capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=600)
        assert res.returncode == 0, res.stderr
        assert (root / rid / "report.html").is_file() and (root / rid / "leaderboard.md").is_file()
    planned = {rid: set(pd.read_json(root / rid / "manifest.json", typ="series")["question_ids"]) for rid in "abc"}
    assert planned["a"] == planned["b"] and not planned["a"] & planned["c"]
    return root


def test_leaderboard_of_a_folder_of_runs_leaves_every_run_byte_identical(runs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = {rid: digests(runs / rid) for rid in "abc"}
    assert all(len(d) >= 5 for d in before.values())  # manifest, results, leaderboard.csv/.md, report.html, ...
    res = cli.invoke(app, ["leaderboard", str(runs), "--n-resamples", "20"], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    assert changed(before, runs) == []
    out = comparison_folder([runs / rid for rid in "abc"])
    assert out.parent == Path("comparisons") and out.name.startswith("3-runs-")
    for name in ("leaderboard.csv", "leaderboard.md", "report.html", "fitted.jsonl"):
        assert (tmp_path / out / name).is_file()
    assert f"written to {out}/" in res.stderr
    # a and c share no planned question: one line says why, and the table is by Brier Index alone
    lines = res.stdout.splitlines()
    assert max(map(len, lines)) <= MAX_WIDTH
    text = " ".join(res.stdout.split())
    assert "share no planned question" in text and "compared by the Brier Index alone" in text
    header = next(ln for ln in lines if "method" in ln)
    assert "Brier Index" in header and "Brier [95%]" not in header and "n_answered" not in res.stdout
    board = pd.read_csv(tmp_path / out / "leaderboard.csv")
    assert len(board) > 20  # every run's methods and baselines, one line each
    rows = [ln.split() for ln in lines if ln.split()[1:2] and ln.split()[1].startswith(("a:", "b:", "c:"))]
    assert len(rows) == len(board)
    best = board.sort_values("brier_index", ascending=False).iloc[0]
    assert rows[0][0] in ("1", "1=") and rows[0][3] == f"{best['brier_index']:.1f}"


def test_runs_on_the_same_questions_get_the_ranked_compact_table(runs, tmp_path):
    before = {rid: digests(runs / rid) for rid in "ab"}
    res = cli.invoke(app, ["leaderboard", str(runs / "a"), str(runs / "b"), "-o", str(tmp_path / "ab"), "--n-resamples", "20"])
    assert res.exit_code == 0, res.output
    assert {rid: digests(runs / rid) for rid in "ab"} == before
    header = next(ln for ln in res.stdout.splitlines() if "method" in ln)
    assert "Brier [95%]" in header and "Δ vs mean" in header
    assert "share no planned question" not in res.stdout
    assert max(map(len, res.stdout.splitlines())) <= MAX_WIDTH


@pytest.mark.parametrize("order", ["ab", "ba"])
def test_deltas_are_measured_against_the_first_given_runs_mean(runs, tmp_path, order):
    res = cli.invoke(app, ["leaderboard", *(str(runs / rid) for rid in order), "-o", str(tmp_path / order), "--n-resamples", "20"])
    assert res.exit_code == 0, res.output
    board = pd.read_csv(tmp_path / order / "leaderboard.csv")
    first, second = (board[board["label"] == f"{rid}:mean"].iloc[0] for rid in order)
    assert first["delta_brier_vs_baseline"] == 0.0
    assert second["delta_brier_vs_baseline"] == pytest.approx(second["brier"] - first["brier"], abs=1e-12)
    assert second["brier"] != first["brier"]  # 3 members against 2: the two means differ, so the baseline is visible


@pytest.mark.parametrize("where", ["a", "a/inside", "c"])
def test_an_output_in_a_run_folder_is_refused_and_nothing_is_written(runs, where):
    before = {rid: digests(runs / rid) for rid in "abc"}
    res = cli.invoke(app, ["leaderboard", str(runs / "a"), str(runs / "b"), "-o", str(runs / where), "--n-resamples", "20"])
    assert res.exit_code == 2, res.output
    line = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(line) == 1 and line[0].startswith("error: --output") and "run folder" in line[0]
    assert {rid: digests(runs / rid) for rid in "abc"} == before
    assert not (runs / "a" / "inside").exists()


def test_check_output_accepts_a_new_folder_and_refuses_a_file(tmp_path):
    assert check_output(tmp_path / "new", [tmp_path / "run"]) == tmp_path / "new"
    (tmp_path / "f").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        check_output(tmp_path / "f", [])
