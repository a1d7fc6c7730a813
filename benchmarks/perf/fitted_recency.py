"""How the walk-forward learned mean (``fitted_platt``) should weigh its history: full history against recency
weights, side by side on simulated worlds whose yes-rate is constant, jumps or drifts.

This measurement chose :data:`benchmarks.protocol.fitted.PLATT_RECENCY` (``h = max(30 days, age of the 100th most
recent question)``) before that rule was run on the bundled market pool, so the pool's own drift (a yes-rate
from about 0.12 to 0.35-0.39 in March-May 2026) did not pick it. The worlds:

* yes-rate per 14-day round: ``const`` (one rate in [0.15, 0.5]), ``steps`` (1 to 3 jumps at random rounds
  to rates in [0.08, 0.5]), ``walk`` (a random walk of the log-odds, step sd 0.15 per round);
* members ``calibrated`` (the simulator's defaults) or ``under`` (log-odds shrunk to 0.4, noise 0.4,
  correlation 0.6: what Platt's slope corrects);
* ``dense`` (2,000 questions, 50 a round, about the bundled market pool's density) or ``sparse`` (600, 10 a
  round); resolution 1 + min(Exp(45 days), 360) days after the forecast date;
* seeds 100, 101, ... (``--seeds``, 20 by default).

The simulator draws each anchor around one long-run yes-rate of the source, so when a world's yes-rate moves
the mean's calibration moves with it: that is what a recency-weighted intercept can track. For each rule the
script prints the Brier score of ``fitted_platt`` minus that of ``mean`` (x 1,000; negative: the fit helps),
averaged over seeds, per world; then per density the mean over worlds and the largest regret (the rule's
difference minus the best rule's in the same world). Lower is better on both.

Usage: ``python benchmarks/perf/fitted_recency.py [--seeds 20] [--density dense,sparse]`` (about 3 minutes on one core).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# one BLAS thread: each fit is a 2-parameter L-BFGS-B whose BLAS calls, threaded on a shared machine, took
# 40 times longer (20 ms instead of 0.5 ms); the figures do not depend on it
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agent_providers.simulator import SimParams  # noqa: E402
from benchmarks.protocol.fitted import PLATT_RECENCY, RecencyWeights, walk_forward  # noqa: E402
from tests.doubles.simulated_history import simulated_inputs, simulated_questions  # noqa: E402

#: The rules compared: label -> recency weights (None: every earlier question alike).
RULES: dict[str, RecencyWeights | None] = {
    "full": None,
    "h30": RecencyWeights(30, 0), "h60": RecencyWeights(60, 0), "h90": RecencyWeights(90, 0),
    "h30|100": RecencyWeights(30, 100), "h30|200": RecencyWeights(30, 200), "h45|150": RecencyWeights(45, 150),
}
DENSITY = {"dense": (2000, 50), "sparse": (600, 10)}
MEMBERS = {"calibrated": lambda seed: SimParams(seed=seed),
           "under": lambda seed: SimParams(scale=0.4, noise=0.4, rho=0.6, seed=seed)}


def yes_rates(kind: str, rounds: int, rng: np.random.Generator) -> np.ndarray:
    """The yes-rate of each round of a ``const``, ``steps`` or ``walk`` world."""
    if kind == "const":
        return np.full(rounds, rng.uniform(0.15, 0.5))
    if kind == "steps":
        k = int(rng.integers(1, 4))
        jumps = np.sort(rng.choice(np.arange(5, rounds - 3), k, replace=False))
        levels = rng.uniform(0.08, 0.5, k + 1)
        return levels[np.searchsorted(jumps, np.arange(rounds), side="right")]
    z = np.log(r := rng.uniform(0.15, 0.45)) - np.log1p(-r) + np.cumsum(rng.normal(0, 0.15, rounds))
    return 1 / (1 + np.exp(-z))


def brier_vs_mean(kind: str, members: str, density: str, seed: int) -> dict[str, float]:
    """Each rule's Brier of ``fitted_platt`` minus ``mean`` on one world."""
    n, per_round = DENSITY[density]
    rng = np.random.default_rng([seed, 1])
    questions = simulated_questions(n, seed=seed, per_round=per_round, yes_rate=yes_rates(kind, -(-n // per_round), rng),
                                    resolution_days=lambda g: 1 + int(min(g.exponential(45), 360)))
    rows, _ = simulated_inputs(questions, MEMBERS[members](seed))
    o = np.array([r.outcome for r in rows], dtype=float)
    mean = np.array([r.methods["mean"] for r in rows])
    out = {}
    for label, rule in RULES.items():
        fit = walk_forward(rows, methods=("fitted_platt",), recency=rule)
        p = np.array([fit[r.question_id]["fitted_platt"]["p_yes"] for r in rows])
        out[label] = float(np.mean((p - o) ** 2 - (mean - o) ** 2))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=20, help="Worlds of each kind (seeds 100, 101, ...).")
    ap.add_argument("--density", default="dense,sparse", help="Comma-separated: dense, sparse.")
    args = ap.parse_args(argv)
    chosen = next(label for label, rule in RULES.items() if rule == PLATT_RECENCY)
    print(f"fitted_platt minus mean, Brier x 1000 (negative: the fit helps); {args.seeds} seeds per world; chosen: {chosen}")
    every: dict[tuple[str, str, str], dict[str, float]] = {}
    for density in args.density.split(","):
        t0 = time.perf_counter()
        worlds = [(density, k, m) for k in ("const", "steps", "walk") for m in MEMBERS]
        for w in worlds:
            runs = [brier_vs_mean(w[1], w[2], density, 100 + s) for s in range(args.seeds)]
            every[w] = {label: 1000 * float(np.mean([r[label] for r in runs])) for label in RULES}
        print(f"\n{density} ({DENSITY[density][0]} questions, {DENSITY[density][1]} a round; {time.perf_counter() - t0:.0f} s)")
        _print_table({w: every[w] for w in worlds})
    if len(every) > 6:
        print("\nevery world")
        print(f"{'':<18}" + "".join(f"{label:>9}" for label in RULES))
        _summary(every)


def _print_table(table: dict[tuple[str, str, str], dict[str, float]]) -> None:
    print(f"{'world':<18}" + "".join(f"{label:>9}" for label in RULES))
    for w, row in table.items():
        print(f"{w[1] + '/' + w[2]:<18}" + "".join(f"{row[label]:+9.2f}" for label in RULES))
    _summary(table)


def _summary(table: dict[tuple[str, str, str], dict[str, float]]) -> None:
    best = {w: min(row.values()) for w, row in table.items()}
    print(f"{'mean':<18}" + "".join(f"{np.mean([row[label] for row in table.values()]):+9.2f}" for label in RULES))
    print(f"{'max regret':<18}" + "".join(f"{max(row[label] - best[w] for w, row in table.items()):9.2f}" for label in RULES))


if __name__ == "__main__":
    main()
