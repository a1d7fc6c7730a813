"""The bundled numeric and multiple-choice questions: real, resolved, derived from the bundled ForecastBench table.

Built by ``benchmarks/protocol/derived_questions.py`` (its docstring says how; ``DATA_CARD_KINDS.md`` in
``agent_tools/data/forecastbench/`` the columns, counts and caveats; CC BY-SA 4.0, (c) Forecasting Research
Institute). Each kind has a questions file and an outcomes file, read by :mod:`agent_tools.datasets`; the
loaders here join them into :class:`agent_schemas.Question` records of the kind (the harness's record: outcome
included; agents see :meth:`~agent_schemas.Question.visible`, which never carries it).

* :func:`load_numeric_questions` -- 15,603 items: "what will the latest value of <series> be as of <a later
  freeze date>?", asked on an earlier round's due date (760 series of FRED, yfinance, DBnomics, Wikipedia, ACLED).
* :func:`load_multiple_choice_questions` -- 25 groups of sibling Polymarket markets of one event (73 markets)
  in which exactly one resolved Yes; the crowd forecast is the members' prices at freeze, renormalised.
* :func:`numeric_outcomes`, :func:`choice_outcomes` -- the outcomes by question id (for scorers).
* :func:`sibling_groups` -- the same groups as binary siblings (members' ids, raw prices, which one won), for
  the coherence study (:mod:`agent_schemas.kinds.multiple_choice.coherence`).

Field mapping (both kinds): ``qid`` -> ``id``; ``question`` -> ``text``; ``forecast_date``; ``source``;
``url``; ``background``; ``resolution_criteria``; ``round``. Numeric: the range columns -> ``spec``
(:class:`~agent_schemas.kinds.NumericSpec`); ``target_date`` -> ``scheduled_close_date`` and
``resolution_date``; ``horizon_days``; ``source_question_id`` (the series: the clustering key); ``metadata``
holds ``freeze_datetime``, ``freeze_value_raw`` and ``freeze_value_explanation`` (the series' value at the
forecast round's freeze, shown to forecasters), ``target_round`` and ``n_observed_rounds``. Multiple choice:
``options`` -> ``spec`` (:class:`~agent_schemas.kinds.ChoiceSpec`); ``crowd_forecast``; ``template`` ->
``source_question_id`` (one event across rounds: the clustering key); ``market_close_datetime`` ->
``scheduled_close_date``; ``metadata`` holds ``member_qids``, ``member_questions``, ``member_prices`` and
``freeze_datetime``.
"""

from __future__ import annotations

import datetime as dt
import functools
import inspect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from agent_schemas import DataValidationError, Question
from agent_schemas.kinds import ChoiceSpec, NumericSpec
from agent_tools.datasets import load_forecastbench_kind_table
from benchmarks.questions.base import scheduled_close
from benchmarks.questions.bundled import filter_values, sampling_key, load_forecastbench

__all__ = [
    "BUNDLED_LOADERS", "SiblingGroup", "load_bundled", "choice_outcomes", "load_multiple_choice_questions", "load_numeric_questions", "numeric_outcomes",
    "sibling_groups",
]


@functools.lru_cache(maxsize=4)
def _table(kind: str, part: str) -> pd.DataFrame:
    return load_forecastbench_kind_table(kind, part)


def numeric_outcomes() -> dict[str, float]:
    """The outcome of every bundled numeric question: ``qid -> value`` (in the series' unit)."""
    o = _table("numeric", "outcomes")
    return dict(zip(o["qid"].tolist(), o["outcome"].astype(float).tolist()))


def choice_outcomes() -> dict[str, int]:
    """The outcome of every bundled multiple-choice question: ``qid -> index of the option that happened``."""
    o = _table("multiple_choice", "outcomes")
    return dict(zip(o["qid"].tolist(), o["outcome"].astype(int).tolist()))


