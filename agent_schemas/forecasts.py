"""A single forecaster's answer, with evidence provenance."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from agent_schemas.errors import ErrorInfo
from agent_schemas.search import SearchResult
from agent_schemas.usage import TokenUsage

#: A stated confidence, ordered low < medium < high (``agent_research.confidence.CONFIDENCE_LEVELS``).
Confidence = Literal["high", "medium", "low"]


class EvidenceItem(BaseModel):
    """A claim and the source it came from (the claim-to-source mapping is kept between agents)."""

    claim: str = Field(description="One-sentence claim used in the reasoning.")
    source_url: str | None = Field(None, description="URL of the supporting source, if any.")
    published: dt.date | None = Field(None, description="Publication date of the source, if known.")
    title: str | None = Field(None, description="Title of the source, if known.")


class Forecast(BaseModel):
    """One forecaster's forecast for one question, or a recorded failure.

    ``status="ok"`` requires the forecast: ``p_yes`` for a binary question, ``distribution`` for the other
    kinds (:mod:`agent_schemas.kinds`); ``status="failed"`` carries ``error`` and no forecast: a failure is
    never replaced by a default probability.
    """

    question_id: str = Field(description="Id of the question forecast.")
    agent_id: str = Field("forecaster", description="Ensemble member name, e.g. 'member-0'.")
    p_yes: float | None = Field(None, ge=0, le=1, description="Probability of Yes in [0, 1]; None when failed or not binary.")
    distribution: list[float] | None = Field(None, description="The forecast of a non-binary question in its kind's form (a probability per option; a CDF on the numeric grid: agent_schemas.kinds); None for a binary question (p_yes) and when failed.")
    rationale: str = Field("", description="Short rationale (one line is passed between agents).")
    key_evidence: list[EvidenceItem] = Field(default_factory=list, description="Evidence with provenance.")
    confidence: Confidence | None = Field(
        None, description="The member's own confidence in its p_yes (high, medium, low); None when it gave none or an unreadable one.")
    model: str = Field("", description="Provider-qualified model that produced it.")
    usage: TokenUsage = Field(default_factory=TokenUsage, description="Tokens and cost of producing it (research + answer).")
    status: Literal["ok", "failed"] = Field("ok", description="'ok' or 'failed'.")
    error: ErrorInfo | None = Field(None, description="The typed error when failed.")
    latency_s: float = Field(0.0, ge=0, description="Wall time in seconds.")
    persona: str | None = Field(None, description="Persona / prompt variant of the member, if any.")
    temperature: float | None = Field(None, description="Sampling temperature used.")
    n_evidence_dropped: int = Field(0, ge=0, description="Evidence items dropped by the cutoff guard while researching (count).")
    n_evidence_in_prompt: int = Field(0, ge=0, description="Search results that reached the prompt (count).")
    latest_evidence_date: dt.date | None = Field(None, description="Latest publication date among results in the prompt (leakage audit).")
    queries: list[str] = Field(default_factory=list, description="Research queries run.")
    search_failures: list[str] = Field(default_factory=list, description="Failure types of research searches that failed.")

    @model_validator(mode="after")
    def _status_consistent(self) -> "Forecast":
        if self.status == "ok" and (self.p_yes is None) == (self.distribution is None):
            raise ValueError(f"Forecast {self.question_id}/{self.agent_id}: status 'ok' needs p_yes (binary) or a distribution, not both")
        if self.status == "failed":
            if self.error is None:
                raise ValueError(f"Forecast {self.question_id}/{self.agent_id}: status 'failed' needs error")
            if self.p_yes is not None or self.distribution is not None:
                raise ValueError(f"Forecast {self.question_id}/{self.agent_id}: a failed forecast cannot carry p_yes or a distribution")
        return self

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def summary(self, max_evidence: int = 3) -> "AgentSummary":
        """The short, structured form passed to debate and supervisor (no transcripts)."""
        return AgentSummary(
            agent_id=self.agent_id,
            p_yes=self.p_yes,
            distribution=self.distribution,
            rationale=_one_line(self.rationale),
            top_evidence=self.key_evidence[:max_evidence],
            model=self.model,
        )


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


class AgentSummary(BaseModel):
    """What flows between agents: probability, a one-line rationale and top evidence with sources."""

    agent_id: str = Field(description="Member name.")
    p_yes: float | None = Field(None, ge=0, le=1, description="Member probability in [0, 1] (binary).")
    distribution: list[float] | None = Field(None, description="Member forecast of a non-binary question (its kind's form).")
    rationale: str = Field("", description="One-line rationale.")
    top_evidence: list[EvidenceItem] = Field(default_factory=list, description="Up to a few evidence items with sources.")
    model: str = Field("", description="Provider-qualified model.")
    seen: list[SearchResult] = Field(
        default_factory=list, description="The search results the member's prompt showed, when the members did not share "
                                          "them (split or private evidence: agent_research.evidence_modes); empty otherwise.")
