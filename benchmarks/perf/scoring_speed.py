"""Speed and memory of :mod:`benchmarks.scoring` on large synthetic forecast sets.

Two measurements, both in one process on the same arrays:

1. **Full metric set vs sklearn.** ``n`` synthetic forecasts for each of ``methods`` methods (default
   1,000,000 x 8). Ours: :func:`benchmarks.scoring.score_summary` per method (Brier, log loss, ECE,
   reliability table, Murphy decomposition with the two within-bin terms). sklearn: only
   ``brier_score_loss`` and ``calibration_curve(strategy="uniform")`` per method. The two sides run
   interleaved, alternating which goes first each round; the median round time is reported with the
   ratio ours / sklearn (target <= 1.5).
2. **Bootstrap vs one scoring pass.** 1,000 clustered bootstrap resamples
   (:func:`benchmarks.scoring.clustered_bootstrap_ci`) of one method's per-question Brier scores, for
   several cluster counts, against one ``score_summary`` pass on that method, interleaved round by round
   (target <= 10 at 100,000 clusters); the ratio of CPU seconds too (the bootstrap's threads add up). The
   bootstrap costs O(resamples x clusters) and is independent of ``n``.

Peak memory of each step is measured with :mod:`tracemalloc` (numpy reports its buffers to it) in
separate, untimed runs; the process's peak RSS comes from :mod:`resource`.

Usage::

    python benchmarks/perf/scoring_speed.py [--n 1000000] [--methods 8] [--rounds 5]
                                            [--clusters 1000 10000 50000 100000] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Callable

import numpy as np

if __package__ in (None, ""):  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.scoring import clustered_bootstrap_ci, score_summary  # noqa: E402

N_BINS = 10


def synthetic(n: int, n_methods: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(p, o)``: p_yes of shape (n_methods, n) in [0, 1] (with some exact 0/1), outcomes of shape (n,)."""
    rng = np.random.default_rng(seed)
    truth = rng.beta(0.7, 0.7, size=n)
    o = (rng.random(n) < truth).astype(np.int64)
    noise = rng.normal(0.0, 0.6, size=(n_methods, n))
    z = np.log(truth / (1 - truth + 1e-12) + 1e-12)
    p = 1.0 / (1.0 + np.exp(-(z + noise) * np.linspace(0.6, 1.6, n_methods)[:, None]))
    p = np.round(p, 3)  # LLM-like: three decimals, so exact 0.0 and 1.0 occur
    return p, o


def ours(p: np.ndarray, o: np.ndarray) -> list:
    return [score_summary(p[m], o, n_bins=N_BINS) for m in range(p.shape[0])]


def sklearn_side(p: np.ndarray, o: np.ndarray) -> list:
    from sklearn.calibration import calibration_curve
    from sklearn.metrics import brier_score_loss

    return [(brier_score_loss(o, p[m]), calibration_curve(o, p[m], n_bins=N_BINS, strategy="uniform")) for m in range(p.shape[0])]


def timed(fn: Callable[[], object]) -> float:
    gc.collect()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def interleaved(first: Callable[[], object], second: Callable[[], object], rounds: int) -> tuple[list[float], list[float]]:
    """Seconds of ``rounds`` timed calls of each side (:func:`timed`), interleaved and alternating which side goes
    first, so that a change of the machine's load falls on both sides alike."""
    t_first: list[float] = []
    t_second: list[float] = []
    for r in range(rounds):
        if r % 2 == 0:
            t_first.append(timed(first))
            t_second.append(timed(second))
        else:
            t_second.append(timed(second))
            t_first.append(timed(first))
    return t_first, t_second


def side_by_side(first: tuple[str, list[float]], second: tuple[str, list[float]], ratio_name: str, target: float,
                 indent: str = "    ") -> float:
    """Print each side's median of its interleaved rounds (``(label, seconds)``, from :func:`interleaved`) and the
    ratio first / second (``ratio_name``) against ``target`` (a ratio at most ``target`` is OK); return the ratio."""
    (label_a, t_a), (label_b, t_b) = first, second
    ma, mb = statistics.median(t_a), statistics.median(t_b)
    width = max(len(label_a), len(label_b)) + 1
    for label, med, times in ((label_a, ma, t_a), (label_b, mb, t_b)):
        print(f"{indent}{label + ':':<{width}} {med * 1000:9.1f} ms   rounds {[round(t * 1000, 1) for t in times]}")
    ratio = ma / mb
    print(f"{indent}ratio {ratio_name} = {ratio:.2f}  (target <= {target:g}: {'OK' if ratio <= target else 'MISSED'})")
    return ratio


