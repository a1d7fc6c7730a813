"""Single forecasters against the pools, honestly: each on the questions it answered.

In a panel, forecasters answer different subsets (on the bundled superforecaster panel a question has a median
of 7 of 40), so one forecaster's Brier on its own questions is not comparable with a pool's on all of them.
Every comparison here is **paired on the forecaster's own questions**:

* **Forecaster table** (:func:`forecaster_table`): per forecaster, its Brier and the mean pool's on the same
  questions, the difference ``forecaster - mean`` with its clustered bootstrap interval.
* **Pools against single forecasters** (:func:`pools_against_forecasters`): per pool, its Brier against the
  *average member* (per question, the mean of the members' Brier scores: the expected score of a member picked
  at random) with the paired interval over all questions, and how many forecasters the pool beats on their
  own questions (``mean beats 31 of 40``).
* **Best, median and worst single forecaster** (:func:`pick_forecasters`): among the forecasters with at least
  :data:`MIN_PICK_QUESTIONS` questions, those with the lowest, the median (the lower middle one of an even
  count) and the highest difference to the mean pool on their own questions. They are chosen **with the same
  outcomes they are scored on (in-sample)**: the best one's edge is optimistic, the worst one's deficit too,
  and their labels say so (``single_best_in_sample``). Walk-forward picking needs forecasts made on
  several dates; a panel of one date has no earlier outcome to pick by. Each is a method row on the questions
  its forecaster answered only (:func:`pick_methods`), added to the report after the run as the walk-forward
  fitted methods are (``write_report(added=...)``): the outcomes they are picked with stay with the scorer,
  never in the run's records. The leaderboard lists a pick apart with its own n (or, answering 95% or more,
  compares it with the missing answers imputed as its worst case, counted in ``n_imputed``).

Every probability is scored as the run's methods are: clipped to the combination rule's bounds (default
[0.01, 0.99], :mod:`benchmarks.protocol.methods`), the forecasters' too, so that pools and people are scored alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from agent_schemas import TokenUsage
from benchmarks import scoring
from benchmarks.report.frame import members_of

__all__ = ["MIN_PICK_QUESTIONS", "PICKS", "forecaster_deltas", "forecaster_table", "members_of_records", "pick_forecasters",
           "pick_label", "pick_methods", "pick_notes", "pools_against_forecasters"]

#: Fewest questions (count) a forecaster needs to be picked as best, median or worst: with fewer, the pick is
#: mostly luck (the same floor as a walk-forward fit's, :data:`benchmarks.protocol.fitted.MIN_FIT_QUESTIONS`).
MIN_PICK_QUESTIONS = 30
#: The picks, in leaderboard order.
PICKS: tuple[str, ...] = ("best", "median", "worst")
_MEMBER_COLUMNS = ["question_id", "forecaster", "p_yes", "outcome", "cluster"]


def pick_label(which: str) -> str:
    """The method label of a pick: ``single_best_in_sample`` (see the module docstring)."""
    return f"single_{which}_in_sample"


def members_of_records(records: Sequence[Mapping[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The members and the method rows of a run's records, as scored.

    Parameters
    ----------
    records : sequence of dict
        ``results.jsonl`` records (:class:`benchmarks.run_folder.record.QuestionRecord`).

    Returns
    -------
    members : pandas.DataFrame
        One row per successful member of a resolved, ok question (:func:`benchmarks.report.frame.members_of`):
        ``question_id``, ``forecaster`` (the member's ``agent_id``), ``p_yes`` (clipped to the record's combination
        bounds), ``outcome`` (0/1), ``cluster``.
    methods : pandas.DataFrame
        ``p_yes`` of each method with an ok row (columns) per such question (index ``question_id``).
    """
    members, methods = [], {}
    for r in records:
        if r.get("status") != "ok" or r.get("outcome") is None:
            continue
        members += [(r["question_id"], agent, p, int(r["outcome"]), r["cluster"]) for agent, _, p in members_of(r)]
        methods[r["question_id"]] = {m: row["p_yes"] for m, row in (r.get("methods") or {}).items()
                                     if row.get("status") == "ok" and row.get("p_yes") is not None}
    frame = pd.DataFrame(members, columns=_MEMBER_COLUMNS)
    return frame, pd.DataFrame.from_dict(methods, orient="index").rename_axis("question_id")


