"""Measure the shape of ``benchmarks/`` in a checkout: units, levels, imports pointing up, cycles, lazy imports,
how often ``write_report`` reads a run folder, and what the wheel ships (issue 30's before/after figures).

Usage (from the repository root; ``--root`` another checkout, e.g. ``git archive <commit> | tar -x -C DIR``)::

    python -m tests.architecture_metrics                      # the import figures of this checkout
    python -m tests.architecture_metrics --root DIR --reads --wheel

Definitions (:mod:`tests.import_graph` has those of imports, units, cycles and levels):

* **Wing** of a module: its unit's name in the layout table of ``tests/test_architecture.py``
  (:data:`tests.test_architecture.WINGS`). A module of the layout before issue 30 is given the wing it moved to
  (:data:`OLD_WINGS`).
* An import **points up** when the imported module's wing sits on a higher layer of the table than the
  importing module's. It is **against the table** when the table does not let the importing wing import the
  imported one at all (up, or sideways: a reader importing the engine). Counted once per (importing module,
  imported module).
* **Folder reads**: ``write_report`` on one simulated run (``run -p sim --n 40 --no-report``), counting every
  read of the folder's ``results.jsonl`` and ``manifest.json`` (``open``, ``Path.read_bytes`` /
  ``read_text``), in a process running the checkout's code.
* **Wheel**: ``pip wheel <root> --no-deps`` and the ``benchmarks/`` files in it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter
from pathlib import Path

from tests.import_graph import all_imports, cycles, edges, graph, levels, unit_of
from tests.test_architecture import WINGS

ROOT = Path(__file__).resolve().parents[1]

#: The "wing" of a module that left ``benchmarks``: its imports are not counted.
OUTSIDE = "outside"
#: The wing each unit of the layout before issue 30 moved to (the root modules; sub-packages by name).
OLD_WINGS = {
    "baselines": "protocol", "clusters": "protocol", "leakage": "protocol", "methods": "protocol", "fitted": "protocol",
    "model_cutoffs": "protocol", "written_dates": "protocol",
    "config": "harness", "cost_cap": "harness", "estimate": "harness", "executors": "harness", "frameworks": "harness",
    "one_forecast": "harness", "provenance": "harness", "runner": "harness",
    "shards": "run_folder",
    "question_browser": "questions", "questions": "questions",
    "leaderboard": "scoring", "scoring": "scoring",
    "confidence_bands": "report", "report": "report", "score_file": "report",
    "plots": "viewer", "trace_summary": "viewer", "viewer": "viewer",
    # moved out of benchmarks: the scripted world to agent_providers, the other doubles to tests/doubles
    "fake_api": OUTSIDE, "faults": OUTSIDE, "scripted_world": OUTSIDE, "simulated_history": OUTSIDE,
    "cli": "cli", "perf": "perf",
}


def wing_of(module: str) -> str:
    unit = unit_of(module).split(".")[-1]
    return unit if unit in WINGS else OLD_WINGS.get(unit, unit)


def import_figures(root: Path) -> dict:
    modules, imports = all_imports(root)
    module_graph = graph(edges(imports), set(modules))
    unit_graph = graph([(unit_of(a), unit_of(b)) for a, b in edges(imports)], {unit_of(m) for m in modules})
    unit_graph.pop("benchmarks", None)
    up, against = [], []
    for a, b in edges(imports):
        wa, wb = wing_of(a), wing_of(b)
        if wa == wb or OUTSIDE in (wa, wb):
            continue
        if WINGS[wb][0] > WINGS[wa][0]:
            up.append(f"{a} -> {b}")
        if wb not in WINGS[wa][1]:
            against.append(f"{a} -> {b}")
    lazy = [i for i in imports if i.where != "module"]
    path_of = {m: str(p.relative_to(root)) for m, p in modules.items()}
    return {
        "modules": len(modules),
        "units": len(unit_graph),
        "root_modules": sorted(u for u in unit_graph if not (root / Path(*u.split("."))).is_dir()),
        "levels_modules": levels(module_graph),
        "levels_units": levels(unit_graph),
        "imports_up": up,
        "imports_against_table": against,
        "cycles": [[path_of[m] for m in c] for c in cycles(module_graph)],
        "lazy_imports": [f"{path_of[i.source]}:{i.line} {i.target} ({i.where})" for i in lazy],
        "lazy_by_kind": dict(Counter(i.where for i in lazy)),
    }


READS_SNIPPET = r"""
import builtins, collections, json, pathlib, sys
folder = pathlib.Path(sys.argv[1]).resolve()
reads = collections.Counter()
def count(path):
    p = pathlib.Path(path).resolve()
    if p.parent == folder and p.name in ("results.jsonl", "manifest.json"):
        reads[p.name] += 1
