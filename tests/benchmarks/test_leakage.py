"""The leakage audit counts what it says (issue 18): each kind of hindsight, planted in a prompt, is counted once;
the prompts of every role are read; the cutoff guard's drops are summed from members and supervisor.

The end-to-end test runs the harness with a leaky search client (it returns results dated after the forecast
date and undated ones whatever the cutoff) and members answering 0% and 100%.
"""

from __future__ import annotations

import asyncio
import datetime as dt

import pytest

from agent_providers import ScriptedProvider
from agent_schemas import ChatMessage, Forecast, PipelineTrace, Question, RecordedCall, SearchOutcome, SearchResult, SupervisorArtifact
from agent_tools import SearchClient, render_evidence
from benchmarks.harness.config import RunConfig
from benchmarks.protocol.leakage import AUDIT_KEYS, audit_prompts, evidence_dates, leakage_audit
from benchmarks.harness.runner import BenchmarkRunner
from benchmarks.run_folder import read_results
from agent_providers.scripted_world import respond

FORECAST = dt.date(2025, 11, 9)
Q = Question(
    id="fb|polymarket|0xabc|round-7",
    text="Will the ECB cut its deposit rate by March 2026?",
    background="The deposit facility rate was 2.00% after the June 2025 meeting.",
    resolution_criteria="Resolves Yes if the ECB announces a cut before the market closes.",
    forecast_date=FORECAST,
    scheduled_close_date=dt.date(2026, 3, 31),  # 142 days after the forecast date: shown
    resolution_date=dt.date(2025, 12, 18),  # 39 days after: hidden (resolved early)
    outcome=1,
    source="polymarket",
    source_question_id="0xabc",
    question_type="market",
)
ZERO = {"prompts_scanned": 1, "evidence_dated_after_cutoff": 0, "hindsight_resolution_date": 0, "hindsight_outcome": 0}


def audit_one(text: str, question: Question = Q) -> dict[str, int]:
    return audit_prompts([text], question)


def result(day: dt.date | None, n: int = 1) -> SearchResult:
    return SearchResult(title=f"Item {n}", url=f"https://news.example/{n}", snippet="ECB news", published=day, source="news")


# --- evidence dates ------------------------------------------------------------------------------


def test_evidence_dates_are_read_from_both_renderers():
    search_block = render_evidence([result(dt.date(2025, 11, 1), 1), result(None, 2), result(dt.date(2025, 12, 2), 3)])
    summaries = ("- member-0 (scripted): p_yes 40%. rationale\n"
                 "    - evidence: Rates held [https://ecb.example/a, 2025-10-30]\n"
                 "    - evidence: No source [no source, undated]\n"
                 "    - evidence: Bad date [https://x.example, 2025-13-45]\n"
                 "- evidence: Cut announced [https://ecb.example/b, 2025-12-18]")
    assert evidence_dates(search_block) == [dt.date(2025, 11, 1), dt.date(2025, 12, 2)]
    assert evidence_dates(summaries) == [dt.date(2025, 10, 30), dt.date(2025, 12, 18)]
    from agent_schemas import AgentSummary, EvidenceItem
    from agent_specialists.prompts import render_agent_summaries

    rendered = render_agent_summaries([AgentSummary(agent_id="member-0", p_yes=0.4, top_evidence=[
        EvidenceItem(claim="Rates held", source_url="https://ecb.example/a", published=dt.date(2025, 10, 30)),
        EvidenceItem(claim="Own claim"),
        EvidenceItem(claim="Cut announced", source_url="https://ecb.example/b", published=dt.date(2025, 12, 18))])])
    assert "- evidence [3]: Cut announced [https://ecb.example/b, 2025-12-18]" in rendered
    assert evidence_dates(rendered) == [dt.date(2025, 10, 30), dt.date(2025, 12, 18)]  # the renderer as it is
    assert evidence_dates("published 2025-12-01 somewhere in prose") == []


def test_only_evidence_dated_after_the_forecast_date_is_late():
    on_the_day = render_evidence([result(FORECAST, 1)])
    late = render_evidence([result(FORECAST + dt.timedelta(days=1), 1), result(dt.date(2026, 1, 5), 2)])
    assert audit_one(on_the_day) == ZERO
    assert audit_one(late) == {**ZERO, "evidence_dated_after_cutoff": 2}
    member_line = "    - evidence: Cut announced [https://ecb.example/b, 2025-11-10]"
    assert audit_one(member_line) == {**ZERO, "evidence_dated_after_cutoff": 1}


# --- the actual resolution date --------------------------------------------------------------------


@pytest.mark.parametrize("text, found", [
    ("The market closed on 2025-12-18.", 1),
    ("On December 18, 2025 the ECB announced a cut.", 1),
    ("horizon 39 days", 1),
    ("Horizon: 39 day", 1),
    ("horizon 142 days", 0),  # the scheduled close, shown to forecasters
    ("horizon 390 days", 0),
    ("The market closes on 2026-03-31.", 0),
    ("December 8, 2025 and 2025-12-19", 0),
])
def test_the_actual_resolution_date_and_its_horizon_are_hindsight(text, found):
    assert audit_one(text) == {**ZERO, "hindsight_resolution_date": found}


