"""ForecastPipeline: ensemble -> aggregate -> (debate, supervisor) -> final probability, with a trace.

The trace (:class:`agent_schemas.PipelineTrace`) is JSON-serialisable and holds every intermediate
probability, evidence with provenance, usage per role, and every provider response, so the run can be
replayed offline (:meth:`ForecastPipeline.replay`) and gives the same final probability.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence

from agent_providers import Ask, Provider, run_sync
from agent_providers.recording import RECORDING_SINK, RecordingProvider, ReplayProvider
from agent_research.aggregation import AGGREGATORS, load_scipy_special
from agent_research.combination import CombinationRule
from agent_research.confidence import grounded, question_confidence
from agent_research.config import PipelineConfig, RoleProviders
from agent_research.ensemble import Ensemble, EnsembleResult, GivenForecasts
from agent_schemas import (
    AgentSummary,
    DebateArtifact,
    EnsembleFailed,
    PipelineTrace,
    Question,
    ReconcileGate,
    RecordedCall,
    RecordedSearch,
    SupervisorArtifact,
    UsageLedger,
    VisibleQuestion,
    as_reconcile_error,
    as_visible,
)
from agent_schemas.kinds import KINDS
from agent_specialists import DebateAgent, SupervisorAgent
from agent_tools import SearchClient, ToolExecutor
from agent_tools.search_recording import (
    SEARCH_RECORDING_SINK,
    RecordingSearchClient,
    ReplaySearchClient,
)

log = logging.getLogger(__name__)


def _recording(p: Provider, role: str) -> RecordingProvider:
    return p if isinstance(p, RecordingProvider) else RecordingProvider(p, role)


async def _specialist(artifact_cls: type[DebateArtifact] | type[SupervisorArtifact], question: VisibleQuestion,
                      run: Awaitable[DebateArtifact | SupervisorArtifact]) -> DebateArtifact | SupervisorArtifact:
    """Await a specialist; an exception it did not turn into a failed artifact itself (a bug outside its
    turn and step boundaries) gives a failed artifact with the typed error, so the other specialist's
    result and the question survive. Its turns' usage is then unknown (not recorded)."""
    try:
        return await run
    except Exception as exc:
        log.warning("%s on %s failed with an unexpected %s: %s", artifact_cls.__name__, question.id, type(exc).__name__, exc)
        return artifact_cls(question_id=question.id, status="failed", error=as_reconcile_error(exc).to_info())


class TraceRecorder:
    """Collects the provider calls and searches of one pipeline run (into the contexts' sinks,
    :data:`agent_providers.recording.RECORDING_SINK` and :data:`agent_tools.search_recording.SEARCH_RECORDING_SINK`)
    for :meth:`ForecastPipeline.trace`. Use as ``with TraceRecorder() as recorder: ...``; ``t0`` is the
    ``time.perf_counter()`` of entering (the trace's wall time starts there)."""

    def __enter__(self) -> "TraceRecorder":
        self.t0 = time.perf_counter()
        self.calls: list[RecordedCall] = []
        self.searches: list[RecordedSearch] = []
        self._tokens = (RECORDING_SINK.set(self.calls), SEARCH_RECORDING_SINK.set(self.searches))
        return self

    def __exit__(self, *exc: object) -> None:
        RECORDING_SINK.reset(self._tokens[0])
        SEARCH_RECORDING_SINK.reset(self._tokens[1])


