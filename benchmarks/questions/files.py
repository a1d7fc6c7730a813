"""Your own questions from a CSV, JSONL or Parquet file (:func:`load_questions_file`; it also reads a
ForecastBench question set ``.json``, with its resolution set if given, through
:mod:`benchmarks.questions.forecastbench_json`).

User question files (:func:`load_questions_file`)
-------------------------------------------------
Formats by extension: ``.csv`` (UTF-8, header row), ``.jsonl`` (one JSON object per line) and
``.parquet``; a UTF-8 byte-order mark is accepted, CSV cells may be of any length, and every cell is
read as text (an id ``007`` stays ``"007"``). Errors name the row as ``data row N (line M)``: ``N``
counts data rows from 1 (the CSV header and blank JSONL lines are not data rows) and ``M`` is the line
of the file where the row starts, as an editor shows it (Parquet rows have no line).
``question`` and ``resolution_criteria`` are shown verbatim in every prompt, so a value longer than
:data:`MAX_FIELD_CHARS` (5,000 characters each) is refused; ``background`` may be of any length (prompts
show its first 600 characters).

=========================  ========  ==========================================================
column                     required  content
=========================  ========  ==========================================================
``id``                     yes       unique question id (string)
``question``               yes       the question text (non-empty)
``forecast_date``          yes       ISO date ``YYYY-MM-DD`` (an ISO datetime is cut to its
                                     date): the cutoff, no information after it may be used
``background``             no        background text
``resolution_criteria``    no        how the question resolves
``close_date``             no        ISO date fixed in advance on which the question closes
                                     or resolves; shown to forecasters
``resolution_date``        no        ISO date on which it actually resolved, not before
                                     ``forecast_date``; held back from forecasters
``outcome``                no        ``1`` (Yes), ``0`` (No) or empty (unresolved); also
                                     ``true``/``false``
``source``                 no        e.g. ``polymarket``; default ``unknown``
``source_question_id``     no        id at the source (clustering key for standard errors)
``url``                    no        link to the question
``crowd_p_yes``            no        crowd / market probability of Yes in [0, 1]
``question_type``          no        ``market``, ``dataset`` or ``other`` (default)
``round``                  no        question-set label, e.g. a due date
``kind``                   no        ``binary`` (default), ``multiple_choice`` or ``numeric``
                                     (:mod:`agent_schemas.kinds`); when absent or blank, a row's
                                     kind is the one whose spec columns below it fills
``options``                MC        the options, separated by ``|`` (or a JSON array of labels)
``ordered``                no        ``true`` when the options have a natural order (RPS applies)
``range_min``              numeric   lower end of the range, in the question's unit
``range_max``              numeric   upper end of the range (above ``range_min``)
``open_lower``             no        ``true`` when the value may lie below ``range_min``
``open_upper``             no        ``true`` when the value may lie above ``range_max``
``unit``                   no        the value's unit, e.g. ``USD``
``log_scale``              no        ``true`` for a range on a log scale (``range_min`` > 0)
``crowd_forecast``         no        the crowd's forecast at freeze of a multiple-choice or numeric
                                     question, a JSON array in its kind's form (a probability per
                                     option; a 201-point CDF)
=========================  ========  ==========================================================

The ``outcome`` of a multiple-choice question is the label of the option that happened; of a numeric question
the value, in its unit (within a closed bound; beyond an open one is allowed). The spec columns, and how a kind
reads them, are the kind's own (:attr:`agent_schemas.kinds.base.QuestionKind.spec_columns`,
:meth:`~agent_schemas.kinds.base.QuestionKind.spec_from_cells`,
:meth:`~agent_schemas.kinds.base.QuestionKind.outcome_from_cell`).

Any other column is kept in ``Question.metadata``. Empty cells (and JSON ``null``) mean "absent".
A bad file raises :class:`agent_schemas.DataValidationError` naming the file, the row, the column and
the offending value: an unparseable date, an outcome other than 0/1 (for binary questions), an unknown kind, an
outcome that is not an option or lies beyond a closed bound, a file mixing kinds without a ``kind`` column, a spec
column of another kind than the row's, ``crowd_p_yes`` outside [0, 1], a
missing required column or value, a duplicate id, a resolution date before the forecast date, or a column name or
cell holding a NUL byte, another control character or a lone surrogate (never text a person wrote:
:func:`benchmarks.questions.tables.text_problem`).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from agent_schemas import DataValidationError, Question
from agent_schemas.kinds import DEFAULT_KIND, KINDS, QuestionKind, kind_named
from benchmarks.questions.base import QuestionList
from benchmarks.questions.forecastbench_json import load_forecastbench_json
from benchmarks.questions.tables import Table, cell_error, id_text, is_blank, parse_date_cell, plain_value, read_table

__all__ = ["MAX_FIELD_CHARS", "OPTIONAL_COLUMNS", "REQUIRED_COLUMNS", "load_questions_file"]

#: Columns a user question file must have.
REQUIRED_COLUMNS: tuple[str, ...] = ("id", "question", "forecast_date")
#: Columns a user question file may have (others go to ``Question.metadata``).
OPTIONAL_COLUMNS: tuple[str, ...] = (
    "background", "resolution_criteria", "close_date", "resolution_date", "outcome", "source", "source_question_id",
    "url", "crowd_p_yes", "question_type", "round", "kind", "crowd_forecast",
    *dict.fromkeys(c for k in KINDS.values() for c in k.spec_columns),
)

#: Longest value accepted for the fields shown verbatim in every prompt (characters).
MAX_FIELD_CHARS: dict[str, int] = {"question": 5_000, "resolution_criteria": 5_000}


def _parse_prob(path: Path, row: int, value: Any) -> float:
    try:
        p = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        raise cell_error(path, row, "crowd_p_yes", value, "crowd_p_yes is not a number") from None
    if not math.isfinite(p) or p < 0.0 or p > 1.0:
        raise cell_error(path, row, "crowd_p_yes", value, "crowd_p_yes must be a probability in [0, 1]")
    return p


def _row_kind(table: Table, i: int, first: tuple[int, QuestionKind] | None) -> QuestionKind:
    """The kind of data row ``i``: its ``kind`` cell, else the kind whose spec columns it fills (binary when it fills
    none), which must then be the kind of every such row (``first``: the first row whose kind was inferred)."""
    p, rec = table.path, table.rows[i]
    filled = {k.name: [c for c in k.spec_columns if not is_blank(rec.get(c))] for k in KINDS.values()}
    filled = {name: cols for name, cols in filled.items() if cols}
    if not is_blank(rec.get("kind")):
        try:
            kind = kind_named(str(rec["kind"]).strip().lower())
        except ValueError as exc:
            raise cell_error(p, i, "kind", rec["kind"], str(exc)) from None
        other = next(((name, cols) for name, cols in filled.items() if name != kind.name), None)
        if other is not None:
            raise cell_error(p, i, other[1][0], rec[other[1][0]], f"column {other[1][0]!r} states a {KINDS[other[0]].label} "
                             f"question, but the row's kind is {kind.name}")
        return kind
    if len(filled) > 1:
        names = sorted(filled)
        col = filled[names[1]][0]
        raise cell_error(p, i, col, rec[col], f"the row fills spec columns of {' and '.join(names)} questions "
                         f"({', '.join(c for n in names for c in filled[n])}): give a 'kind' column")
    kind = KINDS[next(iter(filled))] if filled else KINDS[DEFAULT_KIND]
    if first is not None and first[1] is not kind:
        col = next(iter(filled.values()))[0] if filled else "kind"
        raise cell_error(p, i, col, rec.get(col), f"the file mixes kinds without a 'kind' column: this row is {kind.name}, "
                         f"{table.where(first[0])} is {first[1].name}; add a 'kind' column")
    return kind


def _kind_cell(table: Table, i: int, read):  # noqa: ANN001, ANN202 - a thunk of the kind's cell reader
    """``read()``, its error (a kind's cell reader names the column and the value) as one naming the file and row."""
    try:
        return read()
    except DataValidationError as exc:
        raise cell_error(table.path, i, exc.field, exc.value, exc.message) from None


def load_questions_file(path: str | Path, resolution_set: str | Path | None = None) -> QuestionList:
    """Load user questions from a CSV, JSONL or Parquet file (columns in the module docstring), or a
    ForecastBench question set (``.json``, read by :func:`benchmarks.questions.load_forecastbench_json`).

    Parameters
    ----------
    path : str or Path
        The file; its extension picks the format.
    resolution_set : str or Path, optional
        With a ForecastBench question set only: its resolution set (outcomes); without it every question
        of the set is returned unresolved.

    Returns
    -------
    QuestionList
        One :class:`agent_schemas.Question` per data row, in file order. ``horizon_days`` is computed
        when ``resolution_date`` is given; unknown columns go to ``metadata``.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    DataValidationError
        For a ForecastBench file, as :func:`benchmarks.questions.load_forecastbench_json` raises; for a
        ``resolution_set`` with another kind of file; else naming the file, the row (``data row N (line
        M)``; ``.row`` is the 0-based data row), the column and the value, for: a missing required column
        or value, a bad date, an outcome other than 0/1
        (``yes``/``no``/``true``/``false`` are read as 1/0), ``crowd_p_yes`` outside [0, 1], an unknown
        ``question_type``, a resolution date before the forecast date, a duplicate id, a ``question`` or
        ``resolution_criteria`` longer than :data:`MAX_FIELD_CHARS`, a malformed line, a file that is
        not UTF-8, an unsupported extension, or a file with no rows.
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"question file not found: {p}")
    if p.suffix.lower() == ".json":
        return load_forecastbench_json(p, resolution_set)
    if resolution_set is not None:
        raise DataValidationError(f"{p}: a resolution set goes with a ForecastBench question set (.json); a {p.suffix.lower()} "
                                  "question file has its outcomes in its own 'outcome' column", field="resolution_set",
                                  value=str(resolution_set), source=str(p))
    if p.suffix.lower() not in (".csv", ".jsonl", ".parquet", ".pq"):
        raise DataValidationError(
            f"{p}: unsupported question file type {p.suffix.lower()!r}; use .csv, .jsonl or .parquet, or a ForecastBench "
            "question set (.json)", field="path", value=str(p), source=str(p))
    table = read_table(p)
    with table.numbering():
        return _questions_from_table(table)


def _questions_from_table(table: Table) -> QuestionList:
    p, header, rows = table.path, table.header, table.rows
    if header is not None:
        for col in REQUIRED_COLUMNS:
            if col not in header:
                raise cell_error(p, None, col, None, f"missing required column {col!r}; columns present: {header}")
    if not rows:
        raise DataValidationError(f"{p}: the file has no question rows", source=str(p))

    known = set(REQUIRED_COLUMNS) | set(OPTIONAL_COLUMNS)
    seen: dict[str, int] = {}
    out: list[Question] = []
    inferred: tuple[int, QuestionKind] | None = None  # the first row whose kind was inferred, and that kind
    for i, rec in enumerate(rows):
        for col in REQUIRED_COLUMNS:
            if col not in rec:
                raise cell_error(p, i, col, None, f"missing required column {col!r}")
            if is_blank(rec[col]):
                raise cell_error(p, i, col, rec[col], f"required value {col!r} is empty")
        qid = id_text(rec["id"])
        if qid in seen:
            raise cell_error(p, i, "id", qid, f"duplicate id (first used in {table.where(seen[qid])})")
        seen[qid] = i
        text = str(rec["question"]).strip()
        for col, limit in MAX_FIELD_CHARS.items():
            v = "" if is_blank(rec.get(col)) else str(rec[col]).strip()
            if len(v) > limit:
                raise cell_error(p, i, col, v, f"{col} has {len(v):,} characters; at most {limit:,} are accepted (it is shown "
                                         "verbatim in every prompt)")
        fdate = parse_date_cell(p, i, "forecast_date", rec["forecast_date"])
        rdate = None if is_blank(rec.get("resolution_date")) else parse_date_cell(p, i, "resolution_date", rec["resolution_date"])
        close = None if is_blank(rec.get("close_date")) else parse_date_cell(p, i, "close_date", rec["close_date"])
        if rdate is not None and rdate < fdate:
            raise cell_error(p, i, "resolution_date", rec["resolution_date"], f"resolution_date is before forecast_date {fdate}")
        kind = _row_kind(table, i, inferred)
        if is_blank(rec.get("kind")) and inferred is None:
            inferred = (i, kind)
        spec = _kind_cell(table, i, lambda: kind.spec_from_cells(rec))
        outcome = None if is_blank(rec.get("outcome")) else _kind_cell(table, i, lambda: kind.outcome_from_cell(spec, rec["outcome"]))
        crowd_forecast = None if is_blank(rec.get("crowd_forecast")) else _crowd_forecast(table, i, kind, spec)
        crowd = None if is_blank(rec.get("crowd_p_yes")) else _parse_prob(p, i, rec["crowd_p_yes"])
        qtype = "other"
        if not is_blank(rec.get("question_type")):
            qtype = str(rec["question_type"]).strip().lower()
            if qtype not in ("market", "dataset", "other"):
                raise cell_error(p, i, "question_type", rec["question_type"], "question_type must be 'market', 'dataset' or 'other'")

        def text_or(col: str, default: str | None) -> str | None:
            v = rec.get(col)
            return default if is_blank(v) else str(plain_value(v)).strip()

        meta = {k: plain_value(v) for k, v in rec.items() if k not in known and not is_blank(v)}
        out.append(Question(
            id=qid,
            text=text,
            background=text_or("background", "") or "",
            resolution_criteria=text_or("resolution_criteria", "") or "",
            forecast_date=fdate,
            scheduled_close_date=close,
            resolution_date=rdate,
            outcome=outcome,
            source=text_or("source", "unknown") or "unknown",
            source_question_id=text_or("source_question_id", None),
            question_type=qtype,
            url=text_or("url", None),
            crowd_p_yes=crowd,
            crowd_forecast=crowd_forecast,
            spec=spec,
            round=text_or("round", None),
            horizon_days=None if rdate is None else (rdate - fdate).days,
            metadata=meta,
        ))
    return QuestionList(out, origin=str(p))


def _crowd_forecast(table: Table, i: int, kind: QuestionKind, spec) -> list[float]:  # noqa: ANN001 - a KindSpec
    """The ``crowd_forecast`` cell of row ``i`` (a JSON array, or a list in a JSONL file) checked as ``kind``'s forecast."""
    raw = table.rows[i]["crowd_forecast"]
    value = raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise cell_error(table.path, i, "crowd_forecast", raw, f"crowd_forecast is not a JSON array: {exc.msg}") from None
    if not isinstance(value, list):
        raise cell_error(table.path, i, "crowd_forecast", raw, f"crowd_forecast must be a JSON array (the {kind.label} forecast)")
    try:
        return kind.check_forecast(spec, value, name="crowd_forecast").tolist()
    except DataValidationError as exc:
        raise cell_error(table.path, i, "crowd_forecast", raw, exc.message) from None