def forecaster_deltas(members: pd.DataFrame, reference: pd.Series, name: str = "mean") -> pd.DataFrame:
    """Each forecaster's Brier and the reference pool's on the same questions (point estimates).

    Parameters
    ----------
    members : pandas.DataFrame
        ``question_id``, ``forecaster``, ``p_yes`` (as scored) and ``outcome`` (0/1), one row per forecast.
    reference : pandas.Series
        The reference pool's p_yes (as scored) by question id; every member's question must have one.
    name : str
        The reference's name in the columns.

    Returns
    -------
    pandas.DataFrame
        One row per forecaster, in order of first appearance: ``forecaster``, ``n`` (questions), ``brier``,
        ``brier_<name>`` (the reference's on those questions) and ``delta_brier_vs_<name>`` (``brier - brier_<name>``,
        negative: the forecaster is better).
    """
    ref = members["question_id"].map(reference).to_numpy(dtype=float)
    o = members["outcome"].to_numpy(dtype=float)
    scored = pd.DataFrame({"forecaster": members["forecaster"].to_numpy(),
                           "b": (members["p_yes"].to_numpy(dtype=float) - o) ** 2, "r": (ref - o) ** 2})
    g = scored.groupby("forecaster", sort=False).agg(n=("b", "size"), brier=("b", "mean"), ref=("r", "mean")).reset_index()
    return g.rename(columns={"ref": f"brier_{name}"}).assign(**{f"delta_brier_vs_{name}": g["brier"] - g["ref"]})