real_open, real_bytes, real_text = builtins.open, pathlib.Path.read_bytes, pathlib.Path.read_text
def open_(file, mode="r", *a, **k):
    if "r" in mode and "+" not in mode and isinstance(file, (str, pathlib.Path)):
        count(file)
    return real_open(file, mode, *a, **k)
def read_bytes(self):
    count(self)
    return real_bytes(self)
def read_text(self, *a, **k):
    count(self)
    return real_text(self, *a, **k)
from benchmarks.report import write_report
builtins.open, pathlib.Path.read_bytes, pathlib.Path.read_text = open_, read_bytes, read_text
try:
    write_report([folder], pathlib.Path(sys.argv[2]), n_resamples=50)
finally:
    builtins.open, pathlib.Path.read_bytes, pathlib.Path.read_text = real_open, real_bytes, real_text
print(json.dumps(dict(reads)))
"""


def folder_reads(root: Path) -> dict[str, int]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "benchmarks.cli", "run", "-p", "sim", "--n", "40", "--run-id", "r", "-o", tmp,
                        "--no-progress", "--no-report"], check=True, env=env, capture_output=True, cwd=tmp)
        out = subprocess.run([sys.executable, "-c", READS_SNIPPET, str(Path(tmp) / "r"), str(Path(tmp) / "out")],
                             check=True, env=env, capture_output=True, text=True, cwd=tmp)
        return json.loads(out.stdout.strip().splitlines()[-1])


def wheel_files(root: Path) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "wheel", str(root), "--no-deps", "-q", "-w", tmp], check=True,
                       capture_output=True)
        (whl,) = Path(tmp).glob("*.whl")
        return sorted(n for n in zipfile.ZipFile(whl).namelist() if n.startswith("benchmarks/"))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=ROOT, help="The checkout to measure (default: this one).")
    ap.add_argument("--reads", action="store_true", help="Also count write_report's reads of a run folder.")
    ap.add_argument("--wheel", action="store_true", help="Also build the wheel and list its benchmarks/ files.")
    ap.add_argument("--json", type=Path, help="Also write every figure to this file.")
    a = ap.parse_args(argv)
    figures = import_figures(a.root.resolve())
    print(f"modules {figures['modules']}, units {figures['units']} ({len(figures['root_modules'])} modules at the root), "
          f"levels {figures['levels_units']} (units) / {figures['levels_modules']} (modules)")
    print(f"imports pointing up: {len(figures['imports_up'])}; against the table: {len(figures['imports_against_table'])}")
    for line in figures["imports_against_table"]:
        print(f"  {'up' if line in figures['imports_up'] else 'sideways'}: {line}")
    print(f"cycles: {len(figures['cycles'])}")
    for c in figures["cycles"]:
        print(f"  {len(c)} modules: {', '.join(c)}")
    print(f"lazy benchmarks imports: {len(figures['lazy_imports'])} {figures['lazy_by_kind']}")
    for line in figures["lazy_imports"]:
        print(f"  {line}")
    if a.reads:
        figures["folder_reads"] = folder_reads(a.root.resolve())
        print(f"write_report's reads of one run folder: {figures['folder_reads']}")
    if a.wheel:
        figures["wheel"] = wheel_files(a.root.resolve())
        print(f"wheel: {len(figures['wheel'])} files under benchmarks/")
        for name in figures["wheel"]:
            print(f"  {name}")
    if a.json:
        a.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
