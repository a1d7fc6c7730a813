"""A resumed run is the run it continues: the same questions, records it can read, one writer.

* a question file edited between the run and its resume is refused (one line, exit 2, naming what changed);
* a ``results.jsonl`` line of the wrong shape is one line naming the file, line and what is wrong, the same in
  ``run --resume``, ``leaderboard`` and ``view`` (one reader, :mod:`benchmarks.run_folder.load`);
* the run folder's lock holds even when its lock file is deleted or replaced (two processes).

Each case is a row of a table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchmarks.cli import app

cli = CliRunner()

QUESTIONS = """id,question,forecast_date,resolution_date,outcome,source
q1,Will the ECB cut rates in December 2025?,2025-11-01,2025-12-18,1,ecb
q2,Will Bitcoin close 2025 above $100k?,2025-11-02,2025-12-31,0,crypto
q3,Will it snow in Paris on Christmas 2025?,2025-11-03,2025-12-25,0,weather
"""


def one_line_error(res, *needles: str) -> str:
    """Exit code 2, exactly one line on stderr, starting with 'error:', with every needle in it."""
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: ") and "Traceback" not in res.output and "internal error" not in res.output
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def start_run(tmp_path: Path, *, keep: int = 2) -> tuple[Path, Path]:
    """A sim run of QUESTIONS whose last record is cut off (as if killed while the last question ran):
    ``keep`` records written, the others pending. Returns (question file, run folder)."""
    qfile = tmp_path / "qs.csv"
    qfile.write_text(QUESTIONS)
    out = tmp_path / "runs"
    res = cli.invoke(app, ["run", "-p", "sim", "--questions", str(qfile), "--n", "0", "--search", "none", "-o", str(out),
                           "--run-id", "r", "--no-progress", "--no-report"])
    assert res.exit_code == 0, res.output
    results = out / "r" / "results.jsonl"
    results.write_text("".join(results.read_text().splitlines(keepends=True)[:keep]))
    return qfile, out / "r"


def resume(run_dir: Path, *extra: str):
    return cli.invoke(app, ["run", "--resume", str(run_dir), "--no-progress", "--no-report", *extra])


# --- a question file edited between the run and its resume -------------------------------------------------


@dataclass(frozen=True)
class Edit:
    name: str
    old: str
    new: str
    says: tuple[str, ...]
    retry_failed: bool = False


EDITS = [
    # the case: another text and another forecast date for a question not run yet
    Edit("pending question: text and forecast date", "Will it snow in Paris on Christmas 2025?,2025-11-03",
         "Will it snow in Lyon on Christmas 2025?,2025-11-20", ("1 of the run's questions changed", "q3 (not run yet) differs")),
    Edit("finished question: text and forecast date", "Will the ECB cut rates in December 2025?,2025-11-01",
         "Will the ECB hike rates in December 2025?,2025-11-05", ("q1 has another text, forecast_date",)),
    Edit("finished question: outcome", "2025-12-18,1,ecb", "2025-12-18,0,ecb", ("q1 has another outcome",)),
    Edit("finished question: resolution date", "2025-12-31,0,crypto", "2025-12-30,0,crypto",
         ("q2 has another resolution_date",), retry_failed=True),
    Edit("two questions", "ecb\nq2,Will Bitcoin", "central-bank\nq2,Will Bitcoin really",
         ("2 of the run's questions changed", "q1 has another source (and 1 more)")),
    Edit("a question added", "weather\n", "weather\nq4,Will it rain?,2025-11-04,,,\n",
         ("selects other questions than the manifest records", "1 new (first: q4)")),
    Edit("a question removed", "q3,Will it snow in Paris on Christmas 2025?,2025-11-03,2025-12-25,0,weather\n", "",
         ("selects other questions than the manifest records", "1 no longer selected (first: q3)")),
]


@pytest.mark.parametrize("edit", EDITS, ids=[e.name for e in EDITS])
def test_a_question_file_edited_since_the_run_started_is_refused_on_resume(tmp_path, edit):
    qfile, run_dir = start_run(tmp_path)
    before = (run_dir / "results.jsonl").read_bytes()
    text = qfile.read_text()
    assert edit.old in text
    qfile.write_text(text.replace(edit.old, edit.new))
    res = resume(run_dir, *(["--retry-failed"] if edit.retry_failed else []))
    line = one_line_error(res, str(run_dir), *edit.says)
    assert f"{qfile}: sha256 " in line and " at the start, " in line  # the file, its digest then and now
    assert (run_dir / "results.jsonl").read_bytes() == before  # nothing run, nothing written


def test_a_file_whose_questions_did_not_change_resumes(tmp_path):
    qfile, run_dir = start_run(tmp_path)
    qfile.write_text(QUESTIONS.replace("\n", "\r\n"))  # saved again with other line ends: the same questions
    res = resume(run_dir)
    assert res.exit_code == 0, res.output
    records = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert [r["question_id"] for r in records] == ["q1", "q2", "q3"]
    assert records[2]["trace"]["question"]["text"] == "Will it snow in Paris on Christmas 2025?"


def test_a_run_from_before_the_digests_resumes_on_its_ids_with_a_warning(tmp_path, caplog):
    qfile, run_dir = start_run(tmp_path)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    del manifest["question_digests"]
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    with caplog.at_level("WARNING", logger="benchmarks.harness.selection"):
        res = resume(run_dir)
    assert res.exit_code == 0, res.output
    assert any("records no question digests" in m for m in caplog.messages)
