import datetime as dt
import json

import pytest

from agent_providers import ScriptedProvider
from agent_schemas import AgentSummary, EvidenceItem, SearchResult
from agent_specialists import SupervisorAgent
from tests.helpers import FixedSearch, make_question

SUMMARIES = [AgentSummary(agent_id="member-0", p_yes=0.2, rationale="inflation sticky"),
             AgentSummary(agent_id="member-1", p_yes=0.7, rationale="growth weak")]

DISAGREE = json.dumps({"disagreements": [
    {"topic": "inflation path", "description": "sticky vs falling", "agents": ["member-0", "member-1"], "query": "euro area inflation November 2025"},
    {"topic": "growth", "description": "weak vs stable", "agents": ["member-1"], "query": "euro area GDP Q3 2025"},
]})


def decision(p, confidence="medium", **extra):
    return json.dumps({"p_yes_percent": p, "confidence": confidence, "rationale": "weighed", "key_evidence": [], **extra})


def test_failed_search_is_a_coverage_gap_not_no_evidence():
    search = FixedSearch(failure="rate_limited")
    llm = ScriptedProvider([DISAGREE, decision(35)])
    art = SupervisorAgent(llm, executor=search, max_queries=3).run(make_question(), SUMMARIES)
    assert art.status == "ok" and art.p_yes == 0.35 and art.confidence == "medium"
    assert [d.topic for d in art.disagreements] == ["inflation path", "growth"]
    assert art.queries == ["euro area inflation November 2025", "euro area GDP Q3 2025"]
    assert [o.status for o in art.search_outcomes] == ["failed", "failed"]
    assert [c.status for c in art.coverage] == ["gap", "gap"]
    assert "search failed: rate_limited" in art.coverage[0].reason
    # the decision prompt tells the model the gap, not "no evidence exists"
    final_prompt = llm.requests[1]["messages"][-1].content
    assert "GAP: search failed: rate_limited" in final_prompt
    # searches ran with the question's forecast date as cutoff
    assert all(c == dt.date(2025, 11, 9) for _, c in search.calls)


def test_dated_evidence_before_cutoff_supports_and_after_cutoff_is_dropped():
    results = [
        SearchResult(title="HICP flash", url="https://ex.org/a", snippet="inflation 2.1%: room for the ECB to cut its deposit rate", published=dt.date(2025, 11, 1), source="fixed"),
        SearchResult(title="ECB cuts", url="https://ex.org/late", snippet="ECB cut rates", published=dt.date(2025, 12, 18), source="fixed"),
        SearchResult(title="undated blog", url="https://ex.org/u", snippet="rates", published=None, source="fixed"),
    ]
    cited = {"claim": "inflation 2.1%", "source_url": "https://ex.org/a", "published": "2024-01-01"}
    llm = ScriptedProvider([DISAGREE, decision(30, "high", key_evidence=[cited])])
    art = SupervisorAgent(llm, executor=FixedSearch(results), max_queries=1).run(make_question(), SUMMARIES)
    assert len(art.disagreements) == 1  # max_queries caps the named disagreements
    o = art.search_outcomes[0]
    assert [r.url for r in o.results] == ["https://ex.org/a"]
    assert o.dropped_after_cutoff == 1 and o.dropped_undated == 1
    assert art.coverage[0].status == "supported"
    assert "ECB cut rates" not in "\n".join(m.content for m in llm.requests[1]["messages"])
    # provenance: the date recorded is the search result's, not the model's claim
    assert art.key_evidence[0].published == dt.date(2025, 11, 1)


def test_no_search_client_records_gaps():
    llm = ScriptedProvider([DISAGREE, decision(50, "low")])
    art = SupervisorAgent(llm, executor=None).run(make_question(), SUMMARIES)
    assert art.search_outcomes == [] and all(c.status == "gap" for c in art.coverage)
    assert art.coverage[0].reason == "no search client configured"


def test_invalid_confidence_fails_with_parse_error():
    llm = ScriptedProvider([DISAGREE, decision(50, "certain")])
    art = SupervisorAgent(llm, executor=FixedSearch([])).run(make_question(), SUMMARIES)
    assert art.status == "failed" and art.p_yes is None
    assert art.error.type == "ForecastParseError" and art.error.details["field"] == "confidence"
    assert len(art.search_outcomes) == 2  # what was done before the failure is kept
    assert art.usage.calls == 2


def test_cutoff_after_forecast_date_is_refused():
    with pytest.raises(ValueError, match="would leak"):
        SupervisorAgent(ScriptedProvider()).run(make_question(), SUMMARIES, cutoff_date=dt.date(2026, 1, 1))


