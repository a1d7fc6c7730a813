"""Artifacts of reconciliation: debate rounds, supervisor review, and the pipeline trace."""

from __future__ import annotations

import datetime as dt
import warnings
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from agent_schemas.errors import ErrorInfo
from agent_schemas.forecasts import Confidence, EvidenceItem, Forecast
from agent_schemas.messages import ChatMessage, Completion
from agent_schemas.questions import VisibleQuestion
from agent_schemas.search import RecordedSearch, ResultRelevance, SearchOutcome
from agent_schemas.usage import TokenUsage, UsageLedger

#: A probability in [0, 1].
Probability = Annotated[float, Field(ge=0, le=1)]

#: Artifacts say ``usage`` like :class:`Forecast`; traces written before 0.2 said ``token_usage`` and still validate.
_USAGE = AliasChoices("usage", "token_usage")


def _token_usage(self) -> TokenUsage:
    warnings.warn(f"{type(self).__name__}.token_usage is deprecated; use .usage", DeprecationWarning, stacklevel=2)
    return self.usage


class DebateTurn(BaseModel):
    """One side's answer in one round."""

    side: Literal["bull", "bear"] = Field(description="'bull' argues for a higher probability, 'bear' for a lower one.")
    argument: str = Field("", description="The argument, answering the other side's last argument.")
    p_yes: float | None = Field(None, ge=0, le=1, description="This side's probability in [0, 1]; None when the turn failed.")
    distribution: list[float] | None = Field(None, description="This side's forecast of a non-binary question (its kind's form); None when the turn failed.")
    key_evidence: list[EvidenceItem] = Field(default_factory=list, description="Evidence cited.")
    status: Literal["ok", "failed"] = Field("ok", description="'failed' when the answer could not be obtained or parsed.")
    error: ErrorInfo | None = Field(None, description="Typed error of a failed turn.")
    usage: TokenUsage = Field(default_factory=TokenUsage, description="Usage of this turn.")


class DebateRound(BaseModel):
    """A bull turn and a bear turn."""

    round_number: int = Field(ge=1, description="1-based round number.")
    bull: DebateTurn
    bear: DebateTurn
    consensus: bool = Field(False, description="True when |bull - bear| < consensus_threshold after this round.")


class DebateArtifact(BaseModel):
    """Result of a :class:`agent_specialists.DebateAgent` run.

    ``p_yes`` is the midpoint of the final bull and bear probabilities (each side's last successfully
    parsed probability). It is None when either side never produced one. For a non-binary question the
    same holds of ``distribution``: the mean (linear pool) of the two sides' final forecasts.
    """

    question_id: str
    aggregate_p_yes: float | None = Field(None, description="Ensemble aggregate the debate started from, in [0, 1].")
    rounds: list[DebateRound] = Field(default_factory=list)
    bull_final_probability: Probability | list[float] | None = Field(
        None, description="The bull's last parsed forecast: p_yes for a binary question, the kind's vector otherwise.")
    bear_final_probability: Probability | list[float] | None = Field(
        None, description="The bear's last parsed forecast: p_yes for a binary question, the kind's vector otherwise.")
    p_yes: float | None = Field(None, ge=0, le=1, description="Midpoint of the final bull and bear probabilities.")
    aggregate_distribution: list[float] | None = Field(None, description="Non-binary: the ensemble aggregate the debate started from.")
    distribution: list[float] | None = Field(None, description="Non-binary: the mean of the final bull and bear forecasts.")
    consensus_reached: bool = False
    early_termination: bool = Field(False, description="True when the debate stopped before max_rounds (consensus).")
    consensus_threshold: float = Field(0.05, description="|bull - bear| below which the debate stops.")
    n_failed_turns: int = Field(0, ge=0, description="Turns whose answer could not be obtained or parsed (count).")
    usage: TokenUsage = Field(default_factory=TokenUsage, validation_alias=_USAGE, description="Usage summed over all turns.")
    usage_by_role: dict[str, TokenUsage] = Field(default_factory=dict, description="Usage per role ('bull', 'bear').")
    status: Literal["ok", "failed"] = "ok"
    error: ErrorInfo | None = None
    wall_time_s: float = Field(0.0, ge=0, description="Wall time of the debate in seconds.")

    token_usage = property(_token_usage, doc="Deprecated name of :attr:`usage` (traces before 0.2 wrote ``token_usage``).")


