"""Issue 38, item 2: every command's terminal output fits 100 columns at ``COLUMNS=100``, shows no ``nan`` or
``<NA>``, and prints its tables with the one compact renderer (:mod:`benchmarks.viewer.terminal`).

Small inputs, in-process: a 6-question simulated run, the hand-computed panel of ``test_panels``, the sample
``score`` file of the README (``examples/my_forecasts.csv``), the bundled questions.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchmarks.cli import app
from benchmarks.viewer.terminal import MAX_WIDTH
from tests.benchmarks.test_panels import write_panel_files

cli = CliRunner()
REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "examples" / "my_forecasts.csv"
#: What a cell or a line must never read: a value missing in pandas printed as it is, or a Python dict.
NEVER = re.compile(r"(?<![A-Za-z_])(nan|NaN|<NA>|None)(?![A-Za-z_])|\{'")


def invoke(*args: str):
    res = cli.invoke(app, list(args), env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    return res


def check(res) -> list[str]:
    """Every line of stdout and stderr at most 100 columns, no nan, <NA>, None or dict; returns stdout's lines."""
    for stream in (res.stdout, res.stderr):
        for line in stream.splitlines():
            assert len(line) <= MAX_WIDTH, (len(line), line)
            assert not NEVER.search(line), line
    return res.stdout.splitlines()


