"""Question sets for the benchmark harness: the bundled ForecastBench subset and user files.

Three ways in, all returning :class:`agent_schemas.Question` objects:

* :func:`load_forecastbench` -- the bundled, resolved ForecastBench subset
  (``agent_tools/data/forecastbench/fb_questions.parquet``; 18,021 binary items, 23 rounds; see its
  ``DATA_CARD.md``, CC BY-SA 4.0, (c) Forecasting Research Institute), with filters and a seeded sample.
* :func:`load_questions_file` -- your own questions as CSV, JSONL or Parquet (columns below).
* :func:`load_forecastbench_json` -- ForecastBench's own question-set JSON (``datasets/question_sets/*.json``)
  optionally joined with its resolution-set JSON (``datasets/resolution_sets/*_resolution_set.json``).

:func:`superforecaster_medians` gives the 2024-07-21 superforecaster panel medians keyed by question id.

Field mapping of the bundled data
---------------------------------
``qid`` -> ``id``; ``question`` -> ``text``; ``background``; ``resolution_criteria`` (falls back to
``market_resolution_criteria`` when empty); ``forecast_due_date`` -> ``forecast_date`` (the information
cutoff); ``resolution_date``; ``outcome``; ``source``; ``source_question_id``; ``question_type``; ``url``;
``crowd_prob_at_freeze`` -> ``crowd_p_yes``; ``round``; ``horizon_days``. ``metadata`` holds
``freeze_datetime``, ``freeze_value_raw``, ``freeze_value_explanation``, ``question_set``, ``source_intro``
and, when present, ``market_resolution_criteria``.

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
=========================  ========  ==========================================================

Any other column is kept in ``Question.metadata``. Empty cells (and JSON ``null``) mean "absent".
A bad file raises :class:`agent_schemas.DataValidationError` naming the file, the row, the column and
the offending value: an unparseable date, an outcome other than 0/1, ``crowd_p_yes`` outside [0, 1], a
missing required column or value, a duplicate id, or a resolution date before the forecast date.

ForecastBench JSON (:func:`load_forecastbench_json`)
----------------------------------------------------
Question set: ``{"forecast_due_date", "question_set", "questions": [{"id", "source", "question",
"background", "resolution_criteria", "market_info_resolution_criteria", "market_info_open_datetime",
"market_info_close_datetime", "url", "freeze_datetime", "freeze_datetime_value",
"freeze_datetime_value_explanation", "source_intro", "combination_of", "resolution_dates"}, ...]}``.
Resolution set: ``{"forecast_due_date", "question_set", "resolutions": [{"id", "source", "direction",
"resolution_date", "resolved_to", "resolved"}, ...]}``. Field names checked against
``forecastingresearch/forecastbench-datasets`` (question set ``2024-12-08-human.json``, ``2026-05-10-llm.json``;
resolution set ``2024-12-08_resolution_set.json``). Only single binary questions are loaded: combination
questions (``id`` given as a list) are skipped and counted in ``QuestionList.skipped``.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import functools
import hashlib
import importlib.resources
import json
import logging
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from agent_schemas import DataValidationError, Question
from agent_schemas.dates import utc_date

logger = logging.getLogger(__name__)

__all__ = [
    "DATASET_SOURCES",
    "DATA_SNAPSHOT_DATE",
    "MARKET_SOURCES",
    "OPTIONAL_COLUMNS",
    "REQUIRED_COLUMNS",
    "QuestionList",
    "forecastbench_frame",
    "load_forecastbench",
    "load_forecastbench_json",
    "load_questions_file",
    "superforecaster_medians",
]

#: ForecastBench market sources (crowd / market probability available at freeze).
MARKET_SOURCES: frozenset[str] = frozenset({"infer", "manifold", "metaculus", "polymarket"})
#: ForecastBench dataset sources (freeze value is the last observed series value, not a probability).
DATASET_SOURCES: frozenset[str] = frozenset({"acled", "dbnomics", "fred", "wikipedia", "yfinance"})

#: Columns a user question file must have.
REQUIRED_COLUMNS: tuple[str, ...] = ("id", "question", "forecast_date")
#: Columns a user question file may have (others go to ``Question.metadata``).
OPTIONAL_COLUMNS: tuple[str, ...] = (
    "background", "resolution_criteria", "close_date", "resolution_date", "outcome", "source", "source_question_id",
    "url", "crowd_p_yes", "question_type", "round",
)

#: Date of the bundled outcomes (ForecastBench resolution sets as of this day; DATA_CARD.md). Only
#: questions resolved by then are bundled, so a market that could still be open on this day is in the
#: data only if it resolved early, and early resolutions are mostly Yes ("will X happen by <date>"): in
#: late rounds the bundled yes-rate is inflated. Selecting questions whose *scheduled* close date (known
#: on the forecast date) is on or before this day removes that outcome-dependent selection; see
#: :func:`load_forecastbench` (``scheduled_close_to``) and README "Scoring conventions".
DATA_SNAPSHOT_DATE = dt.date(2026, 8, 20)

#: Longest value accepted for the fields shown verbatim in every prompt (characters).
MAX_FIELD_CHARS: dict[str, int] = {"question": 5_000, "resolution_criteria": 5_000}

_QUESTIONS_FILE = "fb_questions.parquet"
_HUMAN_FILE = "fb_human_forecasts.parquet"
_SUPER_MEDIAN = "human_superforecaster_median"


class QuestionList(list):
    """A ``list[Question]`` that also records what was skipped while loading.

    Attributes
    ----------
    skipped : dict[str, int]
        Count of skipped entries per reason, e.g. ``{"combo": 12, "unresolved": 3}``.
    origin : str
        The file(s) the questions came from.
    """

    def __init__(self, items: Iterable[Question] = (), *, skipped: Mapping[str, int] | None = None, origin: str = ""):
        super().__init__(items)
        self.skipped: dict[str, int] = dict(skipped or {})
        self.origin = origin


# ------------------------------------------------------------------------------------------------
# bundled ForecastBench data
# ------------------------------------------------------------------------------------------------


def _read_bundled_parquet(name: str) -> pd.DataFrame:
    resource = importlib.resources.files("agent_tools") / "data" / "forecastbench" / name
    with importlib.resources.as_file(resource) as path:
        if not Path(path).is_file():
            raise FileNotFoundError(f"bundled ForecastBench file not found: {path}")
        return pd.read_parquet(path)


@functools.lru_cache(maxsize=1)
def _fb_frame() -> pd.DataFrame:
    """The bundled question table, read once per process, with parsed helper columns (do not mutate)."""
    df = _read_bundled_parquet(_QUESTIONS_FILE)
    df["_fdate"] = pd.to_datetime(df["forecast_due_date"], format="%Y-%m-%d")
    df["_rdate"] = pd.to_datetime(df["resolution_date"], format="%Y-%m-%d")
    market_close = pd.to_datetime(df["market_close_datetime"], utc=True).dt.tz_convert(None).dt.normalize()
    df["_close"] = market_close.where(df["question_type"] == "market", df["_rdate"])
    return df


@functools.lru_cache(maxsize=1)
def _human_frame() -> pd.DataFrame:
    return _read_bundled_parquet(_HUMAN_FILE)


def forecastbench_frame() -> pd.DataFrame:
    """Return a copy of the bundled ForecastBench question table (columns in its ``DATA_CARD.md``).

    Returns
    -------
    pandas.DataFrame of shape (18021, 24)
        One row per resolved binary item; dates are ISO strings.
    """
    return _fb_frame().drop(columns=["_fdate", "_rdate", "_close"]).copy()


def superforecaster_medians() -> dict[str, float]:
    """Median superforecaster probability per question of the 2024-07-21 round.

    Returns
    -------
    dict[str, float]
        ``qid -> p_yes`` in [0, 1] for the 578 resolved items (521 dataset, 57 market) that the panel
        forecast (``forecaster_type == "human_superforecaster_median"`` in ``fb_human_forecasts.parquet``).
    """
    h = _human_frame()
    med = h[h["forecaster_type"] == _SUPER_MEDIAN]
    return dict(zip(med["qid"].tolist(), med["p_yes"].astype(float).tolist()))


def _superforecaster_counts() -> dict[str, int]:
    h = _human_frame()
    med = h[h["forecaster_type"] == _SUPER_MEDIAN]
    return dict(zip(med["qid"].tolist(), med["n_forecasters"].astype(int).tolist()))


def _as_date(value: Any, field: str) -> dt.date:
    try:
        return utc_date(value, field=field)
    except ValueError as exc:
        raise DataValidationError(str(exc), field=field, value=value) from None


def _as_list(value: Any, field: str) -> list[Any] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, Iterable):
        return list(value)
    raise DataValidationError(f"{field} must be a string or a list, got {value!r}", field=field, value=value)


def _seed_key(seed: int, qid: str) -> int:
    """Sampling key of one question: depends only on (seed, qid), never on row order."""
    return int.from_bytes(hashlib.blake2b(f"{seed}|{qid}".encode(), digest_size=8).digest(), "big")


def load_forecastbench(
    *,
    sources: str | Sequence[str] | None = None,
    question_type: str | None = None,
    rounds: str | Sequence[str] | None = None,
    min_horizon_days: int | None = None,
    max_horizon_days: int | None = None,
    forecast_date_from: dt.date | str | None = None,
    forecast_date_to: dt.date | str | None = None,
    scheduled_close_to: dt.date | str | None = None,
    one_per_source_question: bool = False,
    sample_n: int | None = None,
    seed: int = 0,
    require_crowd: bool = False,
) -> list[Question]:
    """Load resolved binary questions from the bundled ForecastBench subset.

    Filters are applied first (all are inclusive), then ``one_per_source_question``, then the sample.

    Parameters
    ----------
    sources : str or sequence of str, optional
        Keep these sources (``acled``, ``dbnomics``, ``fred``, ``wikipedia``, ``yfinance``, ``infer``,
        ``manifold``, ``metaculus``, ``polymarket``).
    question_type : {"market", "dataset"}, optional
        Keep one question type.
    rounds : str or sequence of str, optional
        Keep these rounds (ForecastBench forecast due dates, e.g. ``"2024-07-21"``).
    min_horizon_days, max_horizon_days : int, optional
        Bounds on ``horizon_days`` (resolution date minus forecast date, in days).
    forecast_date_from, forecast_date_to : date or "YYYY-MM-DD", optional
        Bounds on the forecast (cutoff) date.
    scheduled_close_to : date or "YYYY-MM-DD", optional
        Keep questions whose scheduled close date (a market's ``market_close_datetime``, a dataset
        question's resolution date; both fixed in advance) is on or before this date. With
        :data:`DATA_SNAPSHOT_DATE` it removes the survivorship bias of the bundled data (see
        :data:`DATA_SNAPSHOT_DATE`).
    one_per_source_question : bool, default False
        Keep one row per ``(source, source_question_id)``: the row of the earliest round; within that
        round the shortest horizon (earliest resolution date); ties broken by ``qid``. Deterministic and
        independent of ``seed``. Use it to avoid near-duplicate items (a market repeated across rounds, a
        dataset series at 7/30/90/... days).
    sample_n : int, optional
        Keep a seeded sample of this many questions (all of them, with a warning, if fewer are left).
        A question is kept when its key ``blake2b(f"{seed}|{qid}")`` is among the ``sample_n`` smallest of
        the filtered set, so the sample depends only on the filtered set and the seed, never on row or
        filter order.
    seed : int, default 0
        Sampling seed.
    require_crowd : bool, default False
        Keep only questions with a crowd probability at freeze (the 2,048 market rows).

    Returns
    -------
    list of Question
        In the bundled file's order (round, then source, ...); ``crowd_p_yes`` in [0, 1] or None.

    Raises
    ------
    DataValidationError
        For an unknown source, round or question type (the message lists the valid ones), a negative
        horizon bound, or a non-positive ``sample_n``.

    Examples
    --------
    >>> qs = load_forecastbench(sources="polymarket", require_crowd=True, sample_n=5, seed=1)
    >>> len(qs), qs[0].source
    (5, 'polymarket')
    """
    df = _fb_frame()
    mask = np.ones(len(df), dtype=bool)

    src = _as_list(sources, "sources")
    if src is not None:
        valid = sorted(df["source"].unique().tolist())
        unknown = [s for s in src if s not in valid]
        if unknown:
            raise DataValidationError(
                f"unknown ForecastBench source(s) {unknown}; valid sources: {', '.join(valid)}",
                field="sources", value=unknown[0] if len(unknown) == 1 else unknown,
            )
        mask &= df["source"].isin(src).to_numpy()
    if question_type is not None:
        if question_type not in ("market", "dataset"):
            raise DataValidationError(
                f"question_type must be 'market' or 'dataset', got {question_type!r}", field="question_type", value=question_type
            )
        mask &= (df["question_type"] == question_type).to_numpy()
    rnd = _as_list(rounds, "rounds")
    if rnd is not None:
        rnd = [r.isoformat() if isinstance(r, dt.date) else str(r) for r in rnd]
        valid_r = sorted(df["round"].unique().tolist())
        unknown = [r for r in rnd if r not in valid_r]
        if unknown:
            raise DataValidationError(
                f"unknown ForecastBench round(s) {unknown}; valid rounds: {', '.join(valid_r)}",
                field="rounds", value=unknown[0] if len(unknown) == 1 else unknown,
            )
        mask &= df["round"].isin(rnd).to_numpy()
    for name, bound in (("min_horizon_days", min_horizon_days), ("max_horizon_days", max_horizon_days)):
        if bound is not None and (not isinstance(bound, (int, np.integer)) or bound < 0):
            raise DataValidationError(f"{name} must be a non-negative integer, got {bound!r}", field=name, value=bound)
    if min_horizon_days is not None:
        mask &= (df["horizon_days"] >= min_horizon_days).to_numpy()
    if max_horizon_days is not None:
        mask &= (df["horizon_days"] <= max_horizon_days).to_numpy()
    if forecast_date_from is not None:
        mask &= (df["_fdate"] >= pd.Timestamp(_as_date(forecast_date_from, "forecast_date_from"))).to_numpy()
    if forecast_date_to is not None:
        mask &= (df["_fdate"] <= pd.Timestamp(_as_date(forecast_date_to, "forecast_date_to"))).to_numpy()
    if scheduled_close_to is not None:
        mask &= (df["_close"] <= pd.Timestamp(_as_date(scheduled_close_to, "scheduled_close_to"))).to_numpy()
    if require_crowd:
        mask &= df["crowd_prob_at_freeze"].notna().to_numpy()

    sel = df[mask]
    if one_per_source_question and len(sel):
        order = sel.sort_values(["source", "source_question_id", "_fdate", "_rdate", "qid"], kind="mergesort")
        keep = order.drop_duplicates(["source", "source_question_id"], keep="first").index
        sel = sel.loc[sel.index.isin(keep)]

    if sample_n is not None:
        if not isinstance(sample_n, (int, np.integer)) or isinstance(sample_n, bool) or sample_n <= 0:
            raise DataValidationError(f"sample_n must be a positive integer, got {sample_n!r}", field="sample_n", value=sample_n)
        if sample_n >= len(sel):
            if sample_n > len(sel):
                logger.warning("sample_n=%d but only %d questions pass the filters; returning all of them", sample_n, len(sel))
        else:
            keys = np.array([_seed_key(int(seed), q) for q in sel["qid"].tolist()], dtype=np.uint64)
            chosen = np.sort(np.argsort(keys, kind="stable")[:sample_n])
            sel = sel.iloc[chosen]

    return _frame_to_questions(sel)


def _clean(value: Any) -> Any:
    """None for NaN / None; the value otherwise."""
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _scheduled_close(question_type: str, market_close: Any, resolution_date: Any) -> dt.date | None:
    """The close date a forecaster may see: a market's scheduled close (UTC date of
    ``market_close_datetime``, frozen with the question set before the forecast date), a dataset
    question's resolution date (fixed by the question template). Never a market's actual resolution date."""
    if question_type == "market":
        return None if market_close is None else utc_date(market_close, field="market_close_datetime")
    return None if resolution_date is None else utc_date(resolution_date, field="resolution_date")


def _frame_to_questions(sel: pd.DataFrame) -> list[Question]:
    cols = {c: sel[c].tolist() for c in (
        "qid", "question", "background", "resolution_criteria", "market_resolution_criteria", "forecast_due_date",
        "resolution_date", "outcome", "source", "source_question_id", "question_type", "url",
        "crowd_prob_at_freeze", "round", "horizon_days", "freeze_datetime", "freeze_value_raw",
        "freeze_value_explanation", "question_set", "source_intro", "market_close_datetime",
    )}
    out: list[Question] = []
    for i in range(len(sel)):
        crit = _clean(cols["resolution_criteria"][i]) or ""
        market_crit = _clean(cols["market_resolution_criteria"][i])
        if not crit.strip() and market_crit:
            crit = market_crit
        meta = {
            "freeze_datetime": _clean(cols["freeze_datetime"][i]),
            "freeze_value_raw": _clean(cols["freeze_value_raw"][i]),
            "freeze_value_explanation": _clean(cols["freeze_value_explanation"][i]),
            "question_set": _clean(cols["question_set"][i]),
            "source_intro": _clean(cols["source_intro"][i]),
        }
        if market_crit:
            meta["market_resolution_criteria"] = market_crit
        crowd = _clean(cols["crowd_prob_at_freeze"][i])
        out.append(Question(
            id=cols["qid"][i],
            text=cols["question"][i],
            background=_clean(cols["background"][i]) or "",
            resolution_criteria=crit,
            forecast_date=cols["forecast_due_date"][i],
            scheduled_close_date=_scheduled_close(
                cols["question_type"][i], _clean(cols["market_close_datetime"][i]), cols["resolution_date"][i]),
            resolution_date=cols["resolution_date"][i],
            outcome=int(cols["outcome"][i]),
            source=cols["source"][i],
            source_question_id=cols["source_question_id"][i],
            question_type=cols["question_type"][i],
            url=_clean(cols["url"][i]),
            crowd_p_yes=None if crowd is None else float(crowd),
            round=cols["round"][i],
            horizon_days=int(cols["horizon_days"][i]),
            metadata=meta,
        ))
    return out


# ------------------------------------------------------------------------------------------------
# user question files
# ------------------------------------------------------------------------------------------------


@dataclass
class Table:
    """The rows of a user file as dicts, and where each row starts in the file.

    Attributes
    ----------
    path : Path
    header : list of str or None
        The CSV / Parquet columns; None for JSONL and JSON (each row has its own keys).
    rows : list of dict
        One dict per data row; CSV cells are text, JSON values as written.
    lines : list of int or None
        1-based line of the file where each row starts; None for Parquet and JSON rows.
    """

    path: Path
    header: list[str] | None
    rows: list[dict[str, Any]]
    lines: list[int | None]

    def where(self, row: int) -> str:
        """``data row N (line M)`` for 0-based ``row`` (``data row N`` when the format has no lines)."""
        line = self.lines[row] if 0 <= row < len(self.lines) else None
        return f"data row {row + 1}" + (f" (line {line})" if line else "")

    def value(self, row: int, column: str) -> Any:
        """The cell of 0-based ``row`` in ``column``, or None when it is missing or blank (empty text, NaN, null)."""
        v = self.rows[row].get(column)
        return None if _blank(v) else v

    def error(self, row: int | None, column: str | None, value: Any, problem: str) -> DataValidationError:
        """A :class:`DataValidationError` naming this file, the row (:meth:`where`), the column and the value."""
        with self.numbering():
            return _bad(self.path, row, column, value, problem)

    @contextlib.contextmanager
    def numbering(self) -> Iterator["Table"]:
        """Within the block, errors about this file name rows as :meth:`where` does."""
        token = _NUMBERING.set(self)
        try:
            yield self
        finally:
            _NUMBERING.reset(token)


_NUMBERING: ContextVar[Table | None] = ContextVar("_NUMBERING", default=None)


def _show(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _bad(path: Path, row: int | None, column: str | None, value: Any, problem: str) -> DataValidationError:
    table = _NUMBERING.get()
    if row is None:
        where = ""
    elif table is not None and table.path == path:
        where = table.where(row) + ", "
    else:
        where = f"row {row}, "
    col = f"column {column!r}: " if column is not None else ""
    return DataValidationError(f"{path}: {where}{col}{problem} (value {_show(value)})", field=column, row=row, value=value, source=str(path))


def _blank(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    if isinstance(value, str) and not value.strip():
        return True
    try:
        return bool(pd.isna(value)) if np.ndim(value) == 0 else False
    except (TypeError, ValueError):
        return False


def _py(value: Any) -> Any:
    """Plain Python value (numpy scalars -> Python; pandas Timestamp -> ISO string)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def _parse_date_cell(path: Path, row: int | None, column: str, value: Any) -> dt.date:
    """A date cell as a UTC calendar date (:func:`agent_schemas.dates.utc_date`)."""
    try:
        return utc_date(value, field=column)
    except ValueError:
        raise _bad(path, row, column, value, "not an ISO date (expected YYYY-MM-DD, or a date-time read in UTC)") from None


