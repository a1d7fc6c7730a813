"""Rank methods on one question set: a leaderboard that neither coverage nor failures can game.

A method that answered only the easy questions must not outrank one that answered all of them, and no
method's failures may choose the questions the others are compared on. So:

1. The **comparison set** is every question of the comparison with a resolved outcome (the caller gives
   one row per answered (method, question); a question is in the set when any method answered it). For
   several runs the caller restricts it to the questions every run planned (``questions``, see
   :func:`benchmarks.report.frame.planned_questions`), never to those every run *answered*.
2. ``coverage`` of a method = questions it answered / questions of the set. Methods with
   ``coverage >= min_coverage`` (default :data:`MIN_COVERAGE`) are **compared**: scored on every question
   of the set. A question such a method gave no probability for (a failed specialist, a failed question,
   an unfinished question, a baseline with no value) is scored as the method's **fallback**
   (:data:`FALLBACK_RULE`) and counted in ``n_fallback``. ``n`` is the size of the set for all of them.
3. The others are listed **apart**, with their own ``n`` (their Brier is on their own questions and is not
   comparable), and their paired difference to the baseline on the questions both answered.
4. ``too_small_to_rank`` is true when the set has fewer than :data:`MIN_CLUSTERS_TO_RANK` clusters: the
   compared rows are still listed by Brier, but get no rank (the terminal and the page say "too few clusters
   to rank").
5. A method that is another under a second name (``equals``: a fitted method that fell back to its
   unfitted rule on every question, :func:`benchmarks.protocol.fitted.fallback_equals`) is scored with the compared
   methods but takes no rank: its row says what it equals and why.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from benchmarks import scoring

__all__ = ["Comparison", "FALLBACK_P_YES", "FALLBACK_RULE", "MIN_CLUSTERS_TO_RANK", "MIN_COVERAGE", "compare",
           "rank_methods"]

#: Fewest answered questions, as a fraction of the comparison's scorable questions, for a ranked method.
#: One failed question in 6 (0.83) stays ranked; a method that answered half is listed apart.
MIN_COVERAGE = 0.8

#: Probability a missing answer is scored as when the caller gives no other fallback: no forecast at all, as
#: ForecastBench imputes a missing forecast (``src/resolve/_impute.py``). Brier 0.25 whatever the outcome.
FALLBACK_P_YES = 0.5

#: What a missing answer is scored as, in words (the report and the page print it).
FALLBACK_RULE = ("a question a compared method gave no probability for is scored as its fallback: the run's "
                 f"ensemble mean for an LLM method (as the pipeline does when a reconciler fails), else {FALLBACK_P_YES}")

MIN_CLUSTERS_TO_RANK: int = 30
"""Fewest clusters of the comparison set for ranks to be shown. From 20-30 clusters on, the 95% interval of
every Brier mean and paired difference measured on the simulator covered 0.92-0.96, near its large-sample
level; at 12 clusters (the default run) 0.89-0.92 (the expanded percentile interval, table in
:mod:`benchmarks.scoring.bootstrap`; ``python benchmarks/perf/interval_coverage.py``). 30 is also the usual
floor for cluster-robust inference (Cameron & Miller 2015, *J. Human Resources* 50(2)). Below it, rows
are listed by Brier without ranks; intervals still show from
:data:`benchmarks.scoring.MIN_CLUSTERS_FOR_INTERVAL` clusters."""


@dataclass(frozen=True)
class Comparison:
    """The question set methods are compared on, and every compared method's row on each of its questions.

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per (compared method, question of the set), the input's columns, with ``p_yes`` the method's
        probability or its fallback and a bool column ``fallback`` marking the latter.
    compared : list
        Methods with coverage >= ``min_coverage``, in order of first appearance.
    apart : list
        The other methods.
    answered : pandas.Series
        Questions each method answered (int, indexed by method).
    coverage : pandas.Series
        ``answered`` / questions of the set (float in [0, 1], indexed by method).
    """

    frame: pd.DataFrame
    compared: list
    apart: list
    answered: pd.Series
    coverage: pd.Series


def compare(
    scored: pd.DataFrame,
    *,
    method_col: str = "label",
    question_col: str = "question_id",
    min_coverage: float = MIN_COVERAGE,
    fallbacks: Mapping[tuple[Any, Any], float] | None = None,
    question_cols: tuple[str, ...] = ("outcome", "cluster"),
    questions: Collection[Any] | None = None,
) -> Comparison:
    """Decide who is compared on the whole question set and fill each compared method's missing answers.

    Parameters
    ----------
    scored : pandas.DataFrame
        One row per answered (method, question): ``p_yes`` in [0, 1], a resolved 0/1 ``outcome``,
        ``cluster`` and any other columns.
    method_col, question_col : str
        Column names.
    min_coverage : float in (0, 1]
        Coverage a method needs to be compared on the whole set.
    fallbacks : mapping of (method, question) to float, optional
        The probability a missing answer of that method on that question is scored as; pairs not in it
        are scored as :data:`FALLBACK_P_YES`.
    question_cols : tuple of str
        Columns a filled row takes from the question's first row (facts of the question: outcome, cluster,
        source...); it takes every other column from the method's own first row (run, kind...).
    questions : collection, optional
        The comparison set, when the caller fixes it (the questions every compared run planned): only
        those of them someone answered count, and a method's coverage is measured on them. Default: every
        question of ``scored``. An empty set compares no method (all are listed apart).

    Returns
    -------
    Comparison

    Raises
    ------
    ValueError
        If ``min_coverage`` is not in (0, 1].
    """
    if not 0 < min_coverage <= 1:
        raise ValueError(f"min_coverage must be in (0, 1], got {min_coverage!r}")
    in_set = scored if questions is None else scored[scored[question_col].isin(set(questions))]
    the_set = list(pd.unique(in_set[question_col]))
    answered = in_set.groupby(method_col, sort=False)[question_col].nunique().reindex(
        pd.unique(scored[method_col]), fill_value=0)
    coverage = answered / len(the_set) if the_set else answered * 0.0
    compared = [m for m in answered.index if the_set and coverage[m] >= min_coverage - 1e-12]
    apart = [m for m in answered.index if m not in compared]
    rows = in_set[in_set[method_col].isin(compared)].assign(fallback=False)
    shared = [c for c in dict.fromkeys((question_col, *question_cols)) if c in scored.columns]
    facts = scored.drop_duplicates(question_col).set_index(question_col)[[c for c in shared if c != question_col]]
    filled = []
    for m, own in rows.groupby(method_col, sort=False):
        done = set(own[question_col])
        missing = [q for q in the_set if q not in done]
        if missing:
            f = pd.DataFrame([own.iloc[0]] * len(missing)).reset_index(drop=True)
            f[question_col] = missing
            f[facts.columns] = facts.loc[missing].to_numpy()
            f["p_yes"] = [float((fallbacks or {}).get((m, q), FALLBACK_P_YES)) for q in missing]
            f["fallback"] = True
            filled.append(f[rows.columns].astype(rows.dtypes.to_dict()))
    frame = pd.concat([rows, *filled], ignore_index=True) if filled else rows.reset_index(drop=True)
    return Comparison(frame, compared, apart, answered, coverage)


def rank_methods(
    scored: pd.DataFrame,
    *,
    method_col: str = "label",
    question_col: str = "question_id",
    baseline: str | None = "mean",
    min_coverage: float = MIN_COVERAGE,
    min_clusters: int = scoring.MIN_CLUSTERS_FOR_INTERVAL,
    min_clusters_to_rank: int = MIN_CLUSTERS_TO_RANK,
    fallbacks: Mapping[tuple[Any, Any], float] | None = None,
    question_cols: tuple[str, ...] = ("outcome", "cluster"),
    questions: Collection[Any] | None = None,
    equals: Mapping[str, str] | None = None,
    **score_kwargs: Any,
) -> pd.DataFrame:
    """The leaderboard of ``scored`` (one row per method): compared methods first, by Brier on the whole set.

    Parameters
    ----------
    scored : pandas.DataFrame
        Long format as for :func:`benchmarks.scoring.score_table`: one row per answered (method, question)
        with ``p_yes`` and a resolved 0/1 ``outcome`` (unanswered rows already dropped), and ``cluster``.
    method_col, question_col : str
        Column names.
    baseline : str or None
        Method the deltas refer to (see :func:`benchmarks.scoring.score_table`).
    min_coverage : float in (0, 1]
        Coverage a method needs to be compared on the whole set (see :func:`compare`).
    min_clusters : int
        Fewest clusters for an interval.
    min_clusters_to_rank : int
        Fewest clusters of the set for ranks (:data:`MIN_CLUSTERS_TO_RANK`).
    fallbacks : mapping of (method, question) to float, optional
        What a compared method's missing answer is scored as (:func:`compare`); default :data:`FALLBACK_P_YES`.
    question_cols : tuple of str
        The question's columns a filled row takes (:func:`compare`).
    questions : collection, optional
        The comparison set when the caller fixes it (:func:`compare`); methods listed apart are scored on
        all their own questions.
    equals : mapping of str to str, optional
        Methods that are another method under a second name, with what they equal and why (e.g.
        ``{"fitted_platt": "mean (not fitted: n < 30)"}``): no rank of their own (point 5 above).
    **score_kwargs
        Passed to :func:`benchmarks.scoring.score_table` (``n_resamples``, ``seed``, ``n_bins``...).

    Returns
    -------
    pandas.DataFrame
        The :func:`~benchmarks.scoring.score_table` columns plus ``ranked`` (bool: compared on the whole
        set), ``rank`` (1..k for compared methods when the set has at least ``min_clusters_to_rank``
        clusters, missing otherwise and for ``equals`` methods; nullable integer), ``n_answered`` (questions
        the method answered), ``n_fallback`` (questions of the set scored as its fallback; 0 for rows listed
        apart), ``coverage`` (fraction), ``too_small_to_rank`` (bool, the same for every compared row) and
        ``equals`` (text, '' unless given). Compared rows come first, sorted by Brier; the others follow,
        sorted by Brier on their own questions.

    Raises
    ------
    ValueError
        If ``min_coverage`` is not in (0, 1].
    DataValidationError
        As :func:`benchmarks.scoring.score_table`.
    """
    c = compare(scored, method_col=method_col, question_col=question_col, min_coverage=min_coverage, fallbacks=fallbacks,
                question_cols=question_cols, questions=questions)
    parts = []
    if c.compared:
        t = scoring.score_table(c.frame, method_col=method_col, question_col=question_col,
                                baseline=baseline if baseline in c.compared else None, min_clusters=min_clusters,
                                **score_kwargs)
        t = t.sort_values("brier", kind="mergesort").reset_index(drop=True)
        too_small = bool(t["n_clusters"].max() < min_clusters_to_rank)
        t["ranked"] = True
        copy = t[method_col].isin(list(equals or {})).to_numpy()  # another method under a second name: no rank
        t["rank"] = pd.array([pd.NA if too_small or e else int(k) for e, k in zip(copy, np.cumsum(~copy))], dtype="Int64")
        t["too_small_to_rank"] = too_small
        t["n_fallback"] = t[method_col].map(c.frame.groupby(method_col, sort=False)["fallback"].sum()).astype("int64")
        parts.append(t)
    if c.apart:
        keep = c.apart + ([baseline] if baseline in c.answered.index and baseline not in c.apart else [])
        t = scoring.score_table(scored[scored[method_col].isin(keep)], method_col=method_col,
                                question_col=question_col, baseline=baseline if baseline in keep else None,
                                min_clusters=min_clusters, **score_kwargs)
        t = t[t[method_col].isin(c.apart)].sort_values("brier", kind="mergesort").reset_index(drop=True)
        t["ranked"] = False
        t["rank"] = pd.array([pd.NA] * len(t), dtype="Int64")
        t["too_small_to_rank"] = False
        t["n_fallback"] = 0
        parts.append(t)
    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if not table.empty:
        table["n_answered"] = table[method_col].map(c.answered).astype("int64")
        table["coverage"] = table[method_col].map(c.coverage).astype(float)
        table["equals"] = [str((equals or {}).get(m, "")) for m in table[method_col]]
    return table
