"""Fit inputs of simulated questions drawn from the simulator directly (no pipeline, no prompts): thousands of
questions in about a second, for the known-optimum checks of the fitted methods."""

from __future__ import annotations

import datetime as dt

import numpy as np

from agent_providers.simulator import SimParams, SimulatorProvider, SimWorld, question_key
from agent_schemas import Question
from benchmarks.fitted import FitInputs

SOURCE = "sim-test"
CLIP = (0.01, 0.99)


def _said(x: float) -> float:
    """What a simulated agent answers for log-odds ``x``: an integer percent in [1, 99] (as the simulator)."""
    return min(max(round(100 / (1 + np.exp(-x))), 1), 99) / 100


def simulated_questions(n: int, *, seed: int = 0, yes_rate: float = 0.4, per_round: int = 50) -> list[Question]:
    """``n`` resolved questions in rounds of ``per_round`` (one forecast date each, 14 days apart), each
    resolving 20-119 days after its forecast date, Yes with probability ``yes_rate``."""
    rng = np.random.default_rng(seed)
    start = dt.date(2024, 1, 7)
    out = []
    for i in range(n):
        f = start + dt.timedelta(days=14 * (i // per_round))
        out.append(Question(id=f"sim-{i}", text=f"Will simulated event {i} happen?", forecast_date=f,
                            resolution_date=f + dt.timedelta(days=int(rng.integers(20, 120))),
                            outcome=int(rng.random() < yes_rate), source=SOURCE, question_type="market"))
    return out


def simulated_inputs(questions: list[Question], params: SimParams, *, n_members: int = 3,
                     member_bias: dict[int, float] | None = None) -> tuple[list[FitInputs], SimWorld]:
    """Each question's members (``member-i@sim``), mean, debate and supervisor as the simulator answers them.

    ``member_bias`` gives member ``i`` its own ``bias`` (a second provider with the same seed, so the shared
    error draw is the same and the errors stay correlated).
    """
    world = SimWorld.from_questions(questions)
    sim = SimulatorProvider(params, world=world)
    biased = {i: SimulatorProvider(SimParams(**{**params.__dict__, "bias": b}), world=world) for i, b in (member_bias or {}).items()}
    rows = []
    for q in questions:
        key = question_key(q.text, q.forecast_date)
        anchor = sim.anchor(world.lookup(*key))
        members = {f"member-{i}@sim": _said(biased.get(i, sim).agent_logodds(anchor, key, f"member-{i}", params.noise)[0])
                   for i in range(n_members)}
        mean = min(max(float(np.mean(list(members.values()))), CLIP[0]), CLIP[1])
        debate = _said(sim.agent_logodds(anchor, key, "debate", params.noise)[0])
        supervisor = _said(sim.agent_logodds(anchor, key, "supervisor", params.noise)[0])
        rows.append(FitInputs(question_id=q.id, forecast_date=q.forecast_date, resolution_date=q.resolution_date,
                              outcome=q.outcome, ok=True, members=members, clip=CLIP,
                              methods={"mean": mean, "debate": debate, "supervisor": supervisor, "pipeline": None}))
    return rows, world
