"""The reconciliation pipeline as a crew of role agents in the OpenAI Agents SDK (``openai-agents``).

Each role is an SDK ``Agent`` (one per ensemble member with its persona, a BULL, a BEAR and a SUPERVISOR)
whose model is our provider through :func:`agent_research.frameworks.bridge.agents_sdk_model`; every
model call is one ``Runner.run``. The crew is orchestrated in code, the SDK's documented pattern for
deterministic multi-agent flows: members run concurrently, the bull and bear agents alternate until
consensus, the supervisor agent runs its two steps around the search tool, and debate and supervisor
run concurrently. Tracing export is disabled (``RunConfig(tracing_disabled=True)``).

This stands in for CrewAI, which cannot share an environment with this toolkit: crewai 1.15 pins
``openai<3`` and ``pydantic<2.13`` (see README, "Framework comparison").
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from agent_providers import Provider, run_sync
from agent_schemas import DebateRound, DebateTurn, PipelineTrace, Question, TokenUsage, VisibleQuestion, as_visible
from agent_research.frameworks import common as c
from agent_research.frameworks.bridge import agents_sdk_model, agents_sdk_usage, disable_telemetry, to_agents_input
from agent_research.pipeline import ForecastPipeline


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

    async def _ask(self, agent: Any, messages, params: dict[str, Any]) -> tuple[str, TokenUsage]:
        from agents import Runner

        system, items = to_agents_input(messages)
        settings = self._ModelSettings(temperature=params["temperature"], max_tokens=params["max_tokens"],
                                       extra_args={"json_schema": params["json_schema"], "seed": params["seed"]})
        result = await Runner.run(agent.clone(instructions=system, model_settings=settings), input=items, run_config=self.run_config)
        return str(result.final_output), agents_sdk_usage(result)

    # --- ensemble ----------------------------------------------------------------------------------
    async def _member(self, i: int, q: Question, sem: asyncio.Semaphore):
        m, agent = self.spec.ensemble.members[i], self.members[i]
        async with sem:
            return await m.aforecast(q, timeout_s=self.spec.ensemble.member_timeout_s,
                                     ask=lambda msgs, params: self._ask(agent, msgs, params))

    # --- debate ------------------------------------------------------------------------------------
    async def _turn(self, side: str, q, summaries, agg, last: dict[str, DebateTurn | None], r: int) -> DebateTurn:
        d = self.spec.debate
        other = "bear" if side == "bull" else "bull"
        try:
            msgs = d.build_messages(side, q, summaries, agg, last[other], last[side], r)  # type: ignore[union-attr, arg-type]
            text, usage = await self._ask(self.debaters[side], msgs, d.call_params())  # type: ignore[arg-type]
        except Exception as exc:  # a failed turn, not a failed question
            return d.turn_from_answer(side, None, TokenUsage(), exc)
        turn = d.turn_from_answer(side, text, usage)
        if turn.status == "ok":
            last[side] = turn
        return turn

    async def _debate(self, q, summaries, agg):
        d, t0, rounds = self.spec.debate, time.perf_counter(), []
        last: dict[str, DebateTurn | None] = {"bull": None, "bear": None}
        for r in range(1, d.max_rounds + 1):  # type: ignore[union-attr]
            bull = await self._turn("bull", q, summaries, agg, last, r)
            bear = await self._turn("bear", q, summaries, agg, last, r)
            rounds.append(DebateRound(round_number=r, bull=bull, bear=bear, consensus=d.is_consensus(bull, bear)))  # type: ignore[arg-type]
            if rounds[-1].consensus:
                break
        return d.artifact(q, agg, rounds, t0)  # type: ignore[arg-type]

    # --- supervisor --------------------------------------------------------------------------------
    async def _supervise(self, q, summaries):
        sup, st, text = self.spec.supervisor, c.SupervisorState(), None
        try:
            if sup.max_queries > 0:  # type: ignore[union-attr]
                answer, usage = await self._ask(self.supervisor, *c.disagreement_request(sup, q, summaries))  # type: ignore[arg-type]
                st.usage = st.usage + usage  # counted before parsing: a parse failure still spent the tokens
                st.disagreements = sup._parse_disagreements(answer)  # type: ignore[union-attr]
                st.queries, st.outcomes, st.coverage = await sup._search(st.disagreements, q.forecast_date)  # type: ignore[union-attr]
            text, usage = await self._ask(self.supervisor, *c.decision_request(sup, q, summaries, st.disagreements, st.coverage, st.outcomes))  # type: ignore[arg-type]
            st.usage = st.usage + usage
        except Exception as exc:  # a failed supervisor, not a failed question
            st.fail(exc)
        return c.supervisor_artifact(q, st, text)

    # --- run ---------------------------------------------------------------------------------------
    async def arun(self, question: VisibleQuestion | Question) -> PipelineTrace:
        """Run the crew on ``question`` (its visible part) and return its trace (never raises for provider,
        parse or search failures)."""
        question = as_visible(question)
        with c.TraceRecorder() as rec:
            t0, sem = time.perf_counter(), asyncio.Semaphore(self.spec.ensemble.concurrency)
            forecasts = await asyncio.gather(*(self._member(i, question, sem) for i in range(len(self.members))))
            ens = c.ensemble_result(self.spec.ensemble, question, list(forecasts), time.perf_counter() - t0)
            aggregates, summaries = c.reconcile_inputs(self.spec, ens)
            debate = supervisor = None
            if summaries is not None:
                agg = aggregates[self.spec.aggregation]
                jobs = ([self._debate(question, summaries, agg)] if self.spec.debate else []) + (
                    [self._supervise(question, summaries)] if self.spec.supervisor else [])
                done = list(await asyncio.gather(*jobs))
                debate = done.pop(0) if self.spec.debate else None
                supervisor = done.pop(0) if self.spec.supervisor else None
            return rec.trace(self.spec, question, ens, aggregates, debate, supervisor)

    def run(self, question: VisibleQuestion | Question) -> PipelineTrace:
        """Synchronous form of :meth:`arun`."""
        return run_sync(self.arun(question))
