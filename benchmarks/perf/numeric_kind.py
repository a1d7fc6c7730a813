"""Speed of the numeric kind's pooling rules and CRPS on large synthetic sets (issue 36, Performance).

Two measurements, each side by side in one process on the same arrays (interleaved rounds, alternating which
side goes first; medians reported, with the ratio against its target):

1. **Pooling.** A stack of ``--questions`` x ``--forecasters`` 201-point CDFs (default 10,000 x 100: 1.6 GB),
   every member the CDF of seven stated percentiles (:func:`agent_schemas.kinds.numeric.answers.cdf_from_percentiles`:
   a noisy reading of the question's centre and spread; half the questions have open bounds). Each rule of
   :data:`agent_schemas.kinds.numeric.pools.POOLS` (as :meth:`NumericKind.pool` runs it: its row checks
   included) against one ``numpy.mean(stack, axis=1)`` over the same array (target: each within 5x). For
   information: :meth:`NumericKind.pool_many` of every rule at once, the rules on the same stack with 5% of the
   members missing (NaN rows, which ``numpy.mean`` cannot skip), and each rule's peak memory beyond the stack
   (:mod:`tracemalloc`, untimed runs).
2. **CRPS.** ``--crps-n`` forecasts (default 1,000,000: 1.6 GB of CDFs) with outcomes inside and beyond the
   range. Ours: :func:`agent_schemas.kinds.numeric.scores.crps` (the exact CRPS of the piecewise-linear CDF).
   scoringrules: ``crps_ensemble`` on the same forecasts as a weighted ensemble, the 201 grid locations as
   members (sorted, ``sorted_ensemble=True``) and each forecast's bucket masses as weights (the mass below the
   range on the first point, above it on the last), outcomes clipped to the range, estimator ``"qd"`` (the
   quantile decomposition: exact for that ensemble, O(m) on sorted members, the fastest exact estimator; the
   ``"nrg"`` and ``"fair"`` ones are O(m^2), ``"int"`` sorts). That is the fair comparison: the same 201 values
   and 201 masses per forecast and the same exact score of the step version of the CDF; ``crps_quantile``
   would need each CDF inverted at fixed levels first. The weights are computed before timing (scoringrules
   is not charged for turning CDFs into masses), and both sides work through the rows in chunks (scoringrules
   at the chunk size measured fastest for it), so neither pays for gigabyte-sized temporaries (target: ours
   within 2x). For information: :meth:`NumericKind.score` (the forecasts and outcomes checked, CRPS, log loss
   and baseline score) on the same arrays.

3. **Multiple-choice pooling, for information** (the issue sets no target for it). A stack of ``--questions`` x
   ``--forecasters`` probability vectors over ``--options`` options (Dirichlet around a per-question
   distribution, 5% of the members missing as rows of NaN): each rule of
   :data:`agent_schemas.kinds.multiple_choice.pools.POOLS` (as :meth:`MultipleChoiceKind.pool` runs it) against
   one ``numpy.mean(stack, axis=1)`` over the same array, interleaved as above. Every rule is vectorised over
   questions (no loop over questions or members), so each ratio is a small constant.

scoringrules runs on its numpy backend unless numba is installed (it is not a dependency here).

Usage::

    python benchmarks/perf/numeric_kind.py [--questions 10000] [--forecasters 100] [--rounds 5]
                                           [--crps-n 1000000] [--options 5]
                                           [--skip-pools] [--skip-crps] [--skip-choice]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tracemalloc
from pathlib import Path

import numpy as np

if __package__ in (None, ""):  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agent_schemas.kinds import MULTIPLE_CHOICE, NUMERIC, NumericSpec  # noqa: E402
from agent_schemas.kinds.numeric import grid, scores  # noqa: E402
from agent_schemas.kinds.numeric.answers import cdf_from_percentiles  # noqa: E402
from benchmarks.perf.scoring_speed import interleaved, side_by_side, timed  # noqa: E402

POOL_TARGET = 5.0
CRPS_TARGET = 2.0
SPECS = (NumericSpec(lower=0, upper=100), NumericSpec(lower=0, upper=100, open_lower=True, open_upper=True))


def member_cdfs(rng: np.random.Generator, spec: NumericSpec, centre: np.ndarray, spread: np.ndarray, m: int) -> np.ndarray:
    """``(len(centre), m, 201)``: each member's CDF of seven percentiles read off a normal around a noisy centre."""
    q = centre.size
    mid = centre[:, None] + rng.normal(0, 0.5, (q, m)) * spread[:, None]
    width = spread[:, None] * rng.lognormal(0, 0.3, (q, m))
    z = np.array([-1.645, -1.2816, -0.6745, 0.0, 0.6745, 1.2816, 1.645])
    values = mid[:, :, None] + width[:, :, None] * z
    if not spec.open_lower:
        values = np.maximum(values, spec.lower)
    if not spec.open_upper:
        values = np.minimum(values, spec.upper)
    return cdf_from_percentiles(spec, values)