def parse_outcome(path: Path, row: int | None, value: Any) -> int:
    """Outcome cell as 1 (Yes) or 0 (No): ``1``/``0`` (also ``1.0``), ``yes``/``no``, ``true``/``false`` (any case).

    Raises
    ------
    DataValidationError
        For any other value (names the file, row, column and value).
    """
    v = value
    if isinstance(v, str):
        s = v.strip().lower()
        if s in ("true", "yes"):
            return 1
        if s in ("false", "no"):
            return 0
        try:
            v = float(s)
        except ValueError:
            raise _bad(path, row, "outcome", value, "outcome must be 0 or 1 (or yes/no, true/false)") from None
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, float, np.integer, np.floating)) and float(v) in (0.0, 1.0):
        return int(v)
    raise _bad(path, row, "outcome", value, "outcome must be 0 or 1 (or yes/no, true/false)")


def _parse_prob(path: Path, row: int, value: Any) -> float:
    try:
        p = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        raise _bad(path, row, "crowd_p_yes", value, "crowd_p_yes is not a number") from None
    if not math.isfinite(p) or p < 0.0 or p > 1.0:
        raise _bad(path, row, "crowd_p_yes", value, "crowd_p_yes must be a probability in [0, 1]")
    return p


#: CSV cells up to this many characters are read (Python's csv module stops at 131,072 by default).
CSV_CELL_LIMIT = 2**31 - 1


