"""Resolved question histories drawn from the simulator directly (no pipeline, no prompts): the fitted
methods' inputs for thousands of questions in about a second, for the known-optimum tests of
:mod:`benchmarks.protocol.fitted` and the measurement that chose its recency rule
(``benchmarks/perf/fitted_recency.py``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence

import numpy as np

from agent_providers.simulator import SimParams, SimulatorProvider, SimWorld, question_key
from agent_schemas import Question
from benchmarks.protocol.fitted import FitInputs

__all__ = ["CLIP", "SOURCE", "simulated_inputs", "simulated_questions"]

#: The source of every simulated question (one yes-rate ``m`` for the simulator's anchors).
SOURCE = "sim-test"
#: The combination rule's bounds the simulated mean is clipped to (p_yes).
CLIP = (0.01, 0.99)


def _said(x: float) -> float:
    """What a simulated agent answers for log-odds ``x``: an integer percent in [1, 99] (as the simulator)."""
    return min(max(round(100 / (1 + np.exp(-x))), 1), 99) / 100


def simulated_questions(n: int, *, seed: int = 0, yes_rate: float | Sequence[float] = 0.4, per_round: int = 50,
                        resolution_days: Callable[[np.random.Generator], int] | None = None) -> list[Question]:
    """``n`` resolved questions in rounds of ``per_round`` (one forecast date each, 14 days apart).

    Parameters
    ----------
    n, per_round : int
        Questions, and questions per round (count).
    seed : int
        Seed of the outcomes and resolution dates.
    yes_rate : float or sequence of float
        Probability of Yes in [0, 1]: one for every round, or one per round (at least ``ceil(n / per_round)``
        values; a drifting world).
    resolution_days : callable, optional
        Days from forecast date to resolution date (>= 1) drawn from the generator; default uniform on 20-119.

    Returns
    -------
    list of Question
        Ids ``sim-<i>``, source :data:`SOURCE`, forecast date 2024-01-07 plus 14 days per round.

    Raises
    ------
    ValueError
        When ``yes_rate`` has fewer values than rounds.
    """
    rng = np.random.default_rng(seed)
    start = dt.date(2024, 1, 7)
    rounds = -(-n // per_round)
    rates = np.full(rounds, float(yes_rate)) if np.ndim(yes_rate) == 0 else np.asarray(yes_rate, dtype=float)  # type: ignore[arg-type]
    if rates.shape[0] < rounds:
        raise ValueError(f"yes_rate has {rates.shape[0]} values for {rounds} rounds")
    lag = resolution_days or (lambda g: int(g.integers(20, 120)))
    out = []
    for i in range(n):
        f = start + dt.timedelta(days=14 * (i // per_round))
        days = lag(rng)
        out.append(Question(id=f"sim-{i}", text=f"Will simulated event {i} happen?", forecast_date=f,
                            resolution_date=f + dt.timedelta(days=days),
                            outcome=int(rng.random() < rates[i // per_round]), source=SOURCE, question_type="market"))
    return out


def simulated_inputs(questions: list[Question], params: SimParams, *, n_members: int = 3,
                     member_bias: dict[int, float] | None = None) -> tuple[list[FitInputs], SimWorld]:
    """Each question's members (``member-i@sim``), mean, debate and supervisor as the simulator answers them.

    ``member_bias`` gives member ``i`` its own ``bias`` (a second provider with the same seed, so the shared
    error draw is the same and the errors stay correlated). Returns the inputs, in the questions' order, and
    the simulator's world (whose source yes-rate ``m`` the anchors are drawn around).
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
