"""Batch mode (``--batch``): every pipeline stage of all questions goes to the providers as one batch.

**Stages.** (1) Every member of every question: research (local), then the forecast call. (2) For every
question whose members disagree enough: the debate and the supervisor, side by side. A stage's work is a
set of *leaves*, coroutines that each make one call at a time (a member's forecast; a debate, turn after
turn; a supervisor, step after step), built from the agents' public steps. The :class:`Stage` submits the
parked calls (:meth:`agent_providers.batch.BatchCollector.flush`: one batch per provider) as soon as every
live leaf is waiting for a result, so each round trip is one batch per provider: stage 1 is one batch; in
stage 2 the first debate turns and the supervisors' first calls share a batch, then the next turns and the
decisions, and so on (the debate and the supervisor are independent, so their calls need not wait for
each other: ``max(debate turns, supervisor calls)`` round trips instead of their sum).

**Prompts and answers are the direct run's.** The agents, prompts, parsers and combination are the
pipeline's own (:meth:`ForecastPipeline.reconcile_inputs`, :meth:`ForecastPipeline.trace`), so a batch run
and a call-by-call run with the same answers give the same records. Members get no deadline in batch
mode (a batch may take up to 24 hours).

**Durability.** Results reach the response cache as each call returns; a question's record is written
when its stage 2 ends. A run killed mid-batch is resumed with ``--resume``: calls already answered come
from the cache, calls in a submitted batch wait for that batch (its id is in ``batches.jsonl`` and the
manifest's ``batches``), and nothing is sent twice.

**Cost cap.** Before stage 1, the questions that fit under ``--max-cost`` at batch prices are admitted
(:meth:`RunSession.may_start` for each in turn, all of them in flight); the others stay pending and the
manifest says why.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from agent_providers.batch import BatchCollector
from agent_providers.recording import RECORDING_SINK
from agent_research import ForecastPipeline
from agent_research.forecaster import MemberProgress
from agent_research.pipeline import TraceRecorder
from agent_schemas import DebateArtifact, Forecast, Question, SupervisorArtifact, as_reconcile_error
from agent_tools.search_recording import SEARCH_RECORDING_SINK
from benchmarks.harness.provider_stack import ProviderStack
from benchmarks.harness.session import RunSession


class Stage:
    """Runs leaves (coroutines making one provider call at a time) and flushes the collector whenever every
    live leaf is waiting for a result (see the module doc)."""

    def __init__(self, collector: BatchCollector, *, label: str = "", on_flush: Callable[[], Any] | None = None) -> None:
        self.collector = collector
        self.label = label
        self.on_flush = on_flush
        self.live = 0
        self._changed = asyncio.Event()

    async def run(self, leaves: list[Awaitable[Any]]) -> list[Any]:
        """Run ``leaves`` to completion; returns their results in order (a leaf's exception is returned, not raised)."""
        self.collector.listen(self._changed.set)

        async def leaf(aw: Awaitable[Any]) -> Any:
            try:
                return await aw
            except Exception as exc:
                return exc
            finally:
                self.live -= 1
                self._changed.set()

        self.live = len(leaves)
        tasks = [asyncio.ensure_future(leaf(aw)) for aw in leaves]
        try:
            while self.live > 0:
                await self._changed.wait()
                self._changed.clear()
                if self.collector.n_parked and self.collector.n_waiting >= self.live:
                    await self.collector.flush(label=self.label)
                    if self.on_flush is not None:
                        self.on_flush()
            return [t.result() for t in tasks]
        except BaseException:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise


async def _recorded(recorder: TraceRecorder, aw: Awaitable[Any]) -> Any:
    """Await ``aw`` with ``recorder``'s sinks active in this task (the question's calls and searches)."""
    RECORDING_SINK.set(recorder.calls)
    SEARCH_RECORDING_SINK.set(recorder.searches)
    return await aw


async def _specialist(kind: type[DebateArtifact] | type[SupervisorArtifact], question_id: str, aw: Awaitable[Any]) -> Any:
    """A specialist's artifact; an exception outside its turn and step boundaries gives a failed artifact
    (as the plain pipeline does), so the other specialist and the question survive."""
    try:
        return await aw
    except Exception as exc:
        return kind(question_id=question_id, status="failed", error=as_reconcile_error(exc).to_info())


class BatchExecutor:
    """Run the pending questions stage by stage as provider batches (module doc)."""

    async def run(self, session: RunSession, stack: ProviderStack, pending: list[Question], pipeline: ForecastPipeline) -> None:
        collector = stack.batch_collector
        if collector is None:  # ProviderStack.build makes one for a batch run
            raise RuntimeError("batch mode needs the provider stack's batch collector (config.batch)")
        session.extra["batches"] = collector.batches()  # those of earlier sessions too
        admitted = []
        for q in pending:
            if not session.may_start(in_flight=len(admitted)):
                break
            admitted.append(q)
            session.start(q)
        if len(admitted) < len(pending):
            session.stop_for_cost()
        if not admitted:
            return
        pipeline.ensemble.member_timeout_s = None  # a batch may take hours: no member deadline
        label = f"forecast-reconcile run {session.config.run_id}"

        def record_batches() -> None:
            session.extra["batches"] = collector.batches()
            session.write_manifest()

        visible = {q.id: q.visible(show_crowd=session.config.show_crowd) for q in admitted}
        cutoff = {q.id: q.evidence_cutoff_date(session.config.evidence_cutoff) for q in admitted}  # each search's cap
        recorders: dict[str, TraceRecorder] = {}
        for q in admitted:
            with TraceRecorder() as rec:  # fresh sinks and start time; the leaves attach them in their own tasks
                pass
            recorders[q.id] = rec
        t0 = {q.id: time.perf_counter() for q in admitted}

        # stage 1: every member of every question
        members = pipeline.ensemble.members
        leaves = [_recorded(recorders[q.id], pipeline.ensemble.aforecast_member(m, visible[q.id], cutoff_date=cutoff[q.id]))
                  for q in admitted for m in members]
        forecasts = await Stage(collector, label=label + " members", on_flush=record_batches).run(leaves)
        ens = {}
        for i, q in enumerate(admitted):
            mine = forecasts[i * len(members):(i + 1) * len(members)]
            mine = [f if isinstance(f, Forecast) else members[j].artifact(visible[q.id], MemberProgress(), t0[q.id], error=f)
                    for j, f in enumerate(mine)]
            ens[q.id] = pipeline.ensemble.result(visible[q.id], mine, time.perf_counter() - t0[q.id])

        # stage 2: the debate and the supervisor of every question that needs them, each a leaf; a question's
        # record is written as soon as its own specialists are done (at once when it needs none)
        async def finish(q: Question, aggregates: dict[str, Any], done: dict[str, Any]) -> None:
            trace = pipeline.trace(visible[q.id], ens[q.id], aggregates, done.get("debate"), done.get("supervisor"), recorders[q.id])
            await session.finish(q, await session.arecord(q, trace))

        async def leaf(q: Question, kind: str, aw: Awaitable[Any], aggregates: dict[str, Any],
                       done: dict[str, Any], n_jobs: int) -> None:
            done[kind] = await aw
            if len(done) == n_jobs:
                await finish(q, aggregates, done)

        leaves = []
        for q in admitted:
            v = visible[q.id]
            aggregates, summaries = pipeline.reconcile_inputs(ens[q.id])
            jobs: dict[str, Awaitable[Any]] = {}
            if summaries is not None and pipeline.debate is not None:
                jobs["debate"] = _specialist(DebateArtifact, q.id, _recorded(
                    recorders[q.id], pipeline.debate.arun(v, summaries, aggregates[pipeline.aggregation])))
            if summaries is not None and pipeline.supervisor is not None:
                jobs["supervisor"] = _specialist(SupervisorArtifact, q.id, _recorded(
                    recorders[q.id], pipeline.supervisor.arun(v, summaries, cutoff[q.id])))
            if not jobs:
                await finish(q, aggregates, {})
            done: dict[str, Any] = {}
            leaves += [leaf(q, kind, aw, aggregates, done, len(jobs)) for kind, aw in jobs.items()]
        try:
            outcomes = await Stage(collector, label=label + " debate and supervisor", on_flush=record_batches).run(leaves)
        finally:
            session.extra["batches"] = collector.batches()
        failed = next((o for o in outcomes if isinstance(o, BaseException)), None)
        if failed is not None:  # a record could not be written (ResultsWriteError): stop
            raise failed