def id_text(value: Any) -> str:
    """A question id as text: ids are compared as strings everywhere. ``"007"`` stays ``"007"``; an id
    that a JSON or Parquet file stores as the number ``7`` or ``7.0`` becomes ``"7"``."""
    value = _py(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def read_table(path: str | Path) -> Table:
    """Read a user file (``.csv``, ``.jsonl``, ``.json`` list of objects, ``.parquet``) as a :class:`Table`.

    UTF-8 with or without a byte-order mark; CSV cells are text of any length (up to
    :data:`CSV_CELL_LIMIT`). Rows are not validated here beyond their shape.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    DataValidationError
        Naming the file and the line for a malformed row (invalid JSON, a row with more cells than the
        header, a NUL byte), a file that is not UTF-8, or an unsupported extension.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"file not found: {path}")
    try:
        return _read_table(path)
    except UnicodeDecodeError as exc:
        raise DataValidationError(f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
                                  "save it as UTF-8", source=str(path)) from None


def _bad_line(path: Path, row: int, line: int, value: Any, problem: str) -> DataValidationError:
    """A malformed row found while reading (before the :class:`Table` exists to number it)."""
    return DataValidationError(f"{path}: data row {row + 1} (line {line}): {problem} (value {_show(value)})",
                               row=row, value=value, source=str(path))


def _read_table(path: Path) -> Table:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        old_limit = csv.field_size_limit()
        csv.field_size_limit(CSV_CELL_LIMIT)
        try:
            with path.open(newline="", encoding="utf-8-sig") as fh:
                reader = csv.DictReader(fh)
                try:
                    header = [h.strip() for h in (reader.fieldnames or [])]
                    rows, lines = [], []
                    for rec in reader:
                        # line_num is the record's last line; a quoted cell may span several
                        line = reader.line_num - sum(v.count("\n") for v in rec.values() if isinstance(v, str))
                        if None in rec:
                            raise _bad_line(path, len(rows), line, rec[None], f"more cells than the {len(header)} header columns")
                        rows.append({k.strip(): v for k, v in rec.items()})
                        lines.append(line)
                except csv.Error as exc:
                    raise _bad(path, None, None, None, f"line {reader.line_num + 1} is not a valid CSV row ({exc})") from None
            return Table(path, header, rows, lines)
        finally:
            csv.field_size_limit(old_limit)
    if suffix == ".jsonl":
        rows, lines = [], []
        with path.open(encoding="utf-8-sig") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise _bad_line(path, len(rows), number, line.strip(), f"invalid JSON ({exc.msg})") from None
                if not isinstance(rec, dict):
                    raise _bad_line(path, len(rows), number, rec, "each JSONL line must be a JSON object")
                rows.append(rec)
                lines.append(number)
        return Table(path, None, rows, lines)
    if suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8-sig"))
        except json.JSONDecodeError as exc:
            raise DataValidationError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})", source=str(path)) from None
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise _bad(path, None, None, type(data).__name__, "a JSON file must hold a list of objects, one per row")
        return Table(path, None, data, [None] * len(data))
    if suffix in (".parquet", ".pq"):
        df = pd.read_parquet(path)
        header = [str(c) for c in df.columns]
        data = {c: df[c].tolist() for c in df.columns}
        rows = [{str(c): _py(data[c][i]) for c in df.columns} for i in range(len(df))]
        return Table(path, header, rows, [None] * len(rows))
    raise DataValidationError(
        f"{path}: unsupported file type {suffix!r}; use .csv, .jsonl or .parquet",
        field="path", value=str(path), source=str(path),
    )


def load_questions_file(path: str | Path) -> QuestionList:
    """Load user questions from a CSV, JSONL or Parquet file (columns in the module docstring).

    Parameters
    ----------
    path : str or Path
        The file; its extension picks the format.

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
        Naming the file, the row (``data row N (line M)``; ``.row`` is the 0-based data row), the column
        and the value, for: a missing required column or value, a bad date, an outcome other than 0/1
        (``yes``/``no``/``true``/``false`` are read as 1/0), ``crowd_p_yes`` outside [0, 1], an unknown
        ``question_type``, a resolution date before the forecast date, a duplicate id, a ``question`` or
        ``resolution_criteria`` longer than :data:`MAX_FIELD_CHARS`, a malformed line, a file that is
        not UTF-8, an unsupported extension, or a file with no rows.
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"question file not found: {p}")
    if p.suffix.lower() not in (".csv", ".jsonl", ".parquet", ".pq"):
        raise DataValidationError(
            f"{p}: unsupported question file type {p.suffix.lower()!r}; use .csv, .jsonl or .parquet "
            "(ForecastBench question-set JSON: load_forecastbench_json)", field="path", value=str(p), source=str(p))
    table = read_table(p)
    with table.numbering():
        return _questions_from_table(table)


