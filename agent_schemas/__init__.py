"""Pydantic data contracts of forecast-reconcile. A leaf package: it imports nothing from the project."""

from agent_schemas.errors import (
    AuthenticationFailed,
    BadRequest,
    DataValidationError,
    EmptyResponse,
    EnsembleFailed,
    ErrorInfo,
    ForecastParseError,
    MissingDependency,
    ProviderConnectionError,
    ProviderError,
    ProviderOverloaded,
    ProviderTimeout,
    RateLimited,
    ReconcileError,
    ResponseRefused,
    ResponseTruncated,
    ScriptExhausted,
    SearchAccessError,
    UnexpectedError,
    UnexpectedProviderError,
    UnknownProvider,
    UnreadableResponse,
    as_reconcile_error,
)
from agent_schemas.forecasts import AgentSummary, Confidence, EvidenceItem, Forecast
from agent_schemas.probabilities import check_probabilities
from agent_schemas.messages import ChatMessage, Completion
from agent_schemas.questions import Question, QuestionFacts, VisibleQuestion, as_visible
from agent_schemas.reconciliation import (
    CoverageNote,
    DebateArtifact,
    DebateRound,
    DebateTurn,
    Disagreement,
    GroundedConfidence,
    MemberEvidence,
    PipelineTrace,
    QuestionConfidence,
    ReconcileGate,
    RecordedCall,
    SupervisorArtifact,
)
from agent_schemas.search import RecordedSearch, ResultRelevance, SearchOutcome, SearchResult
from agent_schemas.usage import TokenUsage, UsageEntry, UsageLedger

__all__ = [
    "AgentSummary", "AuthenticationFailed", "BadRequest", "ChatMessage", "Completion", "Confidence", "CoverageNote",
    "DataValidationError", "DebateArtifact", "DebateRound", "DebateTurn", "Disagreement", "EmptyResponse",
    "EnsembleFailed", "ErrorInfo", "EvidenceItem", "Forecast", "ForecastParseError", "GroundedConfidence", "MissingDependency",
    "PipelineTrace", "ProviderConnectionError", "ProviderError", "ProviderOverloaded", "ProviderTimeout",
    "MemberEvidence", "Question", "QuestionConfidence", "QuestionFacts", "RateLimited", "ReconcileGate", "RecordedCall", "RecordedSearch", "ReconcileError", "ResponseRefused",
    "ResponseTruncated", "ResultRelevance", "ScriptExhausted",
    "SearchAccessError", "SearchOutcome", "SearchResult", "SupervisorArtifact", "TokenUsage", "UnexpectedError",
    "UnexpectedProviderError", "UnknownProvider", "UnreadableResponse", "UsageEntry", "UsageLedger", "VisibleQuestion",
    "as_reconcile_error", "as_visible", "check_probabilities",
]
