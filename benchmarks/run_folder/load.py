"""Reading runs: a run folder, or the shard folders of one run, loaded once as a :class:`LoadedRun`.

:func:`load_run` reads a folder's ``manifest.json`` and ``results.jsonl`` once; the report computes every table
from what it returns. :func:`run_folders` expands a folder of run folders; :func:`group_shards` turns the
shard folders of one run (``run --shard i/n``, :mod:`benchmarks.run_folder.shards`) into one
:class:`ShardGroup`, which loads as a single run: the shards' records together, the first record of a question
kept (a question is in one shard; a shard run twice in two folders is counted once, with a warning), under the
run id without its shard suffix. Missing shards are reported, never guessed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.run_folder.durable import read_results
from benchmarks.run_folder.record import record_problem
from benchmarks.run_folder.layout import MANIFEST_FILE, REPLACED_FILE, RESULTS_FILE
from benchmarks.run_folder.shards import unsharded_run_id

__all__ = ["LoadedRun", "ShardGroup", "group_shards", "load_run", "read_records", "run_folders"]

log = logging.getLogger(__name__)
_WARNED_DUPLICATES: set[str] = set()


@dataclass(frozen=True)
class LoadedRun:
    """One run as read from disk, once: its manifest and its result records, one per question."""

    name: str
    """The run folder as given (its path as text), or the run id of a :class:`ShardGroup`."""
    manifest: dict[str, Any]
    records: list[dict[str, Any]]
    """The records scored, one per question (``results.jsonl``)."""
    replaced: list[dict[str, Any]] = field(default_factory=list)
    """The failed records a ``--retry-failed`` set aside (``results.replaced.jsonl``): never scored, but what they
    spent is part of the run's cost (:func:`benchmarks.report.costs.cost_tables`)."""

    @property
    def run_id(self) -> str:
        """The manifest's ``run_id``."""
        return self.manifest["run_id"]


def read_records(path: Path, *, repair: bool = False) -> list[dict[str, Any]]:
    """The question records of ``path`` (``results.jsonl`` or ``results.replaced.jsonl``): the one reader of
    records, so ``run --resume``, ``leaderboard``, ``view`` and every report agree on what a record is.

    A torn last line (a process killed mid-write) is dropped, and cut off with ``repair=True``
    (:func:`benchmarks.run_folder.durable.read_results`). Any other line that is not a question record (not JSON, or
    JSON of the wrong shape: ``"x"``, ``[1, 2]``, ``{"foo": 1}``, no ``status``;
    :func:`benchmarks.run_folder.record.record_problem`) is refused, never skipped: a skipped line would drop a
    question from the scores without a trace, and the harness never writes one, so the file was edited or damaged.

    Raises
    ------
    DataValidationError
        One line naming the file, the line number and what is wrong with it (exit code 2 on the command line).
    """
    return read_results(path, repair=repair, check=record_problem)


def load_run(run: "str | Path | ShardGroup | LoadedRun") -> LoadedRun:
    """The run in folder ``run`` (or the shards of one run, :meth:`ShardGroup.load`), one record per question, and
    the failed records set aside by ``--retry-failed`` (:attr:`LoadedRun.replaced`); a run already loaded is
    returned as it is (a caller that read it passes it on without a second read).

    A folder written by one runner holds one record per question (the run folder's lock allows one
    writer; ``--retry-failed`` sets the failed records aside before re-running them). Should a folder
    hold several records of a question anyway (copied files, folders written before the lock), the
    first is kept and a warning says how many were dropped (once per folder and process).

    Raises
    ------
    FileNotFoundError
        If the folder has no ``manifest.json``.
    DataValidationError
        If a line of ``results.jsonl`` (or ``results.replaced.jsonl``) is not a question record (:func:`read_records`).
    """
    if isinstance(run, LoadedRun):
        return run
    if isinstance(run, ShardGroup):
        return run.load()
    run_dir = Path(run)
    mpath = run_dir / MANIFEST_FILE
    if not mpath.exists():
        raise FileNotFoundError(f"{run_dir} is not a run folder: no {MANIFEST_FILE}")
    records, seen = [], set()
    every = read_records(run_dir / RESULTS_FILE)
    for r in every:
        if r.get("question_id") not in seen:
            seen.add(r.get("question_id"))
            records.append(r)
    n_dropped = len(every) - len(records)
    if n_dropped and str(run_dir.resolve()) not in _WARNED_DUPLICATES:
        _WARNED_DUPLICATES.add(str(run_dir.resolve()))
        log.warning("%s: %d duplicated question record(s) in %s; the report keeps the first record of each question",
                    run_dir, n_dropped, RESULTS_FILE)
    return LoadedRun(str(run_dir), json.loads(mpath.read_text(encoding="utf-8")), records,
                     read_records(run_dir / REPLACED_FILE))


