"""Speed and memory of the two-way fixed-effects fit behind the Brier Index, sparse against dense.

:func:`benchmarks.scoring.two_way_fixed_effects` fits ``brier ~ entry effect + question effect`` with LSMR
on a sparse design (two non-zeros per answer). The dense equivalent, ``numpy.linalg.lstsq`` on the
explicit dummy matrix (one column per entry and per question), needs ``answers x (entries + questions)``
floats: 44 GB for the issue's panel. So the script measures:

1. **The issue's panel, sparse.** ``--entries`` x ``--questions`` (default 500 x 5,000); each entry answers
   a random 20-60% of the questions (about 1,000,000 answers); Brier = entry skill + question difficulty
   + noise, clipped to [0, 1]. The fit's median time over ``--rounds``, its LSMR iterations and its peak
   traced memory; the same for the whole :func:`benchmarks.scoring.brier_index_table` on that frame
   (validation, both fits' bookkeeping, the per-entry table).
2. **Sparse against dense, side by side**, on panels small enough for the dense fit (``--dense-sizes``,
   default 30 x 300 and 60 x 600): both fits on the same data, interleaved (which side goes first
   alternates each round), median times, peak traced memory, the ratios dense / sparse, and the largest
   difference between their fitted values (they solve the same least-squares problem).
3. The memory the dense design alone would take at the issue's size.

Both sides run on one BLAS thread (set before numpy loads), so the ratio compares algorithms, not how
many of the shared cores LAPACK grabs. Peak memory comes from :mod:`tracemalloc` (numpy reports its
buffers to it) in separate, untimed runs.

Usage::

    python benchmarks/perf/fixed_effects.py [--entries 500] [--questions 5000] [--rounds 5]
                                            [--dense-sizes 30x300 60x600]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

if __package__ in (None, ""):  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.perf.scoring_speed import peak_mib, timed  # noqa: E402
from benchmarks.scoring import brier_index_table, two_way_fixed_effects  # noqa: E402


def panel(n_entries: int, n_questions: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(entry, question, brier)`` codes and values: each entry answers a random 20-60% of the questions."""
    rng = np.random.default_rng(seed)
    share = rng.uniform(0.2, 0.6, n_entries)
    entry, question = np.nonzero(rng.random((n_entries, n_questions)) < share[:, None])
    skill = rng.normal(0.0, 0.05, n_entries)
    difficulty = rng.uniform(0.05, 0.6, n_questions)
    brier = np.clip(skill[entry] + difficulty[question] + rng.normal(0.0, 0.1, entry.size), 0.0, 1.0)
    return entry, question, brier


def dense_fit(entry: np.ndarray, question: np.ndarray, y: np.ndarray, n_entries: int, n_questions: int) -> np.ndarray:
    """Fitted values of the same model by ``numpy.linalg.lstsq`` on the explicit dummy matrix."""
    X = np.zeros((y.size, n_questions + n_entries))
    rows = np.arange(y.size)
    X[rows, question] = 1.0
    X[rows, n_questions + entry] = 1.0
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    return X @ coef


def size(text: str) -> tuple[int, int]:
    entries, questions = text.lower().split("x")
    return int(entries), int(questions)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--entries", type=int, default=500, help="entries of the large panel")
    ap.add_argument("--questions", type=int, default=5000, help="questions of the large panel")
    ap.add_argument("--rounds", type=int, default=5, help="timed rounds per measurement (median reported)")
    ap.add_argument("--dense-sizes", type=size, nargs="+", default=[(30, 300), (60, 600)],
                    help="ENTRIESxQUESTIONS panels for the side-by-side with the dense fit")
    args = ap.parse_args(argv)

    # 1. the panel, sparse only
    e, q, y = panel(args.entries, args.questions)
    n_cols = args.entries + args.questions
    print(f"[1] panel {args.entries:,} entries x {args.questions:,} questions: {y.size:,} answers "
          f"({y.size / (args.entries * args.questions):.0%} of the grid)")
    fit = two_way_fixed_effects(e, q, y)
    residual = y - fit.fitted(e, q)
    print(f"    LSMR iterations {fit.iterations}; groups {fit.n_components}; largest |sum of residuals| per entry "
          f"{np.abs(np.bincount(e, residual)).max():.1e}, per question {np.abs(np.bincount(q, residual)).max():.1e}")
    t_fit = [timed(lambda: two_way_fixed_effects(e, q, y)) for _ in range(args.rounds)]
    print(f"    two_way_fixed_effects: {statistics.median(t_fit):.3f} s (rounds {['%.3f' % t for t in t_fit]}), "
          f"peak {peak_mib(lambda: two_way_fixed_effects(e, q, y)):.0f} MiB")
    df = pd.DataFrame({"entry": e, "question_id": q, "brier": y, "question_type": "dataset"})
    t_table = [timed(lambda: brier_index_table(df, brier_col="brier")) for _ in range(args.rounds)]
    print(f"    brier_index_table (whole frame): {statistics.median(t_table):.3f} s, "
          f"peak {peak_mib(lambda: brier_index_table(df, brier_col='brier')):.0f} MiB")
    del df

    # 2. sparse vs dense, side by side on panels the dense fit can hold
    print("\n[2] sparse LSMR vs dense numpy.linalg.lstsq on the explicit dummy matrix, same data, interleaved")
    for n_e, n_q in args.dense_sizes:
        se, sq, sy = panel(n_e, n_q, seed=1)
        sparse_fn = lambda: two_way_fixed_effects(se, sq, sy)  # noqa: E731
        dense_fn = lambda: dense_fit(se, sq, sy, n_e, n_q)  # noqa: E731
        gap = np.abs(sparse_fn().fitted(se, sq) - dense_fn()).max()
        t_sparse, t_dense = [], []
        for r in range(args.rounds):
            first, second = ((sparse_fn, t_sparse), (dense_fn, t_dense)) if r % 2 == 0 else ((dense_fn, t_dense), (sparse_fn, t_sparse))
            first[1].append(timed(first[0]))
            second[1].append(timed(second[0]))
        ts, td = statistics.median(t_sparse), statistics.median(t_dense)
        ms, md = peak_mib(sparse_fn), peak_mib(dense_fn)
        print(f"    {n_e} x {n_q} ({sy.size:,} answers, design {sy.size:,} x {n_e + n_q:,}):")
        print(f"      sparse {ts * 1000:9.1f} ms  {ms:8.1f} MiB")
        print(f"      dense  {td * 1000:9.1f} ms  {md:8.1f} MiB")
        print(f"      ratio dense/sparse: time {td / ts:,.1f}x, memory {md / ms:,.1f}x; largest fitted-value difference {gap:.1e}")

    # 3. what the dense fit would need at the size
    print(f"\n[3] the dense design alone at {args.entries:,} x {args.questions:,}: {y.size:,} x {n_cols:,} float64 = "
          f"{y.size * n_cols * 8 / 2**30:,.1f} GiB (lstsq needs at least one more copy)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
