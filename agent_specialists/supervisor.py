"""SupervisorAgent: names the disagreements, runs clarifying searches under the cutoff date, reconciles.

Two model calls: (1) name up to ``max_queries`` disagreements, each with a search query; (2) after the
searches, give a reconciled ``p_yes`` with a confidence (high, medium, low). Every search outcome is
kept, failures included, and each disagreement gets a coverage note: "supported" when its search returned
a result relevant to the question and the disagreement (:mod:`agent_tools.relevance`) and dated on or
before the cutoff, "gap" with the reason otherwise; the note records each result's judgement. A failed
search is a gap, never "no evidence"; results on another subject, and the listings of forecasting questions
(the question's own or any other), are a gap, never support.
"""

from __future__ import annotations

import datetime as dt
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_providers import Ask, Provider, UsageMeter, calling_as, provider_ask, run_sync, spent_usage
from agent_schemas import (
    AgentSummary,
    ChatMessage,
    CoverageNote,
    Disagreement,
    EvidenceItem,
    ForecastParseError,
    Question,
    ReconcileError,
    SearchOutcome,
    SearchResult,
    SupervisorArtifact,
    VisibleQuestion,
    as_reconcile_error,
    as_visible,
)
from agent_specialists import prompts
from agent_specialists.member_cases import render_member_cases
from agent_specialists.member_weights import MemberRecord, MemberWeighting, aweigh_members
from agent_tools import SearchClient, ToolExecutor, parse_json, render_evidence, shown_results
from agent_tools.parsing import parse_answer
from agent_tools.case_facts import stable_prefix
from agent_tools.provenance import attach_provenance
from agent_tools.relevance import NO_SUBJECT_REASON, judge_results


@dataclass
class SupervisorProgress(UsageMeter):
    """What one supervisor run has spent (:class:`agent_providers.UsageMeter`) and found so far, filled step
    by step; after a failed step ``error`` is set and the later steps do nothing."""

    t0: float = field(default_factory=time.perf_counter)
    disagreements: list[Disagreement] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    outcomes: list[SearchOutcome] = field(default_factory=list)
    coverage: list[CoverageNote] = field(default_factory=list)
    #: The sources the decision prompt numbers ``[1]``, ``[2]``, ...: the members' evidence, then the
    #: clarifying search results (set by :meth:`SupervisorAgent.decision_request`); the decision cites them.
    sources: list[EvidenceItem | SearchResult] = field(default_factory=list)
    error: ReconcileError | None = None

    def fail(self, exc: BaseException) -> None:
        """Record a step's failure, typed by :func:`agent_schemas.as_reconcile_error` (a failed call's spent
        usage was charged by :meth:`call` already)."""
        self.error = as_reconcile_error(exc)


