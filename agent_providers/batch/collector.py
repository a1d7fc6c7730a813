"""Gathering the calls of many agents into provider batches, durably.

:class:`BatchingProvider` is the provider the agents call in batch mode: each call parks in the
:class:`BatchCollector` under a ``custom_id`` (the SHA-256 of the request, :func:`agent_providers.cache.cache_key`:
64 characters, so one request is one id, here and in every later session) and waits. The caller that
orchestrates the agents (``benchmarks.harness.executors.batch``) calls :meth:`BatchCollector.flush` once every
agent is waiting: the parked calls go out as one batch per provider (split at the provider's limits), and a
poller per batch hands each call its result when the batch has ended.

**Durable, never paid twice.** Right after a batch is created, a line ``{"event": "submitted", "batch_id",
"provider", "custom_ids", "n_requests", "at"}`` is appended to the journal (``batches.jsonl`` in the run
folder) and fsynced; ``{"event": "ended", ...}`` follows when its results are read. A later session loads
the journal: a call whose ``custom_id`` is in a submitted batch waits for *that* batch (polled and read
again: the providers keep results for 29 days) instead of being sent again. Results reach the response
cache above as each call returns, so a resumed run finds most of them there. A request that failed in a
batch (errored, expired) is forgotten, so the retry layer's next attempt goes into a new batch.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_schemas import BadRequest, ChatMessage, Completion, ReconcileError
from agent_providers.base import Provider, WrappingProvider
from agent_providers.batch import BatchBackend, BatchRequest, backend_for
from agent_providers.cache import cache_key
from agent_providers.storable import storable_json

log = logging.getLogger(__name__)

__all__ = ["BatchCollector", "BatchingProvider", "POLL_INTERVAL_S"]

#: Seconds between two status requests of a running batch (batches take minutes to hours).
POLL_INTERVAL_S = 30.0
#: Consecutive failed status requests of one batch before its calls fail (transient errors are retried).
MAX_POLL_FAILURES = 10


@dataclass
class _Parked:
    messages: list[ChatMessage]
    options: dict[str, Any]
    futures: list[asyncio.Future] = field(default_factory=list)


@dataclass
class BatchRecord:
    """A submitted batch, as the journal and the manifest show it."""

    batch_id: str
    provider: str
    custom_ids: list[str]
    submitted_at: str
    status: str = "submitted"
    ended_at: str | None = None

    def summary(self) -> dict[str, Any]:
        """The manifest's entry: id, provider, request count, status and times."""
        return {"batch_id": self.batch_id, "provider": self.provider, "n_requests": len(self.custom_ids),
                "status": self.status, "submitted_at": self.submitted_at, "ended_at": self.ended_at}


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat()