def synthetic_stack(n_questions: int, m: int, seed: int = 0) -> np.ndarray:
    """The pooling stack of the module docstring, ``(n_questions, m, 201)``, built a few questions at a time."""
    rng = np.random.default_rng(seed)
    stack = np.empty((n_questions, m, grid.N_POINTS))
    step = max(1, 20_000 // m)
    for s in range(0, n_questions, step):
        q = min(step, n_questions - s)
        spec = SPECS[(s // step) % 2]
        stack[s:s + q] = member_cdfs(rng, spec, rng.uniform(10, 90, q), rng.uniform(3, 25, q), m)
    return stack


def synthetic_scores(n: int, seed: int = 1) -> tuple[list[NumericSpec], np.ndarray, np.ndarray]:
    """``(specs, cdfs (n, 201), outcomes (n,))``: one forecast per question, half with open bounds; outcomes drawn
    around the forecast's centre (some beyond the open bounds)."""
    rng = np.random.default_rng(seed)
    cdfs = np.empty((n, grid.N_POINTS))
    outcomes = np.empty(n)
    specs: list[NumericSpec] = []
    step = 20_000
    for s in range(0, n, step):
        q = min(step, n - s)
        spec = SPECS[(s // step) % 2]
        centre, spread = rng.uniform(10, 90, q), rng.uniform(3, 25, q)
        cdfs[s:s + q] = member_cdfs(rng, spec, centre, spread, 1)[:, 0]
        y = centre + rng.normal(0, 1.3, q) * spread
        outcomes[s:s + q] = y if spec.open_lower else np.clip(y, spec.lower, spec.upper)
        specs += [spec] * q
    return specs, cdfs, outcomes


def peak_extra_mib(fn) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


def pooling(args: argparse.Namespace) -> list[float]:
    stack = synthetic_stack(args.questions, args.forecasters)
    print(f"stack: {args.questions:,} questions x {args.forecasters} forecasters x 201 points = {stack.nbytes / 2**30:.2f} GiB "
          "(members: CDFs of stated percentiles; half the questions with open bounds)")
    ratios = []
    print(f"\nmedian of {args.rounds} interleaved rounds, each rule against numpy.mean(stack, axis=1)")
    for method in NUMERIC.pools:
        t_rule, t_mean = interleaved(lambda method=method: NUMERIC.pool(method, stack), lambda: np.mean(stack, axis=1), args.rounds)
        print(f"  {method}")
        ratios.append(side_by_side((method, t_rule), ("numpy.mean", t_mean), f"{method} / numpy.mean", POOL_TARGET))
    methods = list(NUMERIC.pools)
    t_all, t_mean = interleaved(lambda: NUMERIC.pool_many(stack, methods), lambda: np.mean(stack, axis=1), max(3, args.rounds // 2))
    print("\nfor information (not in the targets)")
    print(f"  pool_many, all {len(methods)} rules at once: {statistics.median(t_all) * 1000:8.0f} ms "
          f"({statistics.median(t_all) / statistics.median(t_mean):.1f}x numpy.mean)")
    rng = np.random.default_rng(2)
    missing = rng.random(stack.shape[:2]) < 0.05
    saved = stack[missing].copy()
    stack[missing] = np.nan
    for method in methods:
        t = statistics.median(timed(lambda method=method: NUMERIC.pool(method, stack)) for _ in range(3))
        print(f"  {method:<17} with 5% of members missing: {t * 1000:8.0f} ms")
    stack[missing] = saved
    for method in methods:
        print(f"  {method:<17} peak memory beyond the stack: {peak_extra_mib(lambda method=method: NUMERIC.pool(method, stack)):7.1f} MiB")
    return ratios


def crps(args: argparse.Namespace) -> float:
    import scoringrules as sr

    specs, cdfs, outcomes = synthetic_scores(args.crps_n)
    t = grid.Ranges.of(specs).locations(outcomes)
    weights = np.empty_like(cdfs)  # bucket masses on the grid points: below the range on t=0, above it on t=1
    weights[:, 0] = cdfs[:, 0]
    np.subtract(cdfs[:, 1:], cdfs[:, :-1], out=weights[:, 1:])
    weights[:, -1] += 1.0 - cdfs[:, -1]
    y = np.clip(t, 0.0, 1.0)
    print(f"\nCRPS: {args.crps_n:,} forecasts x 201 points = {cdfs.nbytes / 2**30:.2f} GiB of CDFs "
          f"({np.mean((t < 0) | (t > 1)):.1%} of outcomes beyond the range)")

    def scoringrules_side(chunk: int, n: int = len(y)) -> np.ndarray:
        out = np.empty(n)
        for s in range(0, n, chunk):
            r = min(chunk, n - s)
            out[s:s + r] = sr.crps_ensemble(y[s:s + r], np.broadcast_to(grid.LOCATIONS, (r, grid.N_POINTS)),
                                            ens_w=weights[s:s + r], sorted_ensemble=True, estimator="qd")
        return out

    sample = min(len(y), 100_000)
    chunk_times = {c: min(timed(lambda c=c: scoringrules_side(c, sample)) for _ in range(2)) for c in (256, 1024, 4096, 16384)}
    best = min(chunk_times, key=chunk_times.get)
    print(f"  scoringrules chunk size: {best} rows (the fastest of {sorted(chunk_times)} rows on {sample:,} forecasts)")
    ours, theirs = scores.crps(cdfs, t), scoringrules_side(best)
    print(f"  check: mean CRPS ours {ours.mean():.5f} (piecewise-linear CDF), scoringrules {theirs.mean():.5f} (the same masses "
          f"on the grid points); mean |difference| {np.abs(ours - theirs).mean():.5f} (< one bin, 0.005)")
    t_ours, t_sr = interleaved(lambda: scores.crps(cdfs, t), lambda: scoringrules_side(best), args.rounds)
    print(f"\n  median of {args.rounds} interleaved rounds")
    ratio = side_by_side(("ours: scores.crps", t_ours), ("scoringrules crps_ensemble (qd, weighted)", t_sr),
                         "ours / scoringrules", CRPS_TARGET)
    t_kind = statistics.median(timed(lambda: NUMERIC.score(specs, cdfs, outcomes)) for _ in range(2))
    print("\n  for information (not in the target)")
    print(f"  NumericKind.score (checks; CRPS, log loss, baseline score): {t_kind * 1000:8.0f} ms")
    return ratio


def choice_stack(n_questions: int, m: int, k: int, seed: int = 3) -> np.ndarray:
    """``(n_questions, m, k)`` members' probability vectors: Dirichlet around a per-question distribution (a
    Dirichlet draw itself), 5% of the members missing (rows of NaN); built a few questions at a time."""
    rng = np.random.default_rng(seed)
    stack = np.empty((n_questions, m, k))
    step = max(1, 200_000 // (m * k))
    for s in range(0, n_questions, step):
        q = min(step, n_questions - s)
        centre = rng.dirichlet(np.ones(k), q)
        gamma = rng.gamma(np.broadcast_to(20 * centre[:, None, :] + 0.05, (q, m, k)))
        stack[s:s + q] = gamma / gamma.sum(axis=2, keepdims=True)
    stack[rng.random((n_questions, m)) < 0.05] = np.nan
    return stack


def choice_pooling(args: argparse.Namespace) -> None:
    stack = choice_stack(args.questions, args.forecasters, args.options)
    print(f"\nmultiple choice, for information (no target): {args.questions:,} questions x {args.forecasters} forecasters x "
          f"{args.options} options = {stack.nbytes / 2**20:.0f} MiB, 5% of the members missing")
    print(f"median of {args.rounds} interleaved rounds, each rule against numpy.mean(stack, axis=1)")
    for method in MULTIPLE_CHOICE.pools:
        t_rule, t_mean = interleaved(lambda method=method: MULTIPLE_CHOICE.pool(method, stack), lambda: np.mean(stack, axis=1),
                                     args.rounds)
        print(f"  {method}")
        side_by_side((method, t_rule), ("numpy.mean", t_mean), f"{method} / numpy.mean", POOL_TARGET)
    for method in MULTIPLE_CHOICE.pools:
        print(f"  {method:<17} peak memory beyond the stack: "
              f"{peak_extra_mib(lambda method=method: MULTIPLE_CHOICE.pool(method, stack)):7.1f} MiB")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=10_000, help="questions in the pooling stack")
    ap.add_argument("--forecasters", type=int, default=100, help="members per question")
    ap.add_argument("--rounds", type=int, default=5, help="timed rounds per side (median reported)")
    ap.add_argument("--crps-n", type=int, default=1_000_000, help="forecasts scored by CRPS")
    ap.add_argument("--skip-pools", action="store_true", help="skip the pooling measurement")
    ap.add_argument("--skip-crps", action="store_true", help="skip the CRPS measurement")
    ap.add_argument("--options", type=int, default=5, help="options per multiple-choice question")
    ap.add_argument("--skip-choice", action="store_true", help="skip the multiple-choice pooling measurement")
    args = ap.parse_args(argv)
    missed = []
    if not args.skip_pools:
        missed += [r for r in pooling(args) if r > POOL_TARGET]
    if not args.skip_crps:
        missed += [r for r in [crps(args)] if r > CRPS_TARGET]
    if not args.skip_choice:
        choice_pooling(args)
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
