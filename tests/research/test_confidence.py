"""Grounded confidence: the supervisor's stated confidence capped by its evidence, members' stated
confidence, and a question's weakest-link confidence with QA flags."""

import datetime as dt
import json

import pytest

from agent_providers import ScriptedProvider, calling_as, get_provider
from agent_providers.simulator import SimWorld, request_role
from agent_research import CombinationRule, Ensemble, ForecasterAgent, ForecastPipeline
from agent_research.prompts import PERSONAS
from agent_research.confidence import effective_confidence, ground_supervisor, lowest, question_confidence
from agent_schemas import CoverageNote, Disagreement, Forecast, SearchOutcome, SearchResult, SupervisorArtifact
from agent_specialists import DebateAgent, SupervisorAgent
from agent_tools import forecast_json_schema
from tests.helpers import FixedSearch, answer, make_question

DOC = SearchResult(title="ECB minutes", url="https://ex.org/m", snippet="dovish: room to cut the deposit rate", published=dt.date(2025, 10, 30),
                   source="fixed")


def _pipeline(search, stated="high", n_disagreements=2, weights=None, named=None):
    members = ScriptedProvider(responder=lambda m: answer(80 if PERSONAS["news"] in m[-1].content else 20, confidence="high"))
    ensemble = Ensemble.from_providers(members, n_members=2, personas=["base_rate", "news"])
    named = named or [{"topic": f"t{i}", "description": "d", "agents": [f"member-{i}"], "query": f"ECB query {i}"}
                      for i in range(n_disagreements)]
    sup = ScriptedProvider([json.dumps({"disagreements": named}),
                            json.dumps({"p_yes_percent": 90, "confidence": stated, "rationale": "r", "key_evidence": []})])
    debate = ScriptedProvider([answer(60, argument="up"), answer(40, argument="down")] * 2)
    rule = CombinationRule(supervisor_weights=weights) if weights else CombinationRule()
    return ForecastPipeline(ensemble, DebateAgent(debate, max_rounds=1), SupervisorAgent(sup, executor=search, max_queries=2),
                            combination=rule)


@pytest.mark.parametrize("failure", ["timeout", "rate_limited", "access_denied"])
def test_a_supervisor_whose_every_search_failed_is_never_high_in_the_combination(failure):
    weights = {"high": 1.0, "medium": 0.6, "low": 0.25}
    trace = _pipeline(FixedSearch(failure=failure), stated="high", weights=weights).run(make_question())
    sup = trace.supervisor
    assert sup.confidence == "high" and len(sup.search_outcomes) == 2 and not any(o.ok for o in sup.search_outcomes)
    assert sup.grounding.reported == "high" and sup.grounding.effective == "low"
    assert any(r.startswith("at most low: every clarifying search failed (2 of 2") for r in sup.grounding.reasons)
    step = next(s for s in CombinationRule(supervisor_weights=weights).steps(trace.aggregate_p_yes, trace.debate, sup)
                if s.kind == "supervisor")
    assert (step.confidence, step.reported_confidence, step.weight) == ("low", "high", 0.25)
    # aggregate 0.5 -> debate midpoint 0.5 (w=0.5) -> 0.5 -> supervisor low: 0.75*0.5 + 0.25*0.9 = 0.6
    assert trace.final_p_yes == pytest.approx(0.6)
    assert "supervisor(low, stated high, w=0.25)" in trace.final_source


def test_the_combination_grounds_an_artifact_that_did_not_come_through_the_pipeline():
    failed = SearchOutcome(status="failed", attempted_query="q", failure_type="timeout", is_transient=True, error_message="x")
    art = SupervisorArtifact(question_id="q", p_yes=0.9, confidence="high", search_outcomes=[failed],
                             disagreements=[Disagreement(topic="t", agents=["member-0"], query="q")],
                             coverage=[CoverageNote(topic="t", status="gap", reason="search failed: timeout")])
    assert art.grounding is None and effective_confidence(art) == "low"
    steps = CombinationRule().steps(0.3, None, art)
    assert steps[2].weight == 0.0 and steps[-1].p_after == pytest.approx(0.3)