class Disagreement(BaseModel):
    """A point on which ensemble members disagree, as named by the supervisor."""

    topic: str = Field(description="What the members disagree about.")
    description: str = Field("", description="The positions taken.")
    agents: list[str] = Field(default_factory=list, description="Member ids involved.")
    query: str | None = Field(None, description="Clarifying search query proposed for it.")


class CoverageNote(BaseModel):
    """Whether a disagreement is supported by evidence or is a gap, and why.

    "supported" means its search returned a result relevant to the question and the disagreement
    (:mod:`agent_tools.relevance`) and dated on or before the cutoff; ``evidence`` shows each result's
    judgement. Traces written before results were judged have ``evidence`` None: there "supported" meant
    any result dated on or before the cutoff (a hit count).
    """

    topic: str
    status: Literal["supported", "gap"]
    reason: str = Field("", description="E.g. 'search failed: rate_limited' or '2 of 5 results relevant and dated on or before the cutoff'.")
    evidence: list[ResultRelevance] | None = Field(
        None, description="Each result of the disagreement's search as judged for relevance and date, in the search's "
                          "order; None when no search answered (or in traces written before results were judged).")


class GroundedConfidence(BaseModel):
    """The supervisor's confidence after the evidence rule of :func:`agent_research.confidence.ground_supervisor`:
    its self-report, capped by what its searches found. The combination rule reads ``effective``."""

    reported: Confidence | None = Field(description="The confidence the supervisor stated (its self-report).")
    effective: Confidence | None = Field(description="The self-report capped by the rule; what the combination rule reads.")
    reasons: list[str] = Field(default_factory=list, description="One line per cap that applied (failed searches, gaps, members not reconciled); empty when none did.")
    rule: str = Field(description="Name and version of the rule that was applied.")


class QuestionConfidence(BaseModel):
    """A question's overall confidence: the weakest link among the members and the supervisor, with QA flags."""

    overall: Confidence | None = Field(description="The lowest confidence among those reported (never their mean); None when none was reported.")
    by_agent: dict[str, Confidence | None] = Field(
        default_factory=dict, description="Each successful member's stated confidence and the supervisor's effective one (key 'supervisor').")
    weakest: list[str] = Field(default_factory=list, description="The agents at the overall level.")
    flags: list[Literal["low_confidence", "unresolved_disagreement"]] = Field(
        default_factory=list, description="QA flags: the overall confidence is low; a disagreement was left unresolved.")
    notes: list[str] = Field(default_factory=list, description="Why each flag was raised, one line each.")


class SupervisorArtifact(BaseModel):
    """Result of a :class:`agent_specialists.SupervisorAgent` run."""

    question_id: str
    disagreements: list[Disagreement] = Field(default_factory=list)
    queries: list[str] = Field(default_factory=list, description="Clarifying queries actually run.")
    search_outcomes: list[SearchOutcome] = Field(default_factory=list, description="One envelope per query, failures included.")
    p_yes: float | None = Field(None, ge=0, le=1, description="Reconciled probability in [0, 1]; None when failed.")
    distribution: list[float] | None = Field(None, description="Non-binary: the reconciled forecast (its kind's form); None when failed.")
    confidence: Confidence | None = Field(None, description="Supervisor's confidence in its reconciliation, as it stated it (self-report).")
    grounding: GroundedConfidence | None = Field(
        None, description="The self-report capped by the evidence rule (set by the pipeline: agent_research.confidence.ground_supervisor).")
    rationale: str = ""
    key_evidence: list[EvidenceItem] = Field(default_factory=list)
    coverage: list[CoverageNote] = Field(default_factory=list, description="What is well supported and what is a gap.")
    usage: TokenUsage = Field(default_factory=TokenUsage, validation_alias=_USAGE, description="Usage of both calls, failed ones included.")
    status: Literal["ok", "failed"] = "ok"
    error: ErrorInfo | None = None
    wall_time_s: float = Field(0.0, ge=0, description="Wall time of the supervisor run in seconds.")

    token_usage = property(_token_usage, doc="Deprecated name of :attr:`usage` (traces before 0.2 wrote ``token_usage``).")


class RecordedCall(BaseModel):
    """One provider response recorded for offline replay."""

    role: str = Field(description="Role that made the call.")
    provider: str = Field(description="Provider spec.")
    request_key: str = Field(description="Hash of (messages, json_schema, parameters) of the request.")
    messages: list[ChatMessage] = Field(
        default_factory=list,
        description="The prompt actually sent (read by the harness's leakage audit and the run viewer).",
    )
    completion: Completion | None = Field(None, description="The completion, or None when the call raised.")
    error: ErrorInfo | None = Field(None, description="Typed error raised by the call, if any.")


