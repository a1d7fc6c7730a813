"""Checks of notebook 14's exercises (pooling distributions); each computes its right value with the toolkit.

1. :func:`check_pool_widths`: the central 90% interval widths of the linear pool and of quantile averaging of the
   two members :data:`TWO_MEMBERS`, against :func:`agent_schemas.kinds.numeric.pools.interval_widths` of the
   toolkit's pools.
2. :func:`check_rps_function`: the student's ranked probability score of ordered options, against
   :func:`agent_schemas.kinds.multiple_choice.scores.rps` (scoringrules' RPS divided by ``k - 1``).
3. :func:`check_projection`: the group Brier score of the sibling markets :data:`SIBLINGS` before and after the
   Euclidean projection onto the simplex, and the winner's projected probability, against
   :mod:`agent_schemas.kinds.multiple_choice.coherence`.
"""

from __future__ import annotations

from collections.abc import Callable
from statistics import NormalDist
from typing import Any

import numpy as np

from agent_schemas.kinds import NumericSpec
from agent_schemas.kinds.multiple_choice.coherence import group_brier, project_to_simplex
from agent_schemas.kinds.multiple_choice.scores import rps
from agent_schemas.kinds.numeric import NUMERIC
from agent_schemas.kinds.numeric.grid import LOCATIONS, check_cdf
from agent_schemas.kinds.numeric.pools import interval_widths
from benchmarks.teaching.grading import FunctionCase, Verdict, grade_answers, grade_function

__all__ = ["RPS_CASES", "SIBLINGS", "TWO_MEMBERS", "check_pool_widths", "check_projection", "check_rps_function",
           "normal_cdf"]

#: Exercise 1's members: (median, standard deviation) in locations of a closed range [0, 1].
TWO_MEMBERS: tuple[tuple[float, float], tuple[float, float]] = ((0.35, 0.04), (0.65, 0.04))


def normal_cdf(median: float, sd: float, spec: NumericSpec | None = None) -> np.ndarray:
    """A normal distribution ``N(median, sd^2)`` (in locations) as a valid 201-point grid CDF of ``spec`` (default:
    a closed range [0, 100]): ``Phi((t_j - median) / sd)`` at every grid location, with the closed ends set to 0
    and 1 (the mass beyond them, negligible for a distribution well inside the range, moves onto the ends).

    Returns
    -------
    ndarray of shape (201,)
    """
    spec = spec or NumericSpec(lower=0.0, upper=100.0)
    dist = NormalDist(median, sd)
    cdf = np.array([dist.cdf(float(t)) for t in LOCATIONS])
    if not spec.open_lower:
        cdf[0] = 0.0
    if not spec.open_upper:
        cdf[-1] = 1.0
    return check_cdf(spec, cdf)


def check_pool_widths(answer: Any) -> Verdict:
    """Exercise 1: ``answer = {"linear pool": w_lin, "quantile average": w_qa}``: the width (in locations, units of
    the range) of the central 90% interval of the two members :data:`TWO_MEMBERS` pooled by the linear pool
    (``mean``) and by quantile averaging (``quantile_average``), as
    :func:`~agent_schemas.kinds.numeric.pools.interval_widths` measures them on the toolkit's pools, within 0.01."""
    stack = np.stack([normal_cdf(m, s) for m, s in TWO_MEMBERS])[None]
    pooled = np.stack([NUMERIC.pool("mean", stack)[0], NUMERIC.pool("quantile_average", stack)[0]])[None]
    lin, qa = interval_widths(pooled)[0]
    return grade_answers(1, answer, {"linear pool": float(lin), "quantile average": float(qa)}, tolerance=0.01,
                         what="90% interval widths of the two pools",
                         hint="quantile averaging averages the members' quantiles: a normal with the mean median "
                         "and the same spread (width 2 * 1.645 * sd); the linear pool is a mixture: its 5% point "
                         "is about the first member's 10% point, its 95% point the second's 90% point.")


#: Exercise 2's inputs: (label, probabilities of the ordered options, index of the option that happened).
RPS_CASES: tuple[tuple[str, tuple[float, ...], int], ...] = (
    ("[0.1, 0.2, 0.4, 0.2, 0.1], middle option happened", (0.1, 0.2, 0.4, 0.2, 0.1), 2),
    ("[0.6, 0.1, 0.1, 0.1, 0.1], last option happened", (0.6, 0.1, 0.1, 0.1, 0.1), 4),
    ("[0.1, 0.1, 0.1, 0.1, 0.6], last option happened", (0.1, 0.1, 0.1, 0.1, 0.6), 4),
    ("two options [0.7, 0.3], first happened", (0.7, 0.3), 0),
    ("three options [0, 0, 1], first happened (as wrong as can be)", (0.0, 0.0, 1.0), 0),
    ("four options, uniform, second happened", (0.25, 0.25, 0.25, 0.25), 1),
)


def check_rps_function(function: Callable[..., Any]) -> Verdict:
    """Exercise 2: ``function(p, outcome)`` returns the ranked probability score of one forecast of ordered options
    (``p``: 1-D array of the options' probabilities, summing to 1; ``outcome``: index of the option that happened),
    normalised to [0, 1] by dividing by ``k - 1``, within 1e-9, on :data:`RPS_CASES`; the right values come from
    :func:`agent_schemas.kinds.multiple_choice.scores.rps`."""
    cases = [FunctionCase(label, (np.array(p, dtype=float), o),
                          float(rps(np.array([p], dtype=float), np.array([o]))[0])) for label, p, o in RPS_CASES]
    return grade_function(2, function, cases, tolerance=1e-9, what="rps",
                          hint="cumulate the forecast and the outcome over the ordered options (P_j and O_j for "
                          "j = 0..k-2, the last split is always 1 = 1), sum (P_j - O_j)^2 and divide by k - 1.")


#: Exercise 3's sibling markets: each one's probability of Yes (they add up to 1.4), and the index of the one that
#: resolved Yes.
SIBLINGS: tuple[tuple[float, ...], int] = ((0.7, 0.5, 0.2), 1)


def check_projection(answer: Any) -> Verdict:
    """Exercise 3: ``answer = {"group Brier before": b0, "group Brier after": b1, "winner after": p}``: the group
    Brier score (:func:`~agent_schemas.kinds.multiple_choice.coherence.group_brier`) of :data:`SIBLINGS` as priced
    and after :func:`~agent_schemas.kinds.multiple_choice.coherence.project_to_simplex`, and the winner's projected
    probability, each within 0.005."""
    prices, winner = SIBLINGS
    projected = project_to_simplex(np.array(prices))
    expected = {"group Brier before": float(group_brier(np.array(prices), winner)),
                "group Brier after": float(group_brier(projected, winner)), "winner after": float(projected[winner])}
    return grade_answers(3, answer, expected, tolerance=5e-3, what="the projection of the sibling markets",
                         hint="the projection subtracts one theta from every member and floors at 0; here none "
                         "reaches 0, so theta = (sum - 1) / k. The group Brier is sum_k (p_k - o_k)^2.")
