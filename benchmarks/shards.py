"""Sharded runs: ``run --shard i/n`` on several machines, and one report over the shards of a run.

**Which questions a shard runs.** The run's questions are selected as without sharding (same filters,
same seeded sample); shard ``i`` of ``n`` keeps those whose id hashes to ``i``
(:func:`shard_of`: SHA-256 of the id, modulo ``n``). The hash depends on the id alone, so the shards
partition the selection whatever order it comes in, on any machine, and every question is in exactly
one shard.

**What makes shards one run.** Each shard's manifest records ``shard``: its index and count, the
digest of the whole selection (:func:`selection_digest`) and the digest of the config without the
settings that may differ between machines (:func:`config_digest`: run id, output folder, shard and the
execution settings). Folders with the same count and digests are the shards of one run.

**Merging.** :func:`group_shards` turns the shard folders among a list of run folders into one
:class:`ShardGroup`, which the report loads as a single run (:meth:`ShardGroup.load`): the shards'
records together, the first record of a question kept (a question is in one shard; a shard run twice
in two folders is counted once, with a warning), under the run id without its ``-shard<i>of<n>``
suffix. Missing shards are reported, never guessed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

__all__ = ["ShardGroup", "config_digest", "group_shards", "parse_shard", "selection_digest", "shard_of", "shard_run_id"]

#: Config settings that may differ between the shards of one run.
SHARD_FREE_FIELDS = ("run_id", "output_dir", "shard", "concurrency", "executor", "ray_address", "rate_limits",
                     "max_cost_usd", "n_threads", "cache_dir", "cache", "max_attempts", "batch_poll_s")
_SUFFIX = re.compile(r"-shard(\d+)of(\d+)$")


def parse_shard(text: str) -> tuple[int, int]:
    """``"i/n"`` -> ``(i, n)`` with ``0 <= i < n``.

    Raises
    ------
    ValueError
        When ``text`` is not two integers ``i/n`` with ``0 <= i < n`` (the message shows it).
    """
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not m or not int(m.group(1)) < int(m.group(2)):
        raise ValueError(f"--shard {text!r}: expected i/n with 0 <= i < n (shards are numbered from 0), e.g. 0/4")
    return int(m.group(1)), int(m.group(2))


def shard_of(question_id: str, n: int) -> int:
    """The shard (0..n-1) of ``question_id``: its SHA-256 as an integer, modulo ``n``."""
    return int(hashlib.sha256(question_id.encode("utf-8")).hexdigest()[:16], 16) % n


def shard_run_id(run_id: str, shard: str) -> str:
    """The folder name of shard ``shard`` of run ``run_id``: ``<run_id>-shard<i>of<n>``."""
    i, n = parse_shard(shard)
    return run_id if _SUFFIX.search(run_id) else f"{run_id}-shard{i}of{n}"


def selection_digest(question_ids: Sequence[str]) -> str:
    """SHA-256 (hex, 16 characters) of the whole selection's ids, in order."""
    return hashlib.sha256("\n".join(question_ids).encode("utf-8")).hexdigest()[:16]


def config_digest(config: dict[str, Any]) -> str:
    """SHA-256 (hex, 16 characters) of a run's config (as in its manifest) without :data:`SHARD_FREE_FIELDS`."""
    kept = {k: v for k, v in config.items() if k not in SHARD_FREE_FIELDS}
    return hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode("utf-8")).hexdigest()[:16]


@dataclass
class ShardGroup:
    """The shard folders of one run, read by the report as one run (:meth:`load`)."""

    folders: list[Path]
    count: int
    """Shards the run was split into (n)."""
    run_id: str
    """The run's id without the shard suffix."""
    missing: list[int] = field(default_factory=list)
    """Shard indices with no folder among those given."""

    def load(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """``(manifest, records)`` of the merged run: the first shard's manifest under :attr:`run_id`, with
        ``question_ids`` and ``question_status`` of every shard and ``shards`` (folders, count, missing),
        and every shard's records, one per question (the first kept)."""
        from benchmarks.report import load_run

        manifests, records, seen, dropped = [], [], set(), 0
        for folder in self.folders:
            manifest, recs = load_run(folder)
            manifests.append(manifest)
            for r in recs:
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
        return merged, records


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
            manifest = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            out.append(d)
            continue
        shard = manifest.get("shard")
        if not isinstance(shard, dict):
            out.append(d)
            continue
        key = (shard.get("count"), shard.get("selection_digest"), shard.get("config_digest"))
        if key not in groups:
            groups[key] = ShardGroup(folders=[], count=int(shard["count"]), run_id=_SUFFIX.sub("", manifest["run_id"]))
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