def test_evidence_caps_in_order():
    dis = [Disagreement(topic="a", agents=["member-0", "member-1"], query="qa"),
           Disagreement(topic="b", agents=["member-2"], query="qb")]
    ok = SearchOutcome(status="ok", attempted_query="qa", results=[DOC])
    empty = SearchOutcome(status="ok", attempted_query="qb", results=[])
    supported = CoverageNote(topic="a", status="supported", reason="1 result")
    gap = CoverageNote(topic="b", status="gap", reason="no results dated on or before the cutoff")

    def art(**kw):
        base = dict(question_id="q", p_yes=0.7, confidence="high", disagreements=dis)
        return SupervisorArtifact(**{**base, **kw})

    # every disagreement supported: the self-report stands
    all_ok = ground_supervisor(art(search_outcomes=[ok, ok], coverage=[supported, supported.model_copy(update={"topic": "b"})]))
    assert (all_ok.effective, all_ok.reasons) == ("high", [])
    # one disagreement open: at most medium, naming the members not reconciled
    partial = ground_supervisor(art(search_outcomes=[ok, empty], coverage=[supported, gap]))
    assert partial.effective == "medium"
    assert partial.reasons == ["at most medium: 1 of 2 disagreements left open (coverage gaps): members member-2 not reconciled"]
    # searches ran but found nothing dated: at most medium (not low: nothing failed)
    none_found = ground_supervisor(art(search_outcomes=[empty, empty], coverage=[gap, gap.model_copy(update={"topic": "a"})]))
    assert none_found.effective == "medium" and "no disagreement is supported" in none_found.reasons[0]
    # no search configured: every note a gap without a search: at most medium
    no_search = ground_supervisor(art(coverage=[CoverageNote(topic=t, status="gap", reason="no search client configured") for t in "ab"]))
    assert no_search.effective == "medium"
    # no disagreement named: nothing checked
    assert ground_supervisor(art(disagreements=[])).effective == "medium"
    # a cap never raises a stated confidence
    assert ground_supervisor(art(confidence="low", search_outcomes=[ok, ok], coverage=[supported, supported])).effective == "low"
    # a failed supervisor has no confidence
    failed = ground_supervisor(SupervisorArtifact(question_id="q", status="failed"))
    assert failed.effective is None and failed.reasons


def test_the_trace_records_stated_effective_and_reasons_through_json():
    from agent_schemas import PipelineTrace

    trace = _pipeline(FixedSearch([DOC]), stated="high", n_disagreements=1).run(make_question())
    again = PipelineTrace.model_validate_json(trace.model_dump_json())
    g = again.supervisor.grounding
    assert (g.reported, g.effective, g.reasons) == ("high", "high", [])
    assert again.confidence.by_agent == {"member-0": "high", "member-1": "high", "supervisor": "high"}
    assert again.confidence.overall == "high" and again.confidence.flags == []
    assert "supervisor(high, w=1.0)" in again.final_source


# --- evidence is counted, not hits (issue 29, fault 7) ------------------------------------------------------
#: What a query of just "2025-10-26" returned in the default embedded run: chess ratings, dated before the cutoff.
CHESS = [SearchResult(title="FIDE rating list 2025-10-26", url="https://ratings.fide.com/2025-10-26",
                      snippet="Standard ratings: Carlsen 2839, Nakamura 2816, Caruana 2795", published=dt.date(2025, 10, 26), source="fixed"),
         SearchResult(title="Chess ratings update", url="https://chess.example/ratings",
                      snippet="Rapid and blitz ratings as of 26 October 2025", published=dt.date(2025, 10, 26), source="fixed")]
DATE_QUERY = [{"topic": "timing of the cut", "description": "member-0 expects it on 2025-10-26, member-1 later",
               "agents": ["member-0", "member-1"], "query": "2025-10-26"}]


def test_a_supervisor_whose_searches_return_only_irrelevant_results_is_not_high_and_its_trace_says_why():
    from agent_schemas import PipelineTrace
    from benchmarks.viewer.trace_text import explain_trace

    trace = _pipeline(FixedSearch(CHESS), stated="high", named=DATE_QUERY).run(make_question())
    sup = PipelineTrace.model_validate_json(trace.model_dump_json()).supervisor  # as results.jsonl keeps it
    assert sup.confidence == "high" and [len(o.results) for o in sup.search_outcomes] == [2]  # two hits, dated
    note = sup.coverage[0]
    assert note.status == "gap"
    assert note.reason == ("no relevant result dated on or before the cutoff (2 results; none relevant: too few content "
                           "words shared with the question and the disagreement)")
    assert [(e.title, e.shared_words, e.relevant, e.counted) for e in note.evidence] == [
        ("FIDE rating list 2025-10-26", [], False, False), ("Chess ratings update", [], False, False)]
    assert sup.grounding.effective == "medium"
    assert sup.grounding.reasons == ["at most medium: no disagreement is supported by a relevant result dated on or before "
                                     f"the cutoff (1 gap(s): {note.reason})"]
    assert "supervisor(medium, stated high, w=0.5)" in trace.final_source  # blended, no longer replacing the estimate
    assert trace.confidence.flags == ["unresolved_disagreement"]
    text = explain_trace(trace)
    assert ("       not counted: 'FIDE rating list 2025-10-26': not relevant: shares no content word with the question "
            "and the disagreement") in text
    # the decision prompt no longer calls the chess ratings support
    decision = [c for c in trace.recorded_calls if c.role == "supervisor"][-1].messages[-1].content
    assert "-> GAP: no relevant result dated on or before the cutoff (2 results" in decision and "SUPPORTED" not in decision


