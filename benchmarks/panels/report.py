"""What a panel's run adds to its report: the best, median and worst single forecaster as method rows
(:func:`~benchmarks.panels.forecasters.pick_methods`), and the panel's own tables, the pools against single
forecasters and every forecaster against the mean on its own questions (:mod:`benchmarks.panels.forecasters`).

:func:`panel_additions` gives both for the runs of a report; the command line hands them to
:func:`benchmarks.report.write.write_report` (``added``, ``extra_tables``) wherever it writes the report of a
panel's run (``aggregate``, ``leaderboard``, ``view``), so the page is the same whichever command wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from agent_schemas.kinds import DEFAULT_KIND, KINDS
from benchmarks.panels.forecasters import MIN_PICK_QUESTIONS, forecaster_table, members_of_records, pick_methods, pools_against_forecasters
from benchmarks.report.kind_report import records_of_kind
from benchmarks.run_folder.load import LoadedRun

__all__ = ["FORECASTERS_TITLE", "POOLS_TITLE", "is_panel_run", "panel_additions", "panel_summary", "panel_tables", "pick_minimum"]

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


def is_panel_run(manifest: Mapping[str, Any]) -> bool:
    """True for the manifest of a run whose members were given, not run (``RunConfig.ensemble == "given"``: a panel's)."""
    return (manifest.get("config") or {}).get("ensemble") == "given"


def pick_minimum(manifest: Mapping[str, Any]) -> int:
    """The fewest questions of a picked forecaster a panel's run was made with (``aggregate --min-pick-questions``,
    recorded as ``question_selection.pool.min_pick_questions``), else :data:`MIN_PICK_QUESTIONS`."""
    pool = (manifest.get("question_selection") or {}).get("pool") or {}
    return int(pool.get("min_pick_questions", MIN_PICK_QUESTIONS))


def panel_additions(runs: Sequence[LoadedRun], *, n_resamples: int = 1000, seed: int = 0
                    ) -> tuple[dict[str, dict[str, dict[str, dict[str, Any]]]], dict[str, pd.DataFrame]]:
    """What the panels' runs among ``runs`` add to their report (module docstring).

    Parameters
    ----------
    runs : sequence of LoadedRun
        The runs of one report (:func:`benchmarks.run_folder.load.load_run`); those that are not a panel's
        (:func:`is_panel_run`) add nothing.
    n_resamples, seed : int
        Clustered bootstrap resamples and seed of the tables.

    Returns
    -------
    added : dict
        ``{run_id: {question_id: {label: row}}}``: each panel run's picks (:func:`~benchmarks.panels.forecasters.pick_methods`
        at the run's :func:`pick_minimum`), for ``write_report(added=...)``; a run with no forecaster at the
        minimum is absent.
    tables : dict of str to pandas.DataFrame
        :func:`panel_tables` of the panel's run when the report is of that one run, else empty (tables of
        several runs are not merged).
    """
    # picks and panel tables are of binary forecasts (p_yes); a panel of another kind is scored on its kind's leaderboard
    runs = [records_of_kind(run, KINDS[DEFAULT_KIND]) for run in runs]
    added = {run.run_id: picks for run in runs if is_panel_run(run.manifest)
             and (picks := pick_methods(run.records, pick_minimum(run.manifest)))}
    tables = (panel_tables(runs[0].records, min_pick_questions=pick_minimum(runs[0].manifest), n_resamples=n_resamples, seed=seed)
              if len(runs) == 1 and is_panel_run(runs[0].manifest) else {})
    return added, tables
