"""A class competition on the bundled questions: a file for the students without outcomes, and the teacher's.

``forecast-reconcile classroom split --n 50 --seed 1 --student-file class_questions.csv --teacher-file
teacher_answers.csv`` draws a seeded sample of resolved bundled questions and writes them twice:

* the **students' file** holds, for each question, only what a forecaster could know on its forecast date,
  built from :meth:`agent_schemas.Question.visible` (so nothing the scorer holds back can be in it, by
  construction): the question, background, resolution criteria, forecast date, the close date fixed in
  advance, source and question type; with ``show_crowd`` also the crowd probability at freeze and its date;
  for a dataset question the series' value at freeze. Held back: the outcome, the actual resolution date
  and anything derived from it, the round, the source's own question id and the URL field (today a
  question's page shows how it resolved; the background of some markets names its page all the same, as
  it was written). Each question gets a new id (``q01``, ``q02``, ...): bundled ids end with the actual
  resolution date, and their short ids are a hash of them.
* the **teacher's file** is a question file (:func:`benchmarks.questions.load_questions_file`) with the
  same ids and everything, outcomes included, plus ``bundled_id`` to find each question in the bundled data.

Students forecast from their file and hand in ``question_id,p_yes`` rows (with a ``method`` column holding
their name, many students' rows fit in one file); ``forecast-reconcile score submission.csv --questions
teacher_answers.csv`` grades them next to the crowd and always-0.5 baselines on the same questions, with
clustered intervals and one ranking (:mod:`benchmarks.report.score_file`). The students' file alone cannot grade
anything: it has no outcome.

The sample is one question per source question (a market repeated in several rounds counts once), scheduled
to close by the outcome snapshot unless ``include_unclosed`` (the harness's survivorship rule, notebook 11).
These questions resolved in the past: students who search the web can find their outcomes, so a fair
competition asks them not to (the toolkit's agents get a search guard; people do not).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from agent_schemas import DataValidationError, Question
from benchmarks.questions import DATA_SNAPSHOT_DATE, load_forecastbench
from benchmarks.questions.tables import csv_text
from benchmarks.run_folder.durable import write_text_atomic

__all__ = ["ClassSplit", "STUDENT_COLUMNS", "TEACHER_COLUMNS", "class_split", "select_class_questions", "write_class_split"]

#: Columns of the students' file, in order; the crowd and freeze columns only when shown or known.
STUDENT_COLUMNS: tuple[str, ...] = ("id", "question", "background", "resolution_criteria", "forecast_date", "close_date",
                                    "source", "question_type", "crowd_p_yes", "freeze_date", "freeze_value",
                                    "freeze_value_explanation")
#: Columns of the teacher's file, in order (a question file; ``bundled_id`` goes to ``Question.metadata``).
TEACHER_COLUMNS: tuple[str, ...] = ("id", "question", "background", "resolution_criteria", "forecast_date", "close_date",
                                    "resolution_date", "outcome", "source", "source_question_id", "url", "crowd_p_yes",
                                    "question_type", "round", "bundled_id")
#: File types the split writes (both are question and score files the toolkit reads).
SUFFIXES = (".csv", ".jsonl")


@dataclass(frozen=True)
class ClassSplit:
    """The two files of a class competition, as tables (rows in the same order, one per question).

    Attributes
    ----------
    students : pandas.DataFrame
        The students' file: the columns of :data:`STUDENT_COLUMNS` that are used.
    teacher : pandas.DataFrame
        The teacher's file: :data:`TEACHER_COLUMNS`.
    """

    students: pd.DataFrame
    teacher: pd.DataFrame


def select_class_questions(n: int, *, seed: int = 0, sources: Sequence[str] | None = None, question_type: str | None = "market",
                           forecast_date_from: dt.date | None = None, forecast_date_to: dt.date | None = None,
                           include_unclosed: bool = False) -> list[Question]:
    """A seeded sample of ``n`` resolved bundled questions, one per source question.

    Parameters
    ----------
    n : int
        Questions wanted (all that match, if fewer do).
    seed : int
        Sampling seed: the same seed and filters give the same questions.
    sources, question_type, forecast_date_from, forecast_date_to
        Filters of :func:`benchmarks.questions.load_forecastbench` (``question_type=None``: any).
    include_unclosed : bool
        Also questions scheduled to close after the outcome snapshot (over-represents early, mostly Yes,
        resolutions; notebook 11).

    Raises
    ------
    DataValidationError
        For ``n < 1``, an unknown source or question type, or filters no question matches.
    """
    if n < 1:
        raise DataValidationError(f"--n must be at least 1, got {n}", field="n", value=n)
    questions = load_forecastbench(sources=sources, question_type=question_type, forecast_date_from=forecast_date_from,
                                   forecast_date_to=forecast_date_to,
                                   scheduled_close_to=None if include_unclosed else DATA_SNAPSHOT_DATE,
                                   one_per_source_question=True, sample_n=n, seed=seed)
    if not questions:
        raise DataValidationError("no bundled question matches these filters", field="n", value=n)
    return list(questions)


def _iso(day: dt.date | None) -> str | None:
    return None if day is None else day.isoformat()


def class_split(questions: Sequence[Question], *, show_crowd: bool = False) -> ClassSplit:
    """The students' and the teacher's tables of ``questions`` (new ids ``q01``, ``q02``, ... in this order).

    Parameters
    ----------
    questions : sequence of Question
        Resolved questions (each with an outcome).
    show_crowd : bool
        Put the crowd probability at freeze (and its date) in the students' file.

    Returns
    -------
    ClassSplit

    Raises
    ------
    DataValidationError
        If a question has no outcome (the teacher could not grade it) or there are no questions.
    """
    if not questions:
        raise DataValidationError("no questions to split", field="questions")
    unresolved = [q.id for q in questions if q.outcome is None]
    if unresolved:
        raise DataValidationError(f"{len(unresolved)} question(s) have no outcome, e.g. {unresolved[0]!r}: the teacher "
                                  "could not grade them", field="outcome", value=unresolved[0])
    width = max(2, len(str(len(questions))))
    students: list[dict[str, Any]] = []
    teacher: list[dict[str, Any]] = []
    for i, q in enumerate(questions, start=1):
        class_id = f"q{i:0{width}d}"
        seen = q.visible(show_crowd=show_crowd)  # what a forecaster may see on the forecast date, and nothing else
        students.append({"id": class_id, "question": seen.text, "background": seen.background,
                         "resolution_criteria": seen.resolution_criteria, "forecast_date": _iso(seen.forecast_date),
                         "close_date": _iso(seen.scheduled_close_date), "source": seen.source,
                         "question_type": seen.question_type, "crowd_p_yes": seen.crowd_p_yes,
                         "freeze_date": _iso(seen.freeze_date), "freeze_value": seen.freeze_value,
                         "freeze_value_explanation": seen.freeze_value_explanation})
        teacher.append({"id": class_id, "question": q.text, "background": q.background,
                        "resolution_criteria": q.resolution_criteria, "forecast_date": _iso(q.forecast_date),
                        "close_date": _iso(q.scheduled_close_date), "resolution_date": _iso(q.resolution_date),
                        "outcome": q.outcome, "source": q.source, "source_question_id": q.source_question_id,
                        "url": q.url, "crowd_p_yes": q.crowd_p_yes, "question_type": q.question_type, "round": q.round,
                        "bundled_id": q.id})
    shown = pd.DataFrame(students, columns=list(STUDENT_COLUMNS))
    shown = shown[[c for c in STUDENT_COLUMNS if c in ("id", "question", "forecast_date") or shown[c].notna().any()]]
    return ClassSplit(students=shown, teacher=pd.DataFrame(teacher, columns=list(TEACHER_COLUMNS)))


def _text(table: pd.DataFrame, suffix: str) -> str:
    if suffix == ".csv":
        return csv_text(table, lineterminator="\n")  # no cell a spreadsheet would run; read back as it was
    rows = table.astype(object).where(table.notna(), None).to_dict("records")  # NaN -> null; floats kept exactly
    return "".join(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n" for row in rows)


def write_class_split(split: ClassSplit, student_file: str | Path, teacher_file: str | Path, *, overwrite: bool = False) -> None:
    """Write the two files (CSV or JSONL, by extension), the teacher's first, each atomically.

    Parameters
    ----------
    split : ClassSplit
    student_file, teacher_file : str or Path
        Where to write them; two different ``.csv`` or ``.jsonl`` paths.
    overwrite : bool
        Replace files that exist (by default an existing file is never replaced: a teacher's file that no
        longer matches the questions handed out would grade them against other outcomes).

    Raises
    ------
    ValueError
        For the same path twice or another extension (before anything is written).
    FileExistsError
        If a file exists and ``overwrite`` is false (before anything is written).
    OSError
        If a file cannot be written (a file already written stays).
    """
    student, teacher = Path(student_file), Path(teacher_file)
    if student.resolve() == teacher.resolve():
        raise ValueError(f"--student-file and --teacher-file are the same file ({student}): the students would get the outcomes")
    for path, option in ((student, "--student-file"), (teacher, "--teacher-file")):
        if path.suffix.lower() not in SUFFIXES:
            raise ValueError(f"{option} {path}: use a .csv or .jsonl file")
        if path.exists() and not overwrite:
            raise FileExistsError(f"{option} {path} exists; give --overwrite to replace it (the teacher's file must "
                                  "match the questions the students have)")
    teacher.parent.mkdir(parents=True, exist_ok=True)
    student.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(teacher, _text(split.teacher, teacher.suffix.lower()))
    write_text_atomic(student, _text(split.students, student.suffix.lower()))