def test_relevant_results_dated_before_the_cutoff_keep_high_and_the_trace_records_the_shared_words():
    trace = _pipeline(FixedSearch([*CHESS, DOC]), stated="high", named=DATE_QUERY).run(make_question())
    note = trace.supervisor.coverage[0]
    assert (note.status, note.reason) == ("supported", "1 of 3 results relevant to the question and dated on or before the cutoff")
    # ECB minutes, "dovish: room to cut the deposit rate" and the question "Will the ECB cut its deposit rate at its
    # December 2025 meeting?" share cut, deposit, ecb, rate; the disagreement ("timing of the cut", so about the
    # question: its words count too) adds none of its own
    assert [(e.shared_words, e.counted) for e in note.evidence] == [([], False), ([], False), (["cut", "deposit", "ecb", "rate"], True)]
    assert note.evidence[2].reason == "relevant (shares cut, deposit, ecb, rate), dated 2025-10-30"
    assert (trace.supervisor.grounding.effective, trace.supervisor.grounding.reasons) == ("high", [])
    assert "supervisor(high, w=1.0)" in trace.final_source


def test_the_questions_own_listing_is_not_evidence_on_it():
    """Found at the question's URL, or titled with its text, the listing shares every word with the question and
    tells nothing the forecasters did not see: it keeps no supervisor "high" (a corpus of question listings
    returns it first)."""
    q = make_question().model_copy(update={"url": "https://www.polymarket.com/event/ecb-december-cut"})
    at_url = SearchResult(title="ECB December decision market", url="http://polymarket.com/event/ecb-december-cut/?utm_medium=feed",
                          snippet="Will the ECB cut its deposit rate? 62% Yes", published=dt.date(2025, 10, 1), source="fixed")
    same_text = SearchResult(title=q.text, url="https://mirror.example/ecb", snippet="", published=dt.date(2025, 10, 2),
                             source="fixed")
    trace = _pipeline(FixedSearch([at_url, same_text]), stated="high", named=DATE_QUERY).run(q)
    note = trace.supervisor.coverage[0]
    assert [(e.relevant, e.counted, e.reason) for e in note.evidence] == [
        (False, False, "not evidence: the question's own listing (what the forecasters already see)")] * 2
    assert (note.status, note.reason) == ("gap", "no relevant result dated on or before the cutoff (2 results; 2 the "
                                          "question's own listing, not evidence on it)")
    assert trace.supervisor.grounding.effective == "medium"
    # with the ECB minutes beside them, the minutes alone support the disagreement
    trace = _pipeline(FixedSearch([at_url, same_text, DOC]), stated="high", named=DATE_QUERY).run(q)
    assert [e.counted for e in trace.supervisor.coverage[0].evidence] == [False, False, True]
    assert trace.supervisor.grounding.effective == "high"


#: What a corpus of listings returns for the ECB question: a sibling market, the same question on a mirror site,
#: a different question sharing its words (issue 35, item 2). Every one was counted under relevance v2.
OTHER_LISTINGS = [
    SearchResult(title="ECB decision in January?", url="https://polymarket.com/event/ecb-decision-in-january",
                 snippet="ECB deposit rate cut at the January meeting? 18% Yes", published=dt.date(2025, 10, 20), source="fixed"),
    SearchResult(title="ECB deposit rate, December", url="https://odds-mirror.example/ecb-december",
                 snippet='This market will resolve to "Yes" if the ECB cuts its deposit rate in December.',
                 published=dt.date(2025, 10, 21), source="fixed"),
    SearchResult(title="Will the ECB cut its deposit rate below 1.5% in 2026?", url="https://forecasts.example/q/91",
                 snippet="ECB deposit rate path and cut timing", published=dt.date(2025, 10, 22), source="fixed"),
]


