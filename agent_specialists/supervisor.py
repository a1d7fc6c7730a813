"""SupervisorAgent: names the disagreements, runs clarifying searches under the cutoff date, reconciles.

Two model calls: (1) name up to ``max_queries`` disagreements, each with a search query; (2) after the
searches, give a reconciled ``p_yes`` with a confidence (high, medium, low). Every search outcome is
kept, failures included, and each disagreement gets a coverage note: "supported" when dated evidence
came back, "gap" with the reason otherwise. A failed search is a gap, never "no evidence".
"""

from __future__ import annotations

import datetime as dt
import time
import warnings
from collections.abc import Sequence

from agent_providers import Provider, run_sync
from agent_providers.base import spent_usage
from agent_schemas import (
    AgentSummary,
    ChatMessage,
    CoverageNote,
    Disagreement,
    ForecastParseError,
    Question,
    SearchOutcome,
    SupervisorArtifact,
    TokenUsage,
    VisibleQuestion,
    as_reconcile_error,
    as_visible,
)
from agent_specialists import prompts
from agent_tools import SearchClient, ToolExecutor, parse_forecast, parse_json, render_evidence
from agent_tools.case_facts import stable_prefix
from agent_tools.provenance import attach_provenance


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

    def _prefix(self, question: VisibleQuestion, summaries: Sequence[AgentSummary]) -> list[ChatMessage]:
        """Stable prefix of both supervisor calls (the same as the debate's): system, case facts, member summaries."""
        return stable_prefix(question, prompts.render_agent_summaries(summaries))

    def _parse_disagreements(self, text: str) -> list[Disagreement]:
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

    async def _search(self, disagreements: list[Disagreement], cutoff_date: dt.date) -> tuple[list[str], list[SearchOutcome], list[CoverageNote]]:
        queries, outcomes, coverage = [], [], []
        for d in disagreements:
            if self.executor is None:
                coverage.append(CoverageNote(topic=d.topic, status="gap", reason="no search client configured"))
                continue
            if not d.query:
                coverage.append(CoverageNote(topic=d.topic, status="gap", reason="no query proposed"))
                continue
            if d.query in queries:  # the same query twice: reuse its outcome, search once
                coverage.append(_coverage(d.topic, outcomes[queries.index(d.query)]))
                continue
            outcome = await self.executor.aexecute_search(d.query, max_results=self.max_results, cutoff_date=cutoff_date)
            queries.append(d.query)
            outcomes.append(outcome)
            coverage.append(_coverage(d.topic, outcome))
        return queries, outcomes, coverage

    async def arun(self, question: VisibleQuestion | Question, agent_summaries: Sequence[AgentSummary], cutoff_date: dt.date | None = None) -> SupervisorArtifact:
        """Run the supervisor (async). Never raises for a failed step (provider, parser, cache, search or any
        other exception): the artifact is "failed" with the typed error and the usage spent.

        Parameters
        ----------
        question : VisibleQuestion or Question
            A :class:`Question` is reduced to its visible part first.
        agent_summaries : sequence of AgentSummary
        cutoff_date : date, optional
            Information cutoff for the clarifying searches; defaults to ``question.forecast_date``.
            A later date than the question's forecast date raises ValueError (it would leak).
        """
        question = as_visible(question)
        cutoff = cutoff_date or question.forecast_date
        if cutoff > question.forecast_date:
            raise ValueError(
                f"cutoff_date {cutoff} is after the question's forecast_date {question.forecast_date}: that would leak"
            )
        t0 = time.perf_counter()
        usage = TokenUsage()
        disagreements: list[Disagreement] = []
        queries: list[str] = []
        outcomes: list[SearchOutcome] = []
        coverage: list[CoverageNote] = []
        try:
            if self.max_queries > 0:
                msgs = self._prefix(question, agent_summaries) + [ChatMessage(
                    role="user", content=prompts.SUPERVISOR_DISAGREEMENT_TASK.format(max_queries=self.max_queries))]
                c = await self.llm.acomplete(msgs, json_schema=prompts.disagreement_schema(self.max_queries),
                                             temperature=self.temperature, max_tokens=self.max_tokens, seed=self.seed)
                usage = usage + c.usage  # counted before parsing: a parse failure still spent the tokens
                disagreements = self._parse_disagreements(c.text)
                queries, outcomes, coverage = await self._search(disagreements, cutoff)
            results = [r for o in outcomes if o.ok for r in o.results]
            msgs = self._prefix(question, agent_summaries) + [
                ChatMessage(role="user", content="\n\n".join([
                    prompts.render_disagreements(disagreements, coverage),
                    "## CLARIFYING EVIDENCE\n" + (render_evidence(results) if results else "None obtained (see coverage gaps)."),
                    prompts.SUPERVISOR_DECISION_TASK,
                ])),
            ]
            c = await self.llm.acomplete(msgs, json_schema=prompts.DECISION_SCHEMA, temperature=self.temperature,
                                         max_tokens=self.max_tokens, seed=self.seed)
            usage = usage + c.usage
            parsed = parse_forecast(c.text)
            confidence = str(parsed.data.get("confidence", "")).strip().lower()
            if confidence not in ("high", "medium", "low"):
                raise ForecastParseError(f"confidence must be high, medium or low, got {parsed.data.get('confidence')!r}",
                                         raw_text=c.text, field="confidence", value=parsed.data.get("confidence"))
        except Exception as exc:  # provider, parser, cache or search tool: a failed supervisor, not a failed question
            usage = usage + spent_usage(exc)
            return SupervisorArtifact(question_id=question.id, disagreements=disagreements, queries=queries,
                                      search_outcomes=outcomes, coverage=coverage, usage=usage,
                                      status="failed", error=as_reconcile_error(exc).to_info(),
                                      wall_time_s=time.perf_counter() - t0)
        return SupervisorArtifact(
            question_id=question.id,
            disagreements=disagreements,
            queries=queries,
            search_outcomes=outcomes,
            p_yes=parsed.p_yes,
            confidence=confidence,  # type: ignore[arg-type]
            rationale=parsed.rationale,
            key_evidence=attach_provenance(parsed.key_evidence, results),
            coverage=coverage,
            usage=usage,
            wall_time_s=time.perf_counter() - t0,
        )

    def run(self, question: VisibleQuestion | Question, agent_summaries: Sequence[AgentSummary], cutoff_date: dt.date | None = None) -> SupervisorArtifact:
        """Synchronous form of :meth:`arun`."""
        return run_sync(self.arun(question, agent_summaries, cutoff_date))


def _coverage(topic: str, outcome: SearchOutcome) -> CoverageNote:
    if not outcome.ok:
        transient = " (transient; a retry may succeed)" if outcome.is_transient else ""
        return CoverageNote(topic=topic, status="gap", reason=f"search failed: {outcome.failure_type}{transient}")
    if not outcome.results:
        dropped = outcome.dropped_after_cutoff + outcome.dropped_undated
        extra = f"; {dropped} dropped by the cutoff guard" if dropped else ""
        return CoverageNote(topic=topic, status="gap", reason=f"no results dated on or before the cutoff{extra}")
    return CoverageNote(topic=topic, status="supported", reason=f"{len(outcome.results)} results dated on or before the cutoff")