class SupervisorAgent:
    """Reconciles disagreeing forecasters with targeted, cutoff-respecting searches.

    Parameters
    ----------
    llm : Provider
        The supervisor's model.
    executor : ToolExecutor or SearchClient, optional
        Search with the cutoff-date leakage guard, as for :class:`agent_research.ForecasterAgent`; a bare
        client is wrapped in a :class:`ToolExecutor` (undated results dropped). Without one, every
        disagreement is a coverage gap ("no search configured").
    max_queries : int
        Maximum clarifying searches (one per named disagreement).
    max_results : int
        Results per search.
    temperature, max_tokens, seed
        Passed to the provider (max_tokens in tokens).
    search, max_search_results
        Deprecated names of ``executor`` and ``max_results`` (they warn; removed in the next release).
    """

    role = "supervisor"

    def __init__(
        self,
        llm: Provider,
        executor: ToolExecutor | SearchClient | None = None,
        max_queries: int = 3,
        max_results: int = 5,
        *,
        temperature: float | None = None,
        max_tokens: int | None = 400,
        seed: int | None = None,
        search: ToolExecutor | SearchClient | None = None,
        max_search_results: int | None = None,
    ) -> None:
        if search is not None:
            warnings.warn("SupervisorAgent(search=...) is deprecated; use executor=...", DeprecationWarning, stacklevel=2)
            executor = executor if executor is not None else search
        if max_search_results is not None:
            warnings.warn("SupervisorAgent(max_search_results=...) is deprecated; use max_results=...", DeprecationWarning, stacklevel=2)
            max_results = max_search_results
        if max_queries < 0:
            raise ValueError(f"max_queries must be >= 0, got {max_queries}")
        if max_results < 1:
            raise ValueError(f"max_results must be >= 1, got {max_results}")
        self.llm = llm
        if executor is not None and not isinstance(executor, ToolExecutor):
            executor = ToolExecutor(executor)
        self.executor: ToolExecutor | None = executor
        self.max_queries = max_queries
        self.max_results = max_results
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed

    # --- requests and answers ------------------------------------------------------------------------
    def prefix(self, question: VisibleQuestion, summaries: Sequence[AgentSummary]) -> list[ChatMessage]:
        """Stable prefix of both supervisor calls (the same as the debate's): system, case facts, the member cases
        (:func:`~agent_specialists.member_cases.render_member_cases`)."""
        return stable_prefix(question, render_member_cases(summaries, question.spec))

    def call_params(self, json_schema: dict[str, Any]) -> dict[str, Any]:
        """Provider call options of a supervisor call answering with ``json_schema``."""
        return dict(json_schema=json_schema, temperature=self.temperature, max_tokens=self.max_tokens, seed=self.seed)

    def disagreement_request(self, question: VisibleQuestion, summaries: Sequence[AgentSummary]) -> tuple[list[ChatMessage], dict[str, Any]]:
        """Messages and call options of the first call: name up to ``max_queries`` disagreements."""
        msgs = self.prefix(question, summaries) + [ChatMessage(
            role="user", content=prompts.disagreement_task(question.spec).format(max_queries=self.max_queries))]
        return msgs, self.call_params(prompts.disagreement_schema(self.max_queries))

    def read_disagreements(self, text: str) -> list[Disagreement]:
        """The disagreements named in the first answer (at most ``max_queries``; items without a topic skipped).

        Raises
        ------
        ForecastParseError
            When the answer is not JSON or has no ``disagreements`` list.
        """
        data = parse_json(text, required_keys=("disagreements",))
        items = data.get("disagreements")
        if not isinstance(items, list):
            raise ForecastParseError("supervisor answer has no 'disagreements' list", raw_text=text,
                                     field="disagreements", value=items)
        out = []
        for item in items[: self.max_queries]:
            if isinstance(item, dict) and str(item.get("topic", "")).strip():
                agents = item.get("agents") if isinstance(item.get("agents"), list) else []
                out.append(Disagreement(
                    topic=str(item["topic"]).strip(),
                    description=str(item.get("description", "")),
                    agents=[str(a) for a in agents],
                    query=(" ".join(str(item.get("query") or "").split()) or None),
                ))
        return out

    async def asearch(self, disagreements: list[Disagreement], cutoff_date: dt.date, *,
                      question: VisibleQuestion) -> tuple[list[str], list[SearchOutcome], list[CoverageNote]]:
        """Run one clarifying search per disagreement under ``cutoff_date``: ``(queries run, their outcomes,
        one coverage note per disagreement)``. A repeated query is searched once and its outcome reused;
        each disagreement's results are judged against ``question``'s text and that disagreement
        (:func:`agent_tools.relevance.judge_results`)."""
        queries, outcomes, coverage = [], [], []
        for d in disagreements:
            if self.executor is None:
                coverage.append(CoverageNote(topic=d.topic, status="gap", reason="no search client configured"))
                continue
            if not d.query:
                coverage.append(CoverageNote(topic=d.topic, status="gap", reason="no query proposed"))
                continue
            if d.query in queries:  # the same query twice: reuse its outcome, search once
                coverage.append(_coverage(question, d, outcomes[queries.index(d.query)], cutoff_date))
                continue
            outcome = await self.executor.aexecute_search(d.query, max_results=self.max_results, cutoff_date=cutoff_date)
            queries.append(d.query)
            outcomes.append(outcome)
            coverage.append(_coverage(question, d, outcome, cutoff_date))
        return queries, outcomes, coverage

    def decision_request(self, question: VisibleQuestion, summaries: Sequence[AgentSummary],
                         progress: SupervisorProgress) -> tuple[list[ChatMessage], dict[str, Any]]:
        """Messages and call options of the decision call: the disagreements with their coverage and the
        clarifying evidence found so far (``progress``; each result once, :func:`agent_tools.shown_results`),
        numbered after the members' evidence; records the numbered sources in ``progress.sources``."""
        members = prompts.summary_sources(summaries)
        results = shown_results(progress.outcomes)
        progress.sources = [*members, *results]
        msgs = self.prefix(question, summaries) + [ChatMessage(role="user", content="\n\n".join([
            prompts.render_disagreements(progress.disagreements, progress.coverage),
            "## CLARIFYING EVIDENCE\n" + (render_evidence(results, start=len(members) + 1) if results
                                          else "None obtained (see coverage gaps)."),
            prompts.decision_task(question.spec),
        ]))]
        return msgs, self.call_params(prompts.decision_schema(len(progress.sources), question.spec))

    def artifact(self, question: VisibleQuestion, progress: SupervisorProgress, text: str | None) -> SupervisorArtifact:
        """The :class:`SupervisorArtifact` of a run from its ``progress`` and the decision answer ``text``
        (parsed here: the forecast in the question's kind's form, a confidence of high, medium or low,
        rationale and evidence). A failed step, or
        an answer that does not parse, gives a failed artifact with the typed error and the usage spent."""
        if progress.error is None:
            try:
                parsed = parse_answer(text or "", question.spec, sources=progress.sources)
                confidence = str(parsed.data.get("confidence", "")).strip().lower()
                if confidence not in ("high", "medium", "low"):
                    raise ForecastParseError(f"confidence must be high, medium or low, got {parsed.data.get('confidence')!r}",
                                             raw_text=text, field="confidence", value=parsed.data.get("confidence"))
            except Exception as exc:
                progress.charge(spent_usage(exc))
                progress.fail(exc)
        common = dict(question_id=question.id, disagreements=progress.disagreements, queries=progress.queries,
                      search_outcomes=progress.outcomes, coverage=progress.coverage, usage=progress.usage)
        if progress.error is not None:
            return SupervisorArtifact(**common, status="failed", error=progress.error.to_info(),
                                      wall_time_s=time.perf_counter() - progress.t0)
        return SupervisorArtifact(**common, p_yes=parsed.p_yes, distribution=parsed.distribution, confidence=confidence,
                                  rationale=parsed.rationale,
                                  key_evidence=attach_provenance(parsed.key_evidence, progress.sources),
                                  wall_time_s=time.perf_counter() - progress.t0)

    # --- the three steps (each records its failure in ``progress`` and never raises) ---------------
    async def aname_disagreements(self, question: VisibleQuestion, summaries: Sequence[AgentSummary],
                                  progress: SupervisorProgress, *, ask: Ask | None = None) -> None:
        """Step 1: ask for the disagreements (none when ``max_queries`` is 0). ``ask`` routes the call
        (default: the supervisor's provider)."""
        if progress.error is not None or self.max_queries == 0:
            return
        try:
            with calling_as("disagreements"):
                text = await progress.call(ask or provider_ask(self.llm), *self.disagreement_request(question, summaries))
            progress.disagreements = self.read_disagreements(text)
        except Exception as exc:  # provider, parser or cache: a failed supervisor, not a failed question
            progress.fail(exc)

    async def aclarify(self, progress: SupervisorProgress, cutoff_date: dt.date, *, question: VisibleQuestion) -> None:
        """Step 2: the clarifying searches of the named disagreements about ``question`` (:meth:`asearch`)."""
        if progress.error is not None or self.max_queries == 0:
            return
        try:
            progress.queries, progress.outcomes, progress.coverage = await self.asearch(
                progress.disagreements, cutoff_date, question=question)
        except Exception as exc:  # a search tool that raised
            progress.fail(exc)

    async def adecide(self, question: VisibleQuestion, summaries: Sequence[AgentSummary],
                      progress: SupervisorProgress, *, ask: Ask | None = None) -> str | None:
        """Step 3: ask for the reconciled forecast; returns the answer text (None after a failure)."""
        if progress.error is not None:
            return None
        try:
            with calling_as("decision"):
                return await progress.call(ask or provider_ask(self.llm), *self.decision_request(question, summaries, progress))
        except Exception as exc:
            progress.fail(exc)
            return None

    def cutoff(self, question: VisibleQuestion, cutoff_date: dt.date | None) -> dt.date:
        """The clarifying searches' cutoff: ``cutoff_date`` or the question's forecast date.

        Raises
        ------
        ValueError
            For a cutoff after the forecast date (it would leak).
        """
        cutoff = cutoff_date or question.forecast_date
        if cutoff > question.forecast_date:
            raise ValueError(
                f"cutoff_date {cutoff} is after the question's forecast_date {question.forecast_date}: that would leak"
            )
        return cutoff

    # --- run ---------------------------------------------------------------------------------------
    async def arun(self, question: VisibleQuestion | Question, agent_summaries: Sequence[AgentSummary],
                   cutoff_date: dt.date | None = None, *, ask: Ask | None = None) -> SupervisorArtifact:
        """Run the supervisor (async): :meth:`aname_disagreements`, :meth:`aclarify`, :meth:`adecide`,
        :meth:`artifact`. Never raises for a failed step (provider, parser, cache, search or any other
        exception): the artifact is "failed" with the typed error and the usage spent.

        Parameters
        ----------
        question : VisibleQuestion or Question
            A :class:`Question` is reduced to its visible part first.
        agent_summaries : sequence of AgentSummary
        cutoff_date : date, optional
            Information cutoff for the clarifying searches; defaults to ``question.forecast_date``.
            A later date than the question's forecast date raises ValueError (it would leak).
        ask : callable, optional
            How the two calls reach a model (:data:`agent_providers.Ask`); default the supervisor's provider.
        """
        question = as_visible(question)
        cutoff = self.cutoff(question, cutoff_date)
        progress = SupervisorProgress()
        await self.aname_disagreements(question, agent_summaries, progress, ask=ask)
        await self.aclarify(progress, cutoff, question=question)
        text = await self.adecide(question, agent_summaries, progress, ask=ask)
        return self.artifact(question, progress, text)

    async def aweigh_members(self, question: str, forecast_date: dt.date, records: Sequence[MemberRecord], *,
                             ask: Ask | None = None) -> MemberWeighting:
        """Weights of a panel's members from their records (:mod:`agent_specialists.member_weights`): one call,
        never raises (a failure is ``error`` with the usage spent). ``ask`` routes the call (default the provider)."""
        return await aweigh_members(ask or provider_ask(self.llm), question, forecast_date, records,
                                    max_tokens=self.max_tokens, seed=self.seed, temperature=self.temperature)

    def run(self, question: VisibleQuestion | Question, agent_summaries: Sequence[AgentSummary], cutoff_date: dt.date | None = None) -> SupervisorArtifact:
        """Synchronous form of :meth:`arun`."""
        return run_sync(self.arun(question, agent_summaries, cutoff_date))