def test_unparseable_disagreements_fail_but_keep_the_spent_tokens():
    llm = ScriptedProvider(["I see no disagreement worth naming."])
    art = SupervisorAgent(llm, executor=FixedSearch([])).run(make_question(), SUMMARIES)
    assert art.status == "failed" and art.error.type == "ForecastParseError"
    assert art.usage.calls == 1
    assert art.usage == llm.usage_for(llm.requests[0]["messages"], "I see no disagreement worth naming.")


def test_raw_newline_inside_a_json_string_is_read():
    text = '{"disagreements": [{"topic": "t", "description": "d", "agents": [], "query": "ECB\n\nrate"}]}'
    llm = ScriptedProvider([text, decision(40)])
    art = SupervisorAgent(llm, executor=FixedSearch([])).run(make_question(), SUMMARIES)
    assert art.status == "ok" and art.queries == ["ECB rate"]


def test_executor_and_max_results_like_the_forecaster_old_names_warn():
    hit = SearchResult(title="t", url="https://ex.org/a", snippet="s", published=dt.date(2025, 11, 1), source="fixed")
    new = SupervisorAgent(ScriptedProvider([DISAGREE, decision(35)]), executor=FixedSearch([hit] * 4), max_queries=1, max_results=2)
    assert new.executor is not None and new.max_results == 2
    with pytest.warns(DeprecationWarning, match="use executor="):
        old = SupervisorAgent(ScriptedProvider([DISAGREE, decision(35)]), search=FixedSearch([hit] * 4), max_queries=1)
    with pytest.warns(DeprecationWarning, match="use max_results="):
        old.__init__(old.llm, executor=old.executor, max_queries=1, max_search_results=2)
    assert old.max_results == 2
    a, b = new.run(make_question(), SUMMARIES), old.run(make_question(), SUMMARIES)
    assert (a.p_yes, a.queries, a.usage) == (b.p_yes, b.queries, b.usage) == (0.35, ["euro area inflation November 2025"], a.usage)
    assert len(a.search_outcomes[0].results) == len(b.search_outcomes[0].results) == 2


def test_a_result_two_clarifying_searches_return_is_shown_and_numbered_once():
    """The decision prompt lists each clarifying result once, as a member's evidence does
    (:func:`agent_tools.shown_results`): the same result under two numbers would cost its tokens twice
    and split the citations of one source."""
    a = SearchResult(title="HICP flash", url="https://ex.org/a", snippet="inflation 2.1%: room for the ECB to cut its deposit rate", published=dt.date(2025, 11, 1), source="fixed")
    b = SearchResult(title="GDP flash", url="https://ex.org/b", snippet="GDP +0.2%: growth weak, bets on an ECB rate cut rise", published=dt.date(2025, 10, 30), source="fixed")
    cited = {"claim": "GDP grew 0.2%", "source": 2}
    llm = ScriptedProvider([DISAGREE, decision(40, key_evidence=[cited])])
    art = SupervisorAgent(llm, executor=FixedSearch([a, b]), max_queries=2).run(make_question(), SUMMARIES)
    assert art.queries == ["euro area inflation November 2025", "euro area GDP Q3 2025"]  # both searches ran
    assert [c.status for c in art.coverage] == ["supported", "supported"]
    assert [len(o.results) for o in art.search_outcomes] == [2, 2]  # each outcome is kept whole
    prompt = llm.requests[1]["messages"][-1].content
    assert prompt.count("https://ex.org/a") == 1 and prompt.count("https://ex.org/b") == 1
    assert "[1] HICP flash" in prompt and "[2] GDP flash" in prompt and "[3]" not in prompt
    assert llm.requests[1]["json_schema"]["properties"]["key_evidence"]["items"]["properties"]["source"]["enum"] == [0, 1, 2]
    assert art.key_evidence[0].source_url == "https://ex.org/b" and art.key_evidence[0].published == dt.date(2025, 10, 30)


def test_a_cited_clarifying_result_keeps_its_own_date_when_a_members_evidence_has_its_url():
    member = EvidenceItem(claim="old figure", source_url="https://ex.org/a", published=dt.date(2025, 9, 1))
    summaries = [AgentSummary(agent_id="member-0", p_yes=0.2, rationale="r", top_evidence=[member]), SUMMARIES[1]]
    later = SearchResult(title="HICP flash", url="https://ex.org/a", snippet="2.1%", published=dt.date(2025, 11, 5), source="fixed")
    llm = ScriptedProvider([DISAGREE, decision(40, key_evidence=[{"claim": "2.1%", "source": 2}])])
    art = SupervisorAgent(llm, executor=FixedSearch([later]), max_queries=1).run(make_question(), summaries)
    assert "[2] HICP flash — fixed, 2025-11-05 — https://ex.org/a" in llm.requests[1]["messages"][-1].content
    assert [(e.source_url, e.published, e.title) for e in art.key_evidence] == [("https://ex.org/a", dt.date(2025, 11, 5), "HICP flash")]
