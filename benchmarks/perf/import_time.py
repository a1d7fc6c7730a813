"""Import time of the packages a notebook or a script starts with, against ``import pandas``, side by side.

Each import runs in a fresh interpreter (``python -c "import X"``), timed from outside, so nothing is cached
in the process; the rounds alternate which import goes first, so a change of the machine's load falls on
both alike. Printed: the median wall time of each import over the rounds and the ratio to pandas's (target
for ``agent_research``: at most 1.0, issue 38; it was 1.8 with ``scipy.optimize`` imported at module level for
the fitted methods only). The bare interpreter's start (``python -c pass``) is subtracted from each. Also
printed: which of the heavy optional modules each import loaded (``scipy.optimize``, ``pandas``, ``sklearn``).

Usage: ``python benchmarks/perf/import_time.py [--rounds 7] [--modules agent_research agent_providers]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("scipy.optimize", "pandas", "sklearn")
TARGET = 1.0


def import_seconds(module: str | None) -> float:
    """Wall seconds of a fresh ``python -c "import <module>"`` (``pass`` for None)."""
    code = f"import {module}" if module else "pass"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT)
    return time.perf_counter() - t0


def loaded_heavy(module: str) -> list[str]:
    """The modules of :data:`HEAVY` that ``import <module>`` loads."""
    code = f"import json, sys, {module}; print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7, help="fresh interpreters per import (median reported)")
    ap.add_argument("--modules", nargs="+", default=["agent_research", "agent_providers", "agent_schemas"],
                    help="modules to time against pandas")
    args = ap.parse_args(argv)
    names: list[str | None] = [None, "pandas", *args.modules]
    times: dict[str | None, list[float]] = {n: [] for n in names}
    for r in range(args.rounds):
        for n in (names if r % 2 == 0 else names[::-1]):
            times[n].append(import_seconds(n))
    base = statistics.median(times[None])
    pandas_s = statistics.median(times["pandas"]) - base
    print(f"median of {args.rounds} fresh interpreters, the bare start ({base * 1000:.0f} ms) subtracted")
    print(f"  {'import pandas':<28} {pandas_s * 1000:7.0f} ms")
    worst = 0.0
    for n in args.modules:
        s = statistics.median(times[n]) - base
        ratio = s / pandas_s
        worst = max(worst, ratio) if n == "agent_research" else worst
        print(f"  {'import ' + n:<28} {s * 1000:7.0f} ms   ratio to pandas {ratio:5.2f}   loads {', '.join(loaded_heavy(n)) or 'none of ' + '/'.join(HEAVY)}")
    print(f"target: import agent_research / import pandas <= {TARGET:g}: {'OK' if worst <= TARGET else 'MISSED'}")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