def test_a_resolution_date_the_question_itself_shows_is_not_hindsight():
    named = Q.model_copy(update={"resolution_criteria": "Resolves Yes if the ECB cuts at its 2025-12-18 meeting."})
    assert audit_one("The ECB meets on 2025-12-18.", named) == ZERO
    # the question shows the date, so no spelling of it is hindsight (issue 29: it was, in another spelling)
    assert audit_one("On December 18, 2025 the ECB cut, horizon 39 days.", named) == ZERO
    in_background = Q.model_copy(update={"background": "Next meeting: 18 Dec. 2025."})
    assert audit_one("On December 18, 2025 the ECB cut.", in_background)["hindsight_resolution_date"] == 0
    assert audit_one("The ECB meets on 2025-12-18.", in_background)["hindsight_resolution_date"] == 0
    on_schedule = Q.model_copy(update={"scheduled_close_date": Q.resolution_date})
    assert audit_one("closes 2025-12-18, horizon 39 days", on_schedule) == ZERO
    unresolved = Q.model_copy(update={"resolution_date": None, "outcome": None})
    assert audit_one("closes 2025-12-18, horizon 39 days", unresolved) == ZERO


def test_a_date_named_in_the_value_at_freeze_explanation_is_visible():
    dataset = Q.model_copy(update={"question_type": "dataset", "metadata": {
        "freeze_datetime": "2025-11-01T00:00:00Z", "freeze_value_raw": "2.00",
        "freeze_value_explanation": "The rate in force until the 2025-12-18 decision."}})
    assert dataset.visible().freeze_value_explanation == "The rate in force until the 2025-12-18 decision."
    assert audit_one("The decision of 2025-12-18 is pending.", dataset) == ZERO
    assert audit_one("The decision of 2025-12-18 is pending.", dataset.model_copy(update={"metadata": {}}))["hindsight_resolution_date"] == 1


def test_a_question_without_a_source_id_is_recognised_by_its_id_and_text_only():
    no_sid = Q.model_copy(update={"source_question_id": None})
    for text in ("None resolved Yes", "XXXX resolved Yes", "resolved Yes", " resolved yes"):
        assert audit_one(text, no_sid) == ZERO
    assert audit_one(f"{Q.id} resolved Yes", no_sid)["hindsight_outcome"] == 1
    nameless = Question(id="", text=" ", forecast_date=FORECAST)  # nothing to recognise it by
    assert audit_prompts(["It resolved Yes.", "The outcome: no."], nameless) == {**ZERO, "prompts_scanned": 2}


def test_a_horizon_is_hindsight_when_no_close_date_was_shown():
    no_close = Q.model_copy(update={"scheduled_close_date": None})
    assert audit_one("horizon 39 days", no_close)["hindsight_resolution_date"] == 1


# --- dates as people write them, and the dates a question may show (issue 29) ----------------------------

MARCH = Q.model_copy(update={"resolution_date": dt.date(2026, 3, 1)})  # resolved early: 112 days, close 2026-03-31 (142)


@pytest.mark.parametrize("written", [
    "1 March 2026", "1st March 2026", "1st of March, 2026", "01-Mar-2026", "Sunday, 1 March 2026",  # day month year
    "Mar 1, 2026", "Mar. 1st 2026", "march 1 2026", "March 1st, 2026", "MARCH 1, 2026",  # month day year
    "03/01/2026", "3/1/26",  # numeric, month first (US)
    "01/03/2026", "01.03.2026", "1-3-2026",  # numeric, day first
    "2026/03/01", "2026-3-1", "2026-03-01T09:30Z",  # year first
    "horizon_days: 112", "(112 days after the forecast date)", "a 112-day horizon",  # the horizon derived from it
])
def test_the_actual_resolution_date_is_found_however_it_is_written(written):
    assert audit_one(f"The market closed on {written}.", MARCH) == {**ZERO, "hindsight_resolution_date": 1}


@pytest.mark.parametrize("question, written", [
    (MARCH, "31 March 2026"), (MARCH, "Mar 31st, 2026"), (MARCH, "03/31/2026"), (MARCH, "31.03.2026"),  # scheduled close
    (MARCH, "9 November 2025"), (MARCH, "11/09/2025"), (MARCH, "horizon 142 days"),  # forecast date, days to close
    # a dataset question's resolution date is fixed in advance: its scheduled close
    (Q.model_copy(update={"question_type": "dataset", "scheduled_close_date": Q.resolution_date}), "18 Dec 2025, horizon 39 days"),
    # the actual resolution date written in the criteria one way and in the prompt another
    (Q.model_copy(update={"resolution_criteria": "Resolves Yes if the ECB cuts on 18 December 2025."}), "2025-12-18"),
    (Q.model_copy(update={"resolution_criteria": "Resolves Yes if the ECB cuts on 18 December 2025."}), "12/18/2025"),
    # a numeric date one of whose readings the question shows is read as that date
    (Q.model_copy(update={"scheduled_close_date": dt.date(2026, 3, 1), "resolution_date": dt.date(2026, 1, 3)}), "03/01/2026"),
    (Q.model_copy(update={"scheduled_close_date": dt.date(2026, 1, 3), "resolution_date": dt.date(2026, 3, 1)}), "03/01/2026"),
])
def test_a_date_the_question_may_show_is_never_hindsight_however_it_is_written(question, written):
    assert audit_one(f"The market closes on {written}.", question) == ZERO


