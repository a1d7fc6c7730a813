"""Checks of notebook 15's exercises (diversity against deliberation); each computes its right value with the toolkit.

1. :func:`check_pair_correlation`: the closed-form correlation of two simulated members' log-odds errors, one of the
   default family and one of family ``b``, shown overlapping search results (:data:`PAIR`), against
   :func:`agent_providers.simulator.error_correlation_of`.
2. :func:`check_best_pool`: which pools better by the closed form for the simulation :data:`GRID_SPEC` (three members;
   a split shows each member one result of its own), one model on split evidence or mixed models on shared evidence,
   against :func:`agent_providers.simulator.pooled_error_variance`.
"""

from __future__ import annotations

from typing import Any

from agent_providers.simulator import SimParams, error_correlation_of, pooled_error_variance
from benchmarks.teaching.grading import Verdict, grade_choice, grade_number

__all__ = ["ARMS", "GRID_SPEC", "PAIR", "best_pool", "check_best_pool", "check_pair_correlation"]

#: Exercise 1's two members: (simulator parameters, the results each prompt shows).
PAIR: tuple[tuple[str, tuple[str, ...]], tuple[str, tuple[str, ...]]] = (
    ("rho=0.3,evidence_rho=0.4", ("r1", "r2")),
    ("rho=0.3,evidence_rho=0.4,family=b", ("r2", "r3")),
)
#: Exercise 2's simulation: one family shares 0.2 of the error, two families a third of that, the same results 0.5.
GRID_SPEC = "noise=1,rho=0.2,evidence_rho=0.5"
#: The grid's arms (evidence-members).
ARMS = ("shared-one", "shared-mixed", "split-one", "split-mixed")


def check_pair_correlation(answer: Any) -> Verdict:
    """Exercise 1: the closed-form correlation of the log-odds errors of the two members :data:`PAIR`, within 0.005."""
    params = [SimParams.parse(spec) for spec, _ in PAIR]
    expected = error_correlation_of(params, [list(shown) for _, shown in PAIR])[0][1]
    return grade_number(1, answer, expected, tolerance=0.005, what="the pair's error correlation",
                        hint="two families share rho * cross_family of the family term; the results add "
                        "evidence_rho * |A & B| / sqrt(|A| * |B|): one result in common of two each.")


def best_pool(spec: str = GRID_SPEC, n_members: int = 3) -> tuple[str, dict[str, float]]:
    """The arm of :data:`ARMS` whose pool of ``n_members`` errs least by the closed form, and each arm's pooled log-odds
    error variance: one model shares the family term, mixed members one family each; shared evidence shows every
    member the same results, split one result of its own each."""
    p = SimParams.parse(spec)
    variances = {}
    for arm in ARMS:
        evidence, members = arm.split("-")
        params = [p if members == "one" else SimParams.parse(f"{spec},family=f{i}") for i in range(n_members)]
        shown = [["r1", "r2", "r3"] if evidence == "shared" else [f"r{i}"] for i in range(n_members)]
        m = error_correlation_of(params, shown)
        pairs = [m[i][j] for i in range(n_members) for j in range(i + 1, n_members)]
        variances[arm] = pooled_error_variance(p.noise, sum(pairs) / len(pairs), n_members)
    return min(variances, key=variances.__getitem__), variances


def check_best_pool(answer: Any) -> Verdict:
    """Exercise 2: which pools better for :data:`GRID_SPEC` with three members, one model on split evidence
    (``split-one``) or mixed models on shared evidence (``shared-mixed``): the one with the less pooled error
    variance (:func:`best_pool`)."""
    _, variances = best_pool()
    pair = ("split-one", "shared-mixed")
    return grade_choice(2, answer, min(pair, key=variances.__getitem__), options=pair,
                        what="the better pool of split-one and shared-mixed by the closed form",
                        hint="compute each arm's mean pairwise correlation (one model: rho, mixed: rho * cross_family; "
                        "shared results add evidence_rho, split ones nothing), then noise^2 * (rho + (1 - rho) / m).")