def peak_mib(fn: Callable[[], object]) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000, help="forecasts per method")
    ap.add_argument("--methods", type=int, default=8, help="number of methods")
    ap.add_argument("--rounds", type=int, default=5, help="timed rounds per side (median reported)")
    ap.add_argument("--clusters", type=int, nargs="+", default=[1_000, 10_000, 50_000, 100_000], help="cluster counts for the bootstrap")
    ap.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    args = ap.parse_args(argv)

    p, o = synthetic(args.n, args.methods)
    print(f"data: {args.methods} methods x {args.n:,} forecasts ({p.nbytes / 2**20:.0f} MiB of p_yes)")

    # sanity: both sides agree on what they both compute
    s0 = score_summary(p[0], o)
    from sklearn.calibration import calibration_curve
    from sklearn.metrics import brier_score_loss

    assert abs(s0.brier - brier_score_loss(o, p[0])) < 1e-12
    prob_true, _ = calibration_curve(o, p[0], n_bins=N_BINS)
    print(f"check: brier {s0.brier:.6f} == sklearn; reliability bins {len(prob_true)} (sklearn) / "
          f"{int((s0.reliability_table['count'] > 0).sum())} (ours); murphy residual "
          f"{abs(s0.murphy.total() - s0.brier):.1e}")

    # 1. full metric set vs sklearn, interleaved
    t_ours, t_sk = interleaved(lambda: ours(p, o), lambda: sklearn_side(p, o), args.rounds)
    print(f"\n[1] full metric set, {args.methods} methods, median of {args.rounds} rounds")
    side_by_side(("ours (brier, log, ECE, reliability, Murphy+2 terms)", t_ours),
                 ("sklearn (brier_score_loss + calibration_curve)", t_sk), "ours / sklearn", target=1.5)

    # 2. bootstrap vs one scoring pass on one method, interleaved
    scores = s0.brier_scores
    print(f"\n[2] {args.resamples} clustered bootstrap resamples of one method's {args.n:,} Brier scores against one scoring "
          f"pass (score_summary, one method), interleaved, median of {args.rounds} rounds; CPU seconds (every thread) "
          "for information: a loaded machine stretches wall times, not CPU times")
    boot_ratios = {}
    for c in args.clusters:
        clusters = np.random.default_rng(1).integers(0, c, size=args.n)
        cpu: dict[str, list[float]] = {"boot": [], "pass": []}

        def with_cpu(name: str, fn: Callable[[], object]) -> Callable[[], object]:
            def run() -> object:
                c0 = time.process_time()
                out = fn()
                cpu[name].append(time.process_time() - c0)
                return out
            return run

        t_boot, t_pass = interleaved(with_cpu("boot", lambda: clustered_bootstrap_ci(scores, clusters, n_resamples=args.resamples, seed=0)),
                                     with_cpu("pass", lambda: score_summary(p[0], o)), args.rounds)
        ratio = statistics.median(t_boot) / statistics.median(t_pass)
        boot_ratios[c] = ratio
        print(f"    {c:>9,} clusters: bootstrap {statistics.median(t_boot) * 1000:8.1f} ms, pass {statistics.median(t_pass) * 1000:6.1f} ms, "
              f"ratio {ratio:6.2f} (target <= 10: {'OK' if ratio <= 10 else 'MISSED'}); CPU ratio "
              f"{statistics.median(cpu['boot']) / statistics.median(cpu['pass']):6.2f}")

    # 3. memory (untimed runs)
    print("\n[3] peak traced memory (tracemalloc)")
    print(f"    ours, one method:         {peak_mib(lambda: score_summary(p[0], o)):7.1f} MiB")
    print(f"    ours, all {args.methods} methods:    {peak_mib(lambda: ours(p, o)):7.1f} MiB  (keeps {args.methods} per-question Brier arrays)")
    print(f"    sklearn, all methods:     {peak_mib(lambda: sklearn_side(p, o)):7.1f} MiB")
    clusters = np.random.default_rng(1).integers(0, args.clusters[-1], size=args.n)
    print(f"    bootstrap ({args.clusters[-1]:,} clusters): "
          f"{peak_mib(lambda: clustered_bootstrap_ci(scores, clusters, n_resamples=args.resamples)):7.1f} MiB")
    print(f"    process peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
