"""Checks of notebook 06's exercises (ensembles); each computes its right value with the toolkit.

1. :func:`check_policy_rule`: the student's minimum-success rule as a function, against ``Ensemble.result``.
2. :func:`check_naive_ensemble`: the p_yes of an ensemble that counts failed members as 0.5.
3. :func:`check_twin_members`: what differs between two members that differ only by seed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from agent_providers import ScriptedProvider
from agent_research import Ensemble, ForecasterAgent, MemberSettings
from agent_research.ensemble import EnsembleResult
from agent_schemas import Forecast, Question, SearchOutcome
from agent_tools import ToolExecutor
from benchmarks.teaching.grading import FunctionCase, Verdict, grade_answers, grade_function

__all__ = ["POLICY_CASES", "check_naive_ensemble", "check_policy_rule", "check_twin_members"]

#: Exercise 1's cases: (members that succeeded, members, min_success_fraction); 7 of 25 at 0.28 is where
#: ``n_ok >= fraction * n`` in floating point (7 >= 7.000000000000001) gets it wrong.
POLICY_CASES: tuple[tuple[int, int, float], ...] = (
    (2, 5, 0.6), (3, 5, 0.6), (2, 5, 0.4), (2, 5, 0.5), (3, 5, 0.5), (5, 5, 1.0), (4, 5, 1.0), (0, 5, 0.1),
    (1, 3, 1 / 3), (7, 25, 0.28), (1, 1, 1.0),
)


def check_policy_rule(function: Callable[[int, int, float], bool], forecasts: Sequence[Forecast], question: Question) -> Verdict:
    """Exercise 1: ``function(n_ok, n_members, min_success_fraction)`` says whether the minimum-success policy
    is met; the right values come from ``Ensemble.result`` on member lists built from ``forecasts`` (the
    notebook's scripted team: successes and typed failures), for :data:`POLICY_CASES`."""
    ok = next(f for f in forecasts if f.ok)
    failed = [f for f in forecasts if not f.ok]
    cases = []
    for n_ok, n, fraction in POLICY_CASES:
        members = ([ok.model_copy(update={"agent_id": f"ok-{i}"}) for i in range(n_ok)]
                   + [failed[i % len(failed)].model_copy(update={"agent_id": f"failed-{i}"}) for i in range(n - n_ok)])
        checker = Ensemble([ForecasterAgent(ScriptedProvider())], min_success_fraction=fraction)
        met = checker.result(question.visible(), members, 0.0).policy_met
        cases.append(FunctionCase(f"{n_ok} of {n} ok, min_success_fraction {fraction:.4g}", (n_ok, n, fraction), met))
    return grade_function(1, function, cases, tolerance=0.0, what="policy_met",
                         hint="'at least' that fraction of the members, and at least one; beware of floating point: "
                         "0.28 * 25 is 7.000000000000001.")


def check_naive_ensemble(answer: Any, result: EnsembleResult, question: Question) -> Verdict:
    """Exercise 2: ``answer = {"naive p_yes": p, "closer to the outcome": "naive" or "successes only"}`` for
    ``result`` (the scripted team's ensemble) with every failed member counted as 0.5; p within 0.001."""
    naive = float(np.nan_to_num(result.p_yes_row(), nan=0.5).mean())
    proper = float(result.aggregate("mean"))
    closer = "naive" if abs(naive - question.outcome) < abs(proper - question.outcome) else "successes only"
    return grade_answers(2, answer, {"naive p_yes": naive, "closer to the outcome": closer}, tolerance={"naive p_yes": 1e-3},
                         options={"closer to the outcome": ("naive", "successes only")}, what="the naive ensemble",
                         hint="the member row of section 2 has every member's p_yes (NaN for a failure); the outcome "
                         "is printed in section 1's plot.")


def check_twin_members(answer: Any, question: Question, outcomes: list[SearchOutcome], executor: ToolExecutor) -> Verdict:
    """Exercise 3: ``answer = {"identical prompts": bool, "the call parameter that differs": name}`` for two
    members built with the same persona and temperature (``Ensemble.from_providers``), on the same research."""
    twins = Ensemble.from_providers(ScriptedProvider(), n_members=2, executor=executor, personas=["skeptic"],
                                    temperatures=[0.7], seed=0, member=MemberSettings(max_results=2, max_evidence=1))
    a, b = twins.members
    params_a, params_b = a.call_params(outcomes), b.call_params(outcomes)
    differs = [k for k in params_a if params_a[k] != params_b[k]]
    expected = {"identical prompts": a.build_messages(question, outcomes) == b.build_messages(question, outcomes),
                "the call parameter that differs": ", ".join(differs) or "none"}
    return grade_answers(3, answer, expected, what="the twin members",
                         hint="section 1: from_providers cycles personas and temperatures over the members, and "
                         "member i gets seed + i; the call parameters are json_schema, temperature, max_tokens, seed.")
