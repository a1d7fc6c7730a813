"""The class competition, from the teacher's side: `classroom split` writes a students' file with nothing
known after each forecast date and a teacher's file with the outcomes; `score SUBMISSION --questions
TEACHER_FILE` grades the students' forecasts against the bundled outcomes; the students' file grades nothing."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from agent_schemas import DataValidationError
from benchmarks.cli import app
from benchmarks.questions.browse import bundled_questions, short_id
from benchmarks.questions import load_questions_file
from benchmarks.teaching.class_split import class_split

runner = CliRunner()
#: What only the scorer may know, or what points to it (a question's page today shows its resolution).
HELD_BACK = {"outcome", "resolution_date", "horizon_days", "round", "source_question_id", "url", "bundled_id"}


def split(tmp_path, *options, student="class_questions.csv", teacher="teacher_answers.csv"):
    res = runner.invoke(app, ["classroom", "split", "--student-file", str(tmp_path / student), "--teacher-file",
                              str(tmp_path / teacher), *options])
    return res, tmp_path / student, tmp_path / teacher


def one_line_error(res, *needles):
    assert res.exit_code == 2, res.output
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in res.output, res.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def test_a_class_competition_from_the_teachers_side(tmp_path):
    res, students, teacher = split(tmp_path, "--n", "24", "--seed", "3")
    assert res.exit_code == 0, res.output
    assert "keep it from the students" in res.stderr and f"--questions {teacher}" in res.stderr

    handed_out = pd.read_csv(students, dtype=str, keep_default_na=False)
    answers = pd.read_csv(teacher, dtype=str, keep_default_na=False)
    assert len(handed_out) == len(answers) == 24 and list(handed_out["id"]) == list(answers["id"])
    assert list(handed_out["id"]) == [f"q{i:02d}" for i in range(1, 25)]
    assert not HELD_BACK & set(handed_out.columns), handed_out.columns
    by_id = {q.id: q for q in bundled_questions()}
    records = [by_id[b] for b in answers["bundled_id"]]
    text = students.read_text()
    for q, row in zip(records, handed_out.to_dict("records")):
        seen = q.visible()
        assert (row["question"], row["forecast_date"], row["close_date"]) == (
            seen.text, seen.forecast_date.isoformat(), seen.scheduled_close_date.isoformat())
        assert q.id not in text and short_id(q.id) not in text
    assert len({(q.source, q.source_question_id) for q in records}) == 24, "one question per source question"
    assert all(q.question_type == "market" and q.outcome in (0, 1) for q in records)

    # what students could load: the questions, no outcome
    assert [x.outcome for x in load_questions_file(students)] == [None] * 24
    # two students hand in one file between them (a method column with their names)
    ada = [0.2] * 24
    bea = [0.9 if i % 3 == 0 else 0.15 for i in range(24)]
    submission = tmp_path / "submissions.csv"
    pd.DataFrame({"question_id": list(handed_out["id"]) * 2, "p_yes": ada + bea,
                  "method": ["Ada"] * 24 + ["Bea"] * 24}).to_csv(submission, index=False)
    graded = runner.invoke(app, ["score", str(submission), "--questions", str(teacher)])
    assert graded.exit_code == 0, graded.output
    rows = {line.split()[1]: line.split() for line in graded.stdout.splitlines() if len(line.split()) > 3}  # the compact table
    for name, forecasts in (("Ada", ada), ("Bea", bea)):   # outcomes from the bundled data, not from the split
        brier = sum((p - q.outcome) ** 2 for p, q in zip(forecasts, records)) / 24
        assert rows[name][3] == f"{brier:.3f}", (name, brier, rows[name])
    crowd = sum((q.crowd_p_yes - q.outcome) ** 2 for q in records) / 24
    assert rows["crowd"][3] == f"{crowd:.3f}" and rows["always_0.5"][3] == "0.250"

    # the students' file grades nothing
    cheat = runner.invoke(app, ["score", str(submission), "--questions", str(students)])
    one_line_error(cheat, "no known outcome", "'q01'")


def test_the_same_seed_gives_the_same_competition(tmp_path):
    first = split(tmp_path, "--n", "10", "--seed", "5", student="a.csv", teacher="a_t.csv")
    again = split(tmp_path, "--n", "10", "--seed", "5", student="b.csv", teacher="b_t.csv")
    other = split(tmp_path, "--n", "10", "--seed", "6", student="c.csv", teacher="c_t.csv")
    assert first[1].read_text() == again[1].read_text() and first[2].read_text() == again[2].read_text()
    assert pd.read_csv(first[2])["bundled_id"].tolist() != pd.read_csv(other[2])["bundled_id"].tolist()


def test_show_crowd_and_jsonl(tmp_path):
    res, students, teacher = split(tmp_path, "--n", "8", "--show-crowd", student="s.jsonl", teacher="t.jsonl")
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in students.read_text().splitlines()]
    answers = [json.loads(line) for line in teacher.read_text().splitlines()]
    by_id = {q.id: q for q in bundled_questions()}
    for row, answer in zip(rows, answers):
        q = by_id[answer["bundled_id"]]
        assert row["crowd_p_yes"] == q.crowd_p_yes and row["freeze_date"] < row["forecast_date"]
        assert not HELD_BACK & set(row) and answer["outcome"] == q.outcome
    assert [x.outcome for x in load_questions_file(teacher)] == [a["outcome"] for a in answers]


def test_refusals_write_nothing(tmp_path):
    res, students, teacher = split(tmp_path, "--n", "5")
    assert res.exit_code == 0
    before = teacher.read_text()
    again, _, _ = split(tmp_path, "--n", "5", "--seed", "9")
    one_line_error(again, "exists", "--overwrite")
    assert teacher.read_text() == before
    replaced, _, _ = split(tmp_path, "--n", "5", "--seed", "9", "--overwrite")
    assert replaced.exit_code == 0 and teacher.read_text() != before

    same, _, _ = split(tmp_path, "--n", "5", student="x.csv", teacher="x.csv")
    one_line_error(same, "same file")
    parquet, _, _ = split(tmp_path, "--n", "5", student="y.parquet", teacher="y_t.csv")
    one_line_error(parquet, "y.parquet", ".csv or .jsonl")
    nothing, _, _ = split(tmp_path, "--n", "5", "--date-from", "2030-01-01", student="z.csv", teacher="z_t.csv")
    one_line_error(nothing, "no bundled question matches")
    assert not any((tmp_path / name).exists() for name in ("x.csv", "y.parquet", "y_t.csv", "z.csv", "z_t.csv"))
    bad_n = runner.invoke(app, ["classroom", "split", "--n", "0", "--student-file", "a.csv", "--teacher-file", "b.csv"])
    assert bad_n.exit_code == 2


def test_every_option_has_help():
    res = runner.invoke(app, ["classroom", "split", "--help"], terminal_width=200)
    assert res.exit_code == 0
    for option in ("--student-file", "--teacher-file", "--n", "--seed", "--source", "--type", "--date-from", "--date-to",
                   "--include-unclosed", "--show-crowd", "--overwrite", "--debug"):
        assert option in res.stdout


def test_a_question_without_an_outcome_cannot_be_split():
    q = next(iter(bundled_questions()))
    with pytest.raises(DataValidationError, match="no outcome"):
        class_split([q.model_copy(update={"outcome": None})])