def _filtered(df: pd.DataFrame, *, sources: Any, rounds: Any, sample_n: int | None, seed: int,
              min_horizon_days: int | None = None, max_horizon_days: int | None = None) -> pd.DataFrame:
    mask = np.ones(len(df), dtype=bool)
    for name, values, column in (("sources", sources, "source"), ("rounds", rounds, "round")):
        wanted = filter_values(values, name)
        if wanted is None:
            continue
        wanted = [v.isoformat() if isinstance(v, dt.date) else str(v) for v in wanted]
        valid = sorted(df[column].unique().tolist())
        unknown = [v for v in wanted if v not in valid]
        if unknown:
            raise DataValidationError(f"unknown {column}(s) {unknown}; valid: {', '.join(valid)}", field=name, value=unknown[0])
        mask &= df[column].isin(wanted).to_numpy()
    for name, bound in (("min_horizon_days", min_horizon_days), ("max_horizon_days", max_horizon_days)):
        if bound is not None and (isinstance(bound, bool) or not isinstance(bound, (int, np.integer)) or bound < 0):
            raise DataValidationError(f"{name} must be a non-negative integer, got {bound!r}", field=name, value=bound)
    if min_horizon_days is not None:
        mask &= (df["horizon_days"] >= min_horizon_days).to_numpy()
    if max_horizon_days is not None:
        mask &= (df["horizon_days"] <= max_horizon_days).to_numpy()
    sel = df[mask]
    if sample_n is not None:
        if isinstance(sample_n, bool) or not isinstance(sample_n, (int, np.integer)) or sample_n <= 0:
            raise DataValidationError(f"sample_n must be a positive integer, got {sample_n!r}", field="sample_n", value=sample_n)
        if sample_n < len(sel):
            keys = np.array([sampling_key(int(seed), q) for q in sel["qid"].tolist()], dtype=np.uint64)
            sel = sel.iloc[np.sort(np.argsort(keys, kind="stable")[:sample_n])]
    return sel


def load_numeric_questions(*, sources: str | Sequence[str] | None = None, rounds: str | Sequence[str] | None = None,
                           min_horizon_days: int | None = None, max_horizon_days: int | None = None,
                           sample_n: int | None = None, seed: int = 0, with_outcomes: bool = True) -> list[Question]:
    """Load the bundled numeric questions (module docstring).

    Parameters
    ----------
    sources : str or sequence of str, optional
        Keep these ForecastBench sources (``acled``, ``dbnomics``, ``fred``, ``wikipedia``, ``yfinance``).
    rounds : str or sequence of str, optional
        Keep questions asked in these rounds (the forecast round's due date, ``"2025-10-26"``).
    min_horizon_days, max_horizon_days : int, optional
        Bounds on days from the forecast date to the target date (inclusive).
    sample_n : int, optional
        A seeded sample of this many, chosen as :func:`benchmarks.questions.load_forecastbench` chooses
        (``blake2b(f"{seed}|{qid}")``, independent of row order).
    seed : int
        Sampling seed.
    with_outcomes : bool, default True
        Attach each question's outcome (read from the outcomes file). False never reads that file.

    Returns
    -------
    list of Question
        Of the numeric kind, in the file's order (source, series, forecast round, target round).

    Raises
    ------
    DataValidationError
        For an unknown source or round (listing the valid ones), a negative horizon bound or a non-positive
        ``sample_n``.
    """
    sel = _filtered(_table("numeric", "questions"), sources=sources, rounds=rounds, sample_n=sample_n, seed=seed,
                    min_horizon_days=min_horizon_days, max_horizon_days=max_horizon_days)
    outcomes = numeric_outcomes() if with_outcomes else {}
    out = []
    for r in sel.to_dict("records"):
        spec = NumericSpec(lower=float(r["lower"]), upper=float(r["upper"]), open_lower=bool(r["open_lower"]),
                           open_upper=bool(r["open_upper"]), unit=str(r["unit"] or ""), log_scale=bool(r["log_scale"]))
        target = dt.date.fromisoformat(r["target_date"])
        out.append(Question(
            id=r["qid"], text=r["question"], background=r["background"] or "", resolution_criteria=r["resolution_criteria"],
            forecast_date=r["forecast_date"], scheduled_close_date=target, source=r["source"], question_type="dataset",
            url=r["url"] or None, spec=spec,
            resolution_date=target if with_outcomes else None,
            outcome=outcomes.get(r["qid"]) if with_outcomes else None,
            source_question_id=r["source_question_id"], round=r["round"],
            horizon_days=int(r["horizon_days"]) if with_outcomes else None,
            metadata={"freeze_datetime": f"{r['freeze_date']}T00:00:00+00:00", "freeze_value_raw": r["freeze_value_raw"],
                      "freeze_value_explanation": r["freeze_value_explanation"], "target_round": r["target_round"],
                      "n_observed_rounds": int(r["n_observed_rounds"])},
        ))
    return out


