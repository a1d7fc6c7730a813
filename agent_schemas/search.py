"""Search results, the search outcome envelope (never a bare list) and a recorded search."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, Field, model_validator

FailureType = Literal["rate_limited", "timeout", "access_denied", "server_error", "network", "parse", "unknown"]


class SearchResult(BaseModel):
    """One search hit, normalised across backends. Snippets are untrusted data."""

    title: str = Field("", description="Page or document title.")
    url: str = Field("", description="Source URL (or a corpus document id URL).")
    snippet: str = Field("", description="Text excerpt; untrusted, rendered as data only.")
    published: dt.date | None = Field(None, description="Publication date if the source gives one, else None (undated).")
    source: str = Field("", description="Backend that produced it, e.g. 'ddgs-news', 'local-corpus'.")
    flagged_undated: bool = Field(False, description="True when kept although undated under the 'flag' policy.")


class SearchOutcome(BaseModel):
    """The envelope every search returns: ok (possibly with an empty, valid result list) or failed.

    An access failure is never reported as an empty result: ``status="failed"`` carries the
    ``failure_type``, what was tried, and what a caller could do instead.
    """

    status: Literal["ok", "failed"] = Field(description="'ok' when the backend answered; 'failed' otherwise.")
    attempted_query: str = Field(description="The query as sent to the backend.")
    results: list[SearchResult] = Field(default_factory=list, description="Results (after the cutoff guard, when applied).")
    failure_type: FailureType | None = Field(None, description="Failure class when status is 'failed'.")
    is_transient: bool = Field(False, description="Whether retrying later may succeed.")
    attempts: int = Field(1, ge=0, description="Backend attempts made (count).")
    error_message: str | None = Field(None, description="The backend's error message (sanitised).")
    partial_results: list[SearchResult] = Field(default_factory=list, description="Results obtained before a failure, if any.")
    alternative_approaches: list[str] = Field(default_factory=list, description="Suggestions: a narrower query, another source type, a later retry.")
    coverage_impact: str | None = Field(None, description="What evidence is missing because of the failure.")
    cutoff_date: dt.date | None = Field(None, description="Cutoff date applied by the leakage guard, if any.")
    dropped_after_cutoff: int = Field(0, ge=0, description="Results dropped because published after the cutoff (count).")
    dropped_undated: int = Field(0, ge=0, description="Undated results dropped under the 'drop' policy (count).")
    flagged_undated: int = Field(0, ge=0, description="Undated results kept and flagged under the 'flag' policy (count).")
    latency_s: float = Field(0.0, ge=0, description="Wall time of the search in seconds.")

    @model_validator(mode="after")
    def _failed_has_type(self) -> "SearchOutcome":
        if self.status == "failed" and self.failure_type is None:
            raise ValueError("a failed SearchOutcome needs a failure_type")
        if self.status == "ok" and self.failure_type is not None:
            raise ValueError("an ok SearchOutcome cannot carry a failure_type")
        return self

    @property
    def ok(self) -> bool:
        """True when the backend answered (results may still be empty)."""
        return self.status == "ok"


class RecordedSearch(BaseModel):
    """One raw backend answer, keyed by the request, recorded for offline replay
    (:class:`agent_tools.search_recording.RecordingSearchClient`, :attr:`PipelineTrace.recorded_searches`)."""

    query: str = Field(description="Query as sent to the backend.")
    max_results: int = Field(description="Results asked for (count).")
    cutoff_date: str | None = Field(None, description="Cutoff passed to the backend (ISO date) or None.")
    outcome: SearchOutcome = Field(description="The backend's raw outcome (before the cutoff guard).")
