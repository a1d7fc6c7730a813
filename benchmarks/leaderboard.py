"""Rank methods on one question set: a leaderboard that coverage cannot game.

A method that answered only the easy questions must not outrank one that answered all of them. So:

1. ``coverage`` of a method = questions it answered / scorable questions of the comparison (those at
   least one method answered with a resolved outcome).
2. Methods with ``coverage >= min_coverage`` (default :data:`MIN_COVERAGE`) are **ranked**, on the
   questions *every* ranked method answered (the common set): same questions, same clusters, so their
   Brier scores are comparable. ``n`` is the size of that set for all of them. When they share no
   question at all (five methods each missing a different fifth, say), none can be ranked and all are
   listed as in 3.
3. The others are listed **unranked**, with their own ``n`` (their Brier is on their own questions and
   is not comparable), and their paired difference to the baseline on the questions both answered.
4. ``too_small_to_rank`` is true when the common set has fewer than
   :data:`benchmarks.scoring.MIN_CLUSTERS_FOR_INTERVAL` clusters: intervals are then not available
   and the order says nothing.
5. A method that is another under a second name (``equals``: a fitted method that fell back to its
   unfitted rule on every question, :func:`benchmarks.fitted.fallback_equals`) is scored with the ranked
   methods but takes no rank: its row says what it equals and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from benchmarks import scoring

__all__ = ["MIN_COVERAGE", "rank_methods"]

#: Fewest answered questions, as a fraction of the comparison's scorable questions, for a ranked method.
#: One failed question in 6 (0.83) stays ranked; a method that answered half is listed apart.
MIN_COVERAGE = 0.8


def rank_methods(
    scored: pd.DataFrame,
    *,
    method_col: str = "label",
    question_col: str = "question_id",
    baseline: str | None = "mean",
    min_coverage: float = MIN_COVERAGE,
    min_clusters: int = scoring.MIN_CLUSTERS_FOR_INTERVAL,
    equals: Mapping[str, str] | None = None,
    **score_kwargs: Any,
) -> pd.DataFrame:
    """The leaderboard of ``scored`` (one row per method): ranked methods first, by Brier on the common set.

    Parameters
    ----------
    scored : pandas.DataFrame
        Long format as for :func:`benchmarks.scoring.score_table`: one row per (method, question) with
        ``p_yes`` and a resolved 0/1 ``outcome`` (unanswered rows already dropped), and ``cluster``.
    method_col, question_col : str
        Column names.
    baseline : str or None
        Method the deltas refer to (see :func:`benchmarks.scoring.score_table`).
    min_coverage : float in (0, 1]
        Coverage a method needs to be ranked.
    min_clusters : int
        Fewest clusters for an interval (and for the ranking to mean anything).
    equals : mapping of str to str, optional
        Methods that are another method under a second name, with what they equal and why (e.g.
        ``{"fitted_platt": "mean (not fitted: n < 30)"}``): no rank of their own (point 5 above).
    **score_kwargs
        Passed to :func:`benchmarks.scoring.score_table` (``n_resamples``, ``seed``, ``n_bins``...).

    Returns
    -------
    pandas.DataFrame
        The :func:`~benchmarks.scoring.score_table` columns plus ``ranked`` (bool), ``rank`` (1..k for
        ranked methods, missing otherwise and for ``equals`` methods; nullable integer), ``n_answered`` (questions
        the method answered), ``coverage`` (fraction), ``too_small_to_rank`` (bool, the same for every ranked
        row) and ``equals`` (text, '' unless given). Ranked rows come first, sorted by Brier; unranked rows
        follow, sorted by Brier on their own questions.

    Raises
    ------
    ValueError
        If ``min_coverage`` is not in (0, 1].
    DataValidationError
        As :func:`benchmarks.scoring.score_table`.
    """
    if not 0 < min_coverage <= 1:
        raise ValueError(f"min_coverage must be in (0, 1], got {min_coverage!r}")
    n_questions = scored[question_col].nunique()
    answered = scored.groupby(method_col, sort=False)[question_col].nunique()
    coverage = answered / max(n_questions, 1)
    ranked = [m for m in answered.index if coverage[m] >= min_coverage - 1e-12]
    unranked = [m for m in answered.index if m not in ranked]
    common = None
    for m in ranked:
        qs = set(scored.loc[scored[method_col] == m, question_col])
        common = qs if common is None else common & qs
    if ranked and not common:  # no question every ranked method answered: nothing to rank them on
        ranked, unranked = [], list(answered.index)
    parts = []
    if ranked:
        frame = scored[scored[method_col].isin(ranked) & scored[question_col].isin(common)]
        t = scoring.score_table(frame, method_col=method_col, question_col=question_col,
                                baseline=baseline if baseline in ranked else None, min_clusters=min_clusters,
                                **score_kwargs)
        t = t.sort_values("brier", kind="mergesort").reset_index(drop=True)
        t["ranked"] = True
        copy = t[method_col].isin(list(equals or {})).to_numpy()
        t["rank"] = pd.array([pd.NA if c else int(k) for c, k in zip(copy, np.cumsum(~copy))], dtype="Int64")
        t["too_small_to_rank"] = bool(t["n_clusters"].max() < min_clusters) if len(t) else True
        parts.append(t)
    if unranked:
        keep = unranked + ([baseline] if baseline in answered.index and baseline not in unranked else [])
        t = scoring.score_table(scored[scored[method_col].isin(keep)], method_col=method_col,
                                question_col=question_col, baseline=baseline if baseline in keep else None,
                                min_clusters=min_clusters, **score_kwargs)
        t = t[t[method_col].isin(unranked)].sort_values("brier", kind="mergesort").reset_index(drop=True)
        t["ranked"] = False
        t["rank"] = pd.array([pd.NA] * len(t), dtype="Int64")
        t["too_small_to_rank"] = False
        parts.append(t)
    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if not table.empty:
        table["n_answered"] = table[method_col].map(answered).astype("int64")
        table["coverage"] = table[method_col].map(coverage).astype(float)
        table["equals"] = [str((equals or {}).get(m, "")) for m in table[method_col]]
    return table
