"""One line of ``results.jsonl`` (:class:`QuestionRecord`), and why a question failed, in one line."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from agent_schemas import ErrorInfo, PipelineTrace

__all__ = ["QuestionRecord", "failure_reason"]


class QuestionRecord(BaseModel):
    """One line of ``results.jsonl``: every method's and baseline's probability for one question,
    the usage ledger, the leakage audit and the full pipeline trace."""

    question_id: str
    status: str = Field(description="'ok' or 'failed' (the ensemble policy was not met).")
    error: dict[str, Any] | None = Field(None, description="ErrorInfo of a failed question.")
    outcome: int | None = Field(None, description="1 Yes, 0 No, None unresolved.")
    source: str
    question_type: str
    cluster: str = Field(description="Bootstrap cluster: related questions share one (benchmarks.protocol.clusters).")
    horizon_days: int | None = None
    forecast_date: str = Field(description="ISO date: the information cutoff.")
    resolution_date: str | None = None
    methods: dict[str, dict[str, Any]] = Field(description="method -> {p_yes, status, note, extra_usage}.")
    baselines: dict[str, dict[str, Any]] = Field(description="baseline -> {p_yes, status, note}.")
    ledger: list[dict[str, Any]] = Field(description="UsageLedger.to_records() of the question.")
    audit: dict[str, int] = Field(description="Leakage audit counts over the prompts sent (benchmarks.protocol.leakage.leakage_audit).")
    wall_time_s: float = Field(description="Wall time of the question in seconds.")
    trace: PipelineTrace


def failure_reason(member_errors: list[ErrorInfo], question_error: ErrorInfo | None) -> str:
    """One line saying why a question failed: its members' most common error (``Type: message``), else
    the question's own error (an ensemble failure only says how many members failed)."""
    if member_errors:
        counts = Counter(e.type for e in member_errors)
        top = next(e for e in member_errors if e.type == counts.most_common(1)[0][0])
        return f"{top.type}: {top.message}"
    if question_error is not None:
        return f"{question_error.type}: {question_error.message}"
    return "unknown"

