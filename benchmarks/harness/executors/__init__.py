"""Where a run's questions execute. An executor talks to the run's session and provider stack only: it reports
finished questions to the :class:`benchmarks.harness.session.RunSession`, which alone writes ``results.jsonl``
and the manifest, and takes its providers' settings from the :class:`benchmarks.harness.provider_stack.ProviderStack`.

* :class:`LocalExecutor` (default): questions as asyncio tasks in this process, ``concurrency`` at once.
* :class:`BatchExecutor` (``--batch``): every pipeline stage of all questions sent as provider batches.
* :class:`RayExecutor` (``--executor ray``): questions as Ray tasks, each worker with its own providers.

Each one asks the session before starting a question (``session.may_start()``: the cost cap) and stops
starting new ones when it says no (``session.stop_for_cost()`` records why).
"""

from __future__ import annotations

from typing import Protocol

from agent_research import ForecastPipeline
from agent_schemas import Question
from benchmarks.harness.config import RunConfig
from benchmarks.harness.executors.batch import BatchExecutor
from benchmarks.harness.executors.local import LocalExecutor
from benchmarks.harness.executors.ray_executor import RayExecutor
from benchmarks.harness.provider_stack import ProviderStack
from benchmarks.harness.session import RunSession

__all__ = ["Executor", "executor_for"]


class Executor(Protocol):
    """Runs the pending questions of one session (see the module doc)."""

    async def run(self, session: RunSession, stack: ProviderStack, pending: list[Question], pipeline: ForecastPipeline) -> None: ...


def executor_for(config: RunConfig) -> Executor:
    """The executor the config asks for (``batch``, ``executor``)."""
    if config.batch:
        return BatchExecutor()
    if config.executor == "ray":
        return RayExecutor(address=config.ray_address)
    return LocalExecutor()