class ReconcileGate(BaseModel):
    """Whether one question's reconciliation stages (debate and supervisor) ran, and why.

    They run only when the members disagree: when the spread of the successful members' ``p_yes``
    (max - min, probability units) is at least ``min_spread``. ``min_spread`` 0 reconciles every question
    whose ensemble succeeded; fewer than two successful members give no spread and are reconciled.
    """

    min_spread: float = Field(ge=0, le=1, description="The threshold: the smallest member spread that is reconciled (probability units).")
    spread: float | None = Field(None, ge=0, le=1, description="max - min of the successful members' p_yes; None with fewer than 2.")
    reconciled: bool = Field(description="True when the configured specialists ran.")
    reason: str = Field(description="Why they ran or not, in words.")


class MemberEvidence(BaseModel):
    """Which search results each ensemble member was shown, when the members did not share them
    (``PipelineConfig.evidence`` "split" or "private"; defined on :class:`agent_research.Ensemble`).

    A result is named by its URL (its title when it has none; ``URL — title`` when another result of the question
    shares its URL: :func:`agent_research.evidence_modes.result_names`), as the member's prompt listed it, in that order.
    """

    mode: Literal["split", "private"] = Field(description="'split': one research pass dealt into disjoint shares; 'private': each member's own searches.")
    seed: int | None = Field(None, description="Split: the run's seed the deal is drawn from (with the question id); None otherwise or unseeded.")
    pool: list[str] = Field(default_factory=list, description="Split: every result of the one research pass, in its order (the union of the shares).")
    shown: dict[str, list[str]] = Field(default_factory=dict, description="Member agent id -> the results its prompt showed, in order.")


class PipelineTrace(BaseModel):
    """JSON-serialisable trace of one :class:`agent_research.ForecastPipeline` run.

    Every intermediate probability, the evidence with provenance, usage per role and the recorded
    responses needed to replay the run offline.
    """

    question: VisibleQuestion = Field(description="The question as the agents saw it (no outcome, no actual resolution date).")
    created_at: dt.datetime = Field(default_factory=lambda: dt.datetime.now(dt.timezone.utc))
    forecasts: list[Forecast] = Field(default_factory=list, description="Every ensemble member's forecast, failures included.")
    n_ok: int = Field(0, description="Members that succeeded (count).")
    aggregation_method: str = Field("mean")
    aggregate_p_yes: float | None = Field(None, ge=0, le=1)
    aggregate_distribution: list[float] | None = Field(None, description="Non-binary: the aggregate of `aggregation_method`.")
    aggregates: dict[str, float | list[float] | None] = Field(
        default_factory=dict, description="Every pooling method's forecast on the same members: p_yes (binary) or the kind's vector.")
    debate: DebateArtifact | None = None
    supervisor: SupervisorArtifact | None = None
    confidence: QuestionConfidence | None = Field(None, description="Overall confidence (weakest link) and QA flags (agent_research.confidence).")
    combination_rule: dict[str, Any] = Field(default_factory=dict, description="The rule and its parameters.")
    reconcile_gate: ReconcileGate | None = Field(None, description="Whether debate and supervisor ran for this question (the members' spread against the threshold); None in older traces.")
    final_p_yes: float | None = Field(None, ge=0, le=1)
    final_distribution: list[float] | None = Field(None, description="Non-binary: the final forecast (its kind's form).")
    final_source: str = Field("", description="Which step decided the final probability.")
    ledger: UsageLedger = Field(default_factory=UsageLedger)
    recorded_calls: list[RecordedCall] = Field(default_factory=list)
    recorded_searches: list[RecordedSearch] = Field(
        default_factory=list, description="Raw search outcomes (before the cutoff guard), recorded for replay."
    )
    status: Literal["ok", "failed"] = "ok"
    error: ErrorInfo | None = None
    wall_time_s: float = Field(0.0, ge=0, description="Wall time of the run in seconds.")
    member_evidence: MemberEvidence | None = Field(
        None, description="Which results each member was shown when they did not share them (split or private evidence); "
                          "absent from the JSON when None, so a shared-evidence trace is the one written before evidence modes.")

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The trace's fields; ``member_evidence`` only when set (a shared-evidence trace dumps as before)."""
        out = handler(self)
        if out.get("member_evidence", 0) is None:
            del out["member_evidence"]
        return out
