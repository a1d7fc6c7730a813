"""One session of a run: the questions' statuses, the durable writing of their records and of the manifest, the
cost cap and why the run stopped. Every executor reports to it; it alone writes the run folder."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import time
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_schemas import ErrorInfo, PipelineTrace, Question
from benchmarks.harness.config import RunConfig
from benchmarks.harness.cost_cap import CostCap, record_cost
from benchmarks.harness.manifest import RunManifest
from benchmarks.harness.provider_stack import ProviderStack
from benchmarks.harness.records import question_record
from benchmarks.run_folder.durable import ResultsWriteError, RunFolderLock, RunFolderLockLost, append_jsonl, write_json_atomic
from benchmarks.run_folder.layout import MANIFEST_FILE, RESULTS_FILE
from benchmarks.run_folder.record import QuestionRecord, failure_reason

__all__ = ["MANIFEST_INTERVAL_S", "RunSession", "RunSummary", "calls_in_words"]

log = logging.getLogger(__name__)

#: The manifest is rewritten at most this often while questions finish (seconds), and at the end.
#: ``results.jsonl`` is the durable record; on resume the manifest's statuses are rebuilt from it.
MANIFEST_INTERVAL_S = 1.0


@dataclass
class RunSummary:
    """What :meth:`benchmarks.harness.runner.BenchmarkRunner.run` returns."""

    run_dir: Path
    n_questions: int
    n_done_before: int
    n_ok: int
    n_failed: int
    wall_time_s: float
    provider_stats: dict[str, Any] = field(default_factory=dict)
    #: Questions of the run whose record is "ok" / "failed", this session and earlier ones (counts; the
    #: first record of a question counts, as in the report).
    n_ok_total: int = 0
    n_failed_total: int = 0
    #: Why questions failed: the most common reason (see :func:`failure_reason`) and how many had it.
    top_failure: str | None = None
    n_top_failure: int = 0
    #: Failed records set aside for a retry (``retry_failed``).
    n_retried: int = 0
    #: Why the run stopped before every question ran (the manifest's ``stopped``: the cost cap), or None.
    stopped: dict[str, Any] | None = None

    @property
    def all_failed(self) -> bool:
        """True when the run has questions and none of them has an "ok" record."""
        return self.n_questions > 0 and self.n_ok_total == 0

    def calls_in_words(self) -> str:
        """:attr:`provider_stats` as words (:func:`calls_in_words`)."""
        return calls_in_words(self.provider_stats)


def calls_in_words(stats: Mapping[str, Any]) -> str:
    """Provider counters (:meth:`benchmarks.harness.provider_stack.ProviderStack.provider_stats`) as a phrase.

    ``calls`` counts every request sent (answered + retried + failed); answers taken from the response cache
    were not sent.

    >>> calls_in_words({"calls": 17, "ok": 15, "retries": 2, "failures": 0, "cache_hits": 3, "cache_misses": 15})
    '17 provider calls (15 answered, 2 retried, none failed); 3 answers reused from the response cache'
    >>> calls_in_words({"calls": 1, "ok": 1, "retries": 0, "failures": 0, "cache_hits": 0, "cache_misses": 1})
    '1 provider call (1 answered, none retried, none failed); no answer reused from the response cache'
    """
    def count(n: Any, one: str, many: str | None = None) -> str:
        n = int(n or 0)
        return f"{n:,} {one if n == 1 else (many or one + 's')}"

    def some(n: Any) -> str:
        return f"{int(n or 0):,}" if n else "none"

    hits = int(stats.get("cache_hits") or 0)
    cache = (f"{count(hits, 'answer')} reused from the response cache" if hits else "no answer reused from the response cache")
    return (f"{count(stats.get('calls'), 'provider call')} ({some(stats.get('ok'))} answered, {some(stats.get('retries'))} retried, "
            f"{some(stats.get('failures'))} failed); {cache}")


class RunSession:
    """One session of a run: the questions' statuses, the durable writing of their records (``results.jsonl``
    appended and fsynced, the manifest rewritten at most once per :data:`MANIFEST_INTERVAL_S`), the cost
    cap and why the run stopped. Every executor (:mod:`benchmarks.harness.executors`) reports to it; it alone writes.

    Parameters
    ----------
    config : RunConfig
        The run's config.
    run_dir : Path
        The run folder (locked by the caller).
    stack : ProviderStack
        The run's providers (what they paid, their counters).
    manifest : RunManifest
        The manifest's fixed part.
    questions : list of Question
        Every question of the run (shard).
    done_records : list of dict
        Records already in ``results.jsonl``.
    baselines : dict
        :func:`benchmarks.harness.records.baseline_table` of the questions.
    t0 : float
        ``time.perf_counter()`` of the session's start.
    progress : bool
        Show a progress bar on stderr.
    lock : RunFolderLock, optional
        The run folder's lock (held by the caller), checked before every write: a lock file deleted or replaced
        meanwhile stops the writing (:class:`benchmarks.run_folder.durable.RunFolderLockLost`).
    """

    def __init__(self, config: RunConfig, run_dir: Path, stack: ProviderStack, manifest: RunManifest, questions: list[Question],
                 done_records: list[dict[str, Any]], baselines: dict[str, dict[str, Any]], t0: float, *,
                 progress: bool = False, lock: RunFolderLock | None = None) -> None:
        self.config = config
        self.lock = lock
        self.run_dir = run_dir
        self.stack = stack
        self.manifest = manifest
        self.questions = questions
        self.baselines = baselines
        self.t0 = t0
        self.results_path = run_dir / RESULTS_FILE
        self.manifest_path = run_dir / MANIFEST_FILE
        self.n_done_before = len({r["question_id"] for r in done_records})
        self.status = {q.id: "pending" for q in questions}
        self.reasons: dict[str, str] = {}
        for r in reversed(done_records):  # the first record of a question wins (see benchmarks.run_folder.load.load_run)
            ok = r["status"] == "ok"
            self.status[r["question_id"]] = "done" if ok else "failed"
            if not ok:
                trace = r.get("trace") or {}
                self.reasons[r["question_id"]] = failure_reason(
                    [ErrorInfo.model_validate(f["error"]) for f in trace.get("forecasts", []) if f.get("error")],
                    ErrorInfo.model_validate(trace["error"]) if trace.get("error") else None)
        previous = json.loads(self.manifest_path.read_text(encoding="utf-8")) if self.manifest_path.exists() else {}
        #: The run's start (ISO, UTC; kept over resumed sessions), the wall time of its earlier sessions (s) and
        #: what they paid (USD), from the manifest of a resumed run.
        self.started = previous.get("created_at") or dt.datetime.now(dt.timezone.utc).isoformat()
        self.earlier_s = float(previous.get("wall_time_s_total") or 0.0)
        self.paid_before_usd = float((previous.get("spend") or {}).get("paid_usd_total") or 0.0)
        self.n_ok = self.n_failed = 0
        #: USD paid this session by providers outside this process (Ray workers report it with each record).
        self.remote_paid_usd = 0.0
        self.cap: CostCap | None = None
        #: Why the run stopped before every question ran (the manifest's ``stopped``), or None.
        self.stopped: dict[str, Any] | None = None
        #: Extra manifest entries an executor keeps up to date (e.g. ``batches``).
        self.extra: dict[str, Any] = {}
        self._last_manifest = time.monotonic()
        self._write_lock = asyncio.Lock()
        self._record_thread = ThreadPoolExecutor(1, thread_name_prefix="question-records")
        self._write_failed: list[Exception] = []
        self._bar = _progress(len(questions), sum(v in ("done", "failed") for v in self.status.values()),
                              enabled=progress)

    # --- accounting --------------------------------------------------------------------------------
    @property
    def paid_now_usd(self) -> float:
        """USD paid this session: the run's providers here (:class:`benchmarks.harness.cost_cap.SpendMeter`) and remote workers."""
        return self.stack.spend.paid_usd + self.remote_paid_usd

    @property
    def n_in_flight(self) -> int:
        return sum(v == "in_flight" for v in self.status.values())

    def may_start(self, in_flight: int | None = None) -> bool:
        """True when the cost cap (if any) lets one more question start (:meth:`CostCap.may_start`)."""
        if self.cap is None:
            return True
        self.cap.paid_now_usd = self.paid_now_usd
        return self.cap.may_start(self.n_in_flight if in_flight is None else in_flight)

    def cap_exhausted(self) -> bool:
        """True once the money paid reached the cost cap (in-flight questions are then cancelled)."""
        if self.cap is None:
            return False
        self.cap.paid_now_usd = self.paid_now_usd
        return self.cap.exhausted()

    def stop_for_cost(self, n_cancelled: int = 0) -> None:
        """Record that the cost cap stopped the run (the manifest's ``stopped``), once."""
        if self.cap is None:
            return
        self.cap.paid_now_usd = self.paid_now_usd
        n_not_started = sum(v == "pending" for v in self.status.values())
        if self.stopped is None:
            self.stopped = self.cap.stop_record(n_not_started=n_not_started, n_cancelled=n_cancelled)
            log.warning("%s: %s", self.run_dir, self.stopped["note"])
        else:
            self.stopped.update(n_not_started=n_not_started, n_cancelled=self.stopped["n_cancelled"] + n_cancelled,
                                paid_usd=round(self.cap.paid_usd, 6))

    # --- questions ---------------------------------------------------------------------------------
    def start(self, q: Question) -> None:
        """Mark ``q`` in flight."""
        self.status[q.id] = "in_flight"

    def unstart(self, q: Question) -> None:
        """Put an in-flight question back to pending (it was cancelled; a resume runs it)."""
        if self.status.get(q.id) == "in_flight":
            self.status[q.id] = "pending"

    def record(self, q: Question, trace: PipelineTrace) -> QuestionRecord:
        """The ``results.jsonl`` record of ``q`` finished with ``trace`` (:func:`benchmarks.harness.records.question_record`)."""
        return question_record(q, trace, config=self.config, clusters=self.manifest.clusters, baselines=self.baselines)

    async def arecord(self, q: Question, trace: PipelineTrace) -> QuestionRecord:
        """:meth:`record` on the session's record thread, off the event loop (the leakage audit of a question's
        prompts takes milliseconds, which the loop would otherwise take from every call in flight), after the
        answers this process queued for the response cache are stored (so a recorded question's answers are
        in the cache). One thread: records are built in the order questions finish."""
        return await asyncio.get_running_loop().run_in_executor(self._record_thread, self._stored_record, q, trace)

    def _stored_record(self, q: Question, trace: PipelineTrace) -> QuestionRecord:
        record = self.record(q, trace)
        self.stack.flush_caches()
        return record

    async def finish(self, q: Question, record: QuestionRecord, *, paid_usd: float | None = None) -> None:
        """Append ``record`` to ``results.jsonl`` (fsynced off the event loop) and update the statuses and,
        at most once per :data:`MANIFEST_INTERVAL_S`, the manifest. ``paid_usd``: what a remote worker
        paid for it.

        Raises
        ------
        ResultsWriteError
            When the record cannot be written; no other record is written after it (the run is stopping).
        RunFolderLockLost
            When the run folder's lock file was deleted or replaced (:meth:`check_lock`); nothing more is written.
        """
        async with self._write_lock:  # appends stay whole lines; fsync runs off the event loop
            if self._write_failed:
                return
            try:
                self.check_lock()
            except RunFolderLockLost as exc:
                self._write_failed.append(exc)
                raise
            try:
                await asyncio.to_thread(append_jsonl, self.results_path, record)
            except OSError as exc:
                self._write_failed.append(exc)
                saved = sum(v in ("done", "failed") for v in self.status.values())
                raise ResultsWriteError(
                    f"could not append the record of question {q.id} to {self.results_path} ({exc.strerror}); "
                    f"the {saved} records written before are intact: fix the cause and resume the run",
                    path=str(self.results_path)) from exc
        if paid_usd:
            self.remote_paid_usd += paid_usd
        ok = record.status == "ok"
        self.status[q.id] = "done" if ok else "failed"
        self.n_ok += ok
        self.n_failed += not ok
        if self.cap is not None:
            self.cap.finished_costs.append(record_cost(record.model_dump(include={"ledger"})))
        if not ok:
            self.reasons[q.id] = failure_reason([f.error for f in record.trace.forecasts if f.error], record.trace.error)
        if time.monotonic() - self._last_manifest >= MANIFEST_INTERVAL_S:
            self.write_manifest()
        self._bar.advance()

    # --- manifest and summary ----------------------------------------------------------------------
    def timing(self) -> dict[str, float]:
        now = time.perf_counter() - self.t0
        return {"wall_time_s": round(now, 3), "wall_time_s_total": round(self.earlier_s + now, 3)}

    def check_lock(self) -> None:
        """Confirm before a write that this run still holds the run folder (:meth:`RunFolderLock.check`; no lock given:
        nothing to check)."""
        if self.lock is not None:
            self.lock.check()

    def write_manifest(self) -> None:
        """Rewrite the manifest atomically with the current statuses, spend, stop reason and executor extras
        (after :meth:`check_lock`)."""
        self.check_lock()
        extra = {"provider_stats": self.stack.provider_stats(), **self.timing(),
                 "spend": {"paid_usd_total": round(self.paid_before_usd + self.paid_now_usd, 6),
                           "paid_usd_session": round(self.paid_now_usd, 6),
                           "max_cost_usd": self.config.max_cost_usd},
                 "stopped": self.stopped, "execution": self.stack.execution_info(), **self.extra}
        if self.manifest.shard is not None:
            extra["shard"] = self.manifest.shard
        write_json_atomic(self.manifest_path, self.manifest.content(started=self.started, status=self.status, extra=extra))
        self._last_manifest = time.monotonic()

    def close(self) -> None:
        """Close the response caches (:meth:`ProviderStack.close_caches`), stop the progress bar and write the final manifest (a failure to write it is logged: ``results.jsonl``
        is the durable record and the manifest is rebuilt from it on resume)."""
        self._record_thread.shutdown(wait=True)
        self.stack.close_caches()
        self._bar.close()
        try:
            self.write_manifest()
        except OSError as exc:
            log.warning("could not update %s: %s", self.manifest_path, exc.strerror)
        except RunFolderLockLost:
            log.warning("%s not updated: the run folder's lock was lost (another run may be writing it)", self.manifest_path)

    def summary(self, n_retried: int) -> RunSummary:
        questions, status = self.questions, self.status
        failed_now = [self.reasons[q.id] for q in questions if status[q.id] == "failed" and q.id in self.reasons]
        top = Counter(r.split(":", 1)[0] for r in failed_now).most_common(1)
        top_reason = next((r for r in failed_now if r.split(":", 1)[0] == top[0][0]), None) if top else None
        return RunSummary(self.run_dir, len(questions), self.n_done_before, self.n_ok, self.n_failed,
                          time.perf_counter() - self.t0, self.stack.provider_stats(),
                          n_ok_total=sum(v == "done" for v in status.values()),
                          n_failed_total=sum(v == "failed" for v in status.values()),
                          top_failure=top_reason, n_top_failure=top[0][1] if top else 0, n_retried=n_retried,
                          stopped=self.stopped)


class _progress:
    """A rich progress bar on stderr (disabled for tests and when not wanted)."""

    def __init__(self, total: int, completed: int, *, enabled: bool) -> None:
        self._p = None
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._p = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                               console=Console(stderr=True))
            self._p.start()
            self._task = self._p.add_task("questions", total=total, completed=completed)

    def advance(self) -> None:
        if self._p is not None:
            self._p.advance(self._task)

    def close(self) -> None:
        if self._p is not None:
            self._p.stop()
