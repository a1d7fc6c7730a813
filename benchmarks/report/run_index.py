"""The index page of a folder of runs: one self-contained ``index.html`` listing every run in it, as
``inspect view`` lists its logs.

``forecast-reconcile view runs/`` writes ``runs/index.html``: per run folder (one with a ``manifest.json``),
its id, its providers and models, its kind (a run of model forecasters, a panel of given forecasts, or the
simulator), how many questions it planned, when it was made, its best method (from the ``leaderboard.csv``
its report wrote; lowest Brier among the ranked methods) and a link to its page. Only the manifest and the
small ``leaderboard.csv`` of each run are read, never its results, so the index of a folder of large runs is
quick; a run whose page is not written yet says how to write it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pandas as pd

from benchmarks.report.audits import simulated_specs
from benchmarks.report.leaderboard import CSV_FILE
from benchmarks.run_folder.durable import write_text_atomic
from benchmarks.run_folder.layout import MANIFEST_FILE, PAGE_FILE
from benchmarks.run_folder.load import run_folders
from benchmarks.viewer import formatting as fmt
from benchmarks.viewer.page import render_template

__all__ = ["INDEX_FILE", "RunEntry", "is_folder_of_runs", "run_entries", "write_index"]

#: The index page written into a folder of runs.
INDEX_FILE = "index.html"


@dataclass(frozen=True)
class RunEntry:
    """One run of the index."""

    run_id: str
    folder: str
    """The run folder's name inside the indexed folder (the link's base)."""
    models: str
    """The providers' specs and models, or ``none: given forecasts`` (of the models a panel file names)."""
    kind: str
    """``models``, ``human panel`` (the bundled superforecasters), ``panel: given forecasts`` or ``simulated``."""
    n_questions: int
    """Questions the run planned (count)."""
    created: str
    """When the run was made, ``YYYY-MM-DD HH:MM`` UTC, or ''."""
    best: str
    """Its best ranked method and Brier score (``mean 0.213``), or why there is none."""
    page: str | None
    """The page's path relative to the indexed folder, or None when it is not written yet."""


def is_folder_of_runs(path: str | Path) -> bool:
    """True for a folder that is not itself a run folder and holds at least one (``runs/``)."""
    p = Path(path)
    return p.is_dir() and not (p / MANIFEST_FILE).is_file() and any((d / MANIFEST_FILE).is_file() for d in p.iterdir() if d.is_dir())


def _best(folder: Path) -> str:
    board = folder / CSV_FILE
    if not board.is_file():
        return "no report yet"
    try:
        t = pd.read_csv(board, keep_default_na=False, na_values=[""])
    except (OSError, ValueError, pd.errors.ParserError):
        return "leaderboard.csv unreadable"
    if "ranked" in t.columns:
        t = t[t["ranked"].astype(str).str.lower() == "true"]
    if "equals" in t.columns:
        t = t[t["equals"].fillna("").astype(str) == ""]
    t = t[pd.to_numeric(t.get("brier"), errors="coerce").notna()] if "brier" in t.columns else t.iloc[0:0]
    if t.empty:
        return "nothing ranked"
    row = t.sort_values("brier", kind="mergesort").iloc[0]
    return f"{row['label']} {fmt.fmt_prob(row['brier'])}"


def _kind(manifest: dict[str, Any]) -> str:
    if simulated_specs(manifest):
        return "simulated"
    if (manifest.get("config") or {}).get("ensemble") == "given":
        pool = (manifest.get("question_selection") or {}).get("pool") or {}
        return "human panel" if pool.get("name") == "superforecasters" else "panel: given forecasts"
    return "models"


def run_entries(folder: str | Path) -> list[RunEntry]:
    """Every run folder directly inside ``folder`` (sorted by name) as a :class:`RunEntry`.

    Raises
    ------
    FileNotFoundError
        When ``folder`` does not exist or holds no run folder.
    """
    folder = Path(folder)
    out = []
    for d in run_folders([folder]):
        try:
            m = json.loads((d / MANIFEST_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            m = {}
        providers = m.get("providers") or []
        models = ", ".join(dict.fromkeys(
            str(p.get("spec")) + (f" ({p['model']})" if p.get("model") and p.get("model") != p.get("spec") else "")
            for p in providers))
        if not models:  # a panel's run: its forecasts were given; a panel exported from a run names that run's models
            pool = (m.get("question_selection") or {}).get("pool") or {}
            models = f"none: given forecasts{' of ' + ', '.join(pool['models']) if pool.get('models') else ''}"
        created = str(m.get("created_at", ""))[:16].replace("T", " ")
        out.append(RunEntry(run_id=str(m.get("run_id") or d.name), folder=d.name, models=models, kind=_kind(m),
                            n_questions=len(m.get("question_ids") or []), created=created, best=_best(d),
                            page=quote(f"{d.name}/{PAGE_FILE}") if (d / PAGE_FILE).is_file() else None))
    return out


def write_index(folder: str | Path) -> Path:
    """Write ``index.html`` (:data:`INDEX_FILE`) into ``folder``, listing :func:`run_entries`, atomically; its path.

    Raises
    ------
    FileNotFoundError
        When ``folder`` holds no run folder.
    OSError
        When the page cannot be written (the previous one, if any, is left as it was).
    """
    folder = Path(folder)
    entries = run_entries(folder)
    path = folder / INDEX_FILE
    write_text_atomic(path, render_template("index.html.j2", title=f"Runs in {folder.resolve().name or folder}", runs=entries))
    return path
