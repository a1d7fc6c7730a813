"""Coverage of the leaderboard's 95% intervals at the sizes people run, in two worlds.

``--world sim`` (the default): a large simulated run is the population: its questions, their clusters (the run's own, as the report
uses them) and every method's per-question Brier score. Each replication draws ``k`` clusters **with
replacement** (the population as a superpopulation, so the truth does not shrink with the sample), computes
the interval the way the leaderboard does (:func:`benchmarks.scoring.clustered_bootstrap_ci`,
:func:`benchmarks.scoring.paired_difference_ci`) and counts whether it holds the population's value: the
mean Brier of a method over all questions, or the mean paired difference against ``mean``. Every interval
kind the package knows (``hybrid``, the default; ``expanded``; the plain ``percentile``) is measured on the same
draws, side by side.

``--world skewed``: a world like the market pool, where scores are skewed and questions clustered
(:func:`skewed_population`): each cluster has 1-5 questions (uniform), a base probability
``p ~ Beta(0.5, 3)`` (most questions unlikely, a few near even) and **one shared outcome draw** (``u ~
U(0, 1)``; a question resolves YES when ``u`` is below its own probability, its base probability moved by
``N(0, 0.3)`` on the log-odds scale), so a cluster's outcomes move together. Three members forecast each
question with log-odds noise ``N(0, 0.6)`` per member and question plus ``N(0, 0.4)`` shared by the cluster
(a common misreading); ``mean`` is their mean, ``median`` their median, ``extremized`` the mean of their
log-odds times 1.5 and ``min`` the smallest. The targets are the paired differences of ``median``,
``extremized`` and ``min`` against ``mean``, and the Brier of ``mean``, measured the same way as in the
simulator's world.

With ``R`` replications a coverage of 0.95 is known to about ``sqrt(0.95 * 0.05 / R)`` (0.006 at 1,500).

Usage::

    python benchmarks/perf/interval_coverage.py [--world sim|skewed] [--run RUN_DIR] [--n 2000]
                                                [--sizes 12 30 50 200] [--replications 1500]
                                                [--resamples 1000] [--seed 1] [--population-clusters 20000]

Without ``--run`` it first runs ``forecast-reconcile run -p sim --n 2000`` (markets; about a minute) into a
temporary folder.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

if __package__ in (None, ""):  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.report.frame import long_frame, scorable  # noqa: E402
from benchmarks.run_folder.load import load_run  # noqa: E402
from benchmarks.scoring import INTERVALS, clustered_bootstrap_ci, paired_difference_ci  # noqa: E402

#: The Brier means and the paired differences against ``mean`` whose coverage is measured.
BRIER_OF = ("mean", "supervisor", "min")
DIFFERENCE_OF = ("supervisor", "debate", "extremized")


Target = tuple[np.ndarray, np.ndarray | None]
"""Per-question Brier scores of a method, and of ``mean`` for a paired difference (None for a Brier mean)."""


def population(run_dir: Path) -> tuple[dict[str, Target], np.ndarray]:
    """The targets of a run (Brier of :data:`BRIER_OF`, differences to mean of :data:`DIFFERENCE_OF`) on the
    questions every one of those methods answered, and each question's cluster code."""
    df = scorable(long_frame([load_run(run_dir)])[0])
    wide = df.pivot_table(index=["question_id", "cluster"], columns="method", values="p_yes").dropna(
        subset=list({*BRIER_OF, *DIFFERENCE_OF, "mean"}))
    outcome = df.drop_duplicates("question_id").set_index("question_id")["outcome"]
    o = wide.index.get_level_values("question_id").map(outcome).to_numpy(float)
    brier = {m: (wide[m].to_numpy() - o) ** 2 for m in {*BRIER_OF, *DIFFERENCE_OF, "mean"}}
    targets: dict[str, Target] = {f"Brier {m}": (brier[m], None) for m in BRIER_OF}
    targets |= {f"{m} - mean": (brier[m], brier["mean"]) for m in DIFFERENCE_OF}
    codes, _ = pd.factorize(wide.index.get_level_values("cluster"))
    return targets, codes


#: Differences against ``mean`` whose coverage is measured in the skewed world.
SKEWED_DIFFERENCE_OF = ("median", "extremized", "min")


