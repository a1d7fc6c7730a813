"""What the three implementations share: inputs (config, providers), the agent objects that hold every
prompt and parameter, and the step functions that turn one model answer into our artifacts.

The framework implementations express the *orchestration* (fan-out, aggregate, debate loop, supervisor
steps, join, combine) in their framework; every prompt is built by the plain-Python agents'
``build_messages`` methods and every answer is parsed by the same parsers, so with the same responses
all three give the same trace (checked in ``tests/frameworks``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_providers import Provider
from agent_providers.base import spent_usage
from agent_providers.recording import RECORDING_SINK
from agent_schemas import (
    AgentSummary,
    ChatMessage,
    DebateArtifact,
    Disagreement,
    EnsembleFailed,
    Forecast,
    ForecastParseError,
    PipelineTrace,
    ReconcileError,
    SearchOutcome,
    SupervisorArtifact,
    TokenUsage,
    VisibleQuestion,
    as_reconcile_error,
)
from agent_research.aggregation import AGGREGATORS
from agent_research.combination import CombinationRule
from agent_research.ensemble import Ensemble, EnsembleResult
from agent_research.pipeline import ForecastPipeline
from agent_specialists import DebateAgent, SupervisorAgent
from agent_specialists import prompts as sprompts
from agent_tools import ToolExecutor, parse_forecast, render_evidence
from agent_tools.provenance import attach_provenance
from agent_tools.search_recording import SEARCH_RECORDING_SINK


@dataclass(frozen=True)
class FrameworkConfig:
    """Configuration shared by the three implementations (the same run, expressed three ways).

    Parameters
    ----------
    n_members : int
        Ensemble size.
    personas, temperatures : sequence, optional
        Cycled over members (defaults of :meth:`agent_research.Ensemble.from_providers`).
    seed : int, optional
        Member ``i`` gets ``seed + i``; bull, bear and supervisor get ``seed``.
    max_rounds, consensus_threshold
        Debate rounds (count) and the |bull - bear| gap that stops it (probability units).
    max_queries, max_search_results
        Supervisor clarifying searches (count) and results per search.
    max_tokens : int, optional
        Generated-token limit of every call (tokens).
    aggregation : str
        Aggregate the debate starts from (a key of ``AGGREGATORS``).
    combination : CombinationRule
        How aggregate, debate and supervisor combine.
    reconcile_min_spread : float
        Specialists run only when the members' spread is at least this (probability units).
    debate, supervisor : bool
        Whether the stage exists.
    concurrency, min_success_fraction, member_timeout_s
        Ensemble policy (see :class:`agent_research.Ensemble`); timeout in seconds.
    n_queries, max_results, max_evidence
        Forecaster research queries (count), results per query and evidence items in the answer.
    """

    n_members: int = 3
    personas: Sequence[str | None] | None = None
    temperatures: Sequence[float | None] | None = None
    seed: int | None = 0
    max_rounds: int = 2
    consensus_threshold: float = 0.05
    max_queries: int = 2
    max_search_results: int = 5
    max_tokens: int | None = 400
    aggregation: str = "mean"
    combination: CombinationRule = field(default_factory=CombinationRule)
    reconcile_min_spread: float = 0.0
    debate: bool = True
    supervisor: bool = True
    concurrency: int = 4
    min_success_fraction: float = 0.5
    member_timeout_s: float | None = 300.0
    n_queries: int = 1
    max_results: int = 5
    max_evidence: int = 2


@dataclass(frozen=True)
class RoleProviders:
    """Providers per role. Members cycle over ``members``; bull and bear default to the first member
    provider and the supervisor to the last (as in :class:`benchmarks.runner.BenchmarkRunner`)."""

    members: Sequence[Provider]
    bull: Provider | None = None
    bear: Provider | None = None
    supervisor: Provider | None = None

    @classmethod
    def single(cls, provider: Provider) -> "RoleProviders":
        """Every role on one provider."""
        return cls(members=[provider])

    def __post_init__(self) -> None:
        if not self.members:
            raise ValueError("RoleProviders.members is empty: at least one member provider is needed")

    def map(self, fn) -> "RoleProviders":
        """The same roles with every provider passed through ``fn`` (each distinct provider once)."""
        seen: dict[int, Provider] = {}

        def f(p: Provider | None) -> Provider | None:
            if p is None:
                return None
            if id(p) not in seen:
                seen[id(p)] = fn(p)
            return seen[id(p)]

        return RoleProviders([f(p) for p in self.members], f(self.bull), f(self.bear), f(self.supervisor))  # type: ignore[misc]


def build_plain_pipeline(providers: RoleProviders, executor: ToolExecutor | None, config: FrameworkConfig) -> ForecastPipeline:
    """The plain-Python implementation: a configured :class:`ForecastPipeline`.

    The framework implementations take this same object as the specification of every agent (prompts,
    personas, temperatures, seeds, token limits, search executor, combination rule)."""
    c = config
    ensemble = Ensemble.from_providers(
        list(providers.members), n_members=c.n_members, executor=executor, personas=c.personas,
        temperatures=c.temperatures, seed=c.seed, concurrency=c.concurrency,
        min_success_fraction=c.min_success_fraction, member_timeout_s=c.member_timeout_s,
    )
    for m in ensemble.members:
        m.max_tokens, m.n_queries, m.max_results, m.max_evidence = c.max_tokens, c.n_queries, c.max_results, c.max_evidence
    first, last = providers.members[0], providers.members[-1]
    debate = DebateAgent(first, max_rounds=c.max_rounds, consensus_threshold=c.consensus_threshold,
                         bull_llm=providers.bull or first, bear_llm=providers.bear or first,
                         max_tokens=c.max_tokens, seed=c.seed) if c.debate else None
    supervisor = SupervisorAgent(providers.supervisor or last, executor=executor, max_queries=c.max_queries,
                                 max_results=c.max_search_results, max_tokens=c.max_tokens, seed=c.seed) if c.supervisor else None
    return ForecastPipeline(ensemble, debate, supervisor, aggregation=c.aggregation, combination=c.combination,
                            reconcile_min_spread=c.reconcile_min_spread)


# --- ensemble steps ------------------------------------------------------------------------------
def ensemble_result(ensemble: Ensemble, question: VisibleQuestion, forecasts: list[Forecast], wall_time_s: float) -> EnsembleResult:
    """The ensemble's result under its success policy (:meth:`Ensemble.result`)."""
    return ensemble.result(question, forecasts, wall_time_s)