def _questions_from_table(table: Table) -> QuestionList:
    p, header, rows = table.path, table.header, table.rows
    if header is not None:
        for col in REQUIRED_COLUMNS:
            if col not in header:
                raise _bad(p, None, col, None, f"missing required column {col!r}; columns present: {header}")
    if not rows:
        raise DataValidationError(f"{p}: the file has no question rows", source=str(p))

    known = set(REQUIRED_COLUMNS) | set(OPTIONAL_COLUMNS)
    seen: dict[str, int] = {}
    out: list[Question] = []
    for i, rec in enumerate(rows):
        for col in REQUIRED_COLUMNS:
            if col not in rec:
                raise _bad(p, i, col, None, f"missing required column {col!r}")
            if _blank(rec[col]):
                raise _bad(p, i, col, rec[col], f"required value {col!r} is empty")
        qid = id_text(rec["id"])
        if qid in seen:
            raise _bad(p, i, "id", qid, f"duplicate id (first used in {table.where(seen[qid])})")
        seen[qid] = i
        text = str(rec["question"]).strip()
        for col, limit in MAX_FIELD_CHARS.items():
            v = "" if _blank(rec.get(col)) else str(rec[col]).strip()
            if len(v) > limit:
                raise _bad(p, i, col, v, f"{col} has {len(v):,} characters; at most {limit:,} are accepted (it is shown "
                                         "verbatim in every prompt)")
        fdate = _parse_date_cell(p, i, "forecast_date", rec["forecast_date"])
        rdate = None if _blank(rec.get("resolution_date")) else _parse_date_cell(p, i, "resolution_date", rec["resolution_date"])
        close = None if _blank(rec.get("close_date")) else _parse_date_cell(p, i, "close_date", rec["close_date"])
        if rdate is not None and rdate < fdate:
            raise _bad(p, i, "resolution_date", rec["resolution_date"], f"resolution_date is before forecast_date {fdate}")
        outcome = None if _blank(rec.get("outcome")) else parse_outcome(p, i, rec["outcome"])
        crowd = None if _blank(rec.get("crowd_p_yes")) else _parse_prob(p, i, rec["crowd_p_yes"])
        qtype = "other"
        if not _blank(rec.get("question_type")):
            qtype = str(rec["question_type"]).strip().lower()
            if qtype not in ("market", "dataset", "other"):
                raise _bad(p, i, "question_type", rec["question_type"], "question_type must be 'market', 'dataset' or 'other'")

        def text_or(col: str, default: str | None) -> str | None:
            v = rec.get(col)
            return default if _blank(v) else str(_py(v)).strip()

        meta = {k: _py(v) for k, v in rec.items() if k not in known and not _blank(v)}
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
            round=text_or("round", None),
            horizon_days=None if rdate is None else (rdate - fdate).days,
            metadata=meta,
        ))
    return QuestionList(out, origin=str(p))


