"""The configuration of a reconciliation pipeline: one :class:`PipelineConfig` for the plain-Python pipeline,
its framework versions and the benchmark harness (``benchmarks.harness.config.RunConfig`` embeds it).

Settings are grouped by the agent they configure, and each group uses that agent's own keyword names:
:class:`MemberSettings` are :class:`agent_research.ForecasterAgent` keywords shared by every member,
:class:`DebateSettings` are :class:`agent_specialists.DebateAgent` keywords and :class:`SupervisorSettings`
are :class:`agent_specialists.SupervisorAgent` keywords. :meth:`agent_research.ForecastPipeline.from_config`
builds the agents from it.

>>> PipelineConfig(n_members=5, debate={"max_rounds": 3}, supervisor=None).debate.max_rounds
3
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, field_validator, model_serializer, model_validator

from agent_providers import Provider
from agent_research.aggregation import AGGREGATORS
from agent_research.combination import CombinationRule

__all__ = ["EVIDENCE_MODES", "DebateSettings", "EvidenceMode", "MemberSettings", "PipelineConfig", "RoleProviders", "SupervisorSettings"]

#: Who sees which search results (:attr:`PipelineConfig.evidence`; defined on :class:`agent_research.Ensemble`).
EvidenceMode = Literal["shared", "split", "private"]
#: The evidence modes, the default first.
EVIDENCE_MODES: tuple[str, ...] = get_args(EvidenceMode)


class MemberSettings(BaseModel):
    """What every ensemble member shares (:class:`agent_research.ForecasterAgent` keywords); personas,
    temperatures and seeds vary per member, and the token limit is every agent's: both are set on
    :class:`PipelineConfig`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n_queries: int = Field(1, ge=0, description="Research queries per question (count); 0 = no research.")
    max_results: int = Field(5, ge=1, description="Search results per query that reach the prompt (count).")
    llm_queries: bool = Field(False, description="Let the model propose the queries after the first (one extra call).")
    max_evidence: int = Field(2, ge=0, le=5, description="Key-evidence items per answer (each costs about 60 generated tokens).")


class DebateSettings(BaseModel):
    """Bull and bear debate (:class:`agent_specialists.DebateAgent` keywords). The pipeline's default is
    2 rounds (the agent alone defaults to 3)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_rounds: int = Field(2, ge=1, description="Most rounds (each one bull and one bear call).")
    consensus_threshold: float = Field(0.05, gt=0, lt=1, description="The debate stops when |p_bull - p_bear| is below this (probability units).")
    temperature: float | None = Field(None, description="Sampling temperature of both sides; provider default when None.")


class SupervisorSettings(BaseModel):
    """Supervisor (:class:`agent_specialists.SupervisorAgent` keywords). The pipeline's default is 2
    clarifying searches (the agent alone defaults to 3)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_queries: int = Field(2, ge=0, description="Most clarifying searches (one per named disagreement); 0 = decide without searching.")
    max_results: int = Field(5, ge=1, description="Results per clarifying search (count).")
    temperature: float | None = Field(None, description="Sampling temperature; provider default when None.")


