"""Every error a user can cause: exit code 2, one plain line naming the file, row, column, value or path.

Each input of issue 11 (CLI part) is a test here with its right result; files are written as a user
would save them (a spreadsheet's CSV, an editor's JSONL with a byte-order mark, pandas' Parquet).
"""

import asyncio
import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from agent_schemas import DataValidationError
from benchmarks.cli import app
from benchmarks.harness.config import RunConfig
from benchmarks.questions import load_forecastbench, load_forecastbench_json, load_questions_file
from benchmarks.harness.runner import BenchmarkRunner
from agent_providers import scripted_world

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()
QS_HEADER = "id,question,forecast_date,resolution_date,outcome\n"
BOM = b"\xef\xbb\xbf"


def one_line_error(res, *needles: str) -> str:
    """Exit code 2, exactly one line on stderr, starting with 'error:', with every needle in it."""
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr
    line = lines[0]
    assert line.startswith("error: ") and "Traceback" not in res.output and "validation error" not in res.output.lower()
    for n in needles:
        assert n in line, (n, line)
    return line


def assert_scored(res, pairs) -> None:
    """The command succeeded and printed the Brier score of ``pairs`` of (p_yes, outcome) in its compact table (3 decimals)."""
    assert res.exit_code == 0, res.output
    assert f" {sum((p - o) ** 2 for p, o in pairs) / len(pairs):.3f} [" in res.stdout


def score(path: Path, content: str, *options: str):
    """Write ``content`` to ``path`` and run ``score`` on it."""
    path.write_text(content)
    return runner.invoke(app, ["score", str(path), *options])


def make_run(out: Path, run_id: str, n: int = 3) -> Path:
    qs = load_forecastbench(question_type="market", one_per_source_question=True, sample_n=n, seed=4)
    cfg = RunConfig(output_dir=str(out), run_id=run_id, providers=["scripted"], search="none")
    r = BenchmarkRunner(cfg, provider_factory=lambda s: scripted_world.provider(), questions=qs, progress=False)
    asyncio.run(r.arun())
    return r.run_dir


# --- score -----------------------------------------------------------------------------------------


def test_score_header_only_file_is_one_line(tmp_path):
    f = tmp_path / "f.csv"
    one_line_error(score(f, "question_id,p_yes\n"), str(f), "no forecast rows")


@pytest.mark.parametrize("yes, no", [("yes", "no"), ("Yes", "No"), ("true", "false"), ("TRUE", "FALSE"), ("1", "0")])
def test_outcome_words_are_read_the_same_in_score_and_question_files(tmp_path, yes, no):
    f = tmp_path / "f.csv"
    f.write_text(f"question_id,p_yes,outcome\na,0.8,{yes}\nb,0.3,{no}\n")
    res = runner.invoke(app, ["score", str(f)])
    assert_scored(res, [(0.8, 1), (0.3, 0)])
    # the same words in a --questions file give the same outcomes
    q = tmp_path / "q.csv"
    q.write_text(QS_HEADER + f"a,Will A?,2025-01-01,2025-02-01,{yes}\nb,Will B?,2025-01-01,2025-02-01,{no}\n")
    assert [x.outcome for x in load_questions_file(q)] == [1, 0]
    res = score(tmp_path / "g.csv", "question_id,p_yes\na,0.8\nb,0.3\n", "--questions", str(q))
    assert_scored(res, [(0.8, 1), (0.3, 0)])


def test_score_bad_outcome_word_names_row_column_value(tmp_path):
    res = score(tmp_path / "f.csv", "question_id,p_yes,outcome\na,0.8,yes\nb,0.3,perhaps\n")
    one_line_error(res, "data row 2 (line 3)", "'outcome'", "'perhaps'")


def test_csv_cell_longer_than_the_csv_module_limit(tmp_path):
    big = "x" * 140_000  # Python's csv module stops at 131,072 characters by default
    f = tmp_path / "f.csv"
    f.write_text(f"question_id,p_yes,outcome,note\na,0.5,1,{big}\nb,0.25,0,short\n")
    res = runner.invoke(app, ["score", str(f)])
    assert_scored(res, [(0.5, 1), (0.25, 0)])
    q = tmp_path / "q.csv"
    q.write_text("id,question,forecast_date,background\na,Will A?,2025-01-01," + big + "\n")
    assert len(load_questions_file(q)[0].background) == 140_000  # background: any length (prompts show 600)


