"""The page's headline: in plain words, what won, how sure that is, and what the result cannot say.

Every page (a run's, a panel's, a comparison's) opens with it, above the leaderboard, so that a reader who
reads nothing else reads the result and its limits: the best compared method with its Brier score and 95%
interval, whether its paired difference to the baseline excludes zero, and the caveats that change what the
numbers mean (simulated runs, members that answer only 0% or 100%, too few clusters to rank, runs with no
question in common).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from benchmarks.viewer import formatting as fmt

__all__ = ["DEGENERATE_SHARE", "Headline", "degenerate_share", "headline"]

#: Share of the members' answers at 0% or 100% above which the members are called degenerate (fraction).
DEGENERATE_SHARE = 0.5
#: A member answer at or beyond these bounds counts as 0% or 100% (probabilities).
_EXTREME = (0.005, 0.995)


@dataclass(frozen=True)
class Headline:
    """The page's headline: three plain parts."""

    won: str
    """What won: the best compared method, its Brier score, interval and question count."""
    sure: str
    """How sure: whether a paired difference to the baseline excludes zero."""
    limits: list[str] = field(default_factory=list)
    """What the result cannot say (simulated, degenerate members, few clusters, no common questions)."""


def degenerate_share(records: Iterable[Mapping[str, Any]]) -> tuple[float, int]:
    """Share of the successful member forecasts of ``records`` (``results.jsonl`` lines) at 0% or 100%
    (p_yes <= 0.005 or >= 0.995, before any clipping), and how many member forecasts there are.

    >>> degenerate_share([{"trace": {"forecasts": [{"status": "ok", "p_yes": 0.0}, {"status": "ok", "p_yes": 0.4}]}}])
    (0.5, 2)
    """
    ps = [float(f["p_yes"]) for r in records for f in (r.get("trace") or {}).get("forecasts", [])
          if f.get("status") == "ok" and f.get("p_yes") is not None]
    if not ps:
        return 0.0, 0
    return sum(p <= _EXTREME[0] or p >= _EXTREME[1] for p in ps) / len(ps), len(ps)


def _name(row: Mapping[str, Any], multi: bool) -> str:
    return f"{row['method']} ({row['run']})" if multi and row.get("run") else str(row["method"])


def headline(board: pd.DataFrame, *, baseline: str, records: Mapping[str, Sequence[Mapping[str, Any]]], notice: str = "",
             min_clusters_to_rank: int = 10) -> Headline:
    """The three parts of the page's headline.

    Parameters
    ----------
    board : pandas.DataFrame
        The page's leaderboard (:func:`benchmarks.viewer.page.board_rows`: ``label``, ``method``, ``run``, ``kind``,
        ``ranked``, ``equals``, ``n``, ``n_clusters``, ``too_small_to_rank``, ``brier`` and its interval,
        ``delta_brier_vs_baseline`` and its interval).
    baseline : str
        The label the deltas refer to.
    records : mapping of str to sequence of dict
        Each run's ``results.jsonl`` lines, by run id (the members' answers).
    notice : str
        The simulation label (:func:`benchmarks.report.audits.simulation_note`) or ''.
    min_clusters_to_rank : int
        Fewest clusters a ranking rests on (:data:`benchmarks.scoring.ranking.MIN_CLUSTERS_TO_RANK`).

    Returns
    -------
    Headline
        ``won``: the best compared method, its Brier score and 95% interval, on how many questions;
        ``sure``: whether its paired difference to the baseline (or, when it is the baseline, the runner-up's)
        excludes zero; ``limits``: what the result cannot say.
    """
    multi = len(records) > 1
    limits: list[str] = []
    if notice:
        limits.append("Simulated: " + (notice.partition(": ")[2] if notice.startswith("SIMULATED runs") else
                                       "the scores measure a seeded simulation, not any model's forecasting skill."))
    for run_id, recs in records.items():
        share, n = degenerate_share(recs)
        if n and share > DEGENERATE_SHARE:
            where = f" of run {run_id}" if multi else ""
            limits.append(f"Degenerate members{where}: {share:.0%} of their {n:,} answers are 0% or 100%, so the mean is mostly "
                          "a vote and the reconcilers have little spread to work with; a poor score here says more about "
                          "the members than about reconciliation.")
    equals = board["equals"].astype(str) if "equals" in board.columns else pd.Series("", index=board.index)
    ranked = board[board["ranked"] & (equals == "")] if "ranked" in board.columns else board.iloc[0:0]
    if ranked.empty:
        limits.append("Nothing is compared on one question set: the runs share no question, or every method has too "
                      "many questions imputed; rows are listed on their own questions and their order is not evidence.")
        return Headline("No method is ranked.", "No comparison, so no interval to read.", limits)
    k = int(ranked["n_clusters"].max())
    if bool(ranked["too_small_to_rank"].iloc[0]):
        limits.append(f"Few clusters: {k} clusters of related questions (fewer than {min_clusters_to_rank}), so the rows "
                      "are not ranked and their order is not evidence.")
    best = ranked.sort_values("brier", kind="mergesort").iloc[0]
    interval = fmt.fmt_interval(best.get("brier_ci_low"), best.get("brier_ci_high"))
    won = (f"Lowest Brier score: {_name(best, multi)}, {fmt.fmt_prob(best['brier'])} "
           f"({'95% interval ' + interval if interval != fmt.NOT_AVAILABLE else 'no interval: too few clusters'}) "
           f"on {int(best['n']):,} questions in {k} clusters.")
    other = best
    if best["label"] == baseline:  # how sure: the runner-up against it
        rest = ranked[ranked["label"] != baseline].sort_values("brier", kind="mergesort")
        if rest.empty:
            return Headline(won, "It is the only method compared.", limits)
        other = rest.iloc[0]
    base = board[board["label"] == baseline]
    base_name = _name(base.iloc[0], multi) if len(base) else baseline
    d, lo, hi = other.get("delta_brier_vs_baseline"), other.get("delta_brier_ci_low"), other.get("delta_brier_ci_high")
    if fmt.is_missing(d):
        sure = f"How sure: no paired difference to {base_name} is available."
    elif fmt.is_missing(lo) or fmt.is_missing(hi):
        sure = (f"How sure: {_name(other, multi)} differs from {base_name} by {fmt.fmt_delta(d)} in Brier, with no interval "
                "(too few clusters): not evidence either way.")
    elif lo > 0 or hi < 0:
        better = "better" if hi < 0 else "worse"
        sure = (f"How sure: {_name(other, multi)} is {better} than {base_name} by {fmt.fmt_delta(d)} in Brier, 95% interval "
                f"{fmt.fmt_interval(lo, hi, signed=True)}, which excludes 0.")
    else:
        sure = (f"How sure: not sure. {_name(other, multi)} differs from {base_name} by {fmt.fmt_delta(d)} in Brier, and the 95% "
                f"interval {fmt.fmt_interval(lo, hi, signed=True)} includes 0: the data cannot tell them apart.")
    return Headline(won, sure, limits)
