"""The reconciliation pipeline as a crew of role agents in the OpenAI Agents SDK (``openai-agents``).

Each role is an SDK ``Agent`` (one per ensemble member with its persona, a BULL, a BEAR and a SUPERVISOR)
whose model is our provider through :func:`agent_research.frameworks.bridge.agents_sdk_model`; every
model call is one ``Runner.run``. The crew is orchestrated in code, the SDK's documented pattern for
deterministic multi-agent flows: members run concurrently, then the bull and bear agents alternate until
consensus while the supervisor agent runs its two steps around the search tool. The agents' own runs
(:meth:`ForecasterAgent.aforecast`, :meth:`DebateAgent.arun`, :meth:`SupervisorAgent.arun`) take the
SDK runner as the way their calls reach a model (``ask``). Tracing export is disabled
(``RunConfig(tracing_disabled=True)``).

This stands in for CrewAI, which cannot share an environment with this toolkit: crewai 1.15 pins
``openai<3`` and ``pydantic<2.13`` (see README, "Framework comparison").
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from typing import Any

from agent_providers import Ask, Provider, run_sync
from agent_schemas import PipelineTrace, Question, TokenUsage, VisibleQuestion, as_visible
from agent_research.frameworks.bridge import agents_sdk_model, agents_sdk_usage, disable_telemetry, to_agents_input
from agent_research.pipeline import ForecastPipeline, TraceRecorder


class AgentsSDKPipeline:
    """:class:`ForecastPipeline` ``spec`` re-expressed as OpenAI Agents SDK agents run by ``Runner``.

    Parameters
    ----------
    spec : ForecastPipeline
        Agents, prompts, parameters and combination rule; only the orchestration is replaced.
    """

    framework = "openai-agents"

    def __init__(self, spec: ForecastPipeline) -> None:
        from agents import Agent, ModelSettings, RunConfig

        disable_telemetry()
        self.spec = spec
        self._Agent, self._ModelSettings = Agent, ModelSettings
        self.run_config = RunConfig(tracing_disabled=True, workflow_name="forecast-reconcile")
        self._models: dict[int, Any] = {}
        self.members = [self._agent(m.agent_id, m.llm) for m in spec.ensemble.members]
        self.debaters = {side: self._agent(side, p) for side, p in spec.debate.llms.items()} if spec.debate else {}
        self.supervisor = self._agent("supervisor", spec.supervisor.llm) if spec.supervisor else None

    def _agent(self, name: str, provider: Provider) -> Any:
        if id(provider) not in self._models:
            self._models[id(provider)] = agents_sdk_model(provider)
        return self._Agent(name=name, model=self._models[id(provider)])

    def ask(self, agent: Any) -> Ask:
        """How a call reaches ``agent``'s model: one ``Runner.run`` with the prompt as instructions and input."""
        from agents import Runner

        async def ask(messages, options: dict[str, Any]) -> tuple[str, TokenUsage]:
            system, items = to_agents_input(messages)
            settings = self._ModelSettings(temperature=options["temperature"], max_tokens=options["max_tokens"],
                                           extra_args={"json_schema": options["json_schema"], "seed": options["seed"]})
            result = await Runner.run(agent.clone(instructions=system, model_settings=settings), input=items, run_config=self.run_config)
            return str(result.final_output), agents_sdk_usage(result)

        return ask

    def role_asks(self) -> dict[str, Ask]:
        """The SDK runner of the bull, bear and supervisor agents, by role."""
        asks = {side: self.ask(agent) for side, agent in self.debaters.items()}
        if self.supervisor is not None:
            asks["supervisor"] = self.ask(self.supervisor)
        return asks

    # --- run ---------------------------------------------------------------------------------------
    async def arun(self, question: VisibleQuestion | Question, *, cutoff_date: dt.date | None = None) -> PipelineTrace:
        """Run the crew on ``question`` (its visible part) and return its trace (never raises for provider,
        parse or search failures); ``cutoff_date`` caps every search as in :meth:`ForecastPipeline.arun`."""
        question = as_visible(question)
        cutoff = question.search_cutoff(cutoff_date)
        ensemble = self.spec.ensemble
        with TraceRecorder() as recorder:
            t0, sem = time.perf_counter(), asyncio.Semaphore(ensemble.concurrency)

            async def member(i: int):
                async with sem:
                    return await ensemble.aforecast_member(ensemble.members[i], question, ask=self.ask(self.members[i]),
                                                              cutoff_date=cutoff)

            forecasts = await asyncio.gather(*(member(i) for i in range(len(self.members))))
            ens = ensemble.result(question, list(forecasts), time.perf_counter() - t0)
            aggregates, debate, supervisor = await self.spec.reconcile(question, ens, asks=self.role_asks(), cutoff_date=cutoff)
        return self.spec.trace(question, ens, aggregates, debate, supervisor, recorder)

    def run(self, question: VisibleQuestion | Question, *, cutoff_date: dt.date | None = None) -> PipelineTrace:
        """Synchronous form of :meth:`arun`."""
        return run_sync(self.arun(question, cutoff_date=cutoff_date))