def skewed_population(n_clusters: int = 20_000, seed: int = 0) -> tuple[dict[str, Target], np.ndarray]:
    """The skewed, clustered world of the module docstring: targets and cluster codes of ``n_clusters`` clusters
    (about ``3 * n_clusters`` questions)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, size=n_clusters)
    codes = np.repeat(np.arange(n_clusters), sizes)
    n = codes.size
    base = rng.beta(0.5, 3.0, size=n_clusters).clip(1e-4, 1 - 1e-4)
    z = np.log(base / (1 - base))[codes] + rng.normal(0.0, 0.3, size=n)
    p = 1.0 / (1.0 + np.exp(-z))
    o = (rng.random(n_clusters)[codes] < p).astype(float)  # one outcome draw per cluster
    zm = z + rng.normal(0.0, 0.6, size=(3, n)) + rng.normal(0.0, 0.4, size=n_clusters)[codes]
    members = 1.0 / (1.0 + np.exp(-zm))
    forecasts = {"mean": members.mean(axis=0), "median": np.median(members, axis=0),
                 "extremized": 1.0 / (1.0 + np.exp(-1.5 * zm.mean(axis=0))), "min": members.min(axis=0)}
    brier = {m: (f - o) ** 2 for m, f in forecasts.items()}
    targets: dict[str, Target] = {"Brier mean": (brier["mean"], None)}
    targets |= {f"{m} - mean": (brier[m], brier["mean"]) for m in SKEWED_DIFFERENCE_OF}
    return targets, codes


def coverage(targets: dict[str, Target], codes: np.ndarray, k: int, replications: int, resamples: int,
             seed: int) -> pd.DataFrame:
    """Fraction of ``replications`` draws of ``k`` clusters whose 95% interval holds the population value,
    per interval kind (rows) and target (columns)."""
    members = [np.flatnonzero(codes == g) for g in range(codes.max() + 1)]
    rng = np.random.default_rng(seed)
    hits = {kind: dict.fromkeys(targets, 0) for kind in INTERVALS}
    for r in range(replications):
        drawn = rng.integers(0, len(members), size=k)
        rows = np.concatenate([members[g] for g in drawn])
        labels = np.repeat(np.arange(k), [len(members[g]) for g in drawn])  # a cluster drawn twice counts twice
        for name, (a, b) in targets.items():
            truth = a.mean() if b is None else (a - b).mean()
            for kind in INTERVALS:
                settings = {"n_resamples": resamples, "seed": r, "min_clusters": 2, "interval": kind}
                ci = (clustered_bootstrap_ci(a[rows], labels, **settings) if b is None
                      else paired_difference_ci(a[rows], b[rows], labels, **settings))
                hits[kind][name] += ci.low <= truth <= ci.high
    return pd.DataFrame({kind: {n: h / replications for n, h in row.items()} for kind, row in hits.items()}).T


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--world", choices=("sim", "skewed"), default="sim",
                    help="the simulator's own world (a run) or the skewed, clustered world of skewed_population")
    ap.add_argument("--population-clusters", type=int, default=20_000, help="clusters of the skewed world's population")
    ap.add_argument("--run", type=Path, help="a simulated run folder to use as the population")
    ap.add_argument("--n", type=int, default=2000, help="questions of the simulated run made without --run")
    ap.add_argument("--sizes", type=int, nargs="+", default=[12, 30, 50, 200], help="clusters per draw")
    ap.add_argument("--replications", type=int, default=1500)
    ap.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples per interval")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = args.run
        if args.world == "skewed":
            targets, codes = skewed_population(args.population_clusters, args.seed)
            source = f"skewed world (seed {args.seed})"
        elif run_dir is None:
            subprocess.run([sys.executable, "-m", "benchmarks.cli", "run", "-p", "sim", "--n", str(args.n), "-o", tmp,
                            "--run-id", "population", "--no-progress"], check=True, stdout=subprocess.DEVNULL)
            run_dir = Path(tmp) / "population"
        if args.world == "sim":
            targets, codes = population(run_dir)
            source = str(run_dir)
        print(f"population: {source} ({codes.size} questions, {codes.max() + 1} clusters); "
              f"{args.replications} draws per size, {args.resamples} resamples per interval; nominal 0.95")
        for k in args.sizes:
            table = coverage(targets, codes, k, args.replications, args.resamples, args.seed)
            print(f"\n{k} clusters")
            print(table.to_string(float_format=lambda x: f"{x:.3f}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
