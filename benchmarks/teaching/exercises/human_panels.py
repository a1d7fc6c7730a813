"""Checks of notebook 13's exercises (human panels); each computes its right value with the toolkit.

1. :func:`check_max_pool`: how much the ``max`` pool loses to the mean on the panel, and on which outcome.
2. :func:`check_mean_pool_gain`: the student's function for how far the mean pool's Brier lies below the average
   member's on one question, against :mod:`agent_research.aggregation` and :mod:`benchmarks.scoring`.
3. :func:`check_adjusted_entry`: the difficulty-adjusted Brier, Brier Index and rank of an entry added to the
   notebook's hand example, against :func:`benchmarks.scoring.brier_index.brier_index_table`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from agent_research import aggregation as agg
from benchmarks import scoring
from benchmarks.scoring.brier_index import brier_index_table
from benchmarks.teaching.grading import FunctionCase, Verdict, grade_answers, grade_function

__all__ = ["GAIN_CASES", "NEW_ENTRY", "check_adjusted_entry", "check_max_pool", "check_mean_pool_gain"]


def _matrix(members: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(p of shape (n_questions, n_forecasters) with NaN where a forecaster did not answer, outcome per question)."""
    wide = members.pivot(index="question_id", columns="forecaster", values="p_yes")
    outcome = members.groupby("question_id")["outcome"].first().reindex(wide.index)
    return wide.to_numpy(dtype=float), outcome.to_numpy(dtype=int)


def check_max_pool(answer: Any, members: pd.DataFrame) -> Verdict:
    """Exercise 1: ``answer = {"Brier of max minus Brier of mean": d, "where max loses": "resolved Yes" or
    "resolved No"}``: the ``max`` pool's mean Brier minus the mean pool's over the panel's questions (``members``:
    one row per forecast, ``question_id``, ``forecaster``, ``p_yes`` as scored, ``outcome``; the pools are
    computed from it with :func:`agent_research.aggregation.aggregate`), within 0.003, and the outcome of the
    questions on which max's Brier exceeds the mean's by more (per question, averaged)."""
    p, o = _matrix(members)
    brier_max = scoring.brier_score(agg.aggregate("max", p), o)
    brier_mean = scoring.brier_score(agg.aggregate("mean", p), o)
    gap = brier_max - brier_mean
    worse_on = "resolved Yes" if gap[o == 1].mean() > gap[o == 0].mean() else "resolved No"
    expected = {"Brier of max minus Brier of mean": float(gap.mean()), "where max loses": worse_on}
    return grade_answers(1, answer, expected, tolerance={"Brier of max minus Brier of mean": 3e-3},
                         options={"where max loses": ("resolved Yes", "resolved No")},
                         what="the max pool against the mean",
                         hint="max is min's mirror image (section 4): it is biased towards Yes; how often did "
                         "the panel's questions resolve Yes?")


#: Exercise 2's inputs: (label, one question's forecasts with NaN for a forecaster who did not answer, outcome).
GAIN_CASES: tuple[tuple[str, tuple[float, ...], int], ...] = (
    ("[0.2, 0.4, 0.9], resolved Yes", (0.2, 0.4, 0.9), 1),
    ("[0.2, 0.4, 0.9], resolved No", (0.2, 0.4, 0.9), 0),
    ("[0.0, 1.0], resolved Yes", (0.0, 1.0), 1),
    ("[0.3, nan, 0.5, nan], resolved No (two did not answer)", (0.3, np.nan, 0.5, np.nan), 0),
    ("one forecaster, [0.7], resolved No", (0.7,), 0),
    ("five who agree, 0.35 each, resolved Yes", (0.35,) * 5, 1),
)


def _gain(p: tuple[float, ...], outcome: int) -> float:
    row = np.asarray(p, dtype=float)
    present = row[~np.isnan(row)]
    average_member = float(scoring.brier_score(present, np.full(present.size, outcome)).mean())
    pool = float(scoring.brier_score(agg.mean(row[None, :]), [outcome])[0])
    return average_member - pool


def check_mean_pool_gain(function: Callable[..., Any]) -> Verdict:
    """Exercise 2: ``function(p, outcome)`` returns the average member's Brier minus the mean pool's on one
    question (``p``: 1-D array of the forecasters' p_yes, NaN for one who did not answer; ``outcome`` 0/1),
    within 1e-9, on :data:`GAIN_CASES`; the right values come from :func:`benchmarks.scoring.brier_score` and
    :func:`agent_research.aggregation.mean`."""
    cases = [FunctionCase(label, (np.array(p, dtype=float), o), _gain(p, o)) for label, p, o in GAIN_CASES]
    return grade_function(2, function, cases, tolerance=1e-9, what="mean_pool_gain",
                          hint="leave out the NaN entries first; the average member is the mean of the members' "
                          "(p - o)^2, the mean pool's Brier is (mean(p) - o)^2.")


#: Exercise 3's new entry: it answered question 1 of the hand example only, with this Brier score.
NEW_ENTRY: tuple[str, int, float] = ("d", 1, 0.07)


def check_adjusted_entry(answer: Any, hand: pd.DataFrame) -> Verdict:
    """Exercise 3: ``answer = {"adjusted Brier": a, "Brier Index": i, "rank after adjustment": r}`` of the entry
    :data:`NEW_ENTRY` added to the notebook's hand example (``hand``: columns ``entry``, ``question_id``,
    ``brier``, ``question_type``), by :func:`benchmarks.scoring.brier_index.brier_index_table` with every entry in
    the fit: ``a`` within 0.002, ``i`` within 0.3, ``r`` (1 is the lowest adjusted Brier) exact."""
    entry, question, brier = NEW_ENTRY
    added = pd.concat([hand, pd.DataFrame({"entry": [entry], "question_id": [question], "brier": [brier],
                                           "question_type": [hand["question_type"].iloc[0]]})], ignore_index=True)
    table = brier_index_table(added, brier_col="brier").set_index("entry")
    adjusted = table["adjusted_brier_overall"]
    expected = {"adjusted Brier": float(adjusted[entry]), "Brier Index": float(table.loc[entry, "brier_index_overall"]),
                "rank after adjustment": int((adjusted < adjusted[entry]).sum()) + 1}
    return grade_answers(3, answer, expected, tolerance={"adjusted Brier": 2e-3, "Brier Index": 0.3},
                         what=f"entry {entry!r} after adjustment",
                         hint="the adjusted score is the entry's Brier minus its question's difficulty plus the "
                         "average difficulty (section 6, by hand); then 100 * (1 - sqrt(score)).")