def reconcile_inputs(pipe: ForecastPipeline, ens: EnsembleResult) -> tuple[dict[str, float | None], list[AgentSummary] | None]:
    """Aggregates by method, and the member summaries when the specialists should run (else None);
    the gate of :meth:`ForecastPipeline.reconcile`."""
    aggregates = {name: ens.aggregate(name) for name in AGGREGATORS}
    if not ens.policy_met or aggregates[pipe.aggregation] is None or ens.spread() < pipe.reconcile_min_spread:
        return aggregates, None
    return aggregates, [f.summary() for f in ens.ok_forecasts]


# --- debate steps ------------------------------------------------------------------------------------
# --- supervisor steps --------------------------------------------------------------------------------
def supervisor_call_params(sup: SupervisorAgent, json_schema: dict[str, Any]) -> dict[str, Any]:
    return dict(json_schema=json_schema, temperature=sup.temperature, max_tokens=sup.max_tokens, seed=sup.seed)


def disagreement_request(sup: SupervisorAgent, question: VisibleQuestion, summaries: Sequence[AgentSummary]) -> tuple[list[ChatMessage], dict[str, Any]]:
    """Messages and call options of the supervisor's first call (name the disagreements)."""
    msgs = sup._prefix(question, summaries) + [
        ChatMessage(role="user", content=sprompts.SUPERVISOR_DISAGREEMENT_TASK.format(max_queries=sup.max_queries))]
    return msgs, supervisor_call_params(sup, sprompts.disagreement_schema(sup.max_queries))


def decision_request(sup: SupervisorAgent, question: VisibleQuestion, summaries: Sequence[AgentSummary], disagreements, coverage,
                     outcomes: list[SearchOutcome]) -> tuple[list[ChatMessage], dict[str, Any]]:
    """Messages and call options of the supervisor's decision call."""
    results = [r for o in outcomes if o.ok for r in o.results]
    msgs = sup._prefix(question, summaries) + [ChatMessage(role="user", content="\n\n".join([
        sprompts.render_disagreements(disagreements, coverage),
        "## CLARIFYING EVIDENCE\n" + (render_evidence(results) if results else "None obtained (see coverage gaps)."),
        sprompts.SUPERVISOR_DECISION_TASK,
    ]))]
    return msgs, supervisor_call_params(sup, sprompts.DECISION_SCHEMA)


