"""Reference forecasts every method is compared against: crowd, superforecasters, base rate, 0.5.

============================  =====================================================================
method                        p_yes for a question
============================  =====================================================================
``crowd``                     ``Question.crowd_p_yes`` (ForecastBench ``crowd_prob_at_freeze``: the
                              Metaculus community prediction, Manifold value, Polymarket price or
                              INFER crowd forecast at freeze, about 10 days before the forecast
                              date). NaN where absent (all dataset questions).
``superforecaster_median``    Median of the ForecastBench superforecaster panel (round 2024-07-21
                              only, 578 items), matched by question id. NaN elsewhere.
``base_rate``                 Yes-rate of *earlier-resolved* questions, fitted without look-ahead
                              (below).
``always_0.5``                0.5 for every question (Brier score 0.25 whatever the outcome).
============================  =====================================================================

Base rate without look-ahead
----------------------------
For a question with source ``S`` and forecast (cutoff) date ``F``, the base rate is the fraction of Yes
among reference questions of source ``S`` whose ``resolution_date < F``: only outcomes already known
on the forecast date are used, so no outcome resolving on or after ``F`` (including the question's own)
can leak in. Each resolved event ``(source, source_question_id, resolution_date)`` counts once, however
many rounds repeat it. With fewer than ``min_reference`` (default 10) such same-source outcomes, the rate pools all
sources (same date rule); with fewer than ``min_reference`` pooled outcomes the base rate is NaN and
``detail`` says why. The default reference history is the whole bundled ForecastBench table (outcomes as
of 2026-08-20). Caveat: for markets, ForecastBench's ``resolution_date`` is often the scheduled close
date; a market resolved earlier is simply not used before that date (conservative), but a market whose
outcome was settled after its listed date would be counted as known too early.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from agent_schemas import DEFAULT_EVIDENCE_CUTOFF, DataValidationError, Question
from benchmarks.questions import forecastbench_table, superforecaster_counts, superforecaster_medians

__all__ = ["BASELINES", "CROWD_FREEZE_NOTE", "CROWD_TIMING_NOTE", "base_rate_reference", "compute_baselines", "crowd_timing_note",
           "evidence_cutoff_of"]

#: What the crowd baseline knew, said next to every comparison with it (the report, the terminal, the page).
CROWD_TIMING_NOTE = (
    "Crowd is the market price at the freeze, 6-10 days before the forecast date, while the members searched up to the "
    "forecast date: against the crowd they had up to 10 more days of news.")


#: What the crowd baseline knew in a run whose searches were capped at the freeze (``run --evidence-cutoff freeze``).
CROWD_FREEZE_NOTE = (
    "Crowd is the market price at the freeze, and the members and the supervisor searched only up to the freeze date "
    "(--evidence-cutoff freeze): against the crowd they had the same days of news.")


def evidence_cutoff_of(manifest: Mapping[str, Any]) -> str:
    """The evidence cutoff a run's ``manifest`` records (``config.evidence_cutoff``; ``"forecast"``, the default,
    when absent: a manifest leaves the default out, and every run before the option had it)."""
    return (manifest.get("config") or {}).get("evidence_cutoff", DEFAULT_EVIDENCE_CUTOFF)


def crowd_timing_note(labels: Iterable[Any], evidence_cutoffs: Mapping[str, str] | None = None) -> str:
    """What the crowd knew against the members, when a row of ``labels`` (method names, or ``<run>:<method>``) is
    the crowd, else ''.

    Parameters
    ----------
    labels : iterable
        The compared rows' labels.
    evidence_cutoffs : mapping of str to str, optional
        Run id -> the run's evidence cutoff (:func:`evidence_cutoff_of` its manifest); a label without a run takes
        the runs' setting. Default: every run searched up to the forecast date.

    Returns
    -------
    str
        :data:`CROWD_TIMING_NOTE` when every crowd row's run searched up to the forecast date,
        :data:`CROWD_FREEZE_NOTE` when every one was capped at the freeze, and for a comparison of both kinds the
        first with the capped runs named.
    """
    cutoffs = dict(evidence_cutoffs or {})
    settings: dict[str, str] = {}
    for label in labels:
        run, _, method = str(label).rpartition(":")
        if method == "crowd":
            settings.update({run: cutoffs.get(run, DEFAULT_EVIDENCE_CUTOFF)} if run else (cutoffs or {"": DEFAULT_EVIDENCE_CUTOFF}))
    capped = sorted(run for run, setting in settings.items() if setting == "freeze")
    if not settings or not capped:
        return CROWD_TIMING_NOTE if settings else ""
    if len(capped) == len(settings):
        return CROWD_FREEZE_NOTE
    return (f"{CROWD_TIMING_NOTE} Except in {', '.join(capped)}, whose searches were capped at the freeze date "
            "(--evidence-cutoff freeze): there they had the same days of news as the crowd.")

#: Baseline method names, in output order.
BASELINES: tuple[str, ...] = ("crowd", "superforecaster_median", "base_rate", "always_0.5")

_COLUMNS = ["question_id", "method", "p_yes", "available", "detail", "n_reference"]


def base_rate_reference(reference_questions: Sequence[Question] | None = None) -> pd.DataFrame:
    """The resolved history a base rate is fitted on, one row per resolved event.

    Parameters
    ----------
    reference_questions : sequence of Question, optional
        History to use; default: the whole bundled ForecastBench table. Questions without an outcome
        or a resolution date are ignored.

    Returns
    -------
    pandas.DataFrame
        Columns ``source``, ``event`` (``source_question_id`` or the id), ``resolution_date``
        (datetime64) and ``outcome`` (0/1), deduplicated on (source, event, resolution_date) and sorted
        by resolution date.
    """
    if reference_questions is None:
        fb = forecastbench_table()
        ref = pd.DataFrame({
            "source": fb["source"].to_numpy(dtype=object),
            "event": fb["source_question_id"].to_numpy(dtype=object),
            "resolution_date": fb["resolution_ts"].to_numpy(),
            "outcome": fb["outcome"].to_numpy(dtype=np.int64),
        })
    else:
        rows = [
            (q.source, q.source_question_id or q.id, q.resolution_date, q.outcome)
            for q in reference_questions
            if q.outcome is not None and q.resolution_date is not None
        ]
        ref = pd.DataFrame(rows, columns=["source", "event", "resolution_date", "outcome"])
        ref["resolution_date"] = pd.to_datetime(ref["resolution_date"])
        ref["outcome"] = ref["outcome"].astype(np.int64)
    ref = ref.drop_duplicates(["source", "event", "resolution_date"], keep="first")
    return ref.sort_values(["resolution_date", "source", "event"], kind="mergesort").reset_index(drop=True)


def _known_before(dates: np.ndarray, outcomes: np.ndarray, cutoffs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(count, yes-count) of outcomes whose date is strictly before each cutoff. ``dates`` sorted."""
    cum_yes = np.concatenate([[0], np.cumsum(outcomes)])
    n = np.searchsorted(dates, cutoffs, side="left")
    return n, cum_yes[n]


