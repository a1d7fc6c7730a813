"""The panel's own tables in its run's report: the pools against single forecasters, and every forecaster
against the mean on its own questions (:mod:`benchmarks.panels.forecasters`); ``aggregate`` hands them to
:func:`benchmarks.report.write.write_report` (``extra_tables``, with the picks as ``added`` rows:
:func:`~benchmarks.panels.forecasters.pick_methods`), which writes them to ``leaderboard.md`` and the page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from benchmarks.panels.forecasters import MIN_PICK_QUESTIONS, forecaster_table, members_of_records, pools_against_forecasters

__all__ = ["FORECASTERS_TITLE", "POOLS_TITLE", "panel_summary", "panel_tables"]

POOLS_TITLE = ("Pools against single forecasters (Brier; the average member on every question, each forecaster on the "
               "questions it answered; negative: the pool is better)")
FORECASTERS_TITLE = ("Single forecasters against mean, each on the questions it answered (the picks are chosen with these "
                     "outcomes: in-sample)")


def panel_tables(records: Sequence[Mapping[str, Any]], *, min_pick_questions: int = MIN_PICK_QUESTIONS,
                 n_resamples: int = 1000, seed: int = 0) -> dict[str, pd.DataFrame]:
    """The panel's tables of one run's records, by title.

    Parameters
    ----------
    records : sequence of dict
        The run's ``results.jsonl`` records.
    min_pick_questions : int
        Fewest questions of a picked forecaster (:data:`benchmarks.panels.forecasters.MIN_PICK_QUESTIONS`).
    n_resamples, seed : int
        Clustered bootstrap resamples and seed.

    Returns
    -------
    dict of str to pandas.DataFrame
        :data:`POOLS_TITLE`: :func:`~benchmarks.panels.forecasters.pools_against_forecasters` of every method the
        records score; :data:`FORECASTERS_TITLE`:
        :func:`~benchmarks.panels.forecasters.forecaster_table`. Empty when no resolved question has members.
    """
    members, methods = members_of_records(records)
    if members.empty or "mean" not in methods.columns:
        return {}
    return {POOLS_TITLE: pools_against_forecasters(members, methods, list(methods.columns), n_resamples=n_resamples, seed=seed),
            FORECASTERS_TITLE: forecaster_table(members, methods["mean"], min_questions=min_pick_questions,
                                                n_resamples=n_resamples, seed=seed)}


def panel_summary(tables: Mapping[str, pd.DataFrame], method: str = "mean") -> str:
    """One line on ``method`` against single forecasters, from :func:`panel_tables` ('' without them), e.g.
    ``mean 0.1137 against the average member 0.1218: -0.0081 [-0.0098, -0.0069]; better than 30 of 40 forecasters
    (75%) on their own questions``."""
    pools = tables.get(POOLS_TITLE)
    if pools is None or method not in set(pools["method"]):
        return ""
    r = pools[pools["method"] == method].iloc[0]
    interval = (f" [{r.delta_ci_low:+.4f}, {r.delta_ci_high:+.4f}]" if r.delta_ci_low == r.delta_ci_low else " [no interval: too few clusters]")
    return (f"{method} {r.brier:.4f} against the average member {r.brier_average_member:.4f}: {r.delta_vs_average_member:+.4f}{interval}; "
            f"better than {r.forecasters_beaten} of {r.forecasters} forecasters ({r.share_beaten:.0%}) on their own questions")