class PipelineConfig(BaseModel):
    """Everything that defines a :class:`agent_research.ForecastPipeline` except its providers and search.

    Member ``i`` gets ``personas[i % len]``, ``temperatures[i % len]`` and the seed ``seed + i``; bull,
    bear and supervisor get ``seed``. ``debate=None`` or ``supervisor=None`` leaves that stage out.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    n_members: int = Field(3, ge=1, le=32, description="Ensemble size (count).")
    personas: list[str | None] | None = Field(None, description="Cycled over members (keys of agent_research.prompts.PERSONAS or free text); default: every persona in turn.")
    temperatures: list[float | None] | None = Field(None, description="Cycled over members; default 0.7 for every member.")
    seed: int | None = Field(0, description="Member i gets seed + i; bull, bear and supervisor get seed; None = unseeded.")
    concurrency: int | None = Field(4, ge=1, description="Members running at once; None = all of them.")
    member_timeout_s: float | None = Field(300.0, gt=0, description="Deadline of each member in seconds (research and answer); None = none.")
    min_success_fraction: float = Field(0.5, gt=0, le=1, description="Fraction of members that must succeed for the question to count.")
    max_tokens: int | None = Field(400, ge=16, description="Generated-token limit of every call of every agent (tokens).")
    member: MemberSettings = Field(default_factory=MemberSettings, description="Settings every member shares.")
    debate: DebateSettings | None = Field(default_factory=DebateSettings, description="The debate stage; None leaves it out.")
    supervisor: SupervisorSettings | None = Field(default_factory=SupervisorSettings, description="The supervisor stage; None leaves it out.")
    aggregation: str = Field("mean", description="Aggregate the debate starts from and the combination begins with (a key of AGGREGATORS).")
    combination: CombinationRule = Field(default_factory=CombinationRule, description="How aggregate, debate and supervisor combine.")
    reconcile_min_spread: float = Field(0.0, ge=0, le=1, description="Debate and supervisor run only when the members' spread (max - min p_yes) is at least this.")
    evidence: EvidenceMode = Field("shared", description=(
        "Who sees which search results (agent_research.Ensemble): 'shared', every member runs the research as before "
        "(the question text, the same results for every member); 'split', one research pass whose results are dealt "
        "into disjoint shares, one per member (seeded by seed and the question); 'private', each member writes its own "
        "queries and sees only its own results. The debate and the supervisor see what each member was shown."))

    @field_validator("aggregation")
    @classmethod
    def _aggregation(cls, v: str) -> str:
        if v not in AGGREGATORS:
            raise ValueError(f"unknown aggregation {v!r}; valid: {', '.join(AGGREGATORS)}")
        return v

    @model_validator(mode="after")
    def _evidence_needs_research(self) -> "PipelineConfig":
        if self.evidence != "shared" and self.member.n_queries == 0:
            raise ValueError(f"--evidence {self.evidence} gives each member its own search results, but the members search "
                             "0 queries (member.n_queries = 0): give them at least one query, or use --evidence shared")
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The config's fields; ``evidence`` only when it is not "shared", so that a shared-evidence pipeline dumps
        as it did before evidence modes (old manifests, their shard digests and resumes are unchanged)."""
        out = handler(self)
        if out.get("evidence") == "shared":
            del out["evidence"]
        return out

    @property
    def member_concurrency(self) -> int:
        """Members running at once (``concurrency``, or ``n_members`` when it is None)."""
        return self.concurrency or self.n_members


@dataclass(frozen=True)
class RoleProviders:
    """Providers per role. Members cycle over ``members``; bull and bear default to the first member
    provider and the supervisor to the last."""

    members: Sequence[Provider]
    bull: Provider | None = None
    bear: Provider | None = None
    supervisor: Provider | None = None

    def __post_init__(self) -> None:
        if not self.members:
            raise ValueError("RoleProviders.members is empty: at least one member provider is needed")

    @classmethod
    def single(cls, provider: Provider) -> "RoleProviders":
        """Every role on one provider."""
        return cls(members=[provider])

    @classmethod
    def of(cls, providers: "RoleProviders | Sequence[Provider] | Provider") -> "RoleProviders":
        """``providers`` as roles: a RoleProviders as is, one provider for every role, or a list of member providers."""
        if isinstance(providers, RoleProviders):
            return providers
        if isinstance(providers, Provider):
            return cls.single(providers)
        return cls(members=list(providers))

    @property
    def bull_provider(self) -> Provider:
        """The bull's provider (default: the first member provider)."""
        return self.bull or self.members[0]

    @property
    def bear_provider(self) -> Provider:
        """The bear's provider (default: the first member provider)."""
        return self.bear or self.members[0]

    @property
    def supervisor_provider(self) -> Provider:
        """The supervisor's provider (default: the last member provider)."""
        return self.supervisor or self.members[-1]
