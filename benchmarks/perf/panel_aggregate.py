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

**End to end** (``--end-to-end``, issue 38's target: within 10x, peak memory under 4 GiB): the same frame
written as a panel CSV (``question_id``, ``forecaster``, ``p_yes``) with a questions CSV (each question's
forecast date spread over a year, resolved 14 days later, its outcome drawn from its true probability, so the
walk-forward fitted methods fit), then ``python -m benchmarks.cli aggregate PANEL --questions QUESTIONS``
(reading, the run folder, the report with its intervals and fitted methods, the page) against ``python -c
"import pandas; read_csv(PANEL).groupby('question_id')['p_yes'].mean()"``, each a fresh process, alternating;
printed: wall seconds of each, their ratio, their CPU seconds (for information) and the aggregate's peak
resident memory (``ru_maxrss`` of the child). An aggregate still running after ``--timeout`` seconds is stopped and reported as such.

Usage::

    python benchmarks/perf/panel_aggregate.py [--questions 10000] [--forecasters 100] [--rounds 7]
    python benchmarks/perf/panel_aggregate.py --end-to-end [--questions 10000] [--rounds 1] [--timeout 900]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

if __package__ in (None, ""):  # run as a script from a checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from agent_research.aggregation import AGGREGATORS  # noqa: E402
from benchmarks.panels import panel_matrix, pool_probabilities  # noqa: E402
from benchmarks.perf.scoring_speed import interleaved, side_by_side, timed  # noqa: E402

TARGET = 3.0
END_TO_END_TARGET = 10.0
MEMORY_TARGET_GIB = 4.0
ROOT = Path(__file__).resolve().parents[2]


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


def panel_files(frame: pd.DataFrame, folder: Path, seed: int = 0) -> tuple[Path, Path]:
    """The panel CSV of ``frame`` and its questions CSV (see "End to end" in the module docstring)."""
    rng = np.random.default_rng(seed)
    means = frame.groupby("question_id", sort=True)["p_yes"].mean()
    start = np.datetime64("2024-01-01")
    forecast = start + (np.arange(means.size) * 365 // max(means.size, 1)).astype("timedelta64[D]")
    questions = pd.DataFrame({"id": means.index, "question": "Will synthetic event " + means.index + " happen?",
                              "forecast_date": forecast.astype(str),
                              "resolution_date": (forecast + np.timedelta64(14, "D")).astype(str),
                              "outcome": (rng.random(means.size) < means.to_numpy()).astype(int), "source": "synthetic"})
    panel, qfile = folder / "panel.csv", folder / "questions.csv"
    frame.to_csv(panel, index=False)
    questions.to_csv(qfile, index=False)
    return panel, qfile


def child_seconds(cmd: list[str], timeout: float, cpu: list[float] | None = None) -> float | None:
    """Wall seconds of ``cmd`` in a fresh process (this checkout first on the path); None when stopped at ``timeout``.
    Its CPU seconds (user + system) are appended to ``cpu`` when given: on a shared, busy machine they move less
    than wall time."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    try:
        subprocess.run(cmd, check=True, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cpu is not None:
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall


def end_to_end(frame: pd.DataFrame, rounds: int, timeout: float) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        panel, qfile = panel_files(frame, Path(tmp))
        agg = [sys.executable, "-m", "benchmarks.cli", "aggregate", str(panel), "--questions", str(qfile), "-o", str(Path(tmp) / "runs"),
               "--no-progress"]
        pandas_side = [sys.executable, "-c", f"import pandas as pd; f = pd.read_csv({str(panel)!r}); "
                                             "f.groupby('question_id')['p_yes'].mean()"]
        t_agg: list[float] = []
        t_pd: list[float] = []
        cpu_agg: list[float] = []
        cpu_pd: list[float] = []
        for r in range(rounds):
            for name in (("agg", "pd") if r % 2 == 0 else ("pd", "agg")):
                if name == "pd":
                    t_pd.append(child_seconds(pandas_side, timeout, cpu_pd))  # type: ignore[arg-type]
                    continue
                before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
                t = child_seconds(agg, timeout, cpu_agg)
                if t is None:
                    print(f"aggregate did not finish in {timeout:.0f} s (stopped)")
                    return 1
                t_agg.append(t)
        peak_gib = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 2**20
    print(f"end to end, fresh processes, median of {rounds} rounds")
    ratio = side_by_side(("forecast-reconcile aggregate (read, run folder, report, page)", t_agg),
                         ("pandas read_csv + groupby-mean", t_pd), "aggregate / pandas", target=END_TO_END_TARGET, indent="  ")
    print(f"  CPU seconds (user + system), median: aggregate {statistics.median(cpu_agg):.1f}, pandas "
          f"{statistics.median(cpu_pd):.1f}, ratio {statistics.median(cpu_agg) / statistics.median(cpu_pd):.2f} (for information: "
          "steadier than wall time on a busy machine)")
    print(f"  peak resident memory of the children: {peak_gib:.2f} GiB (target < {MEMORY_TARGET_GIB:g}: "
          f"{'OK' if peak_gib < MEMORY_TARGET_GIB else 'MISSED'})")
    return 0 if ratio <= END_TO_END_TARGET and peak_gib < MEMORY_TARGET_GIB else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=10_000, help="questions")
    ap.add_argument("--forecasters", type=int, default=100, help="forecasters, each answering every question")
    ap.add_argument("--rounds", type=int, default=7, help="timed rounds per side (median reported)")
    ap.add_argument("--end-to-end", action="store_true", help="time the aggregate command end to end against pandas")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds after which an end-to-end aggregate is stopped")
    args = ap.parse_args(argv)

    frame = synthetic(args.questions, args.forecasters)
    if args.end_to_end:
        return end_to_end(frame, args.rounds, args.timeout)
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
