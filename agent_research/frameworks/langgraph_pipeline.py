"""The reconciliation pipeline as a LangGraph state graph.

::

    START --Send x n_members--> member --> aggregate --+--> bull --> bear --(no consensus, rounds left)--> bull
                                                       |              \\--> debate_end ----------------+
                                                       +--> supervisor_disagreements --> supervisor_search |
                                                       |        --> supervisor_decision ----------------+--> combine --> END
                                                       +--(members failed or spread below threshold)--------> combine

Members fan out with ``Send`` and run in one superstep (``max_concurrency`` = the ensemble's concurrency);
the debate is a loop of two nodes with a conditional edge; debate and supervisor branches run in
parallel supersteps and join at ``combine``. Every node is async (LangGraph runs sync nodes in a thread pool). Models are LangChain chat models bridged to our providers
(:func:`agent_research.frameworks.bridge.langchain_model`); every node is one public step of an agent (prompts,
calls, answer reading and artifacts are the plain-Python agents' own).
"""

from __future__ import annotations

import datetime as dt
import operator
import time
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig

from agent_providers import Ask, Provider, run_sync
from agent_schemas import AgentSummary, DebateArtifact, DebateRound, DebateTurn, PipelineTrace, Question, SupervisorArtifact, TokenUsage, VisibleQuestion, as_visible
from agent_research.ensemble import EnsembleResult
from agent_research.frameworks.bridge import disable_telemetry, langchain_model, langchain_usage, to_langchain_messages
from agent_research.pipeline import ForecastPipeline, TraceRecorder
from agent_specialists import Side, SupervisorProgress


def _merge(a: dict, b: dict) -> dict:
    return {**a, **b}


class PipelineState(TypedDict, total=False):
    question: VisibleQuestion
    cutoff: dt.date  # the date every search is capped at (ForecastPipeline.arun's cutoff_date)
    t0: float
    forecasts: Annotated[dict[int, Any], _merge]
    ens: EnsembleResult
    aggregates: dict[str, float | None]
    summaries: list[AgentSummary] | None
    debate_t0: float
    bull_turn: DebateTurn
    rounds: Annotated[list[DebateRound], operator.add]
    debate: DebateArtifact | None
    sup: SupervisorProgress
    supervisor: SupervisorArtifact | None
    trace: PipelineTrace


