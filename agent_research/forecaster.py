"""A single LLM forecaster: question -> optional research -> prompt -> :class:`Forecast`."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from agent_providers import Provider
from agent_providers.base import spent_usage
from agent_schemas import (
    ChatMessage,
    Forecast,
    Question,
    ReconcileError,
    VisibleQuestion,
    as_visible,
    SearchOutcome,
    SearchResult,
    TokenUsage,
)
from agent_tools import ToolExecutor, parse_forecast, parse_json, render_evidence
from agent_tools.case_facts import stable_prefix
from agent_tools.provenance import attach_provenance
from agent_tools.parsing import forecast_json_schema, text_schema
from agent_research import prompts

QUERIES_JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"queries": {"type": "array", "maxItems": 5, "items": text_schema(80)}},
    "required": ["queries"],
}


class ForecasterAgent:
    """One forecaster: researches (optionally), then answers with ``p_yes``, a rationale and evidence.

    Parameters
    ----------
    llm : Provider
        Any provider (``get_provider("local/smollm2")``, ``ScriptedProvider``...).
    executor : ToolExecutor, optional
        Search with the cutoff-date leakage guard. No research when None.
    n_queries : int
        Research queries per question (k). The first is the question text itself; with
        ``llm_queries=True`` the model proposes the others (one extra call).
    max_results : int
        Results per query.
    persona : str, optional
        A key of :data:`agent_research.prompts.PERSONAS` or free text.
    temperature, max_tokens, seed
        Passed to the provider (max_tokens in tokens).
    agent_id : str
        Member name recorded in the forecast.
    max_evidence : int
        Most key-evidence items the answer may list (each costs about 60 generated tokens).

    Notes
    -----
    The prompt opens with the pinned case-facts block (:func:`agent_tools.case_facts.render_case_facts`),
    then the evidence under an explicit header, then the task. A provider error or an unparseable
    answer gives ``Forecast(status="failed")`` with the typed error; it never becomes a default
    probability.
    """

    role = "forecaster"

    def __init__(
        self,
        llm: Provider,
        *,
        executor: ToolExecutor | None = None,
        n_queries: int = 1,
        max_results: int = 5,
        llm_queries: bool = False,
        persona: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = 400,
        seed: int | None = None,
        agent_id: str = "forecaster",
        max_evidence: int = 2,
    ) -> None:
        if n_queries < 0:
            raise ValueError(f"n_queries must be >= 0, got {n_queries}")
        if max_results < 1:
            raise ValueError(f"max_results must be >= 1, got {max_results}")
        self.llm = llm
        self.executor = executor
        self.n_queries = n_queries
        self.max_results = max_results
        self.llm_queries = llm_queries
        self.persona = persona
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.agent_id = agent_id
        self.max_evidence = max_evidence

    def __repr__(self) -> str:
        return f"ForecasterAgent(agent_id={self.agent_id!r}, llm={self.llm!r}, persona={self.persona!r})"

    # --- research ------------------------------------------------------------------------------
    async def _queries(self, question: VisibleQuestion) -> tuple[list[str], TokenUsage]:
        base = " ".join(question.text.split())[:200]
        queries = [base] if self.n_queries >= 1 else []
        usage = TokenUsage()
        if self.llm_queries and self.n_queries > 1:
            msgs = stable_prefix(question, "## EVIDENCE\nNot searched yet.") + [
                ChatMessage(
                    role="user",
                    content=prompts.FORECASTER_ROLE
                    + f"\n\n## TASK\nPropose {self.n_queries - 1} short web search queries that would find evidence "
                    'for this question. Answer with JSON: {"queries": ["...", "..."]}',
                ),
            ]
            try:
                c = await self.llm.acomplete(msgs, json_schema=QUERIES_JSON_SCHEMA, temperature=self.temperature, max_tokens=120, seed=self.seed)
                usage = usage + c.usage
                extra = parse_json(c.text, required_keys=("queries",)).get("queries", [])
                queries += [str(q).strip() for q in extra if str(q).strip()][: self.n_queries - 1]
            except ReconcileError as exc:
                # query writing is optional help: the question-text query still runs; spent tokens still count
                usage = usage + spent_usage(exc)
        return queries, usage

    async def research(self, question: VisibleQuestion | Question) -> tuple[list[SearchOutcome], TokenUsage]:
        """Run the research queries with the question's forecast date as cutoff.

        Returns the search outcomes (failures included) and the usage of query writing.
        """
        question = as_visible(question)
        if self.executor is None or self.n_queries == 0:
            return [], TokenUsage()
        queries, usage = await self._queries(question)
        outcomes = []
        for q in queries:
            outcomes.append(
                await self.executor.aexecute_search(q, max_results=self.max_results, cutoff_date=question.forecast_date)
            )
        return outcomes, usage

    # --- prompt --------------------------------------------------------------------------------
    def build_messages(self, question: VisibleQuestion | Question, outcomes: list[SearchOutcome]) -> list[ChatMessage]:
        """The forecaster prompt: :func:`agent_tools.case_facts.stable_prefix` with the evidence as
        context, then the role, the member's persona and the task.

        Members of one ensemble share the prefix exactly (same system prompt, case facts and evidence),
        so providers with prompt caching process it once per question.
        """
        results = _dedupe([r for o in outcomes if o.ok for r in o.results])
        if self.executor is None or not outcomes:
            evidence = prompts.NO_EVIDENCE_NOTE
        elif results:
            evidence = prompts.EVIDENCE_HEADER + "\n" + render_evidence(results)
        elif any(not o.ok for o in outcomes):
            failures = ", ".join(sorted({o.failure_type or "unknown" for o in outcomes if not o.ok}))
            evidence = prompts.SEARCH_FAILED_NOTE.format(failure=failures)
        else:
            evidence = prompts.EVIDENCE_HEADER + "\nThe searches returned no results dated on or before the forecast date."
        persona = prompts.persona_line(self.persona)
        tail = "\n\n".join([prompts.FORECASTER_ROLE + (f" {persona}" if persona else ""), prompts.forecaster_task(self.max_evidence)])
        return stable_prefix(question, evidence) + [ChatMessage(role="user", content=tail)]

    # --- run -----------------------------------------------------------------------------------
    async def aforecast(self, question: VisibleQuestion | Question) -> Forecast:
        """Forecast ``question`` (async; a :class:`Question` is reduced to its visible part first). Never
        raises for provider or parse failures: see Notes."""
        question = as_visible(question)
        t0 = time.perf_counter()
        usage = TokenUsage()
        outcomes: list[SearchOutcome] = []
        common: dict[str, Any] = dict(
            question_id=question.id, agent_id=self.agent_id, model=self.llm.spec, persona=self.persona, temperature=self.temperature
        )
        try:
            outcomes, usage = await self.research(question)
            messages = self.build_messages(question, outcomes)
            completion = await self.llm.acomplete(
                messages, json_schema=forecast_json_schema(self.max_evidence), temperature=self.temperature, max_tokens=self.max_tokens, seed=self.seed
            )
            usage = usage + completion.usage
            parsed = parse_forecast(completion.text)
        except asyncio.CancelledError:
            raise
        except ReconcileError as exc:
            usage = usage + spent_usage(exc)
            return Forecast(status="failed", error=exc.to_info(), usage=usage, latency_s=time.perf_counter() - t0,
                            **_audit(outcomes), **common)
        results = _dedupe([r for o in outcomes if o.ok for r in o.results])
        return Forecast(
            status="ok",
            p_yes=parsed.p_yes,
            rationale=parsed.rationale,
            key_evidence=attach_provenance(parsed.key_evidence, results),
            usage=usage,
            latency_s=time.perf_counter() - t0,
            **_audit(outcomes),
            **common,
        )

    def forecast(self, question: VisibleQuestion | Question) -> Forecast:
        """Synchronous form of :meth:`aforecast`."""
        from agent_providers.base import _run_sync

        return _run_sync(self.aforecast(question))


def _dedupe(results: list[SearchResult]) -> list[SearchResult]:
    seen: set[tuple[str, str]] = set()
    out = []
    for r in results:
        key = (r.url, r.title)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def _audit(outcomes: list[SearchOutcome]) -> dict[str, Any]:
    results = _dedupe([r for o in outcomes if o.ok for r in o.results])
    dates = [r.published for r in results if r.published is not None]
    return dict(
        n_evidence_dropped=sum(o.dropped_after_cutoff + o.dropped_undated for o in outcomes),
        n_evidence_in_prompt=len(results),
        latest_evidence_date=max(dates) if dates else None,
        queries=[o.attempted_query for o in outcomes],
        search_failures=[o.failure_type or "unknown" for o in outcomes if not o.ok],
    )