def load_multiple_choice_questions(*, rounds: str | Sequence[str] | None = None, sample_n: int | None = None,
                                   seed: int = 0, with_outcomes: bool = True) -> list[Question]:
    """Load the bundled multiple-choice questions: groups of sibling markets of one event (module docstring).

    Parameters
    ----------
    rounds : str or sequence of str, optional
        Keep questions of these rounds.
    sample_n, seed
        A seeded sample, as :func:`load_numeric_questions`.
    with_outcomes : bool, default True
        Attach each question's outcome (the index of the option whose market resolved Yes) and resolution date.

    Returns
    -------
    list of Question
        Of the multiple-choice kind, ``crowd_forecast`` the members' prices at freeze renormalised to sum 1
        (None where a price is missing).

    Raises
    ------
    DataValidationError
        For an unknown round or a non-positive ``sample_n``.
    """
    sel = _filtered(_table("multiple_choice", "questions"), sources=None, rounds=rounds, sample_n=sample_n, seed=seed)
    outcomes = _table("multiple_choice", "outcomes").set_index("qid") if with_outcomes else None
    out = []
    for r in sel.to_dict("records"):
        crowd = r["crowd_forecast"]
        crowd = None if crowd is None else [float(x) for x in crowd]
        if crowd is not None:  # renormalised when built; the float sum is exact to ~1e-16
            total = math.fsum(crowd)
            crowd = [x / total for x in crowd]
        o = outcomes.loc[r["qid"]] if outcomes is not None else None
        out.append(Question(
            id=r["qid"], text=r["question"], background=r["background"] or "", resolution_criteria=r["resolution_criteria"],
            forecast_date=r["forecast_date"],
            scheduled_close_date=scheduled_close("market", r["market_close_datetime"], None),
            source=r["source"], question_type="market", url=r["url"] or None,
            spec=ChoiceSpec(options=tuple(r["options"])), crowd_forecast=crowd,
            outcome=None if o is None else int(o["outcome"]),
            resolution_date=None if o is None else o["resolution_date"],
            source_question_id=r["template"], round=r["round"],
            horizon_days=None if o is None else (dt.date.fromisoformat(o["resolution_date"]) - dt.date.fromisoformat(r["forecast_date"])).days,
            metadata={"member_qids": list(r["member_qids"]), "member_questions": list(r["member_questions"]),
                      "member_prices": None if r["member_prices"] is None else [float(x) for x in r["member_prices"]],
                      "freeze_datetime": r["freeze_datetime"]},
        ))
    return out


@dataclass(frozen=True)
class SiblingGroup:
    """A group of binary sibling markets of one event in which exactly one resolved Yes.

    Attributes
    ----------
    qid : str
        The multiple-choice question the group forms.
    member_qids : tuple of str
        The bundled binary questions (``fb_questions.parquet`` ids), in option order.
    options : tuple of str
        What each member names (a team, a candidate).
    prices : tuple of float or None
        Each member's market probability at freeze, in [0, 1], as quoted (not renormalised; their sum minus 1
        is the group's incoherence); None where a price is missing.
    winner : int
        Index of the member that resolved Yes.
    """

    qid: str
    member_qids: tuple[str, ...]
    options: tuple[str, ...]
    prices: tuple[float, ...] | None
    winner: int


def sibling_groups() -> list[SiblingGroup]:
    """Every bundled sibling group (the multiple-choice questions read as groups of binary markets)."""
    q = _table("multiple_choice", "questions")
    o = _table("multiple_choice", "outcomes").set_index("qid")
    return [SiblingGroup(qid=r["qid"], member_qids=tuple(r["member_qids"]), options=tuple(r["options"]),
                         prices=None if r["member_prices"] is None else tuple(float(x) for x in r["member_prices"]),
                         winner=int(o.loc[r["qid"], "outcome"]))
            for r in q.to_dict("records")]


#: The loader of the bundled questions of each kind (filters differ by kind: see each loader).
BUNDLED_LOADERS = {"binary": load_forecastbench, "multiple_choice": load_multiple_choice_questions,
                   "numeric": load_numeric_questions}


def load_bundled(kind: str, **filters: Any) -> list[Question]:
    """The bundled questions of ``kind`` (``binary``, ``multiple_choice`` or ``numeric``), with that kind's
    loader's filters (:data:`BUNDLED_LOADERS`).

    Raises
    ------
    DataValidationError
        For a kind without bundled questions (listing those with), or a filter that loader does not take.
    """
    loader = BUNDLED_LOADERS.get(kind)
    if loader is None:
        raise DataValidationError(f"no bundled questions of kind {kind!r}; bundled kinds: {', '.join(BUNDLED_LOADERS)}",
                                  field="kind", value=kind)
    accepted = set(inspect.signature(loader).parameters)
    unknown = sorted(set(filters) - accepted)
    if unknown:
        raise DataValidationError(f"bundled {kind} questions take no filter {', '.join(unknown)}; they take "
                                  f"{', '.join(sorted(accepted))}", field="filters", value=unknown[0])
    return loader(**filters)