def test_an_ambiguous_numeric_date_is_hindsight_when_neither_reading_is_shown():
    jan3 = Q.model_copy(update={"scheduled_close_date": dt.date(2026, 3, 1), "resolution_date": dt.date(2026, 1, 3)})
    assert audit_one("It closed on 3 January 2026.", jan3)["hindsight_resolution_date"] == 1  # unambiguous: found
    assert audit_one("It closed on 01/03/2026.", jan3.model_copy(update={"scheduled_close_date": dt.date(2026, 3, 31)}))[
        "hindsight_resolution_date"] == 1  # 1 March or 3 January: neither shown, one is the actual date


#: A market of round 2024-12-08, scored at the benchmark's 7-day horizon (2024-12-15): the resolution date of
#: every dataset question of its round, whose texts the bundled search corpus holds (the false alarms of a
#: large simulated run before issue 29: 7 questions of this round).
ROUND = Question(
    id="fb|2024-12-08|polymarket|0xfed|2024-12-15", text="Fed rate hike in 2024?",
    resolution_criteria="Resolves to the outcome of the question found at https://polymarket.com/market/fed-rate-hike-in-2024.",
    forecast_date=dt.date(2024, 12, 8), scheduled_close_date=dt.date(2024, 12, 18), resolution_date=dt.date(2024, 12, 15),
    outcome=0, source="polymarket", source_question_id="0xfed", question_type="market",
    url="https://polymarket.com/market/fed-rate-hike-in-2024")


def corpus_doc(title: str, snippet: str, day: dt.date = ROUND.forecast_date) -> str:
    return render_evidence([SearchResult(title=title, url="https://www.example.org/q/1", snippet=snippet, published=day,
                                         source="local-corpus:forecastbench:background")])


@pytest.mark.parametrize("title, snippet", [
    ("Will the number of US software development job postings on Indeed have increased by 2024-12-15 as compared "
     "to its value on 2024-12-08?", "The number of job postings on Indeed."),
    ("Will CPT's market close price on 2024-12-15 be higher than its market close price on 2024-12-08?", "Stock splits."),
    ("US x Venezuela military engagement?", 'This market will resolve to "Yes" if the United States commences a '
     "military offensive between September 6 and December 15, 2024, 11:59 PM ET."),
    ("Next prime minister of Hungary?", "Parliamentary elections are scheduled to be held in Hungary on December 15, 2024."),
    ("Liverpool top 4?", "Resolve YES if Liverpool finish 1st after the last match round on Sunday, December 15, 2024."),
])
def test_a_date_a_document_from_before_the_forecast_date_names_in_advance_is_not_hindsight(title, snippet):
    assert audit_one(corpus_doc(title, snippet), ROUND) == ZERO


@pytest.mark.parametrize("text, late", [
    (corpus_doc("Fed news", "The FOMC held rates on 2024-12-15."), 0),  # a past event: a re-dated page
    (corpus_doc("Fed news", "On December 15, 2024 the FOMC held rates."), 0),
    (corpus_doc("Fed markets", "Markets closed 15/12/2024 after the FOMC held."), 0),
    (corpus_doc("Will the Fed hike by 2024-12-15?", "", day=dt.date(2024, 12, 9)), 1),  # a document from after the cutoff
    ("- member-0 (scripted): p_yes 4%. The FOMC decides by 2024-12-15.", 0),  # written by a model, not a document
])
def test_the_actual_resolution_date_as_a_past_event_or_outside_earlier_documents_is_hindsight(text, late):
    assert audit_one(text, ROUND) == {**ZERO, "hindsight_resolution_date": 1, "evidence_dated_after_cutoff": late}


# --- the outcome -----------------------------------------------------------------------------------


@pytest.mark.parametrize("text, found", [
    (f"{Q.id} resolved Yes.", 1),
    ("Market 0xabc: RESOLVED TO NO", 1),
    (f"{Q.text} The outcome: yes", 1),
    (f"{Q.text}" + " " * 95 + "outcome 1", 1),  # 95 characters between: near
    (f"{Q.text}" + " " * 101 + "resolved yes", 0),  # too far from the question to be about it
    (f"{Q.text} resolved yesterday's doubts", 0),
    ("Another market resolved Yes.", 0),
    ("Outcome: yes", 1),
    ("  outcome = FALSE", 1),
    ("The outcome is uncertain.", 0),
])
def test_outcome_statements_next_to_the_question_are_hindsight(text, found):
    assert audit_one(text) == {**ZERO, "hindsight_outcome": found}


@pytest.mark.parametrize("text", [
    "This market has already resolved NO.",  # issue 29
    f"{Q.text} It has already resolved.",
    "This question resolved early.",  # issue 29
    f"{Q.text} The market closed ahead of schedule.",
    f"{Q.text} The answer was No.",
    "The answer to this question was yes.",
    "This market: the final outcome turned out to be Yes",
    "The market settled at No.",
    "This market was resolved positively.",
    f"Resolved NO: {Q.text}",  # before the question, on its line
    f"{ROUND.url} resolved yes",
    "Resolution: NO",
])
def test_outcome_phrases_about_the_question_are_hindsight(text):
    question = Q.model_copy(update={"url": ROUND.url})
    assert audit_one(text, question) == {**ZERO, "hindsight_outcome": 1}


