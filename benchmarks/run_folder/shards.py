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

**Merging.** :func:`benchmarks.run_folder.load.group_shards` turns the shard folders among a list of run
folders into one :class:`~benchmarks.run_folder.load.ShardGroup`, which loads as a single run, under the run id
without its ``-shard<i>of<n>`` suffix (:func:`unsharded_run_id`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

__all__ = ["SHARD_FREE_FIELDS", "config_digest", "parse_shard", "selection_digest", "shard_of", "shard_run_id", "unsharded_run_id"]

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


def unsharded_run_id(run_id: str) -> str:
    """The id of the run a shard folder belongs to: ``run_id`` without its ``-shard<i>of<n>`` suffix."""
    return _SUFFIX.sub("", run_id)
