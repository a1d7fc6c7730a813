"""ToolExecutor: the cutoff-date leakage guard, undated policies, trimming, failures and the audit tally."""

import asyncio
import datetime as dt

import pytest

from agent_schemas import SearchAccessError, SearchOutcome, SearchResult
from agent_tools import SearchClient, ToolExecutor, require_ok

CUTOFF = dt.date(2024, 7, 21)
BEFORE = SearchResult(title="before", url="https://a.org/1", snippet="s1", published=dt.date(2024, 7, 1), source="t")
ON = SearchResult(title="on", url="https://a.org/2", snippet="s2", published=CUTOFF, source="t")
AFTER = SearchResult(title="after", url="https://a.org/3", snippet="s3 leaks the outcome", published=dt.date(2024, 7, 22), source="t")
UNDATED = SearchResult(title="undated", url="https://a.org/4", snippet="s4", published=None, source="t")
ALL = [BEFORE, ON, AFTER, UNDATED]


class FixedSearch(SearchClient):
    """A backend that ignores the cutoff (like a leaky engine) and records what it was asked."""

    name = "fixed"

    def __init__(self, outcome=None, raises=None):
        self.outcome = outcome
        self.raises = raises
        self.calls = []

    def search(self, query, *, max_results=5, cutoff_date=None):
        self.calls.append({"query": query, "max_results": max_results, "cutoff_date": cutoff_date})
        if self.raises is not None:
            raise self.raises
        return self.outcome.model_copy(update={"attempted_query": query})


def ok(results):
    return SearchOutcome(status="ok", attempted_query="q", results=list(results))


@pytest.mark.parametrize("policy, titles, counts, flagged", [
    ("drop", ["before", "on"], (1, 1, 0), []),
    ("keep", ["before", "on", "undated"], (1, 0, 0), []),
    ("flag", ["before", "on", "undated"], (1, 0, 1), ["undated"]),
])
def test_cutoff_guard_under_each_undated_policy(policy, titles, counts, flagged):
    ex = ToolExecutor(FixedSearch(ok(ALL)), undated_policy=policy)
    out = ex.execute_search("election", max_results=5, cutoff_date=CUTOFF)
    assert out.ok
    assert [r.title for r in out.results] == titles
    assert (out.dropped_after_cutoff, out.dropped_undated, out.flagged_undated) == counts
    assert [r.title for r in out.results if r.flagged_undated] == flagged
    assert out.cutoff_date == CUTOFF
    assert all(r.published is None or r.published <= CUTOFF for r in out.results)


def test_on_cutoff_is_allowed_and_after_is_dropped_at_day_granularity():
    ex = ToolExecutor(FixedSearch(ok([ON, AFTER])))
    out = ex.execute_search("x", cutoff_date=dt.datetime(2024, 7, 21, 23, 59, tzinfo=dt.timezone.utc))
    assert [r.title for r in out.results] == ["on"]
    assert out.cutoff_date == CUTOFF


def test_no_cutoff_keeps_everything():
    ex = ToolExecutor(FixedSearch(ok(ALL)))
    out = ex.execute_search("x", max_results=10)
    assert [r.title for r in out.results] == ["before", "on", "after", "undated"]
    assert (out.dropped_after_cutoff, out.dropped_undated, out.flagged_undated, out.cutoff_date) == (0, 0, 0, None)


def test_iso_string_cutoff_and_bad_cutoff():
    ex = ToolExecutor(FixedSearch(ok(ALL)))
    assert ex.execute_search("x", cutoff_date="2024-07-21").dropped_after_cutoff == 1
    with pytest.raises(ValueError, match="cutoff_date"):
        ex.execute_search("x", cutoff_date="next tuesday")