def run_folders(paths: Sequence[str | Path]) -> list[Path]:
    """The run folders ``paths`` name: a run folder (it has a ``manifest.json``) as given; a folder of run
    folders (``runs/``) as every run folder directly inside it, sorted by name.

    Raises
    ------
    FileNotFoundError
        For a path that does not exist, or a folder that is neither a run folder nor holds one.
    """
    out: list[Path] = []
    for p in map(Path, paths):
        if (p / MANIFEST_FILE).is_file():
            out.append(p)
            continue
        if not p.exists():
            raise FileNotFoundError(f"{p}: no such folder")
        inside = sorted(d for d in p.iterdir() if d.is_dir() and (d / MANIFEST_FILE).is_file()) if p.is_dir() else []
        if not inside:
            raise FileNotFoundError(f"{p} is not a run folder (no {MANIFEST_FILE}) and holds no run folder")
        out.extend(inside)
    return out


@dataclass
class ShardGroup:
    """The shard folders of one run, loaded as one run (:meth:`load`)."""

    folders: list[Path]
    count: int
    """Shards the run was split into (n)."""
    run_id: str
    """The run's id without the shard suffix."""
    missing: list[int] = field(default_factory=list)
    """Shard indices with no folder among those given."""

    def load(self) -> LoadedRun:
        """The merged run, named :attr:`run_id`: the first shard's manifest under :attr:`run_id`, with
        ``question_ids`` and ``question_status`` of every shard and ``shards`` (folders, count, missing),
        and every shard's records, one per question (the first kept)."""
        manifests, records, replaced, seen, dropped = [], [], [], set(), 0
        for folder in self.folders:
            run = load_run(folder)
            manifests.append(run.manifest)
            replaced.extend(run.replaced)
            for r in run.records:
                if r.get("question_id") in seen:
                    dropped += 1
                    continue
                seen.add(r.get("question_id"))
                records.append(r)
        if dropped:
            log.warning("run %s: %d question record(s) appear in two shard folders; each question is counted once",
                        self.run_id, dropped)
        merged = dict(manifests[0])
        merged["run_id"] = self.run_id
        merged["question_ids"] = [q for m in manifests for q in m.get("question_ids", [])]
        merged["question_status"] = {k: v for m in manifests for k, v in (m.get("question_status") or {}).items()}
        merged["shards"] = {"folders": [str(f) for f in self.folders], "count": self.count, "missing": self.missing,
                            "duplicates_dropped": dropped}
        stats: dict[str, Any] = {}
        for m in manifests:
            for k, v in (m.get("provider_stats") or {}).items():
                if isinstance(v, (int, float)):
                    stats[k] = stats.get(k, 0) + v
        merged["provider_stats"] = stats
        return LoadedRun(self.run_id, merged, records, replaced)


def group_shards(run_dirs: Sequence[str | Path]) -> list[Path | ShardGroup]:
    """``run_dirs`` with the shards of each run replaced by one :class:`ShardGroup` (at the place of its first
    shard); other run folders stay as they are. Shards belong together when their manifests' ``shard``
    records the same count, selection digest and config digest; missing shards give a warning.
    """
    out: list[Path | ShardGroup] = []
    groups: dict[tuple[Any, ...], ShardGroup] = {}
    indices: dict[tuple[Any, ...], set[int]] = {}
    for d in map(Path, run_dirs):
        try:
            manifest = json.loads((d / MANIFEST_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            out.append(d)
            continue
        shard = manifest.get("shard")
        if not isinstance(shard, dict):
            out.append(d)
            continue
        key = (shard.get("count"), shard.get("selection_digest"), shard.get("config_digest"))
        if key not in groups:
            groups[key] = ShardGroup(folders=[], count=int(shard["count"]), run_id=unsharded_run_id(manifest["run_id"]))
            indices[key] = set()
            out.append(groups[key])
        groups[key].folders.append(d)
        indices[key].add(int(shard["index"]))
    for key, g in groups.items():
        g.missing = sorted(set(range(g.count)) - indices[key])
        if g.missing:
            log.warning("run %s: shard(s) %s of %d not given; the report covers the other shards only",
                        g.run_id, ", ".join(map(str, g.missing)), g.count)
    return out
