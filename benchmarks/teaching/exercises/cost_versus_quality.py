"""Checks of notebook 12's exercises (cost versus quality); each computes its right value with the toolkit.

1. :func:`check_pipeline_cost`: what 1,000 questions of the pipeline cost at a hosted model's list price.
2. :func:`check_calibrated_anchor_d`: the extremizing factor fitted to members with calibrated anchors.
3. :func:`check_members_enough`: how many correlated members come within 0.001 of twelve.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from agent_providers import SimParams, SimulatorProvider, SimWorld, cost_usd
from agent_research import aggregation as agg
from agent_schemas import Question, TokenUsage
from benchmarks.teaching.grading import Verdict, grade_answers, grade_number

__all__ = ["PRICED_MODEL", "check_calibrated_anchor_d", "check_members_enough", "check_pipeline_cost"]

#: Exercise 1's model, at its list price in :mod:`agent_providers.pricing`.
PRICED_MODEL = "anthropic/claude-sonnet-4-5"


def _usd_per_1000(costs: pd.DataFrame, method: str, n_questions: int) -> float:
    row = costs.set_index("label").loc[method]
    usage = TokenUsage(input_tokens=round(row["input_tokens"] / n_questions), output_tokens=round(row["output_tokens"] / n_questions),
                       calls=1)
    return 1000 * cost_usd(PRICED_MODEL, usage)


def check_pipeline_cost(answer: Any, costs: pd.DataFrame, n_questions: int) -> Verdict:
    """Exercise 1: ``answer = {"pipeline USD per 1,000 questions": usd, "pipeline / mean": ratio}`` at
    :data:`PRICED_MODEL`'s list price, with the tokens per question of the simulator run (``costs``: one row
    per method with its input and output tokens over ``n_questions``). The USD within 2% of the right value
    (stated in dollars), the ratio within 0.05."""
    pipeline, mean = _usd_per_1000(costs, "pipeline", n_questions), _usd_per_1000(costs, "mean", n_questions)
    expected = {"pipeline USD per 1,000 questions": pipeline, "pipeline / mean": pipeline / mean}
    tolerance = {"pipeline USD per 1,000 questions": round(0.02 * pipeline, 2), "pipeline / mean": 0.05}
    return grade_answers(1, answer, expected, tolerance=tolerance, what="the pipeline's cost",
                         hint=f"tokens per question from the cost table (input and output apart) times 1,000, priced "
                         f"with cost_usd({PRICED_MODEL!r}, TokenUsage(...)); the mean costs the ensemble alone.")


def check_calibrated_anchor_d(answer: Any, world: SimWorld, questions: Sequence[Question], y: np.ndarray, half: np.ndarray,
                              rhos: Sequence[float]) -> Verdict:
    """Exercise 2: ``answer = {"fitted d at rho=0": "above 1" or "below 1", "as rho grows, d": "rises",
    "falls" or "neither"}`` for five simulated members with calibrated anchors (``scale=1.0``, noise 0.8), the
    factor fitted on the ``half`` of the questions, at each correlation of ``rhos``."""
    ds = []
    for rho in rhos:
        panel = np.asarray(SimulatorProvider(SimParams(noise=0.8, rho=rho, scale=1.0), world=world).member_panel(questions, 5))
        ds.append(agg.fit_extremizing_factor(panel[half], y[half]))
    steps = np.diff(ds)
    trend = "rises" if (steps > 0).all() else "falls" if (steps < 0).all() else "neither"
    expected = {"fitted d at rho=0": "above 1" if ds[0] > 1 else "below 1", "as rho grows, d": trend}
    return grade_answers(2, answer, expected, what="the factor fitted to calibrated anchors",
                         options={"fitted d at rho=0": ("above 1", "below 1"), "as rho grows, d": ("rises", "falls", "neither")},
                         hint="a member is its anchor plus noise on the log-odds scale: is a calibrated anchor plus "
                         "noise still calibrated, and does the noise average out when it is shared?")


def check_members_enough(answer: Any, by_members: pd.DataFrame, column: str = "rho=0.3") -> Verdict:
    """Exercise 3: ``answer`` is the fewest members (a row of ``by_members``, the notebook's Brier of the mean
    by number of members) whose Brier score in ``column`` is within 0.001 of twelve members'; exact."""
    target = by_members.loc[12, column] + 0.001
    enough = int(by_members.index[by_members[column] <= target][0])
    return grade_number(3, answer, enough, tolerance=0, what="the members that come within 0.001 of twelve",
                        hint=f"read the table of section 4: the first row whose {column} column is at most twelve "
                        "members' Brier plus 0.001.")