@dataclass
class SupervisorState:
    """Intermediate results of a supervisor run, filled step by step."""

    t0: float = field(default_factory=time.perf_counter)
    usage: TokenUsage = field(default_factory=TokenUsage)
    disagreements: list[Disagreement] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    outcomes: list[SearchOutcome] = field(default_factory=list)
    coverage: list = field(default_factory=list)
    error: ReconcileError | None = None

    def fail(self, exc: BaseException) -> None:
        """Record the step's failure (any exception, typed by :func:`agent_schemas.as_reconcile_error`)
        and the usage a failed call still spent."""
        self.error, self.usage = as_reconcile_error(exc), self.usage + spent_usage(exc)


def supervisor_artifact(question: VisibleQuestion, st: SupervisorState, text: str | None) -> SupervisorArtifact:
    """The :class:`SupervisorArtifact` from the state and the decision answer (mirrors ``SupervisorAgent.arun``)."""
    common = dict(question_id=question.id, disagreements=st.disagreements, queries=st.queries, search_outcomes=st.outcomes, coverage=st.coverage)
    if st.error is None:
        try:
            parsed = parse_forecast(text or "")
            confidence = str(parsed.data.get("confidence", "")).strip().lower()
            if confidence not in ("high", "medium", "low"):
                raise ForecastParseError(f"confidence must be high, medium or low, got {parsed.data.get('confidence')!r}",
                                         raw_text=text, field="confidence", value=parsed.data.get("confidence"))
        except Exception as exc:
            st.fail(exc)
    if st.error is not None:
        return SupervisorArtifact(**common, usage=st.usage, status="failed", error=st.error.to_info(), wall_time_s=time.perf_counter() - st.t0)
    results = [r for o in st.outcomes if o.ok for r in o.results]
    return SupervisorArtifact(**common, p_yes=parsed.p_yes, confidence=confidence, rationale=parsed.rationale,  # type: ignore[arg-type]
                              key_evidence=attach_provenance(parsed.key_evidence, results), usage=st.usage,
                              wall_time_s=time.perf_counter() - st.t0)


# --- trace -------------------------------------------------------------------------------------------
class TraceRecorder:
    """Collects provider calls and searches of one run (the sinks of :class:`ForecastPipeline`) and
    assembles the :class:`PipelineTrace`. Use as ``with TraceRecorder() as rec: ...``."""

    def __enter__(self) -> "TraceRecorder":
        self.t0 = time.perf_counter()
        self.calls: list = []
        self.searches: list = []
        self._tokens = (RECORDING_SINK.set(self.calls), SEARCH_RECORDING_SINK.set(self.searches))
        return self

    def __exit__(self, *exc: object) -> None:
        RECORDING_SINK.reset(self._tokens[0])
        SEARCH_RECORDING_SINK.reset(self._tokens[1])

    def trace(self, pipe: ForecastPipeline, question: VisibleQuestion, ens: EnsembleResult, aggregates: dict[str, float | None],
              debate: DebateArtifact | None, supervisor: SupervisorArtifact | None) -> PipelineTrace:
        """The trace, final probability by ``pipe.combination`` (the tail of :meth:`ForecastPipeline.arun`)."""
        trace = PipelineTrace(
            question=question, forecasts=ens.forecasts, n_ok=ens.n_ok, aggregation_method=pipe.aggregation,
            aggregate_p_yes=aggregates[pipe.aggregation], aggregates=aggregates, debate=debate, supervisor=supervisor,
            combination_rule={**pipe.combination.describe(), "reconcile_min_spread": pipe.reconcile_min_spread},
            ledger=pipe.ledger(ens, debate, supervisor), recorded_calls=self.calls,
            recorded_searches=self.searches,
        )
        if not ens.policy_met or trace.aggregate_p_yes is None:
            err = EnsembleFailed(
                f"{ens.n_ok} of {ens.n_members} members succeeded; the policy needs {ens.min_success_fraction:.0%}",
                n_ok=ens.n_ok, n_members=ens.n_members, min_success_fraction=ens.min_success_fraction)
            trace.status, trace.error, trace.final_source = "failed", err.to_info(), "ensemble failed"
        else:
            trace.final_p_yes, trace.final_source = pipe.combination.combine(trace.aggregate_p_yes, debate, supervisor)
        trace.wall_time_s = time.perf_counter() - self.t0
        return trace
