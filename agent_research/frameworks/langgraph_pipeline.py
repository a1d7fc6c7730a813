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
(:func:`agent_research.frameworks.bridge.langchain_model`); prompts come from the plain-Python agents.
"""

from __future__ import annotations

import operator
import time
from typing import Annotated, Any, TypedDict

from langchain_core.runnables import RunnableConfig

from agent_providers import Provider, run_sync
from agent_schemas import AgentSummary, DebateArtifact, DebateRound, DebateTurn, PipelineTrace, Question, SupervisorArtifact, TokenUsage, VisibleQuestion, as_visible
from agent_research.ensemble import EnsembleResult
from agent_research.frameworks import common as c
from agent_research.frameworks.bridge import disable_telemetry, langchain_model, langchain_usage, to_langchain_messages
from agent_research.pipeline import ForecastPipeline


def _merge(a: dict, b: dict) -> dict:
    return {**a, **b}


class PipelineState(TypedDict, total=False):
    question: VisibleQuestion
    t0: float
    forecasts: Annotated[dict[int, Any], _merge]
    ens: EnsembleResult
    aggregates: dict[str, float | None]
    summaries: list[AgentSummary] | None
    debate_t0: float
    bull_turn: DebateTurn
    rounds: Annotated[list[DebateRound], operator.add]
    debate: DebateArtifact | None
    sup: c.SupervisorState
    supervisor: SupervisorArtifact | None
    trace: PipelineTrace


class LangGraphPipeline:
    """:class:`ForecastPipeline` ``spec`` re-expressed as a compiled LangGraph ``StateGraph``.

    Parameters
    ----------
    spec : ForecastPipeline
        Agents, prompts, parameters and combination rule (see
        :func:`agent_research.frameworks.common.build_plain_pipeline`); only its orchestration is replaced.

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

    async def _ask(self, provider: Provider, messages, params: dict[str, Any]) -> tuple[str, TokenUsage]:
        reply = await self._model(provider).ainvoke(to_langchain_messages(messages), **params)
        return reply.content, langchain_usage(reply)

    # --- ensemble ----------------------------------------------------------------------------------
    def fan_out(self, state: PipelineState) -> list[Any]:
        from langgraph.types import Send

        return [Send("member", {"question": state["question"], "index": i}) for i in range(len(self.spec.ensemble.members))]

    async def member(self, inp: dict[str, Any]) -> dict[str, Any]:
        m = self.spec.ensemble.members[inp["index"]]
        f = await m.aforecast(inp["question"], timeout_s=self.spec.ensemble.member_timeout_s,
                              ask=lambda msgs, params: self._ask(m.llm, msgs, params))
        return {"forecasts": {inp["index"]: f}}

    async def aggregate(self, state: PipelineState) -> dict[str, Any]:
        fs = [state["forecasts"][i] for i in range(len(self.spec.ensemble.members))]
        ens = c.ensemble_result(self.spec.ensemble, state["question"], fs, time.perf_counter() - state["t0"])
        aggregates, summaries = c.reconcile_inputs(self.spec, ens)
        return {"ens": ens, "aggregates": aggregates, "summaries": summaries, "debate_t0": time.perf_counter()}

    def after_aggregate(self, state: PipelineState) -> list[str] | str:
        starts = (["bull"] if self.spec.debate else []) + (["supervisor_disagreements"] if self.spec.supervisor else [])
        return starts if state["summaries"] is not None and starts else "combine"

    # --- debate ------------------------------------------------------------------------------------
    async def _debate_turn(self, state: PipelineState, side: str, rounds: list[DebateRound], bull: DebateTurn | None) -> DebateTurn:
        d = self.spec.debate
        last: dict[str, DebateTurn | None] = {"bull": None, "bear": None}
        for t in [t for rd in rounds for t in (rd.bull, rd.bear)] + ([bull] if bull is not None else []):
            if t.status == "ok":
                last[t.side] = t
        other = "bear" if side == "bull" else "bull"
        try:
            msgs = d.build_messages(side, state["question"], state["summaries"], state["aggregates"][self.spec.aggregation],  # type: ignore[union-attr, arg-type]
                                    last[other], last[side], len(rounds) + 1)
            text, usage = await self._ask(d.llms[side], msgs, d.call_params())  # type: ignore[union-attr, index]
        except Exception as exc:  # a failed turn, not a failed question
            return d.turn_from_answer(side, None, TokenUsage(), exc)
        return d.turn_from_answer(side, text, usage)

    async def bull(self, state: PipelineState) -> dict[str, Any]:
        return {"bull_turn": await self._debate_turn(state, "bull", state.get("rounds", []), None)}

    async def bear(self, state: PipelineState) -> dict[str, Any]:
        rounds, bull = state.get("rounds", []), state["bull_turn"]
        bear = await self._debate_turn(state, "bear", rounds, bull)
        rd = DebateRound(round_number=len(rounds) + 1, bull=bull, bear=bear, consensus=self.spec.debate.is_consensus(bull, bear))  # type: ignore[arg-type]
        return {"rounds": [rd]}

    def after_bear(self, state: PipelineState) -> str:
        rd = state["rounds"][-1]
        return "debate_end" if rd.consensus or rd.round_number >= self.spec.debate.max_rounds else "bull"  # type: ignore[union-attr]

    async def debate_end(self, state: PipelineState) -> dict[str, Any]:
        agg = state["aggregates"][self.spec.aggregation]
        return {"debate": self.spec.debate.artifact(state["question"], agg, state["rounds"], state["debate_t0"])}  # type: ignore[arg-type]

    # --- supervisor --------------------------------------------------------------------------------
    async def supervisor_disagreements(self, state: PipelineState) -> dict[str, Any]:
        sup, st = self.spec.supervisor, c.SupervisorState()
        if sup.max_queries > 0:  # type: ignore[union-attr]
            try:
                msgs, params = c.disagreement_request(sup, state["question"], state["summaries"])  # type: ignore[arg-type]
                text, usage = await self._ask(sup.llm, msgs, params)  # type: ignore[union-attr]
                st.usage = st.usage + usage  # counted before parsing: a parse failure still spent the tokens
                st.disagreements = sup._parse_disagreements(text)  # type: ignore[union-attr]
            except Exception as exc:  # a failed supervisor, not a failed question
                st.fail(exc)
        return {"sup": st}

    async def supervisor_search(self, state: PipelineState) -> dict[str, Any]:
        sup, st = self.spec.supervisor, state["sup"]
        if st.error is None and sup.max_queries > 0:  # type: ignore[union-attr]
            try:
                st.queries, st.outcomes, st.coverage = await sup._search(st.disagreements, state["question"].forecast_date)  # type: ignore[union-attr]
            except Exception as exc:
                st.fail(exc)
        return {"sup": st}

    async def supervisor_decision(self, state: PipelineState) -> dict[str, Any]:
        sup, st, q = self.spec.supervisor, state["sup"], state["question"]
        text = None
        if st.error is None:
            try:
                msgs, params = c.decision_request(sup, q, state["summaries"], st.disagreements, st.coverage, st.outcomes)  # type: ignore[arg-type]
                text, usage = await self._ask(sup.llm, msgs, params)  # type: ignore[union-attr]
                st.usage = st.usage + usage
            except Exception as exc:
                st.fail(exc)
        return {"supervisor": c.supervisor_artifact(q, st, text)}

    # --- join --------------------------------------------------------------------------------------
    async def combine(self, state: PipelineState, config: RunnableConfig) -> dict[str, Any]:
        recorder: c.TraceRecorder = config["configurable"]["recorder"]
        return {"trace": recorder.trace(self.spec, state["question"], state["ens"], state["aggregates"],
                                        state.get("debate"), state.get("supervisor"))}

    # --- run ---------------------------------------------------------------------------------------
    async def arun(self, question: VisibleQuestion | Question) -> PipelineTrace:
        """Run the graph on ``question`` (its visible part) and return its trace (never raises for provider,
        parse or search failures)."""
        question = as_visible(question)
        with c.TraceRecorder() as rec:
            rounds = self.spec.debate.max_rounds if self.spec.debate else 0
            out = await self.graph.ainvoke(
                {"question": question, "t0": time.perf_counter(), "forecasts": {}, "rounds": [], "debate": None, "supervisor": None},
                config={"configurable": {"recorder": rec}, "max_concurrency": max(2, self.spec.ensemble.concurrency),
                        "recursion_limit": 12 + 2 * rounds},
            )
        return out["trace"]

    def run(self, question: VisibleQuestion | Question) -> PipelineTrace:
        """Synchronous form of :meth:`arun`."""
        return run_sync(self.arun(question))
