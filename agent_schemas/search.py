"""Search results, the search outcome envelope (never a bare list), a recorded search and how a result was
judged as evidence."""

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


class ResultRelevance(BaseModel):
    """How one search result was judged as evidence for what was searched: relevant by the rule of
    :mod:`agent_tools.relevance`, and counted when also dated on or before the cutoff."""

    title: str = Field("", description="The result's title.")
    url: str = Field("", description="The result's URL (or corpus document id URL).")
    published: dt.date | None = Field(None, description="The result's publication date; None when undated.")
    shared_words: list[str] = Field(
        default_factory=list,
        description="Content words the result's title and snippet share with the question's text (and with the "
                    "disagreement's topic and description when the disagreement is about the question), sorted: what "
                    "the relevance rule counted.")
    question_words: list[str] = Field(
        default_factory=list, description="Those of ``shared_words`` that are in the question's text, sorted.")
    subject: list[str] = Field(
        default_factory=list,
        description="The question's subject (its first name, lower-cased words; empty for a question without names), "
                    "which a relevant result names.")
    listing: str = Field(
        "", description="'own' for the question's own listing, why it is another forecasting question's listing "
                        "(e.g. 'a question page of Polymarket'), '' when it is neither: a listing is never relevant.")
    relevant: bool = Field(description="True when the relevance rule holds: not a listing, names the question's subject, at "
                                       "least two shared words (all the question has, when fewer), at least one from the "
                                       "question.")
    counted: bool = Field(description="True when relevant and dated on or before the cutoff: evidence that supports the disagreement.")
    reason: str = Field("", description="Why, in words, e.g. 'relevant (shares ecb, rates), dated 2025-10-01' or 'not relevant: shares 1 content word (rate), 2 needed'.")