@pytest.mark.parametrize("text", [
    "This question will be resolved as “Yes” if the ECB cuts.",  # rules of resolution criteria
    'In other words, the question may still be resolved as "Yes" even if the rate is unchanged.',
    "If this market resolved YES, traders won.",
    "This market resolved YES only if the ECB cut.",
    "This market resolves YES if the ECB cuts.",
    "The market will resolve early if the ECB cuts.",
    "This question is resolved no later than 2026-03-31.",
    "This market has not resolved yet.",
    "Another market resolved Yes. It has already resolved.",  # about no question named
    "The answer is uncertain; the question's answer was unclear.",
])
def test_rules_and_statements_about_nothing_named_are_not_hindsight(text):
    assert audit_one(text, Q) == ZERO


def test_an_outcome_statement_the_question_itself_shows_is_not_hindsight():
    from agent_tools.case_facts import render_case_facts

    told = Q.model_copy(update={"background": "An earlier market on this question resolved Yes in 2024. Rates are 2%."})
    assert audit_one(render_case_facts(told), told) == ZERO
    assert audit_one(render_case_facts(told) + "\nThis market has already resolved NO.", told)["hindsight_outcome"] == 1


def test_a_long_question_is_recognised_by_its_first_120_characters():
    long_q = Q.model_copy(update={"text": "Will the ECB cut rates in the " + "very " * 20 + "long run?"})
    assert len(long_q.text) > 121 and long_q.text[120] != " "
    quoted = long_q.text[:120] + "... (question truncated) resolved No"
    assert audit_one(quoted, long_q)["hindsight_outcome"] == 1


def test_counts_add_over_prompts():
    prompts = ["clean", "closed 2025-12-18.\nOutcome: No", render_evidence([result(dt.date(2025, 12, 1))]), "Outcome: 1"]
    assert audit_prompts(prompts, Q) == {"prompts_scanned": 4, "evidence_dated_after_cutoff": 1,
                                         "hindsight_resolution_date": 1, "hindsight_outcome": 2}
    assert audit_prompts([], Q) == {**ZERO, "prompts_scanned": 0}


# --- issue 35: each missed kind closed, as a table with its near misses ----------------------------------------

#: ECB question resolved early on 2026-03-05 (hidden); its scheduled close 2026-03-31 is shown.
MAR5 = Q.model_copy(update={"resolution_date": dt.date(2026, 3, 5)})
#: A document dated before the forecast date (2025-11-09).
def earlier_doc(snippet: str) -> str:
    return render_evidence([SearchResult(title="ECB calendar", url="https://news.example/ecb", snippet=snippet,
                                         published=dt.date(2025, 11, 1), source="news")])


#: (kind, prompt text, question, the counts it must give). Each kind's first rows failed before issue 35; the
#: rows after them are its near misses, which must not fire.
AUDIT_KINDS = [
    # the actual resolution date, written compactly or abbreviated
    ("compact date in a URL", "See https://www.ecb.europa.eu/press/pr/date/2026/html/ecb.mp20260305~2c5a7e.en.html",
     MAR5, {"hindsight_resolution_date": 1}),
    ("compact date in a file name", "The decision (minutes_20260305.pdf) cut rates.", MAR5, {"hindsight_resolution_date": 1}),
    ("month-day with hyphens", "Decision date: Mar-05-2026.", MAR5, {"hindsight_resolution_date": 1}),
    ("apostrophe year", "The ECB cut on 5 Mar '26.", MAR5, {"hindsight_resolution_date": 1}),
    ("apostrophe year, month first", "The ECB cut on Mar 5th, ’26.", MAR5, {"hindsight_resolution_date": 1}),
    ("near miss: version number", "Model version 1.20260305 was used.", MAR5, {}),
    ("near miss: build number", "build 20260305.2 of the scraper", MAR5, {}),
    ("near miss: phone number", "Call +1 2026030512 for the press office.", MAR5, {}),
    ("near miss: an id that is no date", "Order 20261305 and ticket 120260305.", MAR5, {}),
    ("near miss: two-digit year without apostrophe", "5 Mar 26 people attended.", MAR5, {}),
    # outcome phrases next to the question
    ("closed YES", "This market closed YES.", Q, {"hindsight_outcome": 1}),
    ("closed at No", f"{Q.text} It closed at \"No\".", Q, {"hindsight_outcome": 1}),
    ("resolution: YES", f"{Q.text} (resolution: YES)", Q, {"hindsight_outcome": 1}),
    ("the answer is yes", "The answer to this question is yes.", Q, {"hindsight_outcome": 1}),
    ("paid out per YES share", "This market paid out $1 per YES share on settlement.", Q, {"hindsight_outcome": 1}),
    ("redeemed per No share", f"{Q.text} Holders were redeemed at $1.00 per \"No\" share.", Q, {"hindsight_outcome": 1}),
    ("final result: Yes", f"{Q.text} Final result: Yes.", Q, {"hindsight_outcome": 1}),
    ("ended trading at 100%", f"{Q.text} The contract ended trading at 100%.", Q, {"hindsight_outcome": 1}),
    ("closed at 0 cents", "This market closed at 0¢ for Yes holders.", Q, {"hindsight_outcome": 1}),
    ("near miss: closed, no date", "This market closed no later than the scheduled close.", Q, {}),
    ("near miss: closed yesterday", "This market closed yesterday.", Q, {}),
    ("near miss: a resolution rule", "This market: resolution: YES if the ECB cuts.", Q, {}),
    ("near miss: an opinion", "I think the answer to this question is yes.", Q, {}),
    ("near miss: an answer that is no different", "The answer to this question is no different from last year's.", Q, {}),
    ("near miss: a payout rule", "This market will pay out $1 per YES share if the ECB cuts.", Q, {}),
    ("near miss: trading, not ended", "This market is trading at 100% today.", Q, {}),
    ("near miss: ended at another price", "This market ended trading at 10%.", Q, {}),
    ("near miss: another market", "Another market paid out $1 per YES share.", Q, {}),
    # calendars in the present tense, in documents dated before the forecast date
    ("calendar: next meeting is on", earlier_doc("The next meeting is on 5 March 2026."), MAR5, {}),
    ("calendar: next meeting:", earlier_doc("Next monetary policy meeting: 5 March 2026."), MAR5, {}),
    ("calendar: a verb of a calendar", earlier_doc("The Governing Council meets on Thursday, 5 March 2026."), MAR5, {}),
    ("calendar: a deadline ends", earlier_doc("The consultation ends on Mar 5, 2026."), MAR5, {}),
    ("near miss: future tense (already allowed)", earlier_doc("The council will meet on 5 March 2026."), MAR5, {}),
    ("near miss: the past tense is a re-dated page", earlier_doc("The meeting was on 5 March 2026."), MAR5,
     {"hindsight_resolution_date": 1}),
    ("near miss: today is", earlier_doc("Today is 5 March 2026 and the ECB cut."), MAR5, {"hindsight_resolution_date": 1}),
    ("near miss: the next day", earlier_doc("The next day, on 5 March 2026, the ECB cut."), MAR5,
     {"hindsight_resolution_date": 1}),
    ("near miss: a calendar in a model's words", "- member-0: the next meeting is on 5 March 2026.", MAR5,
     {"hindsight_resolution_date": 1}),
]


