"""Text a person never writes (a NUL byte, another control character, a lone surrogate) in any user file is refused
before anything is created: one line naming the file, the row, the column and the value, exit code 2.

Every reader of a user's file is a row: question files (CSV, JSONL, Parquet), ForecastBench question and
resolution sets, forecast files and ForecastBench forecast sets for ``score``, panel files for ``aggregate``.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd
import pytest
from typer.testing import CliRunner

from benchmarks.cli import app
from benchmarks.questions import load_forecastbench, read_table
from benchmarks.questions.tables import text_problem

cli = CliRunner()
FIXTURES = Path(__file__).parent / "fixtures"
QS = "id,question,forecast_date,resolution_date,outcome\n"


def one_line_error(res, *needles: str) -> str:
    """Exit code 2, exactly one line on stderr, starting with 'error:', with every needle in it."""
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("error: ") and "Traceback" not in res.output and "internal error" not in res.output
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def bundled_ids(n: int = 2) -> list[str]:
    return [q.id for q in load_forecastbench(question_type="market", one_per_source_question=True, sample_n=n, seed=1)]


def fb_set(tmp: Path, name: str, edit: Callable[[dict], None]) -> Path:
    data = json.loads((FIXTURES / name).read_text())
    edit(data)
    path = tmp / name
    path.write_text(json.dumps(data))  # json escapes a NUL as \u0000 and a lone surrogate as \ud800: valid JSON
    return path


@dataclass(frozen=True)
class BadFile:
    """One user file holding bad text: how to write it, the command that reads it, and what the error names."""

    name: str
    write: Callable[[Path], Path]
    command: Callable[[Path, Path], list[str]]
    says: tuple[str, ...]


def run_questions(path: Path, out: Path, *extra: str) -> list[str]:
    return ["run", "-p", "sim", "--questions", str(path), "--n", "0", "--search", "none", "-o", str(out), "--run-id", "r",
            "--no-progress", "--no-report", *extra]


def csv_file(tmp: Path) -> Path:
    (p := tmp / "qs.csv").write_bytes((QS + "q1,Will it\x00 rain?,2025-11-01,2025-12-01,1\nq2,Will it snow?,2025-11-02,2025-12-02,0\n").encode())
    return p


def csv_escape(tmp: Path) -> Path:
    (p := tmp / "qs.csv").write_text(QS + "q1,Will it rain?,2025-11-01,2025-12-01,1\nq2,\x1b[31mWill it snow?,2025-11-02,2025-12-02,0\n")
    return p


def csv_header(tmp: Path) -> Path:
    (p := tmp / "qs.csv").write_text("id,question,forecast_date,notes\x07\nq1,Will it rain?,2025-11-01,x\n")
    return p


def jsonl_surrogate(tmp: Path) -> Path:
    row = '{"id": "q1", "question": "Will it rain?", "forecast_date": "2025-11-01", "background": "half \\ud800 pair"}'
    (p := tmp / "qs.jsonl").write_text(row + "\n")
    return p


def jsonl_nested(tmp: Path) -> Path:
    row = {"id": "q1", "question": "Will it rain?", "forecast_date": "2025-11-01", "extra": {"notes": ["ok", "bad\u0000"]}}
    (p := tmp / "qs.jsonl").write_text(json.dumps(row) + "\n")
    return p


def parquet_file(tmp: Path) -> Path:
    p = tmp / "qs.parquet"
    pd.DataFrame({"id": ["q1", "q2"], "question": ["Will it rain?", "Will it\x00 snow?"],
                  "forecast_date": ["2025-11-01", "2025-11-02"]}).to_parquet(p)
    return p


def question_set(tmp: Path) -> Path:
    return fb_set(tmp, "fb_question_set_sample.json", lambda d: d["questions"][1].update(question="Will the\x00 token trade?"))


def resolution_set(tmp: Path) -> Path:
    shutil.copy(FIXTURES / "fb_question_set_sample.json", tmp / "qset.json")
    return fb_set(tmp, "fb_resolution_set_sample.json", lambda d: d["resolutions"][0].update(source="manifold\x00"))


def forecasts_file(tmp: Path) -> Path:
    a, b = bundled_ids()
    (p := tmp / "f.csv").write_text(f"question_id,p_yes,method\n{a},0.3,mine\n{b},0.6,mi\x00ne\n")
    return p


def forecast_set(tmp: Path) -> Path:
    shutil.copy(FIXTURES / "fb_question_set_sample.json", tmp / "qset.json")
    shutil.copy(FIXTURES / "fb_resolution_set_sample.json", tmp / "rset.json")
    data = {"organization": "org\x00", "model": "m", "model_organization": "lab", "question_set": "2025-10-26-llm.json",
            "forecast_due_date": "2025-10-26", "forecasts": [{"id": "mf1", "source": "manifold", "forecast": 0.3}]}
    (p := tmp / "2025-10-26.org.m.json").write_text(json.dumps(data))
    return p


def panel_file(tmp: Path) -> Path:
    a, b = bundled_ids()
    (p := tmp / "panel.csv").write_text(f"question_id,forecaster,p_yes,reasoning\n{a},ann,0.3,fine\n{b},bob,0.6,see\x00this\n")
    return p


BAD_FILES = [
    BadFile("question CSV: NUL in a question (the issue's case)", csv_file, lambda p, out: run_questions(p, out),
            ("qs.csv: data row 1 (line 2), column 'question': contains a NUL byte (U+0000) at character 8", r"'Will it\x00 rain?'")),
    BadFile("question CSV: a terminal escape", csv_escape, lambda p, out: run_questions(p, out),
            ("data row 2 (line 3), column 'question': contains the control character U+001B", r"\x1b[31m")),
    BadFile("question CSV: a control character in the header", csv_header, lambda p, out: run_questions(p, out),
            ("column 'notes\\x07': the column name contains the control character U+0007",)),
    BadFile("question JSONL: a lone surrogate", jsonl_surrogate, lambda p, out: run_questions(p, out),
            ("qs.jsonl: data row 1 (line 1), column 'background': contains a lone surrogate (U+D800",)),
    BadFile("question JSONL: NUL inside a nested value", jsonl_nested, lambda p, out: run_questions(p, out),
            ("data row 1 (line 1), column 'extra': contains a NUL byte",)),
    BadFile("question Parquet: NUL", parquet_file, lambda p, out: run_questions(p, out),
            ("qs.parquet: data row 2, column 'question': contains a NUL byte (U+0000) at character 8",)),
    BadFile("ForecastBench question set", question_set, lambda p, out: run_questions(p, out),
            ("fb_question_set_sample.json: row 1, column 'questions[].question': contains a NUL byte",)),
    BadFile("ForecastBench resolution set", resolution_set,
            lambda p, out: run_questions(p.parent / "qset.json", out, "--resolutions", str(p)),
            ("fb_resolution_set_sample.json: row 0, column 'resolutions[].source': contains a NUL byte",)),
    BadFile("score: a forecasts file", forecasts_file, lambda p, out: ["score", str(p), "-o", str(out)],
            ("f.csv: data row 2 (line 3), column 'method': contains a NUL byte",)),
    BadFile("score: a ForecastBench forecast set", forecast_set,
            lambda p, out: ["score", str(p), "--questions", str(p.parent / "qset.json"), "--resolutions",
                            str(p.parent / "rset.json"), "-o", str(out)],
            ("2025-10-26.org.m.json: column 'organization': contains a NUL byte",)),
    BadFile("aggregate: a panel file", panel_file, lambda p, out: ["aggregate", str(p), "-o", str(out), "--no-progress"],
            ("panel.csv: data row 2 (line 3), column 'reasoning': contains a NUL byte",)),
]


@pytest.mark.parametrize("bad", BAD_FILES, ids=[b.name for b in BAD_FILES])
def test_bad_text_in_any_user_file_is_one_line_and_nothing_is_created(tmp_path, bad):
    inputs = tmp_path / "in"
    inputs.mkdir()
    path = bad.write(inputs)
    out = tmp_path / "out"
    res = cli.invoke(app, bad.command(path, out))
    one_line_error(res, str(path), *bad.says)
    assert not out.exists()  # validated before anything is created


@pytest.mark.parametrize("text,expected", [
    ("tabs\tand\nnew lines\r\nare text", None),
    ("accents, émoji 🎲 and CJK 天气", None),
    ("\x00", "contains a NUL byte (U+0000) at character 1"),
    ("a\x7f", "contains the control character U+007F (DELETE) at character 2"),
    ("a\x85b", "contains the control character U+0085 at character 2"),
    ("\udfff", "contains a lone surrogate (U+DFFF: half of a UTF-16 pair, not a character) at character 1"),
])
def test_text_problem_names_the_character_and_where(text, expected):
    assert text_problem(text) == expected


def test_a_clean_file_reads_as_before(tmp_path):
    (p := tmp_path / "qs.csv").write_text(QS + "q1,\"Will it rain,\n\tor snow?\",2025-11-01,2025-12-01,1\n")
    assert read_table(p).rows == [{"id": "q1", "question": "Will it rain,\n\tor snow?", "forecast_date": "2025-11-01",
                                   "resolution_date": "2025-12-01", "outcome": "1"}]


def test_a_fit_from_run_with_a_line_that_is_not_a_record_is_refused_before_the_run_starts(tmp_path):
    earlier = tmp_path / "earlier"
    res = cli.invoke(app, ["run", "-p", "sim", "--n", "2", "--search", "none", "-o", str(earlier), "--run-id", "e",
                           "--no-progress", "--no-report"])
    assert res.exit_code == 0, res.output
    with open(earlier / "e" / "results.jsonl", "a") as fh:
        fh.write("[1, 2]\n")
    out = tmp_path / "out"
    res = cli.invoke(app, ["run", "-p", "sim", "--n", "2", "--search", "none", "-o", str(out), "--run-id", "r", "--no-progress",
                           "--no-report", "--fit-from", str(earlier / "e")])
    one_line_error(res, f"{earlier / 'e' / 'results.jsonl'}: line 3 is not a question record: an array")
    assert not out.exists()
