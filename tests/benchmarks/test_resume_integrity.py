"""A resumed run is the run it continues: the same questions, records it can read, one writer.

* a question file edited between the run and its resume is refused (one line, exit 2, naming what changed);
* a ``results.jsonl`` line of the wrong shape is one line naming the file, line and what is wrong, the same in
  ``run --resume``, ``leaderboard`` and ``view`` (one reader, :mod:`benchmarks.run_folder.load`);
* the run folder's lock holds even when its lock file is deleted or replaced (two processes).

Each case is a row of a table.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
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


# --- a results.jsonl line of the wrong shape: the same one line in every command ------------------------------

#: (line written into results.jsonl, what the error must say about it)
BAD_LINES = [
    ('"x"', "a string, where a question record (a JSON object) belongs"),
    ("[1, 2]", "an array, where a question record (a JSON object) belongs"),
    ("7", "a number, where a question record (a JSON object) belongs"),
    ("null", "null, where a question record (a JSON object) belongs"),
    ('{"foo": 1}', "no question_id"),
    ('{"question_id": "q9", "forecast_date": "2025-11-01", "methods": {}}', "no status"),
    ('{"question_id": "q9", "status": "done", "forecast_date": "2025-11-01", "methods": {}}', "status is 'done', not 'ok' or 'failed'"),
    ('{"question_id": 7, "status": "ok", "forecast_date": "2025-11-01", "methods": {}}', "question_id is 7, not a non-empty string"),
    ('{"question_id": "q9", "status": "ok", "forecast_date": "soon", "methods": {}}', "forecast_date is 'soon', not an ISO date"),
    ('{"question_id": "q9", "status": "ok", "forecast_date": "2025-11-01", "methods": []}', "methods is an array, not an object"),
    ('{"question_id": "q9", "status": "ok", "forecast_date": "2025-11-01", "methods": {}, "ledger": [1]}', "ledger is an array, not an array of ledger rows"),
    ('{"question_id": "q9", "status": "ok", "forecast_date": "2025-11-01", "methods": {}, "outcome": "yes"}', "outcome is 'yes', not a number or null"),
]
COMMANDS = {
    "run --resume": lambda d: ["run", "--resume", str(d), "--no-progress", "--no-report"],
    "leaderboard": lambda d: ["leaderboard", str(d), "-o", str(d.parent / "board")],
    "view": lambda d: ["view", str(d), "--no-open"],
}


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("shapes")
    res = cli.invoke(app, ["run", "-p", "sim", "--n", "3", "--search", "none", "-o", str(out), "--run-id", "r", "--no-progress",
                           "--no-report"])
    assert res.exit_code == 0, res.output
    return out / "r"


@pytest.mark.parametrize("where", ["middle", "last"])
@pytest.mark.parametrize("line,says", BAD_LINES, ids=[b[0][:40] for b in BAD_LINES])
def test_a_line_of_the_wrong_shape_is_one_line_naming_file_line_and_problem_in_every_command(tmp_path, finished_run, line,
                                                                                          says, where):
    records = (finished_run / "results.jsonl").read_text().splitlines(keepends=True)
    pos = 2 if where == "middle" else len(records) + 1
    errors = []
    for command, args in COMMANDS.items():
        run_dir = tmp_path / command.replace(" ", "") / "r"
        shutil.copytree(finished_run, run_dir)
        (run_dir / "results.jsonl").write_text("".join(records[:pos - 1] + [line + "\n"] + records[pos - 1:]))
        before = (run_dir / "results.jsonl").read_bytes()
        res = cli.invoke(app, args(run_dir))
        errors.append(one_line_error(res, f"{run_dir / 'results.jsonl'}: line {pos} is not a question record: {says}")
                      .replace(str(run_dir), "<run>"))
        assert (run_dir / "results.jsonl").read_bytes() == before  # nothing cut off, nothing appended
    assert len(set(errors)) == 1  # the three commands agree, word for word


# --- the lock holds when its file is deleted or replaced (two processes) --------------------------------------

ROOT = Path(__file__).resolve().parents[2]
#: One writer process: a scripted run of 6 questions, one at a time. While the file ``hold`` exists it waits before each
#: call once it has written a record (so a test acts while it is mid-run and holds the lock, however loaded the
#: machine). A lost lock exits 2 saying so.
WRITER = r"""
import asyncio, os, sys, time
sys.path.insert(0, {root!r})
from agent_schemas import ReconcileError
from agent_providers import ScriptedProvider, scripted_world
from benchmarks.harness.config import RunConfig
from benchmarks.harness.runner import BenchmarkRunner
from benchmarks.questions import load_forecastbench
hold, results = {hold!r}, os.path.join({out!r}, "r", "results.jsonl")