class ForecastPipeline:
    """The full reconciliation pipeline for one question at a time.

    Parameters
    ----------
    ensemble : Ensemble or GivenForecasts
        The forecasters, or forecasts given in their place (:class:`agent_research.ensemble.GivenForecasts`).
    debate : DebateAgent, optional
        Run when the members disagree (see ``reconcile_min_spread``).
    supervisor : SupervisorAgent, optional
        Run when the members disagree; runs concurrently with the debate (they are independent).
    aggregation : str
        Name in ``agent_research.aggregation.AGGREGATORS`` giving the aggregate the debate starts from
        and the combination rule begins with.
    combination : CombinationRule, optional
        How aggregate, debate and supervisor combine (documented on the class).
    reconcile_min_spread : float
        Debate and supervisor run only when ``max(p) - min(p)`` over successful members is at least
        this (probability units; :meth:`gate`, recorded as ``PipelineTrace.reconcile_gate``). 0 runs them
        always. Skipped specialists cost no tokens and leave the final probability at the (clipped)
        aggregate.

    Notes
    -----
    The pipeline wraps its agents' providers in :class:`agent_providers.recording.RecordingProvider`
    (roles forecaster, bull, bear, supervisor) to record responses for replay.
    """

    def __init__(
        self,
        ensemble: Ensemble | GivenForecasts,
        debate: DebateAgent | None = None,
        supervisor: SupervisorAgent | None = None,
        *,
        aggregation: str = "mean",
        combination: CombinationRule | None = None,
        reconcile_min_spread: float = 0.0,
    ) -> None:
        if not any(aggregation in k.pools for k in KINDS.values()):
            raise ValueError(f"unknown aggregation {aggregation!r}; valid: {', '.join(AGGREGATORS)}")
        if not 0 <= reconcile_min_spread <= 1:
            raise ValueError(f"reconcile_min_spread must be in [0, 1], got {reconcile_min_spread}")
        self.ensemble = ensemble
        self.debate = debate
        self.supervisor = supervisor
        self.aggregation = aggregation
        self.combination = combination or CombinationRule()
        self.reconcile_min_spread = reconcile_min_spread
        self._map_providers(_recording)
        self._map_search(lambda c: c if isinstance(c, RecordingSearchClient) else RecordingSearchClient(c))
        load_scipy_special()  # now, not at the first question's aggregates: an import on a running event loop stalls every call in flight

    @classmethod
    def from_config(cls, providers: RoleProviders | Sequence[Provider] | Provider, executor: ToolExecutor | None = None,
                    config: PipelineConfig | None = None, *, ensemble: Ensemble | GivenForecasts | None = None) -> "ForecastPipeline":
        """The pipeline ``config`` describes, on ``providers`` and ``executor``.

        Parameters
        ----------
        providers : RoleProviders, sequence of Provider or Provider
            Members cycle over the member providers; bull and bear use the first and the supervisor the
            last unless :class:`RoleProviders` names them. May be empty with a given ``ensemble`` and a
            config without debate and supervisor: nothing is then called.
        executor : ToolExecutor, optional
            Search with the cutoff-date guard, shared by the members and the supervisor; no research when None.
        config : PipelineConfig, optional
            Default :class:`PipelineConfig`.
        ensemble : Ensemble or GivenForecasts, optional
            The members to reconcile instead of the config's forecasters, e.g. a panel's given forecasts
            (:class:`agent_research.ensemble.GivenForecasts`); the config's member settings then do not apply.

        Returns
        -------
        ForecastPipeline
            Also the specification the framework versions orchestrate (``agent_research.frameworks``).

        Raises
        ------
        ValueError
            When ``providers`` is empty and a model is needed (the config's members, debate or supervisor).
        """
        c = config or PipelineConfig()
        if ensemble is not None and c.debate is None and c.supervisor is None:
            return cls(ensemble, aggregation=c.aggregation, combination=c.combination, reconcile_min_spread=c.reconcile_min_spread)
        roles = RoleProviders.of(providers)
        if ensemble is None:
            ensemble = Ensemble.from_providers(
                list(roles.members), n_members=c.n_members, executor=executor, personas=c.personas, temperatures=c.temperatures,
                seed=c.seed, member=c.member, max_tokens=c.max_tokens, concurrency=c.member_concurrency,
                min_success_fraction=c.min_success_fraction, member_timeout_s=c.member_timeout_s, evidence=c.evidence,
            )
        debate = None if c.debate is None else DebateAgent(
            roles.bull_provider, bull_llm=roles.bull_provider, bear_llm=roles.bear_provider, max_tokens=c.max_tokens, seed=c.seed,
            **c.debate.model_dump())
        supervisor = None if c.supervisor is None else SupervisorAgent(
            roles.supervisor_provider, executor, max_tokens=c.max_tokens, seed=c.seed, **c.supervisor.model_dump())
        return cls(ensemble, debate, supervisor, aggregation=c.aggregation, combination=c.combination,
                   reconcile_min_spread=c.reconcile_min_spread)

    def _executors(self) -> list[ToolExecutor]:
        found: dict[int, ToolExecutor] = {}
        for m in self.ensemble.members:
            if m.executor is not None:
                found[id(m.executor)] = m.executor
        if self.supervisor is not None and self.supervisor.executor is not None:
            found[id(self.supervisor.executor)] = self.supervisor.executor
        return list(found.values())

    def _map_search(self, fn: Callable[[SearchClient], SearchClient]) -> None:
        for ex in self._executors():
            ex.search = fn(ex.search)

    def _map_providers(self, fn: Callable[[Provider, str], Provider]) -> None:
        for m in self.ensemble.members:
            m.llm = fn(m.llm, "forecaster")
        if self.debate is not None:
            self.debate.llms = {side: fn(p, side) for side, p in self.debate.llms.items()}
        if self.supervisor is not None:
            self.supervisor.llm = fn(self.supervisor.llm, "supervisor")

    # --- run -------------------------------------------------------------------------------------
    def gate(self, ens: EnsembleResult) -> ReconcileGate:
        """Whether the specialists run on ``ens``: only when the ensemble succeeded and its members disagree,
        their spread (max - min ``p_yes`` of the successful members; for another kind its
        :meth:`~agent_schemas.kinds.base.QuestionKind.spread`) at least ``reconcile_min_spread``.
        With fewer than two successful members there is no spread and they run."""
        ok = ens.ok_forecasts
        spread = ens.spread() if len(ok) >= 2 else None
        t = self.reconcile_min_spread

        def gate(reconciled: bool, reason: str) -> ReconcileGate:
            return ReconcileGate(min_spread=t, spread=spread, reconciled=reconciled, reason=reason)

        if not ens.policy_met or ens.aggregate(self.aggregation) is None:
            return gate(False, "not reconciled: the ensemble failed")
        if self.debate is None and self.supervisor is None:
            return gate(False, "not reconciled: no debate or supervisor configured")
        if spread is None:
            return gate(True, "reconciled: fewer than 2 successful members, no spread to measure")
        if spread + 1e-9 < t:  # 1e-9: 0.3 - 0.2 is a spread of 0.1, not 0.0999...
            return gate(False, f"not reconciled: the members agree (spread {spread:.2f} < {t:.2f})")
        return gate(True, f"reconciled: the members disagree (spread {spread:.2f} >= {t:.2f})" if t > 0 else "reconciled: every question is (no spread threshold)")

    def reconcile_inputs(self, ens: EnsembleResult) -> tuple[dict[str, float | list[float] | None], list[AgentSummary] | None]:
        """Every pooling method's aggregate of ``ens`` (the rules of its question's kind, in the kind's stored
        form), and the member summaries the specialists start from, or None when they do not run (:meth:`gate`:
        the ensemble failed, or its members agree). Under split or private evidence each summary carries the
        results its member was shown (``AgentSummary.seen``), which the specialists' prompts then show by member."""
        if self.aggregation not in ens.kind.pools:
            raise ValueError(f"aggregation {self.aggregation!r} is not a pooling rule of {ens.kind.label} questions; "
                             f"valid: {', '.join(ens.kind.pools)}")
        aggregates = {name: ens.aggregate(name) for name in ens.kind.pools}
        if not self.gate(ens).reconciled:
            return aggregates, None
        shown = ens.shown or {}
        return aggregates, [f.summary().model_copy(update={"seen": shown.get(f.agent_id, [])}) if shown else f.summary()
                            for f in ens.ok_forecasts]

    async def reconcile(
        self, question: VisibleQuestion, ens: EnsembleResult, *, asks: Mapping[str, Ask] | None = None,
    ) -> tuple[dict[str, float | list[float] | None], DebateArtifact | None, SupervisorArtifact | None]:
        """Aggregate one ensemble result with every method and run the specialists on it, concurrently.

        ``asks`` maps the roles "bull", "bear" and "supervisor" to how their calls reach a model (default:
        each agent's provider). Returns ``(aggregates by method, debate artifact or None, supervisor
        artifact or None)``.
        """
        asks = asks or {}
        aggregates, summaries = self.reconcile_inputs(ens)
        if summaries is None:
            return aggregates, None, None
        agg = aggregates[self.aggregation]
        jobs = []
        if self.debate is not None:
            debate_asks = {side: asks[side] for side in ("bull", "bear") if side in asks}
            jobs.append(_specialist(DebateArtifact, question, self.debate.arun(question, summaries, agg, asks=debate_asks)))
        if self.supervisor is not None:
            jobs.append(_specialist(SupervisorArtifact, question,
                                    self.supervisor.arun(question, summaries, question.forecast_date, ask=asks.get("supervisor"))))
        done = await asyncio.gather(*jobs)
        debate = done.pop(0) if self.debate is not None else None
        supervisor = done.pop(0) if self.supervisor is not None else None
        return aggregates, debate, supervisor

    def trace(self, question: VisibleQuestion, ens: EnsembleResult, aggregates: dict[str, float | list[float] | None],
              debate: DebateArtifact | None, supervisor: SupervisorArtifact | None, recorder: "TraceRecorder") -> PipelineTrace:
        """The :class:`PipelineTrace` of one run: every step's result, the ledger, the calls and searches
        ``recorder`` collected, and the final probability by :attr:`combination` (or the ensemble's failure).

        The supervisor's confidence is capped by its evidence first (:func:`agent_research.confidence.grounded`),
        so the combination rule and the question's weakest-link confidence read the grounded value."""
        supervisor = grounded(supervisor)
        kind = question.kind
        aggregate = aggregates.get(self.aggregation)
        trace = PipelineTrace(
            question=question,
            forecasts=ens.forecasts,
            n_ok=ens.n_ok,
            aggregation_method=self.aggregation,
            **kind.fields(kind.vector(aggregate), prefix="aggregate_"),
            aggregates=aggregates,
            debate=debate,
            supervisor=supervisor,
            confidence=question_confidence(ens.forecasts, supervisor),
            combination_rule={**self.combination.describe(), "reconcile_min_spread": self.reconcile_min_spread},
            reconcile_gate=self.gate(ens),
            ledger=self.ledger(ens, debate, supervisor),
            recorded_calls=recorder.calls,
            recorded_searches=recorder.searches,
            member_evidence=ens.member_evidence,
        )
        if not ens.policy_met or aggregate is None:
            err = EnsembleFailed(
                f"{ens.n_ok} of {ens.n_members} members succeeded; the policy needs {ens.min_success_fraction:.0%}",
                n_ok=ens.n_ok, n_members=ens.n_members, min_success_fraction=ens.min_success_fraction,
            )
            trace.status, trace.error, trace.final_source = "failed", err.to_info(), "ensemble failed"
        else:
            final, trace.final_source = self.combination.combine(aggregate, debate, supervisor, question.spec)
            setattr(trace, f"final_{kind.stored_field}", final)
        trace.wall_time_s = time.perf_counter() - recorder.t0
        return trace

    async def arun(self, question: VisibleQuestion | Question) -> PipelineTrace:
        """Run the pipeline on ``question`` (async) and return its trace. Never raises for a failed member,
        debate turn or supervisor step (any exception): they are recorded in the trace (``status`` /
        ``error`` fields) with the usage spent.

        Agents see only the visible part of the question: a :class:`Question` is reduced with
        :meth:`Question.visible` (no crowd value); pass ``question.visible(show_crowd=True)`` to show it.
        The trace records that visible question, never the outcome."""
        question = as_visible(question)
        with TraceRecorder() as recorder:
            ens = await self.ensemble.arun(question)
            aggregates, debate, supervisor = await self.reconcile(question, ens)
        return self.trace(question, ens, aggregates, debate, supervisor, recorder)

    def run(self, question: VisibleQuestion | Question) -> PipelineTrace:
        """Synchronous form of :meth:`arun`."""
        return run_sync(self.arun(question))

    def ledger(self, ens: EnsembleResult, debate: DebateArtifact | None, supervisor: SupervisorArtifact | None) -> UsageLedger:
        """Usage keyed by (method, role, model): 'ensemble'/'forecaster', 'debate'/'bull'|'bear', 'supervisor'/'supervisor'."""
        ledger = UsageLedger()
        for f in ens.forecasts:
            ledger.record("ensemble", "forecaster", f.model, f.usage)
        if debate is not None and self.debate is not None:
            for side, usage in debate.usage_by_role.items():
                ledger.record("debate", side, self.debate.llms[side].spec, usage)  # type: ignore[index]
        if supervisor is not None and self.supervisor is not None:
            ledger.record("supervisor", "supervisor", self.supervisor.llm.spec, supervisor.usage)
        return ledger

    # --- replay ------------------------------------------------------------------------------------
    def replay(self, trace: PipelineTrace) -> PipelineTrace:
        """Re-run ``trace.question`` offline from ``trace.recorded_calls`` with this pipeline's configuration.

        Every provider is replaced by a :class:`ReplayProvider` serving the recorded responses and every
        search backend by a :class:`ReplaySearchClient` serving the recorded raw outcomes; the
        result must equal the original final probability (the run is deterministic given the responses).

        Raises
        ------
        agent_providers.recording.ReplayMiss
            Propagated inside failed steps when the configuration differs from the recorded run.
        """
        clone = copy.copy(self)
        clone.ensemble = copy.copy(self.ensemble)
        executors = {id(ex): copy.copy(ex) for ex in self._executors()}
        clone.ensemble.members = [copy.copy(m) for m in self.ensemble.members]
        for m in clone.ensemble.members:
            if m.executor is not None:
                m.executor = executors[id(m.executor)]
        clone.debate = copy.copy(self.debate)
        clone.supervisor = copy.copy(self.supervisor)
        if clone.supervisor is not None and clone.supervisor.executor is not None:
            clone.supervisor.executor = executors[id(clone.supervisor.executor)]
        clone._map_search(lambda c: RecordingSearchClient(ReplaySearchClient(trace.recorded_searches)))

        def to_replay(p: Provider, role: str) -> Provider:
            inner = p.inner if isinstance(p, RecordingProvider) else p
            return RecordingProvider(ReplayProvider(trace.recorded_calls, inner.spec), role)

        clone._map_providers(to_replay)
        return clone.run(trace.question)