def compute_baselines(
    questions: Sequence[Question],
    reference_questions: Sequence[Question] | None = None,
    *,
    methods: Sequence[str] = BASELINES,
    min_reference: int = 10,
) -> pd.DataFrame:
    """Baseline forecasts for each question, in long format.

    Parameters
    ----------
    questions : sequence of Question, length n_questions
        Questions to forecast.
    reference_questions : sequence of Question, optional
        Resolved history for ``base_rate``; default the whole bundled ForecastBench table. Only outcomes
        with ``resolution_date`` strictly before a question's ``forecast_date`` are used for it.
    methods : sequence of str, default :data:`BASELINES`
        Which baselines to compute.
    min_reference : int, default 10
        Fewest known outcomes (count) a base rate may rest on: below it the same-source rate falls back
        to all sources pooled, and the pooled rate to NaN.

    Returns
    -------
    pandas.DataFrame of shape (n_questions * len(methods), 6)
        Columns ``question_id`` (str), ``method`` (str), ``p_yes`` (float in [0, 1], NaN when not
        available), ``available`` (bool), ``detail`` (str: what the value rests on, or why it is missing)
        and ``n_reference`` (int: outcomes behind a base rate, panel size behind a superforecaster median,
        else 0). Rows are grouped by question, methods in the given order.

    Raises
    ------
    DataValidationError
        For an unknown method name (the message lists the valid ones) or ``min_reference < 1``.

    Examples
    --------
    >>> from benchmarks.questions import load_forecastbench
    >>> qs = load_forecastbench(rounds="2024-12-08", sources="polymarket", sample_n=2)
    >>> df = compute_baselines(qs, methods=["always_0.5", "base_rate"])
    >>> df.shape
    (4, 6)
    """
    unknown = [m for m in methods if m not in BASELINES]
    if unknown:
        raise DataValidationError(f"unknown baseline(s) {unknown}; valid baselines: {', '.join(BASELINES)}", field="methods", value=unknown)
    if not isinstance(min_reference, (int, np.integer)) or min_reference < 1:
        raise DataValidationError(f"min_reference must be a positive integer, got {min_reference!r}", field="min_reference", value=min_reference)
    n = len(questions)
    ids = [q.id for q in questions]
    per_method: dict[str, tuple[np.ndarray, np.ndarray, list[str], np.ndarray]] = {}

    if "crowd" in methods:
        p = np.array([np.nan if q.crowd_p_yes is None else q.crowd_p_yes for q in questions], dtype=float)
        avail = ~np.isnan(p)
        detail = ["crowd probability at freeze" if a else "no crowd probability for this question" for a in avail]
        per_method["crowd"] = (p, avail, detail, np.zeros(n, dtype=np.int64))

    if "superforecaster_median" in methods:
        med, counts = superforecaster_medians(), superforecaster_counts()
        p = np.array([med.get(i, np.nan) for i in ids], dtype=float)
        avail = ~np.isnan(p)
        k = np.array([counts.get(i, 0) if a else 0 for i, a in zip(ids, avail)], dtype=np.int64)
        detail = [
            f"median of {c} superforecasters (ForecastBench 2024-07-21 panel)" if a else "no superforecaster forecast for this question"
            for a, c in zip(avail, k)
        ]
        per_method["superforecaster_median"] = (p, avail, detail, k)

    if "base_rate" in methods:
        per_method["base_rate"] = _base_rates(questions, base_rate_reference(reference_questions), int(min_reference))

    if "always_0.5" in methods:
        per_method["always_0.5"] = (np.full(n, 0.5), np.ones(n, dtype=bool), ["constant 0.5"] * n, np.zeros(n, dtype=np.int64))

    m = len(methods)
    order = np.arange(n * m)
    q_idx, m_idx = order // m, order % m
    p_all = np.empty(n * m)
    a_all = np.empty(n * m, dtype=bool)
    k_all = np.empty(n * m, dtype=np.int64)
    d_all: list[str] = [""] * (n * m)
    for j, name in enumerate(methods):
        p, avail, detail, k = per_method[name]
        sl = m_idx == j
        p_all[sl], a_all[sl], k_all[sl] = p, avail, k
        for i in range(n):
            d_all[i * m + j] = detail[i]
    return pd.DataFrame({
        "question_id": [ids[i] for i in q_idx],
        "method": [methods[j] for j in m_idx],
        "p_yes": p_all,
        "available": a_all,
        "detail": d_all,
        "n_reference": k_all,
    }, columns=_COLUMNS)


