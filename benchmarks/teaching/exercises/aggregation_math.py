"""Checks of notebook 05's exercises (scoring and aggregation math); each computes its right value with the toolkit.

1. :func:`check_mean_scores`: the student's mean Brier score and log loss of a constant forecast, against
   :mod:`benchmarks.scoring` (which the tests check against scikit-learn).
2. :func:`check_overconfident_d`: which side of 1 the extremizing factor fitted to over-confident members lies.
3. :func:`check_identical_members`: how many different Brier scores four aggregators get when ``rho=1``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from agent_research import aggregation as agg
from benchmarks import scoring
from benchmarks.teaching.grading import FunctionCase, Verdict, grade_choice, grade_function, grade_number

__all__ = ["AGGREGATORS_COMPARED", "SCORE_CASES", "check_identical_members", "check_mean_scores", "check_overconfident_d"]

#: Exercise 1's forecasters and edge cases: (label, p_yes said on every question, questions that resolved No, n).
SCORE_CASES: tuple[tuple[str, float, int, int], ...] = (
    ("A: 0.99 on 100 questions, 1 No", 0.99, 1, 100),
    ("B: 0.90 on 100 questions, 10 No", 0.90, 10, 100),
    ("A': 0.99 on 100 questions, 7 No", 0.99, 7, 100),
    ("0.5 on 4 questions, none No", 0.5, 0, 4),
    ("0.2 on 10 questions, all No", 0.2, 10, 10),
    ("1.0 on 3 questions, 1 No (log loss clipped)", 1.0, 1, 3),
)


def _scores(p_yes: float, misses: int, n: int) -> tuple[float, float]:
    o = np.ones(n)
    o[:misses] = 0
    p = np.full(n, p_yes)
    return float(scoring.brier_score(p, o).mean()), float(scoring.log_loss(p, o).mean())


def check_mean_scores(function: Callable[..., Any]) -> Verdict:
    """Exercise 1: ``function(p_yes, misses, n=100)`` returns ``(mean Brier score, mean log loss)`` of saying
    ``p_yes`` on ``n`` questions of which ``misses`` resolved No and the rest Yes (log loss in nats, ``p``
    clipped to ``[LOG_LOSS_EPS, 1 - LOG_LOSS_EPS]`` as :func:`benchmarks.scoring.log_loss` does), within 1e-9,
    on :data:`SCORE_CASES`."""
    cases = [FunctionCase(label, (p, misses), _scores(p, misses, n), {"n": n}) for label, p, misses, n in SCORE_CASES]
    verdict = grade_function(1, function, cases, tolerance=1e-9, what="mean_scores",
                             hint="per question first: (p - o)^2 and -log(p) for a Yes, -log(1 - p) for a No "
                             "(clip p first, section 1), then the means.")
    if not verdict.right:
        return verdict
    a, b = cases[0].expected, cases[1].expected
    return dataclasses.replace(verdict, message=verdict.message + f" A: Brier {a[0]:.4f}, log loss {a[1]:.4f}; "
                               f"B: Brier {b[0]:.4f}, log loss {b[1]:.4f}. Was your prediction right?")


def check_overconfident_d(answer: Any, member_panel: Callable[..., np.ndarray], train: np.ndarray, y: np.ndarray) -> Verdict:
    """Exercise 2: ``answer`` is ``"above 1"`` or ``"below 1"``: where the extremizing factor fitted on the
    training questions lies for members made over-confident (``member_panel(scale=1.5, rho=0.0)``)."""
    d = agg.fit_extremizing_factor(member_panel(scale=1.5, rho=0.0)[train], y[train])
    return grade_choice(2, answer, "above 1" if d > 1 else "below 1", options=("above 1", "below 1"),
                        what="the fitted d for over-confident members",
                        hint="d multiplies the members' mean log-odds: which way must members that say 90% "
                        "where 75% is right be moved?")


#: Exercise 3's aggregators.
AGGREGATORS_COMPARED = ("mean", "median", "min", "geomean_odds")


def check_identical_members(answer: Any, member_panel: Callable[..., np.ndarray], test: np.ndarray, y: np.ndarray) -> Verdict:
    """Exercise 3: ``answer`` is the number of different mean Brier scores (to 1e-12) among the aggregators of
    :data:`AGGREGATORS_COMPARED` on the later questions, for members with ``rho=1``; exact."""
    shared = member_panel(rho=1.0)
    briers = np.sort([scoring.brier_score(agg.aggregate(m, shared[test]), y[test]).mean() for m in AGGREGATORS_COMPARED])
    distinct = 1 + int(np.sum(np.diff(briers) > 1e-12))
    return grade_number(3, answer, distinct, tolerance=0, what="the number of different Brier scores",
                        hint="with rho=1 every member of a question draws the same error c_q: how many different "
                        "probabilities does a question's panel hold then?")
