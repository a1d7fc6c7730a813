"""Speed of ``aggregate`` on a large panel: every aggregation method's probability per question, against a plain
pandas groupby-mean of the same frame (issue 31's target: within 3x).

The frame: ``--questions`` x ``--forecasters`` forecasts (default 10,000 x 100 = 1,000,000), generated: each
question a true probability, each forecaster a noisy reading of it on the log-odds scale rounded to two
decimals (as people answer, so exact 0 and 1 occur), rows shuffled (a file is not sorted); columns
``question_id`` and ``forecaster`` as text (``q00042``, ``f007``) and ``p_yes`` as floats.

**What is timed, side by side** (interleaved rounds, alternating which side goes first; medians reported):

* **aggregate**: :func:`benchmarks.panels.pool_probabilities` of the frame with every method of
  :data:`agent_research.aggregation.AGGREGATORS` (mean, median, min, max, trimmed mean, geometric mean of
  odds, extremized): both id columns factorised, the (questions x forecasters) matrix filled (a forecaster
  twice on one question refused), the probabilities checked once, and the seven aggregates computed by
  :func:`agent_research.aggregation.aggregate_many` (one sort, one pass of log-odds). It is what a run of the
  panel takes as its given members' aggregates (:meth:`benchmarks.panels.Panel.ensemble`), written into the
  run's traces without aggregating question by question.
* **groupby-mean**: ``frame.groupby("question_id", sort=False)["p_yes"].mean()``.

Not timed: reading the panel file (its row checks), the walk-forward fitted methods (fits on resolved history,
computed by the report), the run folder's records, the report and the HTML page. Two more lines, for
information: the seven public aggregators called one after the other on the same matrix (what
``aggregate_many`` saves), and one question at a time as the pipeline's ensemble does (on a sample of
questions, scaled up).

Usage::

    python benchmarks/perf/panel_aggregate.py [--questions 10000] [--forecasters 100] [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
import pandas as pd

if __package__ in (None, ""):  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agent_research.aggregation import AGGREGATORS  # noqa: E402
from benchmarks.panels import panel_matrix, pool_probabilities  # noqa: E402
from benchmarks.perf.scoring_speed import interleaved, side_by_side, timed  # noqa: E402

TARGET = 3.0


def synthetic(n_questions: int, n_forecasters: int, seed: int = 0) -> pd.DataFrame:
    """The panel frame of the module docstring (``question_id``, ``forecaster``, ``p_yes``), rows shuffled."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(0.0, 1.5, size=n_questions)
    z = truth[:, None] + rng.normal(0.0, 0.8, size=(n_questions, n_forecasters))
    p = np.round(1.0 / (1.0 + np.exp(-z)), 2).ravel()
    order = rng.permutation(p.size)
    qids = np.array([f"q{i:05d}" for i in range(n_questions)], dtype=object)
    who = np.array([f"f{i:03d}" for i in range(n_forecasters)], dtype=object)
    return pd.DataFrame({"question_id": qids[order // n_forecasters], "forecaster": who[order % n_forecasters], "p_yes": p[order]})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=10_000, help="questions")
    ap.add_argument("--forecasters", type=int, default=100, help="forecasters, each answering every question")
    ap.add_argument("--rounds", type=int, default=7, help="timed rounds per side (median reported)")
    args = ap.parse_args(argv)

    frame = synthetic(args.questions, args.forecasters)
    print(f"frame: {len(frame):,} forecasts ({args.questions:,} questions x {args.forecasters} forecasters), ids as text, rows shuffled")

    def aggregate() -> pd.DataFrame:
        return pool_probabilities(frame)

    def groupby_mean() -> pd.Series:
        return frame.groupby("question_id", sort=False)["p_yes"].mean()

    pools, means = aggregate(), groupby_mean()
    assert list(pools.columns) == list(AGGREGATORS)
    gap = float(np.max(np.abs(pools["mean"].to_numpy() - means.reindex(pools.index).to_numpy())))
    assert gap < 1e-12, gap
    print(f"check: aggregate's mean equals the groupby-mean (largest difference {gap:.1e}); "
          f"exact 0 or 1 forecasts: {int(((frame['p_yes'] == 0) | (frame['p_yes'] == 1)).sum()):,}")

    t_agg, t_grp = interleaved(aggregate, groupby_mean, args.rounds)
    print(f"\nmedian of {args.rounds} interleaved rounds")
    ratio = side_by_side((f"aggregate (factorise, matrix, {len(AGGREGATORS)} methods)", t_agg),
                         ("pandas groupby-mean", t_grp), "aggregate / groupby-mean", target=TARGET,
                         indent="  ")

    # for information: the same aggregates without the one pass, and one question at a time
    m = panel_matrix(frame)
    t_build = statistics.median(timed(lambda: panel_matrix(frame)) for _ in range(3))
    t_each = statistics.median(timed(lambda: [fn(m.p) for fn in AGGREGATORS.values()]) for _ in range(3))
    sample = min(500, args.questions)
    t_loop = timed(lambda: [fn(m.p[i:i + 1]) for i in range(sample) for fn in AGGREGATORS.values()]) * args.questions / sample
    print("\nfor information (not in the ratio)")
    print(f"  the matrix alone (factorise, fill):             {t_build * 1000:7.1f} ms")
    print(f"  each aggregator called on the matrix in turn:   {(t_build + t_each) * 1000:7.1f} ms (matrix included)")
    print(f"  one question at a time, as an ensemble does:    {t_loop * 1000:7.0f} ms (scaled from {sample} questions)")
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