def test_a_supervisor_whose_search_returns_only_other_questions_listings_is_not_high():
    """From the user's side: the pipeline with a search that returns listings of other questions. The supervisor
    says "high"; the listings support nothing, so it is capped at medium and blended, not replacing the estimate."""
    trace = _pipeline(FixedSearch(OTHER_LISTINGS), stated="high", named=DATE_QUERY).run(make_question())
    sup = trace.supervisor
    note = sup.coverage[0]
    assert [(e.listing, e.counted) for e in note.evidence] == [
        ("a question page of Polymarket", False), ("a page with resolution criteria", False),
        ("titled as a forecasting question", False)]
    assert (note.status, note.reason) == ("gap", ("no relevant result dated on or before the cutoff (3 results; 3 "
                                                  "listing(s) of other forecasting questions, never evidence)"))
    assert (sup.confidence, sup.grounding.effective) == ("high", "medium")
    assert "supervisor(medium, stated high, w=0.5)" in trace.final_source
    assert "relevance v3" in sup.grounding.rule
    # a news report naming the ECB beside them supports the disagreement on its own
    trace = _pipeline(FixedSearch([*OTHER_LISTINGS, DOC]), stated="high", named=DATE_QUERY).run(make_question())
    assert [e.counted for e in trace.supervisor.coverage[0].evidence] == [False, False, False, True]
    assert trace.supervisor.grounding.effective == "high"


def test_a_result_on_another_subject_sharing_the_questions_words_is_not_evidence():
    """A page that shares the question's words but not its subject (the Fed, not the ECB) supports nothing."""
    fed = SearchResult(title="Fed minutes", url="https://news.example/fed", snippet="room to cut the deposit rate at the "
                       "December meeting", published=dt.date(2025, 10, 30), source="fixed")
    trace = _pipeline(FixedSearch([fed]), stated="high", named=DATE_QUERY).run(make_question())
    note = trace.supervisor.coverage[0]
    assert note.evidence[0].reason == ("not relevant: does not name the question's subject (ecb); shares cut, deposit, "
                                       "meeting, rate")
    assert note.reason == ("no relevant result dated on or before the cutoff (1 results; 1 not naming the question's "
                           "subject)")
    assert trace.supervisor.grounding.effective == "medium"


def test_a_dataset_questions_data_source_stays_evidence():
    """A dataset question's URL is its data source (one Wikipedia list for 1,591 bundled questions): the source's
    snapshots before the cutoff are evidence, not the question's listing."""
    q = make_question().model_copy(update={"question_type": "dataset", "url": "https://en.wikipedia.org/wiki/ECB_rates"})
    snapshot = SearchResult(title="ECB rates - Wikipedia", url="https://en.wikipedia.org/wiki/ECB_rates",
                            snippet="deposit rate cut history of the ECB", published=dt.date(2025, 10, 1), source="fixed")
    trace = _pipeline(FixedSearch([snapshot]), stated="high", named=DATE_QUERY).run(q)
    assert [(e.relevant, e.counted) for e in trace.supervisor.coverage[0].evidence] == [(True, True)]
    assert trace.supervisor.grounding.effective == "high"


def test_relevant_but_undated_results_are_not_dated_evidence():
    from agent_tools import ToolExecutor

    undated = DOC.model_copy(update={"published": None})
    executor = ToolExecutor(FixedSearch([undated]), undated_policy="flag")  # kept, flagged: visible, never dated
    trace = _pipeline(executor, stated="high", named=DATE_QUERY).run(make_question())
    sup = trace.supervisor
    assert [r.flagged_undated for r in sup.search_outcomes[0].results] == [True]
    assert sup.coverage[0].status == "gap" and "1 relevant but undated" in sup.coverage[0].reason
    assert [(e.relevant, e.counted) for e in sup.coverage[0].evidence] == [(True, False)]
    assert sup.grounding.effective == "medium"


def test_a_trace_written_before_results_were_judged_still_reads():
    """results.jsonl of earlier versions: coverage notes without ``evidence``, grounding rule v1."""
    from agent_schemas import PipelineTrace

    trace = _pipeline(FixedSearch([DOC]), stated="high", n_disagreements=1).run(make_question())
    old = json.loads(trace.model_dump_json())
    for note in old["supervisor"]["coverage"]:
        del note["evidence"]
    old["supervisor"]["grounding"]["rule"] = "evidence caps v1: all searches failed -> low; no disagreement supported -> medium; a gap -> medium"
    again = PipelineTrace.model_validate(old)
    assert again.supervisor.coverage[0].evidence is None and again.supervisor.grounding.effective == "high"
    assert effective_confidence(again.supervisor) == "high"  # the recorded grounding is read, not recomputed


def _forecast(agent, p, conf, status="ok"):
    if status != "ok":
        from agent_schemas import ErrorInfo

        return Forecast(question_id="q", agent_id=agent, status="failed", error=ErrorInfo(type="RateLimited", message="x"))
    return Forecast(question_id="q", agent_id=agent, p_yes=p, confidence=conf)


