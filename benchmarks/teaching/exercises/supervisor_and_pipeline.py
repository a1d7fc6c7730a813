"""Checks of notebook 08's exercises (supervisor and pipeline); each computes its right value with the toolkit.

1. :func:`check_halved_weights`: final p_yes of three supervisor cases under halved combination weights.
2. :func:`check_spread_threshold`: whether the specialists would have run under a threshold, from a trace.
3. :func:`check_grounding_rule`: the student's grounding rule as a function, against the toolkit's
   (:func:`agent_research.confidence.ground_supervisor`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from agent_providers import ScriptedProvider
from agent_research import CombinationRule, ForecastPipeline, PipelineConfig
from agent_research.confidence import ground_supervisor
from agent_schemas import PipelineTrace, SupervisorArtifact
from benchmarks.teaching.grading import FunctionCase, Verdict, grade_answers, grade_function

__all__ = ["HALVED_WEIGHTS", "SPREAD_THRESHOLD", "check_grounding_rule", "check_halved_weights", "check_spread_threshold"]

#: Exercise 1's supervisor weights: the defaults halved.
HALVED_WEIGHTS = {"high": 0.5, "medium": 0.25, "low": 0.0}
#: Exercise 2's reconciliation threshold (max - min of the members' p_yes).
SPREAD_THRESHOLD = 0.2


def check_halved_weights(answer: Any, artifacts: Mapping[str, SupervisorArtifact], aggregate: float) -> Verdict:
    """Exercise 1: ``answer = {case: final p_yes}`` for each supervisor artifact of ``artifacts`` (the three
    coverage cases), combined with the ensemble ``aggregate`` by ``CombinationRule`` with
    :data:`HALVED_WEIGHTS` and no debate; within 0.001."""
    rule = CombinationRule(supervisor_weights=dict(HALVED_WEIGHTS))
    expected = {name: rule.combine(aggregate, None, art)[0] for name, art in artifacts.items()}
    return grade_answers(1, answer, expected, tolerance=1e-3, what="the final p_yes with halved weights",
                         hint="(1 - w) * aggregate + w * p_supervisor, with w the halved weight of each case's "
                         "confidence (section 2's table has the supervisor's p_yes and confidence), then clipped.")


def check_spread_threshold(answer: Any, trace: PipelineTrace, config: PipelineConfig) -> Verdict:
    """Exercise 2: ``answer = {"the specialists run": bool, "tokens saved": n}`` for ``trace`` (recorded with
    ``config``) had the pipeline used ``reconcile_min_spread`` :data:`SPREAD_THRESHOLD`: whether the debate and
    supervisor would have run (the pipeline's own ``reconcile_inputs`` on the recorded members), and the
    tokens (input + output) they spent in the trace that the threshold would have saved; exact."""
    gated = ForecastPipeline.from_config(ScriptedProvider(), None,
                                         config.model_copy(update={"reconcile_min_spread": SPREAD_THRESHOLD}))
    members = gated.ensemble.result(trace.question, trace.forecasts, 0.0)
    runs = gated.reconcile_inputs(members)[1] is not None
    spent = sum(u.total_tokens or 0 for method, u in trace.ledger.by_method().items() if method != "ensemble")
    return grade_answers(2, answer, {"the specialists run": runs, "tokens saved": 0 if runs else spent},
                         what="the threshold on this trace",
                         hint="the members' p_yes are in the trace (section 3's plot); the tokens per method are "
                         "in its ledger (trace.ledger.by_method()).")


def check_grounding_rule(function: Callable[[SupervisorArtifact], str], sure: Mapping[str, SupervisorArtifact],
                         careful: Mapping[str, SupervisorArtifact], aggregate: float) -> Verdict:
    """Exercise 3: ``function(artifact)`` returns the supervisor's confidence capped by its evidence (every
    search failed: at most low; no disagreement named, or one left as a coverage gap: at most medium).
    Checked against :func:`agent_research.confidence.ground_supervisor` on the always-sure (``sure``) and
    careful (``careful``) supervisors' artifacts and on copies that change one thing: a stated "low" with
    every point supported, no disagreement named, a stated "medium" with every search failed."""
    arts = {f"always sure, {name}": a for name, a in sure.items()}
    arts |= {f"careful, {name}": a for name, a in careful.items()}
    first, last = next(iter(sure.values())), list(sure.values())[-1]
    arts["always sure, all searches ok, but stated 'low'"] = first.model_copy(update={"confidence": "low", "grounding": None})
    arts["always sure, all searches ok, no disagreement named"] = first.model_copy(update={"disagreements": [], "grounding": None})
    arts["every search failed, stated 'medium'"] = last.model_copy(update={"confidence": "medium", "grounding": None})
    cases = [FunctionCase(label, (art,), ground_supervisor(art).effective) for label, art in arts.items()]
    verdict = grade_function(3, function, cases, tolerance=0.0, what="grounded_confidence",
                             hint="a cap only lowers: take the lowest of the stated confidence and every cap that "
                             "applies; art.search_outcomes[i].ok, art.coverage[i].status == 'gap', art.disagreements.")
    if not verdict.right:
        return verdict
    rule = CombinationRule()
    finals = "; ".join(f"{name}: {rule.combine(aggregate, None, art)[0]:.3f}" for name, art in sure.items())
    return dataclasses.replace(verdict, message=verdict.message + f" The always-sure supervisor's final p_yes, "
                               f"grounded: {finals}. Was your prediction right?")