@pytest.mark.parametrize("kind, text, question, counts", AUDIT_KINDS, ids=[k[0] for k in AUDIT_KINDS])
def test_each_kind_of_issue_35_is_found_and_its_near_misses_are_not(kind, text, question, counts):
    assert audit_one(text, question) == {**ZERO, **counts}


# --- one question's audit from its trace -------------------------------------------------------------


def call(role: str, *texts: str) -> RecordedCall:
    return RecordedCall(role=role, provider="scripted", request_key="k",
                        messages=[ChatMessage(role="system" if i == 0 else "user", content=t) for i, t in enumerate(texts)])


def test_trace_audit_reads_every_role_and_sums_the_guards_drops():
    late_search = render_evidence([result(dt.date(2025, 11, 20), 1)])
    trace = PipelineTrace(
        question=Q.visible(),
        forecasts=[Forecast(question_id=Q.id, agent_id="member-0", p_yes=0.4, n_evidence_dropped=2, n_evidence_in_prompt=3),
                   Forecast(question_id=Q.id, agent_id="member-1", p_yes=0.6, n_evidence_dropped=1, n_evidence_in_prompt=0)],
        supervisor=SupervisorArtifact(question_id=Q.id, p_yes=0.5, confidence="low", search_outcomes=[
            SearchOutcome(status="ok", attempted_query="a", results=[result(FORECAST)], dropped_after_cutoff=4, dropped_undated=1),
            SearchOutcome(status="failed", attempted_query="b", failure_type="timeout", dropped_after_cutoff=0),
        ]),
        recorded_calls=[
            call("forecaster", "system", late_search),  # late evidence from a member's search
            call("forecaster", "system", "- evidence: old [https://a.example, 2025-10-01]"),
            # the last line of one message and the first of the next are read as lines of their own
            call("supervisor", "system", "    - evidence: cut [https://ecb.example, 2025-12-18]", "Outcome: Yes\nthen"),
            RecordedCall(role="bull", provider="scripted", request_key="k"),  # no messages recorded: not a prompt
        ],
    )
    audit = leakage_audit(trace, Q)
    assert list(audit) == list(AUDIT_KEYS)
    # drops 2 + 1 (members) + 4 + 1 (supervisor); in prompts 3 + 0 + 1; findings 2 late + 1 date + 1 outcome
    assert audit == {"prompts_scanned": 3, "evidence_in_prompt": 4, "dropped_by_cutoff_guard": 8,
                     "evidence_dated_after_cutoff": 2, "hindsight_resolution_date": 1, "hindsight_outcome": 1, "findings": 4}


def test_a_page_two_clarifying_searches_return_counts_once_as_the_decision_prompt_shows_it():
    page, other = result(FORECAST, 1), result(FORECAST, 2)
    trace = PipelineTrace(question=Q.visible(), supervisor=SupervisorArtifact(
        question_id=Q.id, p_yes=0.5, confidence="low", search_outcomes=[
            SearchOutcome(status="ok", attempted_query="a", results=[page]),
            SearchOutcome(status="ok", attempted_query="b", results=[page, other])]))
    assert leakage_audit(trace, Q)["evidence_in_prompt"] == 2  # [1] page, [2] other (agent_tools.shown_results)


def test_member_prompts_alone_are_audited():
    trace = PipelineTrace(question=Q.visible(), recorded_calls=[call("forecaster", "system", "closed 2025-12-18, horizon 39 days")])
    assert leakage_audit(trace, Q) == {"prompts_scanned": 1, "evidence_in_prompt": 0, "dropped_by_cutoff_guard": 0,
                                       "evidence_dated_after_cutoff": 0, "hindsight_resolution_date": 1,
                                       "hindsight_outcome": 0, "findings": 1}