def test_failed_search_passes_through_and_partial_results_are_guarded():
    failed = SearchOutcome(status="failed", attempted_query="q", failure_type="rate_limited", is_transient=True,
                           attempts=3, partial_results=[BEFORE, AFTER], alternative_approaches=["later retry"])
    ex = ToolExecutor(FixedSearch(failed))
    out = ex.execute_search("x", cutoff_date=CUTOFF)
    assert out.status == "failed" and out.failure_type == "rate_limited" and out.attempts == 3
    assert out.results == []
    assert [r.title for r in out.partial_results] == ["before"]
    assert out.dropped_after_cutoff == 1
    assert ex.audit["failed"] == 1
    with pytest.raises(SearchAccessError) as ei:
        require_ok(out)
    assert ei.value.failure_type == "rate_limited" and ei.value.is_transient


def test_access_error_raised_by_backend_becomes_failed_outcome():
    ex = ToolExecutor(FixedSearch(raises=SearchAccessError("HTTP 403", failure_type="access_denied")))
    out = ex.execute_search("x")
    assert (out.status, out.failure_type, out.is_transient) == ("failed", "access_denied", False)
    assert out.error_message == "HTTP 403"


def test_trimming_at_the_boundary():
    long = SearchResult(title="T " * 200, url=" https://a.org/x ", snippet="word " * 500, published=dt.date(2024, 1, 1))
    ex = ToolExecutor(FixedSearch(ok([long])), snippet_chars=50, title_chars=40)
    r = ex.execute_search("x").results[0]
    assert len(r.snippet) <= 50 and r.snippet.endswith("…")
    assert len(r.title) <= 40
    assert r.url == "https://a.org/x"


def test_max_results_cap_and_overfetch():
    backend = FixedSearch(ok([BEFORE] * 30))
    ex = ToolExecutor(backend, max_results_cap=10)
    assert len(ex.execute_search("x", max_results=50).results) == 10
    assert backend.calls[-1]["max_results"] == 10
    out = ex.execute_search("x", max_results=3, cutoff_date=CUTOFF)
    assert backend.calls[-1]["max_results"] == 6  # 3 x overfetch 2 when a cutoff is given
    assert len(out.results) == 3
    ex.execute_search("x", max_results=3)
    assert backend.calls[-1]["max_results"] == 3


def test_invalid_inputs_name_the_field():
    ex = ToolExecutor(FixedSearch(ok([])))
    with pytest.raises(ValueError, match="query"):
        ex.execute_search("")
    with pytest.raises(ValueError, match="query"):
        ex.execute_search("  \n ")
    with pytest.raises(ValueError, match="max_results"):
        ex.execute_search("x", max_results=0)
    with pytest.raises(ValueError, match="undated_policy"):
        ToolExecutor(FixedSearch(ok([])), undated_policy="ignore")


def test_query_whitespace_collapsed_and_cutoff_hint_passed():
    backend = FixedSearch(ok([]))
    out = ToolExecutor(backend).execute_search("  fed \n rate  ", cutoff_date=CUTOFF)
    assert backend.calls == [{"query": "fed rate", "max_results": 10, "cutoff_date": CUTOFF}]
    assert out.attempted_query == "fed rate" and out.ok and out.results == []


def test_audit_totals_and_async():
    ex = ToolExecutor(FixedSearch(ok(ALL)))
    ex.execute_search("a", cutoff_date=CUTOFF)
    asyncio.run(ex.aexecute_search("b", cutoff_date=CUTOFF))
    ex.execute_search("c")
    assert ex.audit == {"searches": 3, "failed": 0, "results_returned": 2 + 2 + 4,
                        "dropped_after_cutoff": 2, "dropped_undated": 2, "flagged_undated": 0}
    assert ex.reset_audit()["searches"] == 3
    assert ex.audit["searches"] == 0


def test_flagged_undated_counts_only_results_returned():
    class Alternating(SearchClient):
        def search(self, query, *, max_results=5, cutoff_date=None):
            rs = [SearchResult(title=f"r{i}", url=f"https://ex.org/{i}", snippet="s",
                               published=dt.date(2024, 1, 1) if i % 2 == 0 else None) for i in range(max_results)]
            return SearchOutcome(status="ok", attempted_query=query, results=rs)

    out = ToolExecutor(Alternating(), undated_policy="flag").execute_search("q", max_results=2, cutoff_date="2024-06-01")
    assert len(out.results) == 2
    assert out.flagged_undated == sum(r.flagged_undated for r in out.results) == 1
