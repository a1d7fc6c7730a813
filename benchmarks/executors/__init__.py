"""Where a run's questions execute. Every executor reports finished questions to the run's
:class:`benchmarks.runner.RunSession`, which alone writes ``results.jsonl`` and the manifest.

* :class:`LocalExecutor` (default): questions as asyncio tasks in this process, ``concurrency`` at once.
* :class:`BatchExecutor` (``--batch``): every pipeline stage of all questions sent as provider batches.
* :class:`RayExecutor` (``--executor ray``): questions as Ray tasks, each worker with its own providers.

Each one asks the session before starting a question (``session.may_start()``: the cost cap) and stops
starting new ones when it says no (``session.stop_for_cost()`` records why).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from agent_research import ForecastPipeline
    from agent_schemas import Question
    from benchmarks.config import RunConfig
    from benchmarks.runner import BenchmarkRunner, RunSession

__all__ = ["Executor", "executor_for"]


class Executor(Protocol):
    """Runs the pending questions of one session (see the module doc)."""

    async def run(self, runner: "BenchmarkRunner", session: "RunSession", pending: "list[Question]",
                  pipeline: "ForecastPipeline") -> None: ...


def executor_for(config: "RunConfig") -> Executor:
    """The executor the config asks for (``batch``, ``executor``)."""
    if config.batch:
        from benchmarks.executors.batch import BatchExecutor

        return BatchExecutor()
    if config.executor == "ray":
        from benchmarks.executors.ray_executor import RayExecutor

        return RayExecutor(address=config.ray_address)
    from benchmarks.executors.local import LocalExecutor

    return LocalExecutor()