def test_a_trace_of_another_question_is_refused():
    other = Q.model_copy(update={"id": "other"})
    with pytest.raises(ValueError, match=r"^trace of 'other' audited against question 'fb\|polymarket\|0xabc\|round-7'$"):
        leakage_audit(PipelineTrace(question=other.visible()), Q)


# --- end to end: a leaky search client, members at 0% and 100% ------------------------------------------


class LeakySearch(SearchClient):
    """Ignores the cutoff: every query gets one result from before the forecast date, two from after it and
    one undated (as a search engine whose date filter leaks)."""

    name = "leaky"

    def __init__(self) -> None:
        self.queries: list[str] = []

    def search(self, query, *, max_results=5, cutoff_date=None):
        self.queries.append(query)
        day = dt.date.fromisoformat(str(cutoff_date)[:10]) if cutoff_date else FORECAST
        results = [SearchResult(title="Before", url="https://news.example/before", snippet="Rates held.", published=day - dt.timedelta(days=3), source="news"),
                   SearchResult(title="After", url="https://news.example/after", snippet="The ECB cut rates.", published=day + dt.timedelta(days=2), source="news"),
                   SearchResult(title="Much later", url="https://news.example/later", snippet="Resolved Yes.", published=day + dt.timedelta(days=40), source="news"),
                   SearchResult(title="Undated", url="https://news.example/undated", snippet="Who knows.", published=None, source="news")]
        return SearchOutcome(status="ok", attempted_query=query, results=results[:max_results])


def extreme(p_percent: int):
    """Members answer ``p_percent``; debate and supervisor answer as in the scripted world."""

    def responder(messages):
        user = "\n".join(m.content for m in messages[1:])
        if any(role in user for role in ("You are the BULL", "You are the BEAR", "You are the SUPERVISOR")):
            return respond(messages)
        return '{"rationale": "sure", "key_evidence": [], "p_yes_percent": %d}' % p_percent

    return ScriptedProvider(responder=responder, model=f"p{p_percent}")


def test_leaky_search_is_guarded_and_audited_and_extreme_members_are_clipped(tmp_path):
    from benchmarks.questions import load_forecastbench

    qs = load_forecastbench(question_type="market", one_per_source_question=True, sample_n=2, seed=4)
    search = LeakySearch()
    config = RunConfig(output_dir=str(tmp_path), run_id="leaky", providers=["scripted/p0", "scripted/p100"], n_members=2,
                       methods=["mean", "median", "min", "max", "geomean_odds", "extremized", "debate", "supervisor", "pipeline"],
                       baselines=["always_0.5"], cache=False)
    runner = BenchmarkRunner(config, provider_factory=lambda spec: extreme(0 if spec.endswith("p0") else 100),
                             search_client=search, questions=qs, progress=False, retry_sleep=lambda s: None)
    summary = asyncio.run(runner.arun())
    assert summary.n_ok == 2
    records = {r["question_id"]: r for r in read_results(runner.run_dir / "results.jsonl")}
    for q in qs:
        r = records[q.id]
        assert [f["p_yes"] for f in r["trace"]["forecasts"]] == [0.0, 1.0]
        rows = r["methods"]
        assert all(0.01 <= m["p_yes"] <= 0.99 for m in rows.values()), rows
        assert (rows["min"]["p_yes"], rows["max"]["p_yes"], rows["mean"]["p_yes"]) == (0.01, 0.99, 0.5)
        n_sup = len(r["trace"]["supervisor"]["search_outcomes"])
        assert n_sup >= 1
        # each search: 1 result kept, the same page every time (each member's prompt shows it, and the decision
        # prompt once however many searches returned it); 2 late and 1 undated dropped by the guard per search
        assert r["audit"] == {"prompts_scanned": len(r["trace"]["recorded_calls"]), "evidence_in_prompt": 2 + 1,
                              "dropped_by_cutoff_guard": 3 * (2 + n_sup), "evidence_dated_after_cutoff": 0,
                              "hindsight_resolution_date": 0, "hindsight_outcome": 0, "findings": 0}
        prompts = "\n".join(m["content"] for c in r["trace"]["recorded_calls"] for m in c["messages"])
        assert "https://news.example/before" in prompts
        for late in ("https://news.example/after", "https://news.example/later", "https://news.example/undated"):
            assert late not in prompts
    assert len(search.queries) == sum(2 + len(r["trace"]["supervisor"]["search_outcomes"]) for r in records.values())


