"""The bundled ForecastBench subset: the question table (read once per process), the superforecaster
panel, and :func:`load_forecastbench` with filters and a seeded sample.

The files are read by :mod:`agent_tools.datasets` (their one reader): ``fb_questions.parquet`` (18,021
resolved binary items, 23 rounds) and ``fb_human_forecasts.parquet`` (the 2024-07-21 superforecaster
panel); see ``agent_tools/data/forecastbench/DATA_CARD.md`` (CC BY-SA 4.0, (c) Forecasting Research
Institute).

Field mapping of the bundled data
---------------------------------
``qid`` -> ``id``; ``question`` -> ``text``; ``background``; ``resolution_criteria`` (falls back to
``market_resolution_criteria`` when empty); ``forecast_due_date`` -> ``forecast_date`` (the information
cutoff); ``resolution_date``; ``outcome``; ``source``; ``source_question_id``; ``question_type``; ``url``;
``crowd_prob_at_freeze`` -> ``crowd_p_yes``; ``round``; ``horizon_days``. ``metadata`` holds
``freeze_datetime``, ``freeze_value_raw``, ``freeze_value_explanation``, ``question_set``, ``source_intro``
and, when present, ``market_resolution_criteria``.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import logging
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from agent_schemas import DataValidationError, Question
from agent_schemas.dates import utc_date
from agent_tools.datasets import load_forecastbench_human_forecasts, load_forecastbench_questions
from benchmarks.questions.base import scheduled_close

logger = logging.getLogger(__name__)

__all__ = ["forecastbench_frame", "forecastbench_table", "load_forecastbench", "superforecaster_counts", "superforecaster_medians"]

_SUPER_MEDIAN = "human_superforecaster_median"
#: Parsed date columns :func:`forecastbench_table` adds to the file's columns (datetime64, midnight UTC).
PARSED_DATE_COLUMNS = ("forecast_due_ts", "resolution_ts", "scheduled_close_ts")


@functools.lru_cache(maxsize=1)
def forecastbench_table() -> pd.DataFrame:
    """The bundled question table, read once per process and shared: do not modify it.

    Returns
    -------
    pandas.DataFrame of shape (18021, 27)
        The file's columns (``DATA_CARD.md``; dates are ISO strings) plus :data:`PARSED_DATE_COLUMNS`:
        ``forecast_due_ts`` and ``resolution_ts`` (the two dates parsed) and ``scheduled_close_ts`` (a
        market's ``market_close_datetime`` as a UTC date, a dataset question's resolution date).
        :func:`forecastbench_frame` gives a copy without them.
    """
    df = load_forecastbench_questions()
    df["forecast_due_ts"] = pd.to_datetime(df["forecast_due_date"], format="%Y-%m-%d")
    df["resolution_ts"] = pd.to_datetime(df["resolution_date"], format="%Y-%m-%d")
    market_close = pd.to_datetime(df["market_close_datetime"], utc=True).dt.tz_convert(None).dt.normalize()
    df["scheduled_close_ts"] = market_close.where(df["question_type"] == "market", df["resolution_ts"])
    return df


@functools.lru_cache(maxsize=1)
def _superforecaster_median_rows() -> pd.DataFrame:
    h = load_forecastbench_human_forecasts()
    return h[h["forecaster_type"] == _SUPER_MEDIAN]


def forecastbench_frame() -> pd.DataFrame:
    """Return a copy of the bundled ForecastBench question table (columns in its ``DATA_CARD.md``).

    Returns
    -------
    pandas.DataFrame of shape (18021, 24)
        One row per resolved binary item; dates are ISO strings.
    """
    return forecastbench_table().drop(columns=list(PARSED_DATE_COLUMNS)).copy()


def superforecaster_medians() -> dict[str, float]:
    """Median superforecaster probability per question of the 2024-07-21 round.

    Returns
    -------
    dict[str, float]
        ``qid -> p_yes`` in [0, 1] for the 578 resolved items (521 dataset, 57 market) that the panel
        forecast (``forecaster_type == "human_superforecaster_median"`` in ``fb_human_forecasts.parquet``).
    """
    med = _superforecaster_median_rows()
    return dict(zip(med["qid"].tolist(), med["p_yes"].astype(float).tolist()))


def superforecaster_counts() -> dict[str, int]:
    """Panel size behind each :func:`superforecaster_medians` value: ``qid -> n_forecasters`` (count)."""
    med = _superforecaster_median_rows()
    return dict(zip(med["qid"].tolist(), med["n_forecasters"].astype(int).tolist()))


def _as_date(value: Any, field: str) -> dt.date:
    try:
        return utc_date(value, field=field)
    except ValueError as exc:
        raise DataValidationError(str(exc), field=field, value=value) from None


def filter_values(value: Any, field: str) -> list[Any] | None:
    """A filter argument as a list: None stays None (no filter), a string is one value; raises DataValidationError otherwise."""
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, Iterable):
        return list(value)
    raise DataValidationError(f"{field} must be a string or a list, got {value!r}", field=field, value=value)


def sampling_key(seed: int, qid: str) -> int:
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
        :data:`benchmarks.questions.DATA_SNAPSHOT_DATE` it removes the survivorship bias of the bundled data (see
        :data:`benchmarks.questions.DATA_SNAPSHOT_DATE`).
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
    df = forecastbench_table()
    mask = np.ones(len(df), dtype=bool)

    src = filter_values(sources, "sources")
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
    rnd = filter_values(rounds, "rounds")
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
        mask &= (df["forecast_due_ts"] >= pd.Timestamp(_as_date(forecast_date_from, "forecast_date_from"))).to_numpy()
    if forecast_date_to is not None:
        mask &= (df["forecast_due_ts"] <= pd.Timestamp(_as_date(forecast_date_to, "forecast_date_to"))).to_numpy()
    if scheduled_close_to is not None:
        mask &= (df["scheduled_close_ts"] <= pd.Timestamp(_as_date(scheduled_close_to, "scheduled_close_to"))).to_numpy()
    if require_crowd:
        mask &= df["crowd_prob_at_freeze"].notna().to_numpy()

    sel = df[mask]
    if one_per_source_question and len(sel):
        order = sel.sort_values(["source", "source_question_id", "forecast_due_ts", "resolution_ts", "qid"], kind="mergesort")
        keep = order.drop_duplicates(["source", "source_question_id"], keep="first").index
        sel = sel.loc[sel.index.isin(keep)]

    if sample_n is not None:
        if not isinstance(sample_n, (int, np.integer)) or isinstance(sample_n, bool) or sample_n <= 0:
            raise DataValidationError(f"sample_n must be a positive integer, got {sample_n!r}", field="sample_n", value=sample_n)
        if sample_n >= len(sel):
            if sample_n > len(sel):
                logger.warning("sample_n=%d but only %d questions pass the filters; returning all of them", sample_n, len(sel))
        else:
            keys = np.array([sampling_key(int(seed), q) for q in sel["qid"].tolist()], dtype=np.uint64)
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
            scheduled_close_date=scheduled_close(
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