# ------------------------------------------------------------------------------------------------
# ForecastBench question-set / resolution-set JSON
# ------------------------------------------------------------------------------------------------


def _read_json(path: Path, kind: str, list_key: str) -> dict[str, Any]:
    if not path.is_file():
        raise FileNotFoundError(f"ForecastBench {kind} file not found: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise DataValidationError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})", source=str(path)) from None
    if not isinstance(data, dict) or not isinstance(data.get(list_key), list):
        raise _bad(path, None, list_key, type(data).__name__, f"a ForecastBench {kind} needs a top-level {list_key!r} list")
    return data


def _na(value: Any) -> bool:
    return _blank(value) or (isinstance(value, str) and value.strip() == "N/A")


def _fill(template: str, forecast_date: dt.date, resolution_date: dt.date | None) -> str:
    text = template.replace("{forecast_due_date}", forecast_date.isoformat())
    if resolution_date is not None:
        text = text.replace("{resolution_date}", resolution_date.isoformat())
    return text


def load_forecastbench_json(
    question_set_path: str | Path,
    resolution_set_path: str | Path | None = None,
    *,
    include_unresolved: bool = False,
) -> QuestionList:
    """Load a ForecastBench question set, optionally with its resolution set.

    Question ids follow the bundled data: ``fb|<forecast_due_date>|<source>|<id>|<resolution_date>``
    (``fb|<due>|<source>|<id>`` for a market without a resolution date), so results can be joined with
    :func:`superforecaster_medians` and the bundled table.

    Parameters
    ----------
    question_set_path : str or Path
        ``<date>-llm.json`` / ``<date>-human.json`` from ``datasets/question_sets``.
    resolution_set_path : str or Path, optional
        ``<date>_resolution_set.json`` from ``datasets/resolution_sets``. Without it every question is
        returned unresolved: one per entry of ``resolution_dates`` for dataset questions, one with no
        resolution date for market questions.
    include_unresolved : bool, default False
        With a resolution set: also return rows whose ``resolved`` is false, with ``outcome=None``.

    Returns
    -------
    QuestionList
        Binary questions; ``crowd_p_yes`` is the freeze value of market questions when it lies in
        [0, 1] (dataset freeze values are series values, kept in ``metadata["freeze_value_raw"]``).
        ``skipped`` counts: ``combo`` (combination questions), ``not_in_question_set``, ``unresolved``,
        ``nonbinary`` (resolved to a value other than 0/1), ``resolved_on_or_before_due`` and
        ``duplicate``.

    Raises
    ------
    FileNotFoundError
        If a file does not exist.
    DataValidationError
        Naming the file, the entry (0-based index in ``questions`` / ``resolutions``), the field and the
        value: invalid JSON, a missing list, a missing ``id``/``source``/``question``, a bad date, or
        resolution and question sets with different ``forecast_due_date``.
    """
    qpath = Path(question_set_path)
    qdata = _read_json(qpath, "question set", "questions")
    if _na(qdata.get("forecast_due_date")):
        raise _bad(qpath, None, "forecast_due_date", qdata.get("forecast_due_date"), "missing forecast_due_date")
    fdate = _parse_date_cell(qpath, None, "forecast_due_date", qdata["forecast_due_date"])
    round_label = fdate.isoformat()
    qset_name = qdata.get("question_set") or qpath.name
    skipped: dict[str, int] = {}

    def skip(reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1

    by_key: dict[tuple[str, str], dict[str, Any]] = {}
    order: list[tuple[str, str]] = []
    for i, q in enumerate(qdata["questions"]):
        if not isinstance(q, dict):
            raise _bad(qpath, i, None, q, "each question must be a JSON object")
        qid = q.get("id")
        if isinstance(qid, list) or isinstance(q.get("combination_of"), list):
            skip("combo")
            continue
        for col in ("id", "source", "question"):
            if _na(q.get(col)):
                raise _bad(qpath, i, col, q.get(col), f"missing {col!r}")
        rdates: list[dt.date] = []
        if isinstance(q.get("resolution_dates"), list):
            rdates = [_parse_date_cell(qpath, i, "resolution_dates", d) for d in q["resolution_dates"]]
        entry = dict(q)
        entry["_row"] = i
        entry["_rdates"] = rdates
        key = (str(q["source"]), str(qid))
        by_key[key] = entry
        order.append(key)

    def build(entry: dict[str, Any], rdate: dt.date | None, outcome: int | None, extra: dict[str, Any]) -> Question:
        source = str(entry["source"])
        qtype = "market" if source in MARKET_SOURCES else "dataset" if source in DATASET_SOURCES else "other"
        crowd = None
        raw = entry.get("freeze_datetime_value")
        if qtype == "market" and not _na(raw):
            try:
                v = float(raw)
                crowd = v if 0.0 <= v <= 1.0 else None
            except (TypeError, ValueError):
                crowd = None
        crit = "" if _na(entry.get("resolution_criteria")) else str(entry["resolution_criteria"])
        market_crit = None if _na(entry.get("market_info_resolution_criteria")) else str(entry["market_info_resolution_criteria"])
        if not crit.strip() and market_crit:
            crit = market_crit
        meta: dict[str, Any] = {
            "freeze_datetime": None if _na(entry.get("freeze_datetime")) else entry["freeze_datetime"],
            "freeze_value_raw": None if _na(raw) else str(raw),
            "freeze_value_explanation": None if _na(entry.get("freeze_datetime_value_explanation")) else entry["freeze_datetime_value_explanation"],
            "question_set": qset_name,
            "source_intro": None if _na(entry.get("source_intro")) else entry["source_intro"],
        }
        for k in ("market_info_open_datetime", "market_info_close_datetime"):
            if not _na(entry.get(k)):
                meta[k] = entry[k]
        if market_crit:
            meta["market_resolution_criteria"] = market_crit
        meta.update(extra)
        sqid = str(entry["id"])
        qid = f"fb|{round_label}|{source}|{sqid}" + (f"|{rdate.isoformat()}" if rdate is not None else "")
        close = entry.get("market_info_close_datetime")
        return Question(
            id=qid,
            text=_fill(str(entry["question"]), fdate, rdate),
            background="" if _na(entry.get("background")) else str(entry["background"]),
            resolution_criteria=crit,
            forecast_date=fdate,
            scheduled_close_date=_scheduled_close(qtype, None if _na(close) else close, rdate),
            resolution_date=rdate,
            outcome=outcome,
            source=source,
            source_question_id=sqid,
            question_type=qtype,
            url=None if _na(entry.get("url")) else str(entry["url"]),
            crowd_p_yes=crowd,
            round=round_label,
            horizon_days=None if rdate is None else (rdate - fdate).days,
            metadata=meta,
        )

    out: list[Question] = []
    seen: set[str] = set()

    def add(q: Question) -> None:
        if q.id in seen:
            skip("duplicate")
            return
        seen.add(q.id)
        out.append(q)

    if resolution_set_path is None:
        for key in order:
            entry = by_key[key]
            dates = entry["_rdates"] or [None]
            for rdate in dates:
                if rdate is not None and rdate <= fdate:
                    skip("resolved_on_or_before_due")
                    continue
                add(build(entry, rdate, None, {}))
        origin = str(qpath)
    else:
        rpath = Path(resolution_set_path)
        rdata = _read_json(rpath, "resolution set", "resolutions")
        if not _na(rdata.get("forecast_due_date")):
            rdue = _parse_date_cell(rpath, None, "forecast_due_date", rdata["forecast_due_date"])
            if rdue != fdate:
                raise _bad(rpath, None, "forecast_due_date", rdata["forecast_due_date"],
                           f"resolution set is for a different round than question set {qpath} ({fdate})")
        for j, r in enumerate(rdata["resolutions"]):
            if not isinstance(r, dict):
                raise _bad(rpath, j, None, r, "each resolution must be a JSON object")
            if isinstance(r.get("id"), list):
                skip("combo")
                continue
            for col in ("id", "source", "resolution_date"):
                if _na(r.get(col)):
                    raise _bad(rpath, j, col, r.get(col), f"missing {col!r}")
            entry = by_key.get((str(r["source"]), str(r["id"])))
            if entry is None:
                skip("not_in_question_set")
                continue
            rdate = _parse_date_cell(rpath, j, "resolution_date", r["resolution_date"])
            if rdate <= fdate:
                skip("resolved_on_or_before_due")
                continue
            resolved = r.get("resolved") is True
            outcome: int | None = None
            if resolved:
                try:
                    val = float(r.get("resolved_to"))
                except (TypeError, ValueError):
                    val = float("nan")
                if val not in (0.0, 1.0):
                    skip("nonbinary")
                    continue
                outcome = int(val)
            elif not include_unresolved:
                skip("unresolved")
                continue
            extra = {} if _na(r.get("resolved_to")) or resolved else {"resolved_to_latest": r.get("resolved_to")}
            add(build(entry, rdate, outcome, extra))
        origin = f"{qpath} + {rpath}"

    if skipped:
        logger.info("%s: loaded %d questions; skipped %s", origin, len(out), skipped)
    return QuestionList(out, skipped=skipped, origin=origin)