def test_dates_stated_by_models_do_not_reach_prompts_or_the_record(tmp_path):
    """A member cites a URL nobody retrieved with a date after the forecast date (SmolLM2 did this in the
    main job): the date is dropped, so no later prompt shows late evidence and the audit stays clean; a
    debate turn citing the member's retrieved source gets that source's date."""
    from benchmarks.questions import load_forecastbench

    q = load_forecastbench(question_type="market", one_per_source_question=True, sample_n=1, seed=4)[0]
    late = (q.forecast_date + dt.timedelta(days=11)).isoformat()

    def responder(messages):
        user = "\n".join(m.content for m in messages[1:])
        if "You are the BULL" in user or "You are the BEAR" in user:
            return ('{"argument": "as found", "key_evidence": [{"claim": "rates held", "source_url": '
                    '"https://news.example/before", "published": "%s"}], "p_yes_percent": 60}' % late)
        if "You are the SUPERVISOR" in user:
            return respond(messages)
        return ('{"rationale": "sure", "key_evidence": [{"claim": "updated in 2026", "source_url": '
                '"https://polymarket.com/market/made-up.json", "published": "%s"}, {"claim": "rates held", '
                '"source_url": "https://news.example/before", "published": "%s"}], "p_yes_percent": 40}' % (late, late))

    config = RunConfig(output_dir=str(tmp_path), run_id="stated", providers=["scripted/m"], n_members=2,
                       methods=["mean", "debate", "supervisor"], baselines=["always_0.5"], cache=False)
    runner = BenchmarkRunner(config, provider_factory=lambda spec: ScriptedProvider(responder=responder, model="m"),
                             search_client=LeakySearch(), questions=[q], progress=False, retry_sleep=lambda s: None)
    asyncio.run(runner.arun())
    (r,) = read_results(runner.run_dir / "results.jsonl")
    before = (q.forecast_date - dt.timedelta(days=3)).isoformat()
    for f in r["trace"]["forecasts"]:
        assert [(e["source_url"], e["published"]) for e in f["key_evidence"]] == [
            ("https://polymarket.com/market/made-up.json", None), ("https://news.example/before", before)]
    turns = [t for rnd in r["trace"]["debate"]["rounds"] for t in (rnd["bull"], rnd["bear"])]
    assert turns and all(t["key_evidence"][0]["published"] == before for t in turns)
    specialist_prompts = [c for c in r["trace"]["recorded_calls"] if c["role"] != "forecaster"]
    text = "\n".join(m["content"] for c in specialist_prompts for m in c["messages"])
    assert "updated in 2026 [https://polymarket.com/market/made-up.json, undated]" in text
    assert late not in text
    assert r["audit"]["evidence_dated_after_cutoff"] == 0 and r["audit"]["findings"] == 0


def test_evidence_is_cited_by_number_and_takes_the_numbered_sources_url_and_date(tmp_path):
    """Every agent cites evidence by the number [n] its prompt shows, under a schema whose ``source`` enum
    holds exactly those numbers; the record gets the n-th source's URL and search date, and a number
    outside the list cites nothing (no URL, undated)."""
    from benchmarks.questions import load_forecastbench

    q = load_forecastbench(question_type="market", one_per_source_question=True, sample_n=1, seed=4)[0]
    before = (q.forecast_date - dt.timedelta(days=3)).isoformat()

    def responder(messages):
        user = "\n".join(m.content for m in messages[1:])
        if "You are the BULL" in user or "You are the BEAR" in user:
            n = 1 if "You are the BULL" in user else 2
            return '{"argument": "as found", "key_evidence": [{"claim": "cited", "source": %d}], "p_yes_percent": 60}' % n
        if "Reconcile the forecasts" in user:
            return ('{"rationale": "r", "key_evidence": [{"claim": "clarified", "source": 5}], '
                    '"confidence": "medium", "p_yes_percent": 55}')
        if "You are the SUPERVISOR" in user:
            return respond(messages)
        return ('{"rationale": "sure", "key_evidence": [{"claim": "rates held", "source": 1}, '
                '{"claim": "invented", "source": 5}], "confidence": "low", "p_yes_percent": 40}')

    providers = []

    def factory(spec):
        providers.append(ScriptedProvider(responder=responder, model="m"))
        return providers[-1]

    config = RunConfig(output_dir=str(tmp_path), run_id="cite", providers=["scripted/m"], n_members=2,
                       methods=["mean", "debate", "supervisor"], baselines=["always_0.5"], cache=False)
    runner = BenchmarkRunner(config, provider_factory=factory, search_client=LeakySearch(), questions=[q],
                             progress=False, retry_sleep=lambda s: None)
    asyncio.run(runner.arun())
    (r,) = read_results(runner.run_dir / "results.jsonl")
    trace = r["trace"]
    # members saw one result ([1] Before: the guard dropped the later and the undated ones)
    for f in trace["forecasts"]:
        assert [(e["claim"], e["source_url"], e["published"]) for e in f["key_evidence"]] == [
            ("rates held", "https://news.example/before", before), ("invented", None, None)]
    # the debate's sources are the members' four evidence items, numbered [1]..[4] in their prompts
    turns = [t for rnd in trace["debate"]["rounds"] for t in (rnd["bull"], rnd["bear"])]
    assert [(t["side"], t["key_evidence"][0]["source_url"], t["key_evidence"][0]["published"]) for t in turns[:2]] == [
        ("bull", "https://news.example/before", before), ("bear", None, None)]
    bull_prompt = next(c for c in trace["recorded_calls"] if c["role"] == "bull")["messages"]
    text = "\n".join(m["content"] for m in bull_prompt)
    assert f"- evidence [1]: rates held [https://news.example/before, {before}]" in text
    assert "- evidence [4]: invented [no source, undated]" in text
    # the decision numbers the clarifying results after the members' evidence: [5] is the first of them
    decision = next(c for c in trace["recorded_calls"] if "Reconcile the forecasts" in c["messages"][-1]["content"])
    assert "[5] Before — news, " + before + " — https://news.example/before" in decision["messages"][-1]["content"]
    assert [(e["claim"], e["source_url"], e["published"]) for e in trace["supervisor"]["key_evidence"]] == [
        ("clarified", "https://news.example/before", before)]
    # each call's schema allows exactly the numbers its prompt shows (0 cites none)
    enums = {}
    for request in (req for p in providers for req in p.requests):
        items = request["json_schema"]["properties"].get("key_evidence", {}).get("items")
        content = request["messages"][-1].content
        role = ("decision" if "Reconcile the forecasts" in content else "bull" if "You are the BULL" in content
                else "bear" if "You are the BEAR" in content else "supervisor" if "SUPERVISOR" in content else "member")
        if items is not None:
            enums.setdefault(role, set()).add(tuple(items["properties"]["source"]["enum"]))
    n_clarifying = len({(x["url"], x["title"]) for o in trace["supervisor"]["search_outcomes"] if o["status"] == "ok" for x in o["results"]})
    assert enums == {"member": {(0, 1)}, "bull": {(0, 1, 2, 3, 4)}, "bear": {(0, 1, 2, 3, 4)},
                     "decision": {tuple(range(4 + n_clarifying + 1))}}
    assert n_clarifying >= 1 and r["audit"]["findings"] == 0