def pick_forecasters(deltas: pd.DataFrame, min_questions: int = MIN_PICK_QUESTIONS) -> dict[str, str]:
    """The best, median and worst forecaster by difference to the mean on their own questions (in-sample).

    Parameters
    ----------
    deltas : pandas.DataFrame
        :func:`forecaster_deltas`.
    min_questions : int
        Fewest questions a forecaster needs to be picked (:data:`MIN_PICK_QUESTIONS`).

    Returns
    -------
    dict of str to str
        ``{"best": forecaster, "median": ..., "worst": ...}``; empty when no forecaster has ``min_questions``.
        Ties are broken by the forecaster's name; the median of an even count is the lower middle one.
    """
    eligible = deltas[deltas["n"] >= min_questions].sort_values(["delta_brier_vs_mean", "forecaster"], kind="mergesort")
    if eligible.empty:
        return {}
    who = eligible["forecaster"].tolist()
    return {"best": who[0], "median": who[(len(who) - 1) // 2], "worst": who[-1]}


def pick_notes(picks: Mapping[str, str], deltas: pd.DataFrame, min_questions: int = MIN_PICK_QUESTIONS) -> dict[str, str]:
    """What each pick's rows say: who it is and how it was picked (in-sample), by pick.

    Parameters
    ----------
    picks : mapping
        :func:`pick_forecasters`.
    deltas : pandas.DataFrame
        :func:`forecaster_deltas` the picks were made from.
    min_questions : int
        The picks' minimum (count), named in the note.

    Returns
    -------
    dict of str to str
        ``{"best": "super:X: the best of 39 forecasters with at least 30 questions by Brier difference to mean on
        their own (-0.0236 on 48), picked with these outcomes (in-sample)", ...}``.
    """
    by = deltas.set_index("forecaster")
    k = int((deltas["n"] >= min_questions).sum())
    return {which: (f"{who}: the {which} of {k} forecasters with at least {min_questions} questions by Brier difference to "
                    f"mean on their own ({by.loc[who, 'delta_brier_vs_mean']:+.4f} on {int(by.loc[who, 'n'])}), picked with "
                    "these outcomes (in-sample)") for which, who in picks.items()}


def pick_methods(records: Sequence[Mapping[str, Any]], min_questions: int = MIN_PICK_QUESTIONS) -> dict[str, dict[str, dict[str, Any]]]:
    """The method rows of the best, median and worst single forecaster of a run (module docstring), by question.

    Parameters
    ----------
    records : sequence of dict
        The run's ``results.jsonl`` records; its members are the forecasters (:func:`members_of_records`), the
        picks made by their difference to the run's ``mean`` on their own resolved questions (in-sample).
    min_questions : int
        Fewest questions of a picked forecaster (count, :data:`MIN_PICK_QUESTIONS`).

    Returns
    -------
    dict
        ``{question_id: {label: {"p_yes", "status", "note", "extra_usage"}}}`` (:func:`pick_label`; rows as
        :func:`benchmarks.protocol.methods.method_rows` writes them): the picked forecaster's p_yes as scored
        (clipped to the record's combination bounds) on each question it answered, nothing where it did not; the
        note names it (:func:`pick_notes`); no extra usage (the members are the ensemble). Empty when no
        forecaster has ``min_questions`` or the run has no ``mean``.
    """
    members, methods = members_of_records(records)
    if members.empty or "mean" not in methods.columns:
        return {}
    deltas = forecaster_deltas(members, methods["mean"])
    picks = pick_forecasters(deltas, min_questions)
    notes = pick_notes(picks, deltas, min_questions)
    free = TokenUsage().model_dump()
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for which, who in picks.items():
        mine = members[members["forecaster"] == who]
        for qid, p in zip(mine["question_id"], mine["p_yes"]):
            out.setdefault(qid, {})[pick_label(which)] = {"p_yes": float(p), "status": "ok", "note": notes[which], "extra_usage": free}
    return out


def forecaster_table(members: pd.DataFrame, reference: pd.Series, *, min_questions: int = MIN_PICK_QUESTIONS,
                     n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Every forecaster against the mean pool on the questions it answered, with paired clustered intervals.

    Parameters
    ----------
    members : pandas.DataFrame
        ``question_id``, ``forecaster``, ``p_yes`` (as scored), ``outcome`` and ``cluster`` (:func:`members_of_records`).
    reference : pandas.Series
        The mean pool's p_yes (as scored) by question id.
    min_questions : int
        The picks' minimum (:func:`pick_forecasters`).
    n_resamples, seed : int
        Clustered bootstrap resamples and seed (:func:`benchmarks.scoring.paired_difference_ci`).

    Returns
    -------
    pandas.DataFrame
        :func:`forecaster_deltas` columns plus ``n_clusters``, ``delta_ci_low``, ``delta_ci_high`` (NaN below
        :data:`benchmarks.scoring.MIN_CLUSTERS_FOR_INTERVAL` clusters) and ``pick`` ("best (in-sample)", ... or
        ''), sorted by ``delta_brier_vs_mean``.
    """
    table = forecaster_deltas(members, reference)
    picks = {who: f"{which} (in-sample)" for which, who in pick_forecasters(table, min_questions).items()}
    lows, highs, clusters = [], [], []
    for who in table["forecaster"]:
        g = members[members["forecaster"] == who]
        o = g["outcome"].to_numpy(dtype=int)
        mine = scoring.brier_score(g["p_yes"].to_numpy(dtype=float), o)
        theirs = scoring.brier_score(g["question_id"].map(reference).to_numpy(dtype=float), o)
        ci = scoring.paired_difference_ci(mine, theirs, g["cluster"].to_numpy(), n_resamples=n_resamples, seed=seed)
        lows.append(ci.low)
        highs.append(ci.high)
        clusters.append(g["cluster"].nunique())
    table = table.assign(n_clusters=clusters, delta_ci_low=lows, delta_ci_high=highs,
                         pick=[picks.get(w, "") for w in table["forecaster"]])
    return table.sort_values(["delta_brier_vs_mean", "forecaster"], kind="mergesort").reset_index(drop=True)


def pools_against_forecasters(members: pd.DataFrame, pools: pd.DataFrame, methods: Sequence[str], *,
                              n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Each pool against the average member (all questions) and against each forecaster (its own questions).

    Parameters
    ----------
    members : pandas.DataFrame
        As :func:`forecaster_table`.
    pools : pandas.DataFrame
        The pools' p_yes (as scored), methods as columns, indexed by question id (:func:`members_of_records`).
    methods : sequence of str
        The pools to compare (those among ``pools``' columns).
    n_resamples, seed : int
        Clustered bootstrap resamples and seed.

    Returns
    -------
    pandas.DataFrame
        One row per pool: ``method``, ``n`` (questions), ``brier``, ``brier_average_member`` (per question the
        mean of its members' Brier scores, averaged over questions), ``delta_vs_average_member`` (negative: the
        pool is better) with ``delta_ci_low`` / ``delta_ci_high`` (paired, clustered), ``forecasters_beaten`` and
        ``forecasters`` (counts: forecasters whose Brier on their own questions is above the pool's there) and
        ``share_beaten`` (fraction).
    """
    o = members["outcome"].to_numpy(dtype=float)
    scored = members.assign(b=(members["p_yes"].to_numpy(dtype=float) - o) ** 2)
    per_q = scored.groupby("question_id", sort=False).agg(avg=("b", "mean"), outcome=("outcome", "first"), cluster=("cluster", "first"))
    rows = []
    for m in (m for m in methods if m in pools.columns):
        p = per_q.index.map(pools[m]).to_numpy(dtype=float)
        have = ~np.isnan(p)
        pool_b = (p[have] - per_q["outcome"].to_numpy(dtype=float)[have]) ** 2
        avg = per_q["avg"].to_numpy()[have]
        ci = scoring.paired_difference_ci(pool_b, avg, per_q["cluster"].to_numpy()[have], n_resamples=n_resamples, seed=seed)
        deltas = forecaster_deltas(members[members["question_id"].isin(per_q.index[have])], pools[m], "pool")
        beaten = int((deltas["delta_brier_vs_pool"] > 0).sum())
        rows.append({"method": m, "n": int(have.sum()), "brier": float(pool_b.mean()), "brier_average_member": float(avg.mean()),
                     "delta_vs_average_member": ci.mean, "delta_ci_low": ci.low, "delta_ci_high": ci.high,
                     "forecasters_beaten": beaten, "forecasters": len(deltas), "share_beaten": beaten / len(deltas)})
    return pd.DataFrame(rows, columns=["method", "n", "brier", "brier_average_member", "delta_vs_average_member", "delta_ci_low",
                                       "delta_ci_high", "forecasters_beaten", "forecasters", "share_beaten"])
