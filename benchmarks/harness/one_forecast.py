"""One question end to end, as the ``forecast`` command runs it: progress, the explanation, a saved trace.

The saved file (:class:`ForecastFile`, JSON, one object) is what a run viewer opens for one forecast:

=================  =====================================================================================
field              content
=================  =====================================================================================
``format``         ``"forecast-reconcile/forecast"`` and ``format_version`` (1)
``created_at``     ISO timestamp (UTC)
``providers``      provider specs, redacted (:func:`agent_providers.redact_spec`)
``provider_reason`` why these providers (``--provider``, or what ``auto_provider`` picked and why)
``question``       the harness's full record (:class:`agent_schemas.Question`: outcome included, which the
                   agents never saw)
``trace``          the :class:`agent_schemas.PipelineTrace` (the question as the agents saw it, every
                   member, debate turn and supervisor step, the ledger and the recorded calls for replay)
``command_line``   the command line, provider specs redacted, or null
=================  =====================================================================================

It is written after the forecast finishes (nothing is written for a rejected command), atomically, to
``<folder>/<forecast date>-<short id>-<UTC time>.json``.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agent_providers import Provider, WrappingProvider, call_role, choose_auto_spec, redact_spec, split_specs
from agent_providers.storable import storable_json
from agent_schemas import PipelineTrace, Question
from benchmarks.harness.config import RunConfig
from benchmarks.harness.estimate import calls_per_question
from benchmarks.harness.provider_stack import ProviderStack
from benchmarks.harness.selection import QuestionSelection
from benchmarks.questions.browse import short_id
from benchmarks.run_folder.durable import write_text_atomic

__all__ = ["FORECAST_FORMAT", "ForecastFile", "Progress", "forecast_one", "save_forecast"]

FORECAST_FORMAT = "forecast-reconcile/forecast"


class ForecastFile(BaseModel):
    """One forecast saved by the ``forecast`` command (the module docstring lists the fields)."""

    format: str = Field(FORECAST_FORMAT, description="File kind.")
    format_version: int = Field(1, description="Version of this layout.")
    created_at: dt.datetime = Field(default_factory=lambda: dt.datetime.now(dt.timezone.utc), description="When it was saved (UTC).")
    providers: list[str] = Field(description="Provider specs, redacted.")
    provider_reason: str = Field("", description="Why these providers.")
    question: Question = Field(description="The harness's full question record (outcome included; the agents never saw it).")
    trace: PipelineTrace = Field(description="The pipeline trace (the question as the agents saw it).")
    command_line: list[str] | None = Field(None, description="The command line, provider specs redacted.")


class Progress(WrappingProvider):
    """Wraps a provider and reports each finished call: ``report(role, done, elapsed_s)`` (the role the agent
    labelled the call with, :func:`agent_providers.call_role`)."""

    def __init__(self, inner: Provider, report: Callable[[str, int, float], Any], counter: dict[str, Any]) -> None:
        super().__init__(inner)
        self.report = report
        self.counter = counter

    def _done(self) -> None:
        role = call_role() or "other"
        role = {"disagreements": "supervisor (disagreements)", "decision": "supervisor (decision)", "queries": "query writing"}.get(role, role)
        with self.counter["lock"]:
            self.counter["done"] += 1
            done = self.counter["done"]
        self.report(role, done, time.perf_counter() - self.counter["t0"])

    async def _acomplete(self, messages, *, json_schema, temperature, max_tokens, seed):
        try:
            return await self.inner.acomplete(messages, json_schema=json_schema, temperature=temperature, max_tokens=max_tokens, seed=seed)
        finally:
            self._done()

    def _complete(self, messages, *, json_schema, temperature, max_tokens, seed):
        try:
            return self.inner.complete(messages, json_schema=json_schema, temperature=temperature, max_tokens=max_tokens, seed=seed)
        finally:
            self._done()


def provider_reason(given: str | None, environ: dict[str, str] | None = None) -> tuple[list[str], str]:
    """``(specs, why)``: the specs of ``--provider`` (or its variable), else what ``auto_provider`` picks and why."""
    env = os.environ if environ is None else environ
    if given:
        why = "FORECAST_RECONCILE_PROVIDER is set" if env.get("FORECAST_RECONCILE_PROVIDER") == given else "--provider"
        return split_specs(given), why
    choice = choose_auto_spec(env)
    return [choice.spec], f"auto: {choice.reason}"


def forecast_one(config: RunConfig, question: Question | None, *,
                 on_start: Callable[[Question, list[str], int], Any] | None = None,
                 on_call: Callable[[str, int, float], Any] | None = None) -> tuple[Question, PipelineTrace]:
    """Forecast ``question`` (default: the run's seeded sample of one) with the pipeline ``config`` sizes.

    ``on_start(question, provider specs, expected calls)`` is called once the inputs are valid, and
    ``on_call(role, calls done, elapsed seconds)`` after every provider call.

    Raises
    ------
    ReconcileError, ValueError
        As a run (bad spec, missing key, no question): it builds what it needs (a
        :class:`~benchmarks.harness.provider_stack.ProviderStack`, the question selection), never a runner.
    """
    config = config.model_copy(update={"sample_n": 1}).with_run_id()
    stack = ProviderStack(config, config.run_folder())
    stack.build()
    q = question if question is not None else QuestionSelection(stack.config, stack.model_specs()).questions()[0]
    stack.bind_questions([q])
    counter = {"done": 0, "t0": time.perf_counter(), "lock": threading.Lock()}
    if on_call is not None:
        stack.providers = [Progress(p, on_call, counter) for p in stack.providers]
    pipeline = stack.pipeline()
    if on_start is not None:
        on_start(q, [redact_spec(p.spec) for p in stack.providers],
                 sum(calls_per_question(stack.config, len(stack.providers)).values()))
    counter["t0"] = time.perf_counter()
    return q, pipeline.run(q.visible(show_crowd=config.show_crowd), cutoff_date=q.evidence_cutoff_date(config.evidence_cutoff))


def save_forecast(record: ForecastFile, folder: str | Path) -> Path:
    """Write ``record`` to ``folder`` (created if needed) as ``<forecast date>-<short id>-<UTC time>.json``.

    Raises
    ------
    OSError
        When the folder cannot be created or the file written (the message names the path).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stamp = record.created_at.strftime("%Y%m%dT%H%M%SZ")
    path = folder / f"{record.question.forecast_date}-{short_id(record.question.id)}-{stamp}.json"
    write_text_atomic(path, storable_json(record, indent=1))
    return path
