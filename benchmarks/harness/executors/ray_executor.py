"""Questions as Ray tasks (``--executor ray``; ``pip install 'forecast-reconcile[ray]'``).

* **Cluster.** ``--ray-address`` (or ``RAY_ADDRESS``) joins an existing cluster; otherwise a local one
  starts (all this machine's CPUs) and stops with the run. A cluster already initialised in the process
  (a notebook, the tests) is used as it is.
* **Workers.** Each task runs one question with ``num_cpus=1``. Every worker process builds its own
  providers, rate limiters, response cache and pipeline from the run's config once
  (:func:`worker_stack`: a :class:`~benchmarks.harness.provider_stack.ProviderStack`, never a runner) and keeps
  them for the questions it gets: the cache is the run's cache folder
  (``cache_dir``, else ``<run folder>/cache``; SQLite, safe across processes), which on another node is a
  node-local folder at the same path: give ``--cache-dir`` a shared path there.
* **The driver alone writes.** A task returns the question's trace and what it paid (the worker's
  spend meter before and after: one question at a time per worker); the driver builds the record and
  hands it to the run session, which appends ``results.jsonl`` and rewrites the manifest.
* **Failures.** A worker that dies (killed, out of memory, node lost) loses only its in-flight question:
  Ray runs that task again (``max_retries``, :data:`MAX_TASK_RETRIES`), from the response cache for
  the calls it already paid. A question whose task still fails becomes a failed record with the typed
  error; the run goes on.
* **Flow.** At most ``concurrency`` questions are submitted at once (default 8; each worker takes one),
  each after the cost cap allows it; results are streamed back as they finish.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_research import ForecastPipeline
from agent_schemas import MissingDependency, PipelineTrace, Question, UnexpectedError
from benchmarks.harness.config import RunConfig
from benchmarks.harness.provider_stack import ProviderStack
from benchmarks.harness.records import failed_trace, run_trace
from benchmarks.harness.session import RunSession

#: Retries of a question's task after its worker died (Ray's ``max_retries``: system failures only).
MAX_TASK_RETRIES = 3


def import_ray() -> Any:
    """The ``ray`` module.

    Raises
    ------
    MissingDependency
        When Ray is not installed (the message names the extra that installs it).
    """
    try:
        import ray
    except ImportError as exc:
        raise MissingDependency("--executor ray needs Ray: pip install 'forecast-reconcile[ray]'") from exc
    return ray


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker needs to build the run's providers and pipeline (sent once through the object store)."""

    config_json: str
    """The run's :class:`RunConfig` as JSON, with absolute output and cache folders."""
    provider_factory: Any = None
    """The run's provider factory (tests pass scripted ones), or None for the registry."""
    search_client: Any = None


#: Per worker process: the provider stack and pipeline built for a run (key: the spec's config JSON).
_WORKERS: dict[str, tuple[ProviderStack, ForecastPipeline]] = {}


def worker_stack(spec: WorkerSpec) -> tuple[ProviderStack, ForecastPipeline]:
    """This worker process's provider stack (providers, limiters, cache) and pipeline for the run ``spec``
    describes, built on first use and kept for the worker's next questions."""
    hit = _WORKERS.get(spec.config_json)
    if hit is None:
        config = RunConfig.model_validate_json(spec.config_json)
        stack = ProviderStack(config, config.run_folder(), provider_factory=spec.provider_factory, search_client=spec.search_client)
        stack.build()
        hit = _WORKERS[spec.config_json] = (stack, stack.pipeline())
    return hit


def forecast_question(spec: WorkerSpec, question_json: str) -> tuple[str, float, int]:
    """The body of a question's Ray task: ``(trace JSON, USD paid for it, worker pid)``."""
    stack, pipeline = worker_stack(spec)
    q = Question.model_validate_json(question_json)
    stack.bind_questions([q])
    paid0 = stack.spend.paid_usd
    trace = worker_loop().run_until_complete(run_trace(pipeline, q, stack.config))
    stack.flush_caches()  # the answers are in the cache before the question is reported (a retried task finds them)
    return trace.model_dump_json(), stack.spend.paid_usd - paid0, os.getpid()


_LOOP: list[asyncio.AbstractEventLoop] = []


def worker_loop() -> asyncio.AbstractEventLoop:
    """The worker process's one event loop: its providers' limiters (semaphores, buckets) belong to the loop
    they first waited on, so every question of the worker runs on the same one."""
    if not _LOOP:
        _LOOP.append(asyncio.new_event_loop())
    return _LOOP[0]


class RayExecutor:
    """Run pending questions as Ray tasks (module doc); ``address`` of an existing cluster, or None for a local one."""

    def __init__(self, address: str | None = None) -> None:
        self.address = address
        #: Process ids of the workers that ran questions.
        self.worker_pids: set[int] = set()

    def spec(self, session: RunSession, stack: ProviderStack) -> WorkerSpec:
        """What the workers need to build the run's providers: the session's config with absolute folders."""
        cfg, run_dir = session.config, session.run_dir
        cache_dir = str(Path(cfg.cache_dir).resolve()) if cfg.cache_dir else str((run_dir / "cache").resolve())
        config = cfg.model_copy(update={"output_dir": str(run_dir.parent.resolve()), "cache_dir": cache_dir,
                                        "executor": "local"})
        return WorkerSpec(config.model_dump_json(), stack.provider_factory, stack.search_client)

    async def run(self, session: RunSession, stack: ProviderStack, pending: list[Question], pipeline: ForecastPipeline) -> None:
        ray = import_ray()
        started_here = not ray.is_initialized()
        if started_here:
            ray.init(address=self.address, ignore_reinit_error=True, include_dashboard=False, log_to_driver=False)
        task = ray.remote(num_cpus=1, max_retries=MAX_TASK_RETRIES, retry_exceptions=False)(forecast_question)
        spec_ref = ray.put(self.spec(session, stack))
        window = stack.concurrency()
        in_flight: dict[asyncio.Future, tuple[Question, Any]] = {}
        queue = list(pending)
        capped = False
        try:
            while queue or in_flight:
                while queue and len(in_flight) < window and not capped:
                    if session.cap_exhausted() or not session.may_start():
                        capped = True
                        break
                    q = queue.pop(0)
                    session.start(q)
                    ref = task.remote(spec_ref, q.model_dump_json())
                    in_flight[asyncio.wrap_future(ref.future())] = (q, ref)
                if not in_flight:
                    break
                done, _ = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED, timeout=0.5)
                for fut in done:
                    q, _ref = in_flight.pop(fut)
                    try:
                        trace_json, paid, pid = fut.result()
                        trace = PipelineTrace.model_validate_json(trace_json)
                        self.worker_pids.add(pid)
                    except Exception as exc:  # the task failed for good (its worker died MAX_TASK_RETRIES + 1 times)
                        trace = failed_trace(q, UnexpectedError(f"the Ray task of question {q.id} failed: {type(exc).__name__}: {exc}"),
                                             show_crowd=session.config.show_crowd)
                        paid = 0.0
                    await session.finish(q, await session.arecord(q, trace), paid_usd=paid)
                if session.cap_exhausted() and in_flight:
                    capped = True
                    for q, ref in in_flight.values():
                        ray.cancel(ref, force=False)
                        session.unstart(q)
                    session.stop_for_cost(n_cancelled=len(in_flight))
                    in_flight.clear()
        except BaseException:
            for q, ref in in_flight.values():
                ray.cancel(ref, force=False)
                session.unstart(q)
            raise
        finally:
            if capped and session.stopped is None:
                session.stop_for_cost()
            if started_here:
                ray.shutdown()

