"""Score a file of multiple-choice or numeric forecasts made by any system (``forecast-reconcile score FILE
--questions QS`` with a file that has no ``p_yes`` column), next to the kind's baselines on the same questions.

The forecasts file is read like a question file (:func:`benchmarks.questions.read_table`: ``.csv``, ``.jsonl``,
``.json`` list of objects or ``.parquet``). Columns: ``question_id`` (an id of ``--questions``), optionally
``method`` (several systems in one file; default ``yours``), and the forecast in one of two forms:

* **as a model answers** (the kind's answer form, read by the kind's own parser,
  :meth:`agent_schemas.kinds.base.QuestionKind.read_answer`): for a multiple-choice question ``probabilities``, a
  JSON object of integer percents keyed by option label (``{"Arsenal": 40, "Liverpool": 35, "Other": 25}``); for a
  numeric question the percentiles ``percentile_5``, ``percentile_10``, ``percentile_25``, ``percentile_50``,
  ``percentile_75``, ``percentile_90``, ``percentile_95`` in the question's unit (turned into a CDF on the 201-point
  grid as a model's are);
* **as stored** (``distribution``): a JSON array in the kind's form, a probability per option in the question's
  order or a 201-point CDF (:meth:`~agent_schemas.kinds.base.QuestionKind.check_forecast`).

Outcomes, specs and clusters come from ``--questions`` (a question file with a ``kind`` column or the kind's spec
columns, :mod:`benchmarks.questions.files`), or, for a panel (``aggregate``) without it, from the bundled questions of
every kind (:func:`benchmarks.questions.browse.every_bundled_question`: what ``export RUN --format panel`` of a run on
them refers to). Each kind present is scored on its own leaderboard
(:func:`benchmarks.scoring.kind_table.kind_table`), written as ``leaderboard_<kind>.csv`` / ``.md``; kinds are never
mixed. A bad row stops with one line naming the file, the row, the column and the value: an unknown question id, a
question with no outcome (unless ``skip_unknown``), a forecast of the wrong form for its question (a ``p_yes`` for a
numeric question, percentiles for a multiple-choice one), an unknown option, probabilities that do not sum to 100,
percentiles out of order or beyond a closed bound, a CDF that decreases, or two rows of one method for one question.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from agent_schemas import DataValidationError, ForecastParseError, Question
from benchmarks.questions import id_text, load_questions_file, read_table
from benchmarks.questions.browse import every_bundled_question, short_id
from benchmarks.questions.tables import Table, is_blank, plain_value
from benchmarks.report.kind_report import KindReport, write_kind_reports
from benchmarks.scoring.kind_table import kind_table

__all__ = ["KindScoreResult", "STORED_COLUMN", "has_kind_forecasts", "kind_forecast_columns", "read_kind_rows", "score_kind_file"]

#: The column of a forecast given in its stored form (a JSON array).
STORED_COLUMN = "distribution"


@dataclass
class KindScoreResult:
    """What :func:`score_kind_file` found: one leaderboard per kind."""

    reports: list[KindReport]
    n_rows: int = 0
    """Data rows of the file that were scored."""
    skipped: list[str] = field(default_factory=list)
    """Rows left out by ``skip_unknown`` (``data row N (line M): id``)."""
    notes: list[str] = field(default_factory=list)
    """Plain lines for the user."""

    def markdown(self) -> str:
        """Every kind's leaderboard section."""
        return "\n\n".join(rep.markdown() for rep in self.reports)

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write ``leaderboard_<kind>.csv`` and ``.md`` of each kind into ``out_dir``; their paths."""
        return write_kind_reports(out_dir, self.reports)


def read_kind_rows(path: str | Path, questions_path: str | Path | None, *, by: str = "method", by_default: str | None = "yours",
                   skip_unknown: bool = False) -> tuple[list[dict[str, Any]], list[str]]:
    """The forecasts of a file of multiple-choice or numeric forecasts (module docstring), row by row: ``row``
    (0-based), ``who`` (the ``by`` column: a method, a forecaster; ``by_default`` when blank, required when None),
    ``question`` (the :class:`~agent_schemas.Question` of ``questions_path`` the id names; None: of the bundled
    questions of every kind), ``forecast`` (the
    validated vector), ``cells`` (the row's cells) and ``where`` (``data row N (line M)``); and the rows left out by
    ``skip_unknown`` (``data row N (line M): id``).

    Raises
    ------
    FileNotFoundError
        If a file does not exist.
    DataValidationError
        One line naming the file, row, column and value (module docstring).
    """
    pool = every_bundled_question() if questions_path is None else list(load_questions_file(questions_path))
    where = "the bundled questions" if questions_path is None else str(questions_path)
    by_id = {q.id: q for q in pool}
    by_short: dict[str, list[Question]] = {}
    for q in pool:
        by_short.setdefault(short_id(q.id), []).append(q)
    table = read_table(Path(path))
    rows: list[dict[str, Any]] = []
    skipped: list[str] = []
    seen: dict[tuple[str, str], int] = {}
    with table.numbering():
        for col in ("question_id", *([by] if by_default is None else [])):
            if table.header is not None and col not in table.header:
                raise table.error(None, col, None, f"missing required column {col!r}; columns present: {table.header}")
        if not table.rows:
            raise DataValidationError(f"{table.path}: the file has no forecast rows", source=str(table.path))
        for i, rec in enumerate(table.rows):
            ref = rec.get("question_id")
            if is_blank(ref):
                raise table.error(i, "question_id", ref, "required value 'question_id' is empty")
            ref = id_text(ref)
            hits = by_short.get(ref.lower(), [])
            q = by_id.get(ref) or (hits[0] if len(hits) == 1 else None)
            if q is None:
                raise table.error(i, "question_id", ref, f"no question of {where} has this id")
            if q.outcome is None:
                if skip_unknown:
                    skipped.append(f"{table.where(i)}: {ref}")
                    continue
                raise table.error(i, "question_id", ref, "the question has no outcome yet (--skip-unknown leaves such rows out)")
            if is_blank(rec.get(by)) and by_default is None:
                raise table.error(i, by, rec.get(by), f"required value {by!r} is empty")
            who = by_default if is_blank(rec.get(by)) else str(rec[by]).strip()
            if (who, q.id) in seen:
                raise table.error(i, "question_id", ref, f"a second forecast of {by} {who!r} for this question "
                                  f"(first in {table.where(seen[(who, q.id)])})")
            seen[(who, q.id)] = i
            rows.append({"row": i, "who": who, "question": q, "forecast": _forecast_of_row(table, i, q), "cells": rec,
                         "where": table.where(i)})
    return rows, skipped


def _forecast_of_row(table: Table, i: int, q: Question) -> Any:
    """The forecast vector row ``i`` gives for ``q`` (stored form, or the kind's answer form), validated."""
    kind, spec, rec = q.kind, q.spec, table.rows[i]
    stored = rec.get(STORED_COLUMN)
    if not is_blank(stored):
        value = stored
        if isinstance(stored, str):
            try:
                value = json.loads(stored)
            except json.JSONDecodeError as exc:
                raise table.error(i, STORED_COLUMN, stored, f"{STORED_COLUMN} is not a JSON array: {exc.msg}") from None
        try:
            return kind.check_forecast(spec, value, name=STORED_COLUMN)
        except DataValidationError as exc:
            raise table.error(i, STORED_COLUMN, stored, f"not a {kind.label} forecast of question {q.id}: {exc.message}") from None
    obj: dict[str, Any] = {}
    for key in kind.answer_keys(spec):
        v = rec.get(key)
        if is_blank(v):
            continue
        if isinstance(v, str) and v.strip().startswith("{"):
            try:
                v = json.loads(v)
            except json.JSONDecodeError as exc:
                raise table.error(i, key, v, f"{key} starts with '{{' but is not a JSON object: {exc.msg}") from None
        obj[key] = plain_value(v)
    if not obj:
        given = [c for c in rec if c not in ("question_id", "method", "forecaster", "reasoning", "date", "outcome", "cluster")
                 and not is_blank(rec[c])]
        raise table.error(i, given[0] if given else STORED_COLUMN, rec.get(given[0]) if given else None,
                          f"question {q.id} is {kind.label}: give its forecast as {', '.join(kind.answer_keys(spec))} or "
                          f"{STORED_COLUMN} (a {kind.label} forecast, not {', '.join(given) or 'nothing'})")
    try:
        forecast = kind.read_answer(spec, obj, raw_text=json.dumps(obj, default=str))
    except ForecastParseError as exc:
        column = (exc.field or STORED_COLUMN).split(".")[0]
        raise table.error(i, column, rec.get(column), f"{exc.message}") from None
    if forecast is None:  # read_answer found none of its keys: cannot happen with obj built from them
        raise table.error(i, STORED_COLUMN, None, f"no {kind.label} forecast for question {q.id}")
    return forecast


def score_kind_file(path: str | Path, questions_path: str | Path, *, baselines: bool = True, skip_unknown: bool = False,
                    n_resamples: int = 1000, seed: int = 0) -> KindScoreResult:
    """Score a forecasts file of multiple-choice or numeric forecasts (module docstring), each kind on its own.

    Parameters
    ----------
    path : str or Path
        The forecasts file.
    questions_path : str or Path
        The question file the ids refer to (outcomes, specs, clusters, crowd forecasts).
    baselines : bool
        Score each kind's baselines (the crowd where a question has one, the uninformed forecast) on the same questions.
    skip_unknown : bool
        Leave out rows whose question has no outcome (counted in ``skipped``) instead of refusing.
    n_resamples, seed : int
        Clustered bootstrap resamples and seed.

    Raises
    ------
    FileNotFoundError
        If a file does not exist.
    DataValidationError
        One line naming the file, row, column and value (module docstring), or when no row is left to score.
    """
    found, skipped = read_kind_rows(path, questions_path, skip_unknown=skip_unknown)
    out = KindScoreResult(reports=[], skipped=skipped)
    rows = [{"run_id": "", "label": r["who"], "type": "method", "question_id": r["question"].id, "cluster": r["question"].cluster_id,
             "outcome": r["question"].outcome, "spec": r["question"].spec, "forecast": r["forecast"], "status": "ok", "note": "",
             "_q": r["question"]} for r in found]
    if not rows:
        raise DataValidationError(f"{path}: no row left to score ({len(out.skipped)} skipped: no outcome)", source=str(path))
    out.n_rows = len(rows)
    frame = pd.DataFrame(rows)
    for kind_name, part in frame.groupby(frame["spec"].map(lambda s: s.kind), sort=False):
        kind = part["_q"].iloc[0].kind
        part = part.drop(columns="_q")
        if baselines:
            mine = {label for label in part["label"]}
            extra = []
            for q in {r["_q"].id: r["_q"] for r in rows if r["_q"].kind is kind}.values():
                for name, (forecast, note) in kind.baselines(q).items():
                    if forecast is not None and name not in mine:
                        extra.append({"run_id": "", "label": name, "type": "baseline", "question_id": q.id, "cluster": q.cluster_id,
                                      "outcome": q.outcome, "spec": q.spec, "forecast": forecast, "status": "ok", "note": note})
            if extra:
                part = pd.concat([part, pd.DataFrame(extra)], ignore_index=True)
        reference = str(part["label"].iloc[0])
        board = kind_table(part, kind, reference=reference, n_resamples=n_resamples, seed=seed)
        out.reports.append(KindReport(kind, board, part["question_id"].nunique(), reference))
        out.notes.append(f"{kind.label}: {part['question_id'].nunique()} questions; deltas against {reference}")
    return out


def has_kind_forecasts(path: str | Path) -> bool:
    """True for a forecasts file with no ``p_yes`` column (a file of option probabilities or percentiles, for
    :func:`score_kind_file`); a file that cannot be read is left to the binary reader's errors."""
    try:
        table = read_table(Path(path))
    except (OSError, DataValidationError):
        return False
    columns: Sequence[str] = table.header if table.header is not None else list(dict.fromkeys(k for r in table.rows for k in r))
    return "p_yes" not in columns and "forecasts" not in columns


#: Columns of a forecasts or panel file that say who forecast what and when, never the forecast itself.
_NOT_FORECAST = frozenset({"question_id", "method", "forecaster", "reasoning", "date", "model", "outcome", "cluster"})


def kind_forecast_columns(path: str | Path) -> list[str]:
    """The columns of a file of multiple-choice or numeric forecasts (:func:`has_kind_forecasts`) that may hold a
    forecast (``distribution``, ``probabilities``, ``percentile_5`` ...: any but :data:`_NOT_FORECAST`); empty for a
    file with a ``p_yes`` column, with none such, or that cannot be read. ``aggregate`` reads a panel file that has
    them against the bundled questions when no ``--questions`` is given."""
    if not has_kind_forecasts(path):
        return []
    table = read_table(Path(path))
    columns: Sequence[str] = table.header if table.header is not None else list(dict.fromkeys(k for r in table.rows for k in r))
    return [c for c in columns if c not in _NOT_FORECAST]