@pytest.fixture(scope="module")
def sim_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("widths")
    res = cli.invoke(app, ["run", "-p", "sim", "--n", "6", "--search", "none", "-o", str(root / "runs"), "--run-id", "a",
                           "--no-progress"], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    return root, res


def test_run(sim_run):
    lines = check(sim_run[1])
    assert any("Brier [95%]" in ln and "tokens/q" in ln for ln in lines)
    assert "provider calls (" in sim_run[1].stderr


@pytest.mark.parametrize("kind, primary", [("numeric", "crps"), ("multiple_choice", "brier")])
def test_a_run_of_another_kind_prints_its_compact_table(tmp_path, kind, primary):
    """A run of numeric or multiple-choice questions prints its kind's compact table (it printed the kind's Markdown
    table, ~300 columns, and the SIMULATED note twice): one line per method, the note once, no rank below 50
    clusters."""
    lines = check(invoke("run", "--kind", kind, "-p", "sim", "--n", "6", "--search", "none", "-o", str(tmp_path / "runs"),
                         "--no-progress"))
    head = next(ln for ln in lines if f"{primary} [95%]" in ln)
    assert head.split()[:3] == ["rank", "method", "n"] and not any(ln.startswith("|") for ln in lines)
    rows = [ln.split() for ln in lines if ln.split() and ln.split()[0] in ("mean", "median", "uniform", "debate")]
    assert {r[0] for r in rows} >= {"mean", "uniform", "debate"} and all(r[1] == "6" for r in rows)
    assert sum("SIMULATED" in ln for ln in lines) == 1
    assert any(ln.startswith("Too few clusters to rank (fewer than 50)") for ln in lines)


def test_leaderboard(sim_run, tmp_path):
    root, _ = sim_run
    lines = check(invoke("leaderboard", str(root / "runs" / "a"), "-o", str(tmp_path / "board"), "--n-resamples", "20"))
    assert any("Brier [95%]" in ln for ln in lines) and not any(ln.startswith("|") for ln in lines)  # not the Markdown


def test_dry_run():
    lines = check(invoke("run", "--dry-run", "-p", "sim", "--n", "3"))
    assert any(ln.split()[:3] == ["provider", "role", "calls"] for ln in lines)
    assert any(ln.startswith("total: 27 calls") for ln in lines)


def test_questions_and_questions_list():
    lines = check(invoke("questions"))
    assert lines[0].startswith("18,021 bundled questions")
    lines = check(invoke("questions", "list", "--search", "interest rate", "--limit", "30"))
    rows = [ln for ln in lines if re.match(r" ?[0-9a-f]{8} ", ln)]
    assert len(rows) == 30 and len(lines) > len(rows) + 2  # long questions wrap onto more lines, never cut


def test_forecast_and_questions_show_wrap_their_explanations():
    lines = check(invoke("questions", "show", "07909647"))
    assert any(ln.startswith("    ") and not ln.startswith("     -") for ln in lines)  # a wrapped line, indented
    lines = check(invoke("forecast", "-p", "sim", "--no-save", "-q", "07909647"))
    assert any(ln.startswith("FINAL p_yes") for ln in lines)


def test_aggregate(tmp_path):
    panel, questions = write_panel_files(tmp_path)
    res = invoke("aggregate", str(panel), "--questions", str(questions), "-o", str(tmp_path / "runs"), "--run-id", "p",
                 "--min-pick-questions", "1", "--no-progress", "--n-resamples", "20")
    lines = check(res)
    assert any("Brier [95%]" in ln for ln in lines) and "(nothing called)" in res.stderr


def test_the_readme_sample_score_file_scores_by_hand():
    """README's sample: 8 bundled polymarket questions (outcomes 0 except 8422101a), two methods. Brier by hand:
    my_model (0.01 + 0.01 + 0.09 + 0.36 + 0.49 + 0.25 + 0.0025 + 0.0225) / 8 = 0.154375; my_model_v2
    (0.0025 + 0.0025 + 0.04 + 0.49 + 0.64 + 0.16 + 0.0009 + 0.01) / 8 = 0.1682375."""
    assert f"forecast-reconcile score {SAMPLE.relative_to(REPO)}" in (REPO / "README.md").read_text()
    lines = check(invoke("score", str(SAMPLE), "--n-resamples", "20"))
    row = {ln.split()[1]: ln.split() for ln in lines if len(ln.split()) > 3 and ln.split()[1].startswith("my_model")}
    assert row["my_model"][2:4] == ["8", "0.154"] and row["my_model_v2"][2:4] == ["8", "0.168"]
    assert "baseline" in row["my_model"] and "+0.014" in row["my_model_v2"]  # 0.1682375 - 0.154375
    assert not any("rank" in ln and "<NA>" in ln for ln in lines)


@pytest.mark.parametrize("args, message", [
    (["score", "missing.csv"], "error: FORECASTS missing.csv: no such file"),
    (["aggregate", "missing.csv"], "error: PANEL_FILE missing.csv: no such file"),
    (["aggregate", "--panel", "superforecasters", "--questions", "missing.csv"], "error: --questions missing.csv: no such file"),
    (["run", "-p", "sim", "--questions", "missing.csv"], "error: --questions missing.csv: no such file"),
    (["leaderboard", "missing/"], "error: missing: no such folder"),
])
def test_a_missing_input_fails_before_anything_is_loaded(tmp_path, args, message):
    """Issue 38: `score missing.csv` took 21 s to say so (the bundle was loaded first). Every path given is checked
    before the command's machinery (pandas, the scorer, the bundled questions) is imported: one line, exit code 2."""
    code = ("import sys\nfrom benchmarks.cli import app\n"
            f"try:\n    app({args!r})\nexcept SystemExit as e:\n    code = e.code\n"
            "print('loaded:', sorted(m for m in ('pandas', 'benchmarks.report.score_file', 'benchmarks.questions.bundled') if m in sys.modules))\n"
            "sys.exit(code)\n")
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "COLUMNS": "100"}, timeout=120)
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip().splitlines() == [message]
    assert res.stdout.strip() == "loaded: []"


def test_score_names_a_missing_questions_or_resolutions_file(tmp_path):
    for option in ("--questions", "--resolutions"):
        out = cli.invoke(app, ["score", str(SAMPLE), option, str(tmp_path / "nope.json")])
        assert out.exit_code == 2 and out.stderr.strip() == f"error: {option} {tmp_path / 'nope.json'}: no such file"