def test_oversized_question_text_is_refused_with_its_length(tmp_path):
    q = tmp_path / "q.csv"
    q.write_text(QS_HEADER + "a,Will A?,2025-01-01,,1\nb,Will " + "very " * 2_000 + "big?,2025-01-01,,0\n")
    with pytest.raises(DataValidationError, match=r"data row 2 \(line 3\), column 'question': question has 10,009 characters; at most 5,000"):
        load_questions_file(q)
    res = runner.invoke(app, ["run", "-p", "scripted", "--search", "none", "--questions", str(q), "-o", str(tmp_path / "runs"),
                              "--no-progress", "--no-report"])
    one_line_error(res, "10,009 characters")
    assert not (tmp_path / "runs").exists()


def test_jsonl_and_json_with_byte_order_mark(tmp_path):
    f = tmp_path / "f.jsonl"
    f.write_bytes(BOM + b'{"question_id": "a", "p_yes": 0.5, "outcome": 1}\n{"question_id": "b", "p_yes": 0.2, "outcome": 0}\n')
    res = runner.invoke(app, ["score", str(f)])
    assert_scored(res, [(0.5, 1), (0.2, 0)])
    j = tmp_path / "f.json"
    j.write_bytes(BOM + json.dumps([{"question_id": "a", "p_yes": 0.5, "outcome": "yes"},
                                    {"question_id": "b", "p_yes": 0.2, "outcome": "no"}]).encode())
    res = runner.invoke(app, ["score", str(j)])
    assert_scored(res, [(0.5, 1), (0.2, 0)])
    q = tmp_path / "q.jsonl"
    q.write_bytes(BOM + b'{"id": "a", "question": "Will it?", "forecast_date": "2025-01-01", "outcome": 1}\n')
    assert [x.id for x in load_questions_file(q)] == ["a"]
    fb = ROOT / "tests/benchmarks/fixtures/fb_question_set_sample.json"
    with_bom = tmp_path / "qs.json"
    with_bom.write_bytes(BOM + fb.read_bytes())
    assert [x.id for x in load_forecastbench_json(with_bom)] == [x.id for x in load_forecastbench_json(fb)]


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_ids_with_leading_zeros_stay_text_in_every_loader(tmp_path, fmt):
    qs = pd.DataFrame({"id": ["007", "010"], "question": ["Will A?", "Will B?"], "forecast_date": ["2025-01-01"] * 2,
                       "outcome": [1, 0]})
    fc = pd.DataFrame({"question_id": ["007", "010"], "p_yes": [0.8, 0.3]})
    q, f = tmp_path / f"q.{fmt}", tmp_path / f"f.{fmt}"
    for df, path in ((qs, q), (fc, f)):
        if fmt == "csv":
            df.to_csv(path, index=False)  # 007 is written as 007; a reader that guesses types makes it 7
        elif fmt == "jsonl":
            df.to_json(path, orient="records", lines=True)
        else:
            df.to_parquet(path)
    assert [x.id for x in load_questions_file(q)] == ["007", "010"]
    res = runner.invoke(app, ["score", str(f), "--questions", str(q)])
    assert_scored(res, [(0.8, 1), (0.3, 0)])


def test_unknown_question_id_is_printed_literally(tmp_path):
    res = score(tmp_path / "f.csv", "question_id,p_yes\n[/]x[red]y,0.5\n")
    one_line_error(res, "'[/]x[red]y'", "no known outcome", "data row 1 (line 2)")


def test_debug_shows_the_traceback(tmp_path):
    f = tmp_path / "f.csv"
    f.write_text("question_id,p_yes\n")
    res = runner.invoke(app, ["score", str(f), "--debug"])
    assert isinstance(res.exception, DataValidationError)


# --- run ids and output folders ----------------------------------------------------------------------