# --- end to end: a round-2024-12-08 market and the search corpus of its round (issue 29) ---------------------


class RoundCorpus(SearchClient):
    """Every query gets a dataset question of the market's round (dated on the forecast date, naming the
    round's 7-day resolution date in advance) and, when ``planted``, a page dated on the forecast date
    that reports the market's resolution (a page re-dated after the fact)."""

    name = "round"

    def __init__(self, planted: str | None = None) -> None:
        self.planted = planted

    def search(self, query, *, max_results=5, cutoff_date=None):
        results = [SearchResult(
            title="Will the number of US software development job postings on Indeed have increased by 2024-12-15 "
                  "as compared to its value on 2024-12-08?", url="https://www.example.org/indeed",
            snippet="Job postings on Indeed.", published=ROUND.forecast_date, source="local-corpus:forecastbench:background")]
        if self.planted:
            results.append(SearchResult(title="Fed market", url="https://news.example/fed", snippet=self.planted,
                                        published=ROUND.forecast_date, source="news"))
        return SearchOutcome(status="ok", attempted_query=query, results=results[:max_results])


@pytest.mark.parametrize("planted", [None, "Update: this market closed on 15 Dec 2024 and has already resolved NO."])
def test_a_run_on_the_rounds_corpus_is_clean_and_a_planted_resolution_is_found(tmp_path, planted):
    config = RunConfig(output_dir=str(tmp_path), run_id="round", providers=["scripted/m"], n_members=2,
                       methods=["mean", "debate", "supervisor"], baselines=["always_0.5"], cache=False)
    runner = BenchmarkRunner(config, provider_factory=lambda spec: ScriptedProvider(responder=respond, model="m"),
                             search_client=RoundCorpus(planted), questions=[ROUND], progress=False, retry_sleep=lambda s: None)
    asyncio.run(runner.arun())
    (r,) = read_results(runner.run_dir / "results.jsonl")
    prompts = ["\n".join(m["content"] for m in c["messages"]) for c in r["trace"]["recorded_calls"] if c["messages"]]
    assert sum("increased by 2024-12-15" in p for p in prompts) >= 3  # the members' and the supervisor's prompts
    shown = sum(bool(planted) and planted in p for p in prompts)
    assert shown == (0 if planted is None else 3)  # the two members' prompts and the supervisor's decision prompt
    assert r["audit"] == {  # each of the three prompts shows the round's document (and the planted page)
        "prompts_scanned": len(prompts), "evidence_in_prompt": 3 * (1 + bool(planted)), "dropped_by_cutoff_guard": 0,
        "evidence_dated_after_cutoff": 0, "hindsight_resolution_date": shown, "hindsight_outcome": shown,
        "findings": 2 * shown}


def _statement_texts() -> list[str]:
    """Every phrase of the module docstring's outcome table (and its rules and opinions), each after a word character
    (ASCII, digit, underscore, accented), a space, punctuation or nothing, and before the same, lowercased as
    the audit reads them; and the docstring itself."""
    import re

    from benchmarks.protocol import leakage

    doc = leakage.__doc__
    phrases = re.findall(r"``([^`]+)``", doc[doc.index("Outcome statements"):doc.index("Direction")])
    contexts = ["", " ", "x", "9", "_", "é", "(", "\n", "the market "]
    texts = [f"{a}{p}{b}" for p in phrases for a in contexts for b in ("", ".", " if", "x", " yes shares")]
    return [t.lower() for t in texts] + [doc.lower(), " ".join(phrases).lower()]


def test_outcome_statements_are_found_where_the_word_boundary_patterns_find_them():
    """The statement patterns are written for speed (a boundary after each start's first letter); on every phrase of
    the table in every context they find the spans that ``\\b(?:starts)rest`` finds."""
    import re

    from benchmarks.protocol.leakage import _STATEMENT_SOURCES, _statement_pattern

    texts = _statement_texts()
    found = 0
    for _, _, starts, rest in _STATEMENT_SOURCES:
        fast, plain = re.compile(_statement_pattern(starts, rest)), re.compile(_statement_pattern(starts, rest, fast=False))
        for t in texts:
            spans = [m.span() for m in fast.finditer(t)]
            assert spans == [m.span() for m in plain.finditer(t)], (starts, t)
            found += len(spans)
    assert found > 500  # the phrases are found, in most contexts
