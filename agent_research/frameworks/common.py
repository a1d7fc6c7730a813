"""What the three implementations share: inputs (config, providers) and the plain pipeline that holds the
agents (every prompt, parameter and step). The framework implementations express only the orchestration,
calling the agents' public steps, so with the same responses all three give the same trace."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agent_providers import Provider
from agent_research.combination import CombinationRule
from agent_research.ensemble import Ensemble
from agent_research.pipeline import ForecastPipeline
from agent_specialists import DebateAgent, SupervisorAgent
from agent_tools import ToolExecutor


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