class LangGraphPipeline:
    """:class:`ForecastPipeline` ``spec`` re-expressed as a compiled LangGraph ``StateGraph``.

    Parameters
    ----------
    spec : ForecastPipeline
        Agents, prompts, parameters and combination rule (see
        :meth:`ForecastPipeline.from_config`); only its orchestration is replaced: every node is one step
        of an agent (its public request, call and answer methods).

    ``run(question)`` / ``arun(question)`` return a :class:`agent_schemas.PipelineTrace` equal to the plain
    pipeline's for the same responses (timings aside).
    """

    framework = "langgraph"

    def __init__(self, spec: ForecastPipeline) -> None:
        from langgraph.graph import END, START, StateGraph

        disable_telemetry()
        self.spec = spec
        self._models: dict[int, Any] = {}
        g = StateGraph(PipelineState)
        g.add_node("member", self.member)
        g.add_node("aggregate", self.aggregate)
        g.add_node("combine", self.combine)
        g.add_conditional_edges(START, self.fan_out, ["member"])
        g.add_edge("member", "aggregate")
        starts, ends = [], []
        if spec.debate is not None:
            g.add_node("bull", self.bull)
            g.add_node("bear", self.bear)
            g.add_node("debate_end", self.debate_end)
            g.add_edge("bull", "bear")
            g.add_conditional_edges("bear", self.after_bear, ["bull", "debate_end"])
            starts.append("bull")
            ends.append("debate_end")
        if spec.supervisor is not None:
            g.add_node("supervisor_disagreements", self.supervisor_disagreements)
            g.add_node("supervisor_search", self.supervisor_search)
            g.add_node("supervisor_decision", self.supervisor_decision)
            g.add_edge("supervisor_disagreements", "supervisor_search")
            g.add_edge("supervisor_search", "supervisor_decision")
            starts.append("supervisor_disagreements")
            ends.append("supervisor_decision")
        g.add_conditional_edges("aggregate", self.after_aggregate, starts + ["combine"])
        if ends:
            g.add_edge(ends if len(ends) > 1 else ends[0], "combine")  # a list waits for every branch
        g.add_edge("combine", END)
        self.graph = g.compile()

    def _model(self, provider: Provider) -> Any:
        if id(provider) not in self._models:
            self._models[id(provider)] = langchain_model(provider)
        return self._models[id(provider)]

    def ask(self, provider: Provider) -> Ask:
        """How an agent's call reaches ``provider``: through its LangChain chat model (:mod:`.bridge`)."""

        async def ask(messages, options: dict[str, Any]) -> tuple[str, TokenUsage]:
            reply = await self._model(provider).ainvoke(to_langchain_messages(messages), **options)
            return reply.content, langchain_usage(reply)

        return ask

    # --- ensemble ----------------------------------------------------------------------------------
    def fan_out(self, state: PipelineState) -> list[Any]:
        from langgraph.types import Send

        return [Send("member", {"question": state["question"], "cutoff": state["cutoff"], "index": i})
                for i in range(len(self.spec.ensemble.members))]

    async def member(self, inp: dict[str, Any]) -> dict[str, Any]:
        m = self.spec.ensemble.members[inp["index"]]
        return {"forecasts": {inp["index"]: await self.spec.ensemble.aforecast_member(m, inp["question"], ask=self.ask(m.llm),
                                                                                          cutoff_date=inp["cutoff"])}}

    async def aggregate(self, state: PipelineState) -> dict[str, Any]:
        fs = [state["forecasts"][i] for i in range(len(self.spec.ensemble.members))]
        ens = self.spec.ensemble.result(state["question"], fs, time.perf_counter() - state["t0"])
        aggregates, summaries = self.spec.reconcile_inputs(ens)
        return {"ens": ens, "aggregates": aggregates, "summaries": summaries, "debate_t0": time.perf_counter()}

    def after_aggregate(self, state: PipelineState) -> list[str] | str:
        starts = (["bull"] if self.spec.debate else []) + (["supervisor_disagreements"] if self.spec.supervisor else [])
        return starts if state["summaries"] is not None and starts else "combine"

    # --- debate ------------------------------------------------------------------------------------
    async def _turn(self, state: PipelineState, side: Side, bull: DebateTurn | None = None) -> DebateTurn:
        d = self.spec.debate
        assert d is not None and state["summaries"] is not None  # the graph has debate nodes only with a debate
        return await d.aturn(side, state["question"], state["summaries"], state["aggregates"][self.spec.aggregation],
                             state.get("rounds", []), bull, ask=self.ask(d.llms[side]))

    async def bull(self, state: PipelineState) -> dict[str, Any]:
        return {"bull_turn": await self._turn(state, "bull")}

    async def bear(self, state: PipelineState) -> dict[str, Any]:
        d, bull = self.spec.debate, state["bull_turn"]
        assert d is not None
        return {"rounds": [d.close_round(state.get("rounds", []), bull, await self._turn(state, "bear", bull))]}

    def after_bear(self, state: PipelineState) -> str:
        assert self.spec.debate is not None
        return "debate_end" if self.spec.debate.is_over(state["rounds"]) else "bull"

    async def debate_end(self, state: PipelineState) -> dict[str, Any]:
        assert self.spec.debate is not None
        agg = state["aggregates"][self.spec.aggregation]
        return {"debate": self.spec.debate.artifact(state["question"], agg, state["rounds"], state["debate_t0"])}

    # --- supervisor --------------------------------------------------------------------------------
    async def supervisor_disagreements(self, state: PipelineState) -> dict[str, Any]:
        sup, progress = self.spec.supervisor, SupervisorProgress()
        assert sup is not None and state["summaries"] is not None
        await sup.aname_disagreements(state["question"], state["summaries"], progress, ask=self.ask(sup.llm))
        return {"sup": progress}

    async def supervisor_search(self, state: PipelineState) -> dict[str, Any]:
        assert self.spec.supervisor is not None
        await self.spec.supervisor.aclarify(state["sup"], state["cutoff"], question=state["question"])
        return {"sup": state["sup"]}

    async def supervisor_decision(self, state: PipelineState) -> dict[str, Any]:
        sup, progress, q = self.spec.supervisor, state["sup"], state["question"]
        assert sup is not None and state["summaries"] is not None
        text = await sup.adecide(q, state["summaries"], progress, ask=self.ask(sup.llm))
        return {"supervisor": sup.artifact(q, progress, text)}

    # --- join --------------------------------------------------------------------------------------
    async def combine(self, state: PipelineState, config: RunnableConfig) -> dict[str, Any]:
        recorder: TraceRecorder = config["configurable"]["recorder"]
        return {"trace": self.spec.trace(state["question"], state["ens"], state["aggregates"], state.get("debate"),
                                         state.get("supervisor"), recorder)}

    # --- run ---------------------------------------------------------------------------------------
    async def arun(self, question: VisibleQuestion | Question, *, cutoff_date: dt.date | None = None) -> PipelineTrace:
        """Run the graph on ``question`` (its visible part) and return its trace (never raises for provider,
        parse or search failures); ``cutoff_date`` caps every search as in :meth:`ForecastPipeline.arun`."""
        question = as_visible(question)
        cutoff = question.search_cutoff(cutoff_date)
        with TraceRecorder() as rec:
            rounds = self.spec.debate.max_rounds if self.spec.debate else 0
            out = await self.graph.ainvoke(
                {"question": question, "cutoff": cutoff, "t0": time.perf_counter(), "forecasts": {}, "rounds": [], "debate": None, "supervisor": None},
                config={"configurable": {"recorder": rec}, "max_concurrency": max(2, self.spec.ensemble.concurrency),
                        "recursion_limit": 12 + 2 * rounds},
            )
        return out["trace"]

    def run(self, question: VisibleQuestion | Question, *, cutoff_date: dt.date | None = None) -> PipelineTrace:
        """Synchronous form of :meth:`arun`."""
        return run_sync(self.arun(question, cutoff_date=cutoff_date))
