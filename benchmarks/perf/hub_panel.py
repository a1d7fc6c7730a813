"""Speed and memory of the hubs layer on the whole bundled FluSight panel (issue 40's target: within 5x of pandas
reading the same files plus one groupby median; peak memory under 2 GB).

**What is timed, side by side** (interleaved rounds, alternating which side goes first; medians reported):

* **ours**: :func:`benchmarks.hubs.read_flusight` (all four tables and the models), the quantile target's events
  (:func:`benchmarks.hubs.events.quantile_events`, every horizon: all 2.2 million quantile rows into the cube), every
  quantile pool of the members (median, mean, trimmed mean, linear pool, the walk-forward trained mean with its
  weights) and the scores (WIS with its parts, coverage, absolute error) of every model and every pool;
* **pandas**: ``pandas.read_parquet`` of the same forecasts file, then one
  ``groupby([reference_date, horizon, location, quantile_level])["value"].median()`` (the hub's median ensemble of
  every model, no scores).

Then, once each (``--end-to-end``, default on), the command a user runs, ``python -m benchmarks.cli aggregate --panel
flusight`` (read, pool, score, bootstrap intervals, write, print) in a fresh process: its wall time and peak resident
memory (``ru_maxrss`` of the child).

Usage::

    python benchmarks/perf/hub_panel.py [--rounds 3] [--no-end-to-end]
"""

from __future__ import annotations

import argparse
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

from benchmarks.hubs import read_flusight  # noqa: E402
from benchmarks.hubs.events import quantile_events  # noqa: E402
from benchmarks.hubs.leaderboard import score_quantiles  # noqa: E402
from benchmarks.hubs.read import BUNDLED_FLUSIGHT  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def ours() -> float:
    hub = read_flusight()
    ev = quantile_events(hub, "wk inc flu hosp")
    scored = score_quantiles(hub, ev, "FluSight-baseline")
    return float(np.nanmean(scored.scores["median"]["wis"]))


def theirs() -> float:
    frame = pd.read_parquet(BUNDLED_FLUSIGHT / "numeric_forecasts.parquet")
    med = frame.groupby(["reference_date", "horizon", "location", "quantile_level"])["value"].median()
    return float(med.mean())


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="Interleaved rounds of each side (default 3).")
    ap.add_argument("--no-end-to-end", dest="end_to_end", action="store_false", help="Skip the CLI run in a fresh process.")
    args = ap.parse_args()
    rows = len(pd.read_parquet(BUNDLED_FLUSIGHT / "numeric_forecasts.parquet", columns=["value"]))
    print(f"panel: {rows:,} quantile rows ({BUNDLED_FLUSIGHT})")
    ours(), theirs()  # warm the imports and the file cache for both
    a, b = [], []
    for r in range(args.rounds):
        pair = [(a, ours), (b, theirs)] if r % 2 == 0 else [(b, theirs), (a, ours)]
        for sink, fn in pair:
            sink.append(timed(fn))
    ta, tb = statistics.median(a), statistics.median(b)
    print(f"ours (read, events, 5 pools, scores of every model and pool): {ta:.2f} s (median of {args.rounds})")
    print(f"pandas (read_parquet + one groupby median): {tb:.2f} s")
    print(f"ratio: {ta / tb:.1f}x (target: within 5x)")
    if args.end_to_end:
        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            res = subprocess.run([sys.executable, "-m", "benchmarks.cli", "aggregate", "--panel", "flusight", "-o", tmp],
                                 cwd=ROOT, capture_output=True, text=True)
            wall = time.perf_counter() - t
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024**2
        status = "ok" if res.returncode == 0 else f"exit {res.returncode}: {res.stderr.strip()[-300:]}"
        print(f"end to end, aggregate --panel flusight: {wall:.1f} s, peak memory {peak:.2f} GB ({status}; target: under 2 GB)")


if __name__ == "__main__":
    main()