def _base_rates(questions: Sequence[Question], ref: pd.DataFrame, min_reference: int) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray]:
    n = len(questions)
    cutoffs = np.array([np.datetime64(q.forecast_date.isoformat(), "ns") for q in questions], dtype="datetime64[ns]")
    sources = np.array([q.source for q in questions], dtype=object)

    all_dates = ref["resolution_date"].to_numpy(dtype="datetime64[ns]")
    all_out = ref["outcome"].to_numpy(dtype=np.int64)
    pooled_n, pooled_k = _known_before(all_dates, all_out, cutoffs)

    src_n = np.zeros(n, dtype=np.int64)
    src_k = np.zeros(n, dtype=np.int64)
    for s, grp in ref.groupby("source", sort=False):
        sel = sources == s
        if not sel.any():
            continue
        d = grp["resolution_date"].to_numpy(dtype="datetime64[ns]")
        o = grp["outcome"].to_numpy(dtype=np.int64)
        src_n[sel], src_k[sel] = _known_before(d, o, cutoffs[sel])

    p = np.full(n, np.nan)
    avail = np.zeros(n, dtype=bool)
    used = np.zeros(n, dtype=np.int64)
    detail: list[str] = []
    for i, q in enumerate(questions):
        f = q.forecast_date.isoformat()
        if src_n[i] >= min_reference:
            p[i], used[i], avail[i] = src_k[i] / src_n[i], src_n[i], True
            detail.append(f"yes-rate of {src_n[i]} {q.source} outcomes resolved before {f}")
        elif pooled_n[i] >= min_reference:
            p[i], used[i], avail[i] = pooled_k[i] / pooled_n[i], pooled_n[i], True
            detail.append(
                f"pooled yes-rate of {pooled_n[i]} outcomes (all sources) resolved before {f}; "
                f"only {src_n[i]} {q.source} outcomes known (< {min_reference})"
            )
        else:
            used[i] = pooled_n[i]
            detail.append(f"no base rate: only {pooled_n[i]} outcomes resolved before {f} (< {min_reference})")
    return p, avail, detail, used
