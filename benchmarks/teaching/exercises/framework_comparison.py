"""Checks of notebook 10's exercises (framework comparison); each runs the frameworks for its right value.

1. :func:`check_spread_gate`: whether the specialists run under two thresholds, and the calls saved.
2. :func:`check_split_roles`: the token ledger when the bull and the bear have their own providers.
3. :func:`check_overhead_share`: how the orchestration overhead's share of wall time moves with latency.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pandas as pd

from agent_providers import ScriptedProvider
from agent_research import PipelineConfig
from agent_research.frameworks import RoleProviders
from agent_schemas import PipelineTrace
from agent_providers import scripted_world
from benchmarks.teaching.grading import Verdict, grade_answers, grade_choice, is_placeholder, is_unanswered, not_answered

__all__ = ["GATE_THRESHOLDS", "LATENCIES_S", "SHARE_CHOICES", "SUPERVISOR_BILLED_TO", "check_overhead_share",
           "check_spread_gate", "check_split_roles"]

RunAll = Callable[..., Awaitable[tuple[dict[str, PipelineTrace], dict[str, ScriptedProvider]]]]
#: Exercise 1's reconciliation thresholds.
GATE_THRESHOLDS = (0.7, 0.3)


async def check_spread_gate(answer: Any, run_all: RunAll, config: PipelineConfig) -> Verdict:
    """Exercise 1: ``answer = {"specialists run at 0.7": bool, "specialists run at 0.3": bool, "calls saved at
    0.7": n}`` for the notebook's question, run in every framework by ``run_all`` with ``config`` and each
    threshold of :data:`GATE_THRESHOLDS`; calls saved against ``config``'s own run (the same in every
    framework, else the check says so), exact."""
    if is_unanswered(answer):
        return not_answered(1, "the gated runs ('specialists run at 0.7', 'specialists run at 0.3', 'calls saved at 0.7')")
    _, plain = await run_all(config)
    expected: dict[str, Any] = {}
    saved_at_first = 0
    for threshold in GATE_THRESHOLDS:
        traces, providers = await run_all(config.model_copy(update={"reconcile_min_spread": threshold}))
        ran = {fw: t.debate is not None and t.supervisor is not None for fw, t in traces.items()}
        saved = {fw: len(plain[fw].requests) - len(providers[fw].requests) for fw in providers}
        if len(set(ran.values())) > 1 or len(set(saved.values())) > 1:
            return Verdict(1, "wrong", f"the frameworks disagree at threshold {threshold} (ran {ran}, calls saved "
                                       f"{saved}): that is a bug to report, not your answer's fault.")
        expected[f"specialists run at {threshold}"] = next(iter(ran.values()))
        if threshold == GATE_THRESHOLDS[0]:
            saved_at_first = next(iter(saved.values()))
    expected[f"calls saved at {GATE_THRESHOLDS[0]}"] = saved_at_first
    return grade_answers(1, answer, expected, what="the gated runs",
                         hint="the members' p_yes of section 1 give the spread (max - min); a skipped debate and "
                         "supervisor make none of their calls.")


#: Exercise 2's choices: whose model the supervisor's calls are billed to.
SUPERVISOR_BILLED_TO = ("the members' model", "bull-model", "bear-model")


async def check_split_roles(answer: Any, run_all: RunAll, config: PipelineConfig) -> Verdict:
    """Exercise 2: ``answer = {"ledger rows": n, "the supervisor is billed to": one of SUPERVISOR_BILLED_TO}``
    for the LangGraph trace of ``run_all(config, roles=...)`` with the members on the scripted world and the
    bull and the bear on their own scripted providers (models "bull-model", "bear-model")."""
    if is_unanswered(answer):
        return not_answered(2, "the ledger ('ledger rows', 'the supervisor is billed to')")
    members = scripted_world.provider()
    roles = RoleProviders(members=[members],
                          bull=ScriptedProvider(responder=scripted_world.respond, model="bull-model"),
                          bear=ScriptedProvider(responder=scripted_world.respond, model="bear-model"))
    traces, _ = await run_all(config, roles=roles)
    records = traces["langgraph"].ledger.to_records()
    supervisor = {r["model"] for r in records if r["role"] == "supervisor"}
    billed = "the members' model" if supervisor == {members.model} else ", ".join(sorted(supervisor))
    return grade_answers(2, answer, {"ledger rows": len(records), "the supervisor is billed to": billed},
                         options={"the supervisor is billed to": SUPERVISOR_BILLED_TO}, what="the split-roles ledger",
                         hint="one row per (method, role, model); count the roles of section 1's ledger, and "
                         "RoleProviders has no supervisor argument here.")


#: Exercise 3's latencies per model call, in seconds, and the choices.
LATENCIES_S = (0.02, 0.1)
SHARE_CHOICES = ("falls", "rises", "stays the same")


def _overhead_share(table: pd.DataFrame) -> pd.Series:
    return table["overhead_ms_per_q"] / 1000 * table["questions"] / table["wall_s"]


async def check_overhead_share(answer: Any, arun_benchmark: Callable[..., Awaitable[tuple[pd.DataFrame, Any]]]) -> Verdict:
    """Exercise 3: ``answer`` is ``"falls"``, ``"rises"`` or ``"stays the same"``: how every framework's
    orchestration overhead, as a share of wall time, moves when the latency per call goes from 20 ms to
    100 ms (``arun_benchmark`` on 3 questions at each; the direction most frameworks show, measured)."""
    if is_placeholder(answer):
        return not_answered(3, f"how the overhead's share moves (one of {', '.join(map(repr, SHARE_CHOICES))})")
    fast, slow = [_overhead_share((await arun_benchmark(n=3, seed=0, latency_s=s))[0]) for s in LATENCIES_S]
    falls = int((slow < fast).sum())
    expected = "falls" if falls * 2 > len(fast) else "rises"
    return grade_choice(3, answer, expected, options=SHARE_CHOICES, what="the overhead's share of wall time",
                        hint="the overhead per question is milliseconds of Python; the provider's time grows with "
                        "the latency times the calls.")