@pytest.mark.parametrize("run_id", ["../x", "ABSOLUTE", "a[/]b", "..", "a\\b"])
def test_run_id_that_is_not_a_plain_folder_name_is_rejected_before_anything_is_written(tmp_path, run_id):
    run_id = str(tmp_path / "abs-run") if run_id == "ABSOLUTE" else run_id
    out = tmp_path / "runs"
    res = runner.invoke(app, ["run", "-p", "scripted", "--search", "none", "-o", str(out), "--run-id", run_id,
                              "--no-progress", "--no-report"])
    one_line_error(res, repr(run_id), "not a plain folder name")
    assert not out.exists() and not (tmp_path / "x").exists() and not (tmp_path / "abs-run").exists()


def test_resume_id_is_validated_too(tmp_path):
    (tmp_path / "x").mkdir()
    res = runner.invoke(app, ["run", "--resume", "../x", "-o", str(tmp_path / "runs")])
    one_line_error(res, "'../x'", "not a plain folder name")


def test_markup_in_a_run_id_prints_literally(tmp_path):
    # brackets are allowed in run ids; they must never be read as rich markup
    out = tmp_path / "runs"
    (out / "[red]x[bold]").mkdir(parents=True)
    res = runner.invoke(app, ["run", "--resume", "[red]x[bold]", "-o", str(out)])
    one_line_error(res, "--resume [red]x[bold]: no manifest.json")


@pytest.mark.parametrize("command", ["run", "leaderboard"])
def test_output_that_is_a_file_or_cannot_be_created(tmp_path, command):
    afile = tmp_path / "afile"
    afile.write_text("x")
    if command == "run":
        args = ["run", "-p", "scripted", "--search", "none", "--n", "1", "--no-progress", "--no-report", "-o"]
    else:
        args = ["leaderboard", str(make_run(tmp_path / "runs", "r1")), "--n-resamples", "20", "-o"]
    one_line_error(runner.invoke(app, args + [str(afile)]), f"--output {afile} is a file, not a folder")
    line = one_line_error(runner.invoke(app, args + [str(afile / "sub")]), str(afile))
    assert "Not a directory" in line
    assert afile.read_text() == "x"


def test_dollar_signs_in_run_ids_do_not_break_the_leaderboard_figures(tmp_path):
    a, b = make_run(tmp_path, "r1"), make_run(tmp_path, "$x^$")  # unbalanced mathtext
    res = runner.invoke(app, ["leaderboard", str(a), str(b), "-o", str(tmp_path / "out"), "--n-resamples", "20"])
    assert res.exit_code == 0, res.output
    page = (tmp_path / "out" / "report.html").read_text()
    assert "$x^$:mean" in page and page.count("<svg") >= 2  # figures drawn (inline SVG), label literal