def respond(messages):
    while hold and os.path.exists(hold) and os.path.exists(results) and os.path.getsize(results) > 0:
        time.sleep(0.02)
    return scripted_world.respond(messages)

qs = load_forecastbench(question_type="market", one_per_source_question=True, sample_n=6, seed=3)
cfg = RunConfig(output_dir={out!r}, run_id="r", search="none", providers=["scripted"], concurrency=1, cache=False)
r = BenchmarkRunner(cfg, provider_factory=lambda s: ScriptedProvider(responder=respond), questions=qs, progress=False)
try:
    asyncio.run(r.arun(resume={resume}))
except ReconcileError as exc:
    print(f"{{type(exc).__name__}}: {{exc}}", file=sys.stderr)
    sys.exit(2)
"""


def writer(out: Path, *, resume: bool, hold: Path | None = None) -> subprocess.Popen:
    """A :data:`WRITER` process on run folder ``out/r`` (held mid-run while ``hold`` exists)."""
    script = WRITER.format(root=str(ROOT), out=str(out), resume=resume, hold=str(hold) if hold else None)
    return subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_records(path: Path, n: int, timeout_s: float = 120.0) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end and not (path.exists() and path.read_text().count("\n") >= n):
        time.sleep(0.05)


def delete(lock: Path) -> None:
    lock.unlink()


def replace(lock: Path) -> None:
    fresh = lock.with_name("fresh.lock")
    fresh.write_text("")
    os.replace(fresh, lock)


@pytest.mark.parametrize("tamper,second_writer", [(delete, True), (replace, True), (delete, False), (replace, False)],
                         ids=["deleted, then a second run", "replaced, then a second run", "deleted", "replaced"])
def test_a_lock_file_deleted_or_replaced_stops_the_first_writer_and_no_record_is_written_twice(tmp_path, tamper, second_writer):
    results, hold = tmp_path / "r" / "results.jsonl", tmp_path / "hold"
    hold.write_text("")
    first = writer(tmp_path, resume=False, hold=hold)
    wait_for_records(results, 1)  # the first run holds the lock, mid-run
    tamper(tmp_path / "r" / ".lock")
    if second_writer:  # the run the issue saw append beside the first (274 records, 74 duplicated)
        second = writer(tmp_path, resume=True)
        _, err2 = second.communicate(timeout=300)
        assert second.returncode == 0, err2
    hold.unlink()
    _, err1 = first.communicate(timeout=300)
    assert first.returncode == 2, err1
    line = err1.strip().splitlines()[-1]
    assert line.startswith("RunFolderLockLost: ") and f"{tmp_path / 'r' / '.lock'} was " in line
    assert "this run stopped writing" in line
    ids = [json.loads(x)["question_id"] for x in results.read_text().splitlines()]
    assert len(ids) == len(set(ids))  # never two writers
    if not second_writer:  # the first run stopped early; a resume finishes the run, each question once
        assert len(ids) < 6
        again = writer(tmp_path, resume=True)
        _, err = again.communicate(timeout=300)
        assert again.returncode == 0, err
        ids = [json.loads(x)["question_id"] for x in results.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 6


def test_a_lock_held_by_another_process_refuses_the_second_writer(tmp_path):
    results, hold = tmp_path / "r" / "results.jsonl", tmp_path / "hold"
    hold.write_text("")
    first = writer(tmp_path, resume=False, hold=hold)
    wait_for_records(results, 1)
    second = writer(tmp_path, resume=True)
    _, err2 = second.communicate(timeout=300)
    hold.unlink()
    _, err1 = first.communicate(timeout=300)
    assert (first.returncode, second.returncode) == (0, 2), (err1, err2)
    assert err2.strip().splitlines()[-1].startswith(f"RunFolderBusy: {tmp_path / 'r'} is being written by another run")
    ids = [json.loads(x)["question_id"] for x in results.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 6