class BatchCollector:
    """Parks calls, submits them as provider batches on :meth:`flush`, and resolves them from the results.

    Parameters
    ----------
    journal : Path, optional
        The journal file (JSONL, appended and fsynced); its batches are picked up (module doc). None: no
        journal (nothing survives the process).
    poll_interval_s : float
        Seconds between status requests of a running batch.

    Attributes
    ----------
    n_waiting : int
        Calls waiting for a result (parked or in a submitted batch).
    n_parked : int
        Calls parked, not yet submitted.
    """

    def __init__(self, journal: Path | None = None, *, poll_interval_s: float = POLL_INTERVAL_S) -> None:
        self.journal = journal
        self.poll_interval_s = poll_interval_s
        self.n_waiting = 0
        self.records: dict[str, BatchRecord] = {}
        self._parked: dict[str, dict[str, _Parked]] = {}
        self._backends: dict[str, BatchBackend] = {}
        self._known: dict[str, str] = {}  # custom_id -> batch id of a submitted batch not yet read (or read this session)
        self._waiters: dict[str, list[tuple[str, asyncio.Future]]] = {}
        self._pollers: dict[str, asyncio.Task] = {}
        self._done: dict[str, Completion] = {}
        self._listeners: list[Callable[[], None]] = []
        if journal is not None and journal.exists():
            self._load(journal)

    # --- journal ---------------------------------------------------------------------------------
    def _load(self, journal: Path) -> None:
        for i, line in enumerate(journal.read_text(encoding="utf-8").splitlines()):
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                log.warning("%s: line %d is not JSON (a write cut short); ignored", journal, i + 1)
                continue
            if event.get("event") == "submitted":
                rec = BatchRecord(event["batch_id"], event["provider"], list(event["custom_ids"]), event.get("at", ""))
                self.records[rec.batch_id] = rec
                for cid in rec.custom_ids:
                    self._known[cid] = rec.batch_id
            elif event.get("event") == "ended" and event.get("batch_id") in self.records:
                rec = self.records[event["batch_id"]]
                rec.status, rec.ended_at = event.get("status", "ended"), event.get("at")
                for cid in event.get("failed", []):  # their retry went into a later batch, or goes into a new one
                    if self._known.get(cid) == rec.batch_id:
                        del self._known[cid]

    def _append(self, event: dict[str, Any]) -> None:
        if self.journal is None:
            return
        data = (storable_json(event) + "\n").encode("utf-8")
        with open(self.journal, "ab") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())

    # --- calls -----------------------------------------------------------------------------------
    def listen(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` whenever a call starts waiting (the orchestrator checks whether to flush)."""
        self._listeners.append(callback)

    @property
    def n_parked(self) -> int:
        return sum(len(p) for p in self._parked.values())

    def batches(self) -> list[dict[str, Any]]:
        """Every batch submitted for this journal (earlier sessions included), for the manifest."""
        return [r.summary() for r in self.records.values()]

    async def call(self, backend: BatchBackend, custom_id: str, messages: list[ChatMessage], options: dict[str, Any]) -> Completion:
        """Wait for the result of one request: from a batch already submitted with this ``custom_id`` (this
        session or an earlier one, read from the journal), else parked until the next :meth:`flush`.

        Raises
        ------
        ReconcileError
            The typed error of a request that failed in its batch (or of a batch that could not be polled).
        """
        if custom_id in self._done:
            return self._done[custom_id]
        self._backends[backend.spec] = backend
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        batch_id = self._known.get(custom_id)
        if batch_id is not None:
            self._waiters.setdefault(batch_id, []).append((custom_id, fut))
            self._ensure_poller(batch_id)
        else:
            parked = self._parked.setdefault(backend.spec, {}).setdefault(custom_id, _Parked(messages, options))
            parked.futures.append(fut)
        self.n_waiting += 1
        for notify in self._listeners:
            notify()
        try:
            result = await fut
        finally:
            self.n_waiting -= 1
        if isinstance(result, BaseException):
            raise result
        return result

    async def flush(self, *, label: str = "") -> list[str]:
        """Submit every parked call: one batch per provider (split at its limits). Returns the new batch ids.

        A submission that fails (the provider refused the batch) fails its calls with the typed error.
        """
        parked, self._parked = self._parked, {}
        new: list[str] = []
        for spec, calls in parked.items():
            backend = self._backends[spec]
            for chunk in self._chunks(backend, calls):
                requests = [BatchRequest(cid, calls[cid].messages, calls[cid].options) for cid in chunk]
                try:
                    batch_id = await asyncio.to_thread(backend.submit, requests, label=label)
                except Exception as exc:
                    for cid in chunk:
                        for f in calls[cid].futures:
                            if not f.done():
                                f.set_result(exc)
                    continue
                rec = BatchRecord(batch_id, spec, list(chunk), _now())
                self.records[batch_id] = rec
                self._append({"event": "submitted", "batch_id": batch_id, "provider": spec, "custom_ids": rec.custom_ids,
                              "n_requests": len(chunk), "at": rec.submitted_at})
                log.info("submitted batch %s: %d requests to %s", batch_id, len(chunk), spec)
                for cid in chunk:
                    self._known[cid] = batch_id
                    self._waiters.setdefault(batch_id, []).extend((cid, f) for f in calls[cid].futures)
                self._ensure_poller(batch_id)
                new.append(batch_id)
        return new

    @staticmethod
    def _chunks(backend: BatchBackend, calls: dict[str, _Parked]) -> list[list[str]]:
        chunks: list[list[str]] = [[]]
        size = 0
        for cid, p in calls.items():
            n = sum(len(m.content) for m in p.messages) + 1000  # bytes, roughly (UTF-8 may be more: margins are kept)
            if chunks[-1] and (len(chunks[-1]) >= backend.max_requests or size + n > backend.max_bytes):
                chunks.append([])
                size = 0
            chunks[-1].append(cid)
            size += n
        return [c for c in chunks if c]

    # --- results ---------------------------------------------------------------------------------
    def _ensure_poller(self, batch_id: str) -> None:
        task = self._pollers.get(batch_id)
        if task is None or task.done():
            self._pollers[batch_id] = asyncio.ensure_future(self._poll(batch_id))

    def _backend_of(self, batch_id: str) -> BatchBackend:
        return self._backends[self.records[batch_id].provider]

    async def _poll(self, batch_id: str) -> None:
        rec = self.records[batch_id]
        failures = 0
        try:
            backend = self._backend_of(batch_id)
            while True:
                try:
                    status = await asyncio.to_thread(backend.poll, batch_id)
                    failures = 0
                except ReconcileError as exc:
                    failures += 1
                    if not exc.retryable or failures >= MAX_POLL_FAILURES:
                        raise
                    log.info("batch %s: status request failed (%s); trying again", batch_id, type(exc).__name__)
                    await asyncio.sleep(self.poll_interval_s)
                    continue
                if status.ended:
                    break
                await asyncio.sleep(self.poll_interval_s)
            results = await asyncio.to_thread(backend.results, batch_id, rec.custom_ids)
        except Exception as exc:  # the batch cannot be read: its waiting calls fail (a resume polls it again)
            for _cid, fut in self._waiters.pop(batch_id, []):
                if not fut.done():
                    fut.set_result(exc)
            return
        failed = sorted(cid for cid, r in results.items() if isinstance(r, BaseException))
        rec.status, rec.ended_at = status.state, _now()
        self._append({"event": "ended", "batch_id": batch_id, "status": status.state, "counts": status.counts,
                      "failed": failed, "at": rec.ended_at})
        for cid in failed:
            if self._known.get(cid) == batch_id:
                del self._known[cid]
        for cid, r in results.items():
            if not isinstance(r, BaseException):
                self._done[cid] = r
        for cid, fut in self._waiters.pop(batch_id, []):
            if not fut.done():
                fut.set_result(results.get(cid) or self._done.get(cid))


class BatchingProvider(WrappingProvider):
    """The provider agents call in batch mode: each call waits in ``collector`` for its batch (module doc).

    Parameters
    ----------
    inner : Provider
        An adapter with a batch API (:func:`agent_providers.batch.backend_for`).
    collector : BatchCollector

    Raises
    ------
    BatchUnsupported
        When ``inner`` has no batch API.
    """

    def __init__(self, inner: Provider, collector: BatchCollector) -> None:
        super().__init__(inner)
        self.backend = backend_for(inner)
        self.collector = collector

    async def _acomplete(self, messages: list[ChatMessage], **options: Any) -> Completion:
        custom_id = cache_key(self.inner.spec, self.inner.model, messages, **options)
        return await self.collector.call(self.backend, custom_id, messages, options)

    def _complete(self, messages: list[ChatMessage], **options: Any) -> Completion:
        raise BadRequest(f"{self.spec}: batch mode calls are asynchronous (acomplete); a synchronous call would wait "
                         "for a batch that nobody submits", provider=self.spec)