def test_full_disk_while_writing_the_report_is_one_line_and_keeps_earlier_files(tmp_path, monkeypatch):
    run_dir = make_run(tmp_path / "runs", "r1")
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.html").write_text("old report")
    real_replace = os.replace

    def replace(src, dst):
        if str(dst).endswith("report.html"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    res = runner.invoke(app, ["leaderboard", str(run_dir), "-o", str(out), "--n-resamples", "20"])
    one_line_error(res, str(out / "report.html"), "No space left on device")
    assert (out / "report.html").read_text() == "old report"  # untouched, no half-written file
    assert sorted(p.name for p in out.iterdir()) == ["leaderboard.csv", "leaderboard.md", "report.html"]
    assert (run_dir / "results.jsonl").stat().st_size > 0


# --- nothing written before inputs validate ------------------------------------------------------------


def test_rejected_run_leaves_no_folder_and_no_cache(tmp_path):
    q = tmp_path / "q.csv"
    q.write_text(QS_HEADER + "a,Will A?,not-a-date,,1\n")
    out = tmp_path / "runs"
    res = runner.invoke(app, ["run", "-p", "scripted", "--search", "none", "--questions", str(q), "-o", str(out),
                              "--run-id", "r", "--no-progress", "--no-report"])
    one_line_error(res, str(q), "data row 1 (line 2)", "'forecast_date'", "'not-a-date'")
    assert not out.exists()
    res = runner.invoke(app, ["run", "-p", "scripted", "--date-from", "2025-13-01", "-o", str(out), "--no-progress"])
    one_line_error(res, "--date-from '2025-13-01' is not a date")
    assert not out.exists()


def test_invalid_setting_is_one_line_without_the_pydantic_preamble(tmp_path):
    res = runner.invoke(app, ["run", "--members", "0", "--max-tokens", "3", "-o", str(tmp_path / "runs"), "--no-progress"])
    one_line_error(res, "--members: Input should be greater than or equal to 1 (value 0) (and 1 more problem)")
    assert not (tmp_path / "runs").exists()


def test_retry_failed_needs_resume(tmp_path):
    res = runner.invoke(app, ["run", "--retry-failed", "-o", str(tmp_path)])
    one_line_error(res, "--retry-failed", "--resume")


@pytest.fixture(scope="module")
def split_run(tmp_path_factory):
    """A finished two-question run of the simulator with split evidence (its folder), to resume."""
    out = tmp_path_factory.mktemp("resume") / "runs"
    res = runner.invoke(app, ["run", "-p", "sim", "--n", "2", "--evidence", "split", "--run-id", "s", "-o", str(out),
                              "--no-progress", "--no-report"])
    assert res.exit_code == 0, res.output
    return out / "s"


@pytest.mark.parametrize("given, named", [
    (["--evidence", "private"], "--evidence private would be ignored: drop it"),
    (["--evidence-cutoff", "freeze"], "--evidence-cutoff freeze would be ignored: drop it"),
    (["-p", "sim", "--n", "5", "--no-cache"], "--provider sim, --n 5, --no-cache would be ignored: drop them"),
    (["--seed", "3", "--show-crowd"], "--show-crowd, --seed 3 would be ignored: drop them"),
])
def test_resume_refuses_the_settings_it_would_ignore(split_run, given, named):
    before = (split_run / "results.jsonl").read_bytes(), (split_run / "manifest.json").read_bytes()
    res = runner.invoke(app, ["run", "--resume", str(split_run), *given, "--no-progress", "--no-report"])
    one_line_error(res, f"--resume {split_run} continues the run with the settings it started with, so {named}",
                   "a resume may change only --executor, --ray-address, --max-cost and --rate-limit")
    assert ((split_run / "results.jsonl").read_bytes(), (split_run / "manifest.json").read_bytes()) == before


def test_resume_takes_the_settings_it_reads_and_an_environment_provider(split_run, monkeypatch):
    monkeypatch.setenv("FORECAST_RECONCILE_PROVIDER", "sim")  # from the environment, not typed: not refused
    res = runner.invoke(app, ["run", "--resume", str(split_run), "--max-cost", "5", "--rate-limit", "sim=rpm:100",
                              "--no-progress", "--no-report"])
    assert res.exit_code == 0, res.output
    assert "2 questions (2 already done)" in res.output


# --- a run in which every question failed ----------------------------------------------------------------


def test_run_where_every_question_failed_exits_non_zero_with_one_reason(tmp_path):
    # the registry's scripted provider has no queued answers: every call raises ScriptExhausted
    out = tmp_path / "runs"
    res = subprocess.run([sys.executable, "-m", "benchmarks.cli", "run", "-p", "scripted", "--search", "none", "--n", "2",
                          "-o", str(out), "--run-id", "allfail", "--no-progress", "--no-report"],
                         cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert res.returncode == 1, res.stderr
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: every question failed (2 of 2); most common reason (2 questions): "
                      "ScriptExhausted: ScriptedProvider has no queued output for request #1 (queue answers in Python "
                      "with enqueue() or a responder; to try the pipeline without a model use the simulator: --provider sim)"]
    assert "Traceback" not in res.stderr
    assert len((out / "allfail" / "results.jsonl").read_text().splitlines()) == 2  # nothing computed is lost


def test_a_bug_is_one_line_with_exit_code_1_and_debug_shows_it(tmp_path, monkeypatch):
    import benchmarks.report.score_file

    def broken(*a, **k):
        raise KeyError("p_yes")

    monkeypatch.setattr(benchmarks.report.score_file, "score_file", broken)
    (tmp_path / "f.csv").write_text("question_id,p_yes\nq1,0.5\n")  # the path is checked first: it must exist
    res = runner.invoke(app, ["score", str(tmp_path / "f.csv")])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert res.stderr.strip() == "internal error: KeyError: 'p_yes' (run again with --debug for the traceback)"
    assert isinstance(runner.invoke(app, ["score", str(tmp_path / "f.csv"), "--debug"]).exception, KeyError)