def test_overall_confidence_is_the_weakest_link_never_the_mean():
    members = [_forecast("m0", 0.2, "high"), _forecast("m1", 0.3, "high"), _forecast("m2", 0.4, "medium"),
               _forecast("m3", 0.5, None), _forecast("m4", None, None, status="failed")]
    sup = SupervisorArtifact(question_id="q", p_yes=0.3, confidence="high",
                             disagreements=[Disagreement(topic="a", query="qa")],
                             search_outcomes=[SearchOutcome(status="ok", attempted_query="qa", results=[DOC])],
                             coverage=[CoverageNote(topic="a", status="supported")])
    qc = question_confidence(members, sup)
    # three of four stated "high" (a mean would say high); the weakest says medium
    assert qc.overall == "medium" and qc.weakest == ["m2"] and qc.flags == []
    assert qc.by_agent == {"m0": "high", "m1": "high", "m2": "medium", "m3": None, "supervisor": "high"}
    assert any("no confidence stated by m3" in n for n in qc.notes)


def test_qa_flags_low_confidence_and_unresolved_disagreements():
    members = [_forecast("m0", 0.2, "high"), _forecast("m1", 0.8, "high")]
    failed_search = SearchOutcome(status="failed", attempted_query="qa", failure_type="timeout", is_transient=True, error_message="x")
    sup = SupervisorArtifact(question_id="q", p_yes=0.5, confidence="high",
                             disagreements=[Disagreement(topic="timing", agents=["m0", "m1"], query="qa")],
                             search_outcomes=[failed_search],
                             coverage=[CoverageNote(topic="timing", status="gap", reason="search failed: timeout")])
    qc = question_confidence(members, sup)
    assert qc.overall == "low" and qc.weakest == ["supervisor"]
    assert qc.flags == ["low_confidence", "unresolved_disagreement"]
    assert "timing" in qc.notes[1]
    failed_sup = question_confidence(members, SupervisorArtifact(question_id="q", status="failed"))
    assert failed_sup.overall == "high" and failed_sup.flags == ["unresolved_disagreement"]
    assert question_confidence([_forecast("m0", 0.2, None)], None).overall is None
    assert lowest([]) is None
    with pytest.raises(ValueError, match="confidence must be one of"):
        lowest(["sure"])


@pytest.mark.parametrize("stated, read", [("high", "high"), (" Medium ", "medium"), ("certain", None), (None, None)])
def test_member_states_a_confidence_and_an_unreadable_one_never_fails_the_forecast(stated, read):
    extra = {} if stated is None else {"confidence": stated}
    f = ForecasterAgent(ScriptedProvider([answer(35, **extra)])).forecast(make_question())
    assert f.status == "ok" and f.p_yes == 0.35 and f.confidence == read


def test_the_answer_schema_asks_for_a_confidence_as_a_string_enum_before_the_number():
    schema = forecast_json_schema(1)
    assert list(schema["properties"]) == ["rationale", "key_evidence", "confidence", "p_yes_percent"]
    assert schema["properties"]["confidence"] == {"type": "string", "enum": ["high", "medium", "low"]}
    assert "confidence" in schema["required"]


def test_simulated_members_state_a_confidence_and_the_decision_is_still_told_apart():
    q = make_question()
    sim = get_provider("sim", world=SimWorld.from_questions([q]), retry=False)
    f = ForecasterAgent(sim, agent_id="m0", seed=3).forecast(q)
    assert f.status == "ok" and f.confidence in ("high", "medium", "low")
    member_request = ForecasterAgent(sim).build_messages(q, [])
    assert member_request and request_role(forecast_json_schema(1)) == "forecaster"  # unlabelled: by its fields
    with calling_as("decision"):  # the decision has a member's fields: only its label tells it apart
        assert request_role(forecast_json_schema(1)) == "decision"


def test_forecast_explains_the_grounding_and_the_weakest_link():
    from benchmarks.viewer.trace_text import explain_trace

    trace = _pipeline(FixedSearch(failure="timeout"), stated="high").run(make_question())
    text = explain_trace(trace)
    assert "member-0 [base_rate, scripted] p_yes 0.200, confidence high" in text
    assert "decision: p_yes 0.900, confidence stated high" in text
    assert "grounded confidence: low (at most low: every clarifying search failed (2 of 2: timeout)" in text
    assert ("CONFIDENCE overall low (the weakest link of: member-0 high, member-1 high, supervisor low); "
            "QA flags: low_confidence, unresolved_disagreement") in text
    assert "supervisor (low confidence, stated high) 0.900 ignored (weight 0)" in text
