"""Which pooling rule wins on the bundled numeric and multiple-choice questions with the simulator, and what the
coherence projection does to sibling markets.

1. **Numeric pooling.** Every bundled numeric question (15,603; ``--sample`` for fewer), ``--members``
   simulated members per question (:func:`agent_providers.simulator_kinds.member_forecasts`: the simulator's
   default parameters, each member's seven stated percentiles read into a 201-point CDF as a model's answer
   would be), pooled by every numeric rule; CRPS (in units of the range, lower is better) per rule, averaged
   over ``--seeds`` simulator seeds. Each rule's difference from the best rule is shown with a standard error
   clustered by series (``source``, ``source_question_id``) of the seed-averaged per-question differences.
2. **Multiple-choice pooling.** The 25 sibling-group questions, the same way (multi-category Brier score).
3. **Coherence of binary siblings** (:mod:`agent_schemas.kinds.multiple_choice.coherence`). For the 25 groups:
   the mean of their members' incoherence (sum of p_yes minus 1) and the group Brier score (sum of the members'
   binary Brier scores) before and after the Euclidean projection onto the simplex, for (a) the markets' prices
   at freeze and (b) the simulator's ensemble mean of ``--members`` binary members on each sibling market.

Measured on 2026-12-05 (defaults: 5 members, 3 seeds, every question; 227 s for the numeric part on a shared
2-core machine): numeric CRPS quantile_average 0.04970 (best), mean +0.00009 (se 0.00001), trimmed_mean +0.00013
(0.00002), median +0.00034 (0.00003), least_confident +0.01368 (0.00087); multiple choice Brier log_pool 0.3682
(best), extremized +0.0008 (0.015), mean +0.0017 (0.0018), least_confident +0.048 (0.021) on 25 questions (no
rule but least_confident is told apart); coherence, mean group Brier before -> after the projection: market
prices 0.3836 -> 0.3285 (mean |sum - 1| 0.205), sim ensemble mean 0.3822 -> 0.2985 (0.365), never worse on any
group.

These scores measure the simulation's parameters, not a model (SIMULATED). Usage:
``python benchmarks/perf/bundled_kinds_study.py [--members 5] [--seeds 3] [--sample N]`` (about 3 minutes for
every numeric question and 3 seeds on one core).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from agent_providers import SimParams, SimulatorProvider, SimWorld  # noqa: E402
from agent_providers.simulator import SIMULATION_NOTE  # noqa: E402
from agent_providers.simulator_kinds import member_forecasts  # noqa: E402
from agent_schemas.kinds.multiple_choice import MULTIPLE_CHOICE  # noqa: E402
from agent_schemas.kinds.multiple_choice.coherence import group_brier, incoherence, project_to_simplex  # noqa: E402
from agent_schemas.kinds.numeric import NUMERIC  # noqa: E402
from benchmarks.questions import (  # noqa: E402
    load_forecastbench,
    load_multiple_choice_questions,
    load_numeric_questions,
    sibling_groups,
)


def clustered_se(diff: np.ndarray, clusters: list[str]) -> float:
    """Standard error of the mean of ``diff`` with observations clustered (sum of per-cluster residual sums;
    Cameron & Miller 2015, without the small-sample factor)."""
    _, idx = np.unique(np.asarray(clusters), return_inverse=True)
    resid = diff - diff.mean()
    sums = np.bincount(idx, weights=resid)
    return float(np.sqrt((sums ** 2).sum()) / diff.size)


def rule_table(title: str, scores: dict[str, np.ndarray], clusters: list[str], unit: str) -> None:
    means = {m: float(s.mean()) for m, s in scores.items()}
    best = min(means, key=means.get)
    print(f"\n{title} (lower is better; best: {best})")
    print(f"{'rule':<18}{unit:>10}{'minus best':>14}{'clustered se':>14}")
    for m in sorted(means, key=means.get):
        d = scores[m] - scores[best]
        print(f"{m:<18}{means[m]:>10.5f}{d.mean():>+14.5f}{clustered_se(d, clusters):>14.5f}")


def pooled_scores(kind, qs, stack_of, seeds: int, score: str) -> dict[str, np.ndarray]:
    specs = [q.spec for q in qs]
    outcomes = [q.outcome for q in qs]
    total: dict[str, np.ndarray] = {}
    for seed in range(seeds):
        stack = stack_of(seed)
        pooled = {m: kind.pool(m, stack) for m in kind.pools}
        for m, forecast in pooled.items():
            total[m] = total.get(m, 0) + kind.score(specs, forecast, outcomes)[score] / seeds
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--members", type=int, default=5, help="Simulated members per question.")
    parser.add_argument("--seeds", type=int, default=3, help="Simulator seeds averaged over.")
    parser.add_argument("--sample", type=int, default=None, help="Use a seeded sample of this many numeric questions.")
    args = parser.parse_args()
    print(SIMULATION_NOTE)

    # 1. numeric
    t0 = time.perf_counter()
    qs = load_numeric_questions(sample_n=args.sample, seed=0)
    world = SimWorld.from_questions(qs)

    def numeric_stack(seed: int) -> np.ndarray:
        return member_forecasts(SimulatorProvider(SimParams(seed=seed), world=world), qs, args.members)

    crps = pooled_scores(NUMERIC, qs, numeric_stack, args.seeds, "crps")
    print(f"\nnumeric: {len(qs):,} questions, {len({q.cluster_id for q in qs})} series, {args.members} members, "
          f"{args.seeds} seeds ({time.perf_counter() - t0:.0f} s)")
    rule_table("numeric pooling, CRPS in units of the range", crps, [q.cluster_id for q in qs], "CRPS")

    # 2. multiple choice (the groups differ in size: pooled and scored one size at a time)
    mc = load_multiple_choice_questions()
    mc_world = SimWorld.from_questions(mc)
    brier: dict[str, list[np.ndarray]] = {}
    order: list[str] = []
    for k in sorted({len(q.spec.options) for q in mc}):
        group = [q for q in mc if len(q.spec.options) == k]
        order += [q.cluster_id for q in group]
        scores = pooled_scores(MULTIPLE_CHOICE, group, lambda seed, group=group: member_forecasts(
            SimulatorProvider(SimParams(seed=seed), world=mc_world), group, args.members), args.seeds, "brier")
        for m, s in scores.items():
            brier.setdefault(m, []).append(s)
    rule_table(f"multiple choice pooling ({len(mc)} sibling groups), multi-category Brier",
               {m: np.concatenate(v) for m, v in brier.items()}, order, "Brier")

    # 3. coherence of binary siblings
    groups = sibling_groups()
    by_id = {q.id: q for q in load_forecastbench(sources="polymarket")}
    sim = SimulatorProvider()  # the bundled world holds every sibling market
    rows = {"market prices at freeze": [], f"sim ensemble mean ({args.members} members)": []}
    for g in groups:
        members = [by_id[i] for i in g.member_qids]
        if g.prices is not None:
            rows["market prices at freeze"].append((np.array(g.prices), g.winner))
        panel = np.asarray(sim.member_panel(members, args.members)).mean(axis=1)
        rows[f"sim ensemble mean ({args.members} members)"].append((panel, g.winner))
    print(f"\ncoherence of binary siblings ({len(groups)} groups, {sum(len(g.options) for g in groups)} markets): "
          "group Brier = sum of the members' binary Brier scores, lower is better")
    print(f"{'forecast':<30}{'groups':>7}{'mean |sum-1|':>14}{'Brier':>9}{'projected':>11}{'never worse':>13}")
    for name, items in rows.items():
        before = np.array([group_brier(p, w) for p, w in items])
        after = np.array([group_brier(project_to_simplex(p), w) for p, w in items])
        gap = np.mean([abs(incoherence(p)) for p, _ in items])
        print(f"{name:<30}{len(items):>7}{gap:>14.4f}{before.mean():>9.4f}{after.mean():>11.4f}"
              f"{str(bool((after <= before + 1e-12).all())):>13}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
