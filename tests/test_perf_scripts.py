"""Every script in ``benchmarks/perf`` still starts: ``--help`` exits 0 after the script's imports ran.

The scripts are not shipped and no test calls their code, so a moved or renamed module breaks them silently
(issue 30's restructuring left ``interval_coverage.py`` importing a name that had moved). One subprocess runs
them all as ``__main__`` (:func:`runpy.run_path`), as ``python benchmarks/perf/<script>.py --help`` would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.name for p in (ROOT / "benchmarks" / "perf").glob("*.py") if p.name != "__init__.py")

_RUN_ALL = """
import contextlib, io, json, runpy, sys
results = {}
for path in sys.argv[1:]:
    sys.argv = [path, "--help"]
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(path, run_name="__main__")
        results[path] = ["returned without --help's exit", out.getvalue()[:300]]
    except SystemExit as exc:
        results[path] = [exc.code or 0, out.getvalue()[:300]]
    except BaseException as exc:
        results[path] = [f"{type(exc).__name__}: {exc}", ""]
print(json.dumps(results))
"""


def test_every_perf_script_starts_and_prints_its_usage():
    assert len(SCRIPTS) >= 10
    paths = [str(ROOT / "benchmarks" / "perf" / s) for s in SCRIPTS]
    res = subprocess.run([sys.executable, "-c", _RUN_ALL, *paths], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    results = json.loads(res.stdout.strip().splitlines()[-1])
    broken = {Path(p).name: r for p, r in results.items() if r[0] != 0 or "usage" not in r[1].lower()}
    assert broken == {}
