"""Questions as asyncio tasks in this process: at most ``stack.concurrency()`` in flight, under the cost cap."""

from __future__ import annotations

import asyncio
import contextlib
from agent_research import ForecastPipeline
from agent_schemas import Question
from benchmarks.harness.provider_stack import ProviderStack
from benchmarks.harness.records import run_trace
from benchmarks.harness.session import RunSession

#: How often (seconds) a capped run checks whether the money paid reached the cap while questions run.
CAP_CHECK_S = 0.2


class LocalExecutor:
    """Run pending questions in order, ``concurrency`` at once. A question starts only when the cost cap
    lets it (:meth:`RunSession.may_start`); once the money paid reaches the cap, the questions in flight
    are cancelled and left pending for a resume."""

    async def run(self, session: RunSession, stack: ProviderStack, pending: list[Question], pipeline: ForecastPipeline) -> None:
        slots = asyncio.Semaphore(stack.concurrency())
        tasks: dict[asyncio.Task, Question] = {}

        # without a cost cap the next question starts while this one's record is built and written; a capped run
        # frees the slot once the question is recorded (its cost counted as finished, not as in flight)
        early = session.cap is None

        async def one(q: Question) -> None:
            released = False
            try:
                trace = await run_trace(pipeline, q, session.config)
                if early:
                    slots.release()
                    released = True
                await session.finish(q, await session.arecord(q, trace))
            finally:
                if not released:
                    slots.release()

        async def watch_cap() -> None:
            while True:
                await asyncio.sleep(CAP_CHECK_S)
                if session.cap_exhausted():
                    running = [t for t in tasks if not t.done()]
                    for t in running:
                        t.cancel()
                    return

        watcher = asyncio.ensure_future(watch_cap()) if session.cap is not None else None
        capped = False
        try:
            for q in pending:
                await slots.acquire()
                if failed := next((t for t in tasks if t.done() and not t.cancelled() and t.exception()), None):
                    slots.release()
                    raise failed.exception()  # a record could not be written: stop
                if session.cap_exhausted() or not session.may_start():
                    slots.release()
                    capped = True
                    break
                session.start(q)
                tasks[asyncio.ensure_future(one(q))] = q
            await asyncio.gather(*tasks, return_exceptions=True)
            for t in tasks:
                if not t.cancelled() and t.exception() is not None:
                    raise t.exception()
        except BaseException:  # a record could not be written, or the run was cancelled: stop the rest
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            if watcher is not None:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
            cancelled = [q for t, q in tasks.items() if t.cancelled()]
            for q in cancelled:
                session.unstart(q)
            if capped or (session.cap is not None and cancelled and session.cap_exhausted()):
                session.stop_for_cost(n_cancelled=len(cancelled))