def _coverage(question: VisibleQuestion, d: Disagreement, outcome: SearchOutcome, cutoff_date: dt.date) -> CoverageNote:
    """The coverage note of disagreement ``d`` from its search's ``outcome``: supported by a result relevant
    to the question and ``d`` and dated on or before the cutoff, else a gap saying why."""
    topic = d.topic
    if not outcome.ok:
        transient = " (transient; a retry may succeed)" if outcome.is_transient else ""
        return CoverageNote(topic=topic, status="gap", reason=f"search failed: {outcome.failure_type}{transient}")
    if not outcome.results:
        dropped = outcome.dropped_after_cutoff + outcome.dropped_undated
        extra = f"; {dropped} dropped by the cutoff guard" if dropped else ""
        return CoverageNote(topic=topic, status="gap", reason=f"no results dated on or before the cutoff{extra}", evidence=[])
    evidence = judge_results(outcome.results, question=question.text, disagreement=f"{d.topic}\n{d.description}",
                             cutoff_date=cutoff_date,
                             question_url=question.url if question.question_type == "market" else None)
    n, counted = len(evidence), sum(e.counted for e in evidence)
    if counted:
        return CoverageNote(topic=topic, status="supported", evidence=evidence,
                            reason=f"{counted} of {n} results relevant to the question and dated on or before the cutoff")
    relevant = [e for e in evidence if e.relevant]
    undated = sum(e.published is None for e in relevant)
    own = sum(e.listing == "own" for e in evidence)
    listings = sum(e.listing not in ("", "own") for e in evidence)
    off_subject = sum(e.reason.startswith(NO_SUBJECT_REASON) for e in evidence)
    parts = [f"{own} the question's own listing, not evidence on it"] if own else []
    parts += [f"{listings} listing(s) of other forecasting questions, never evidence"] if listings else []
    parts += [f"{off_subject} not naming the question's subject"] if off_subject else []
    parts += [f"{undated} relevant but undated"] if undated else []
    if len(relevant) > undated:  # the cutoff guard drops these; a judgement never relies on it
        parts.append(f"{len(relevant) - undated} relevant but dated after the cutoff")
    why = "; ".join(parts) or "none relevant: too few content words shared with the question and the disagreement"
    return CoverageNote(topic=topic, status="gap", evidence=evidence,
                        reason=f"no relevant result dated on or before the cutoff ({n} results; {why})")
