"""A single LLM forecaster: question -> optional research -> prompt -> :class:`Forecast`."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agent_providers import Ask, Provider, UsageMeter, calling_as, provider_ask, run_sync
from agent_schemas import (
    ChatMessage,
    Forecast,
    ProviderTimeout,
    Question,
    ReconcileError,
    SearchOutcome,
    TokenUsage,
    VisibleQuestion,
    as_reconcile_error,
    as_visible,
)
from agent_tools import ToolExecutor, parse_json, render_evidence, shown_results
from agent_schemas.kinds import BinarySpec, KindSpec
from agent_tools.case_facts import stable_prefix
from agent_tools.provenance import attach_provenance
from agent_tools.parsing import forecast_json_schema, parse_answer, text_schema
from agent_research import prompts

log = logging.getLogger(__name__)


@dataclass
class MemberProgress(UsageMeter):
    """What one forecast run has spent (:class:`agent_providers.UsageMeter`) and found so far, updated as
    each call or search finishes, so a deadline that cancels the run keeps both."""

    outcomes: list[SearchOutcome] = field(default_factory=list)
    #: What the prompt says in place of the evidence when the member is shown no result although the searches found
    #: some (its share of a split is empty: :mod:`agent_research.evidence_modes`); None: the usual notes.
    empty_note: str | None = None
    #: The member searches only queries it writes itself (private evidence: :meth:`ForecasterAgent.gather_own_evidence`).
    own_queries: bool = False


#: How a member gets its evidence: ``await research(question, progress)`` appends the search outcomes the member
#: is shown to ``progress.outcomes`` and charges any call it makes to ``progress`` (default
#: :meth:`ForecasterAgent.gather_evidence`; :class:`agent_research.Ensemble` passes another for split evidence).
Research = Callable[[VisibleQuestion, MemberProgress], Awaitable[None]]

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
    then the evidence under an explicit header, then the role and task, and the persona last. Any failure inside a member (provider,
    parser, cache, search tool, or an exception no adapter maps) gives ``Forecast(status="failed")`` with
    the typed error and the usage spent so far; it never becomes a default probability.
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
    async def gather_evidence(self, question: VisibleQuestion, progress: MemberProgress) -> None:
        """Run this member's research on ``question`` (cutoff: its forecast date), appending each search
        outcome (failures included) to ``progress.outcomes`` and charging the query-writing call to ``progress``
        (:data:`Research`). Nothing without an executor or with ``n_queries == 0``.

        Queries: the question text (at most 200 characters), then with ``llm_queries`` up to
        ``n_queries - 1`` the model proposes (one call). With ``progress.own_queries`` (private evidence,
        :meth:`gather_own_evidence`) the model proposes all ``n_queries`` itself, its persona in the request, and
        the question text is searched only when it proposes none (the call failed or gave no query).
        """
        await self._research(question, progress)

    async def gather_own_evidence(self, question: VisibleQuestion, progress: MemberProgress) -> None:
        """:meth:`gather_evidence` on the member's own queries only (private evidence; a :data:`Research`)."""
        progress.own_queries = True
        await self.gather_evidence(question, progress)

    async def _queries(self, question: VisibleQuestion, progress: MemberProgress) -> list[str]:
        base = " ".join(question.text.split())[:200]
        own = progress.own_queries
        if own:  # private evidence: every query is the member's own; the question text only when it wrote none
            queries, wanted = [], self.n_queries
        else:
            queries = [base] if self.n_queries >= 1 else []
            wanted = self.n_queries - 1 if self.llm_queries else 0
        if wanted > 0:
            task = (prompts.FORECASTER_ROLE
                    + f"\n\n## TASK\nPropose {wanted} short web search queries that would find evidence "
                    'for this question. Answer with JSON: {"queries": ["...", "..."]}')
            persona = prompts.persona_line(self.persona) if own else None
            msgs = stable_prefix(question, "## EVIDENCE\nNot searched yet.") + [
                ChatMessage(role="user", content=task + ("\n\n" + prompts.PERSONA_HEADER + persona if persona else "")),
            ]
            params = dict(json_schema=QUERIES_JSON_SCHEMA, temperature=self.temperature, max_tokens=120, seed=self.seed)
            try:
                with calling_as("queries"):
                    text = await progress.call(provider_ask(self.llm), msgs, params)
                extra = parse_json(text, required_keys=("queries",)).get("queries", [])
                queries += [str(q).strip() for q in extra if str(q).strip()][:wanted]
            except Exception as exc:  # query writing is optional help: the question-text query still runs
                log.info("%s: query writing failed (%s); searching with the question text only", self.agent_id, type(exc).__name__)
        if own and not queries:
            log.info("%s: wrote no query of its own; searching with the question text", self.agent_id)
            queries = [base]
        return queries

    async def _research(self, question: VisibleQuestion, progress: MemberProgress) -> None:
        if self.executor is None or self.n_queries == 0:
            return
        for q in await self._queries(question, progress):
            progress.outcomes.append(
                await self.executor.aexecute_search(q, max_results=self.max_results, cutoff_date=question.forecast_date)
            )

    async def research(self, question: VisibleQuestion | Question) -> tuple[list[SearchOutcome], TokenUsage]:
        """Run the research queries with the question's forecast date as cutoff.

        Returns the search outcomes (failures included) and the usage of query writing.
        """
        question = as_visible(question)
        progress = MemberProgress()
        await self._research(question, progress)
        return progress.outcomes, progress.usage

    # --- prompt --------------------------------------------------------------------------------
    def build_messages(self, question: VisibleQuestion | Question, outcomes: list[SearchOutcome], *,
                       empty_note: str | None = None) -> list[ChatMessage]:
        """The forecaster prompt: :func:`agent_tools.case_facts.stable_prefix` with the evidence as
        context, then the role, the task and, last, the member's persona. ``empty_note`` replaces the evidence
        when ``outcomes`` show no result (:attr:`MemberProgress.empty_note`).

        Members of one ensemble share everything but the persona exactly (same system prompt, case facts,
        evidence, role and task), so providers with prompt caching process it once per question and each
        further member only its persona (measured: ``benchmarks/perf/main_job_profile.py``).
        """
        results = shown_results(outcomes)
        if self.executor is None or not outcomes:
            evidence = prompts.NO_EVIDENCE_NOTE
        elif not results and empty_note is not None:
            evidence = prompts.EVIDENCE_HEADER + "\n" + empty_note
        elif results:
            evidence = prompts.EVIDENCE_HEADER + "\n" + render_evidence(results)
        elif any(not o.ok for o in outcomes):
            failures = ", ".join(sorted({o.failure_type or "unknown" for o in outcomes if not o.ok}))
            evidence = prompts.SEARCH_FAILED_NOTE.format(failure=failures)
        else:
            evidence = prompts.EVIDENCE_HEADER + "\nThe searches returned no results dated on or before the forecast date."
        persona = prompts.persona_line(self.persona)
        tail = [prompts.FORECASTER_ROLE, prompts.forecaster_task(self.max_evidence, as_visible(question).spec)]
        tail += [prompts.PERSONA_HEADER + persona] if persona else []
        return stable_prefix(question, evidence) + [ChatMessage(role="user", content="\n\n".join(tail))]

    def call_params(self, outcomes: list[SearchOutcome] = (), spec: KindSpec = BinarySpec()) -> dict[str, Any]:
        """Provider call options of the forecast call after research ``outcomes`` on a question of ``spec``
        (answer schema in the kind's form, whose evidence cites one of the numbered results the prompt shows;
        temperature, max_tokens, seed)."""
        return dict(json_schema=forecast_json_schema(self.max_evidence, n_sources=len(shown_results(outcomes)), spec=spec),
                    temperature=self.temperature, max_tokens=self.max_tokens, seed=self.seed)

    # --- run -----------------------------------------------------------------------------------
    async def aforecast(self, question: VisibleQuestion | Question, *, timeout_s: float | None = None, ask: Ask | None = None,
                        research: Research | None = None) -> Forecast:
        """Forecast ``question`` (async). Never raises for a failure inside the member: see Notes.

        Parameters
        ----------
        question : VisibleQuestion or Question
            What the member may see; a :class:`Question` is reduced to :meth:`Question.visible` first.
        timeout_s : float, optional
            Deadline of the whole member (research and answer), seconds. Past it the member fails with
            ``ProviderTimeout`` and keeps the usage of every billed attempt: the calls that finished, the
            billed attempts of a call the deadline cut inside its retries, and the attempt in flight as
            ``unanswered_calls`` (tokens unknown; :class:`agent_schemas.TokenUsage`).
        ask : callable, optional
            ``await ask(messages, params) -> (text, usage)`` for the forecast call; default the member's
            provider. The framework implementations route the call through their own model client.
        research : callable, optional
            How the member gets its evidence (:data:`Research`), under the same deadline; default
            :meth:`gather_evidence` (its own searches). The ensemble passes another for split or private evidence.

        Raises
        ------
        asyncio.CancelledError
            When the caller cancels the run (never turned into a failed forecast).
        """
        question = as_visible(question)
        t0 = time.perf_counter()
        progress = MemberProgress()
        try:
            with calling_as("forecaster"):  # the query-writing call inside relabels itself
                return await asyncio.wait_for(self._forecast(question, progress, ask or provider_ask(self.llm), t0,
                                                             research or self._research), timeout=timeout_s)
        except asyncio.TimeoutError:  # _forecast turns every other exception into a failed forecast itself
            err = ProviderTimeout(f"member {self.agent_id} exceeded its {timeout_s} s deadline",
                                  timeout_s=timeout_s, provider=self.llm.spec)
            return self.artifact(question, progress, t0, error=err)

    async def _forecast(self, question: VisibleQuestion, progress: MemberProgress, ask: Ask, t0: float,
                        research: Research) -> Forecast:
        try:
            await research(question, progress)
            text = await progress.call(ask, self.build_messages(question, progress.outcomes, empty_note=progress.empty_note),
                                       self.call_params(progress.outcomes, question.spec))
        except Exception as exc:  # provider, cache or tool: this member fails, the question goes on
            return self.artifact(question, progress, t0, error=exc)
        return self.artifact(question, progress, t0, text)

    def artifact(self, question: VisibleQuestion, progress: MemberProgress, t0: float, text: str | None = None,
                 error: BaseException | None = None) -> Forecast:
        """The member's :class:`Forecast` from its answer ``text`` (parsed here: the forecast in the question's
        kind's form, rationale, stated confidence, evidence
        with provenance from the research in ``progress``), or the ``error`` that ended the run.

        An answer that does not parse, or any error, gives a failed forecast with the typed error, the
        usage spent and the research audit; ``t0`` is the ``time.perf_counter()`` of the start (latency).
        """
        if error is None:
            try:
                results = shown_results(progress.outcomes)
                parsed = parse_answer(text or "", question.spec, sources=results)
                return Forecast(
                    status="ok",
                    p_yes=parsed.p_yes,
                    distribution=parsed.distribution,
                    rationale=parsed.rationale,
                    key_evidence=attach_provenance(parsed.key_evidence, results),
                    confidence=parsed.confidence,
                    usage=progress.usage,
                    latency_s=time.perf_counter() - t0,
                    **_audit(progress.outcomes),
                    **self._identity(question),
                )
            except Exception as exc:  # parser or provenance: a failed member, not a failed question
                error = exc
        err = as_reconcile_error(error)
        if not isinstance(error, ReconcileError):
            log.warning("%s on %s failed with an unexpected %s: %s", self.agent_id, question.id, type(error).__name__, error)
        return Forecast(status="failed", error=err.to_info(), usage=progress.usage, latency_s=time.perf_counter() - t0,
                        **_audit(progress.outcomes), **self._identity(question))

    def _identity(self, question: VisibleQuestion) -> dict[str, Any]:
        return dict(question_id=question.id, agent_id=self.agent_id, model=self.llm.spec, persona=self.persona,
                    temperature=self.temperature)

    def forecast(self, question: VisibleQuestion | Question) -> Forecast:
        """Synchronous form of :meth:`aforecast`."""
        return run_sync(self.aforecast(question))


def _audit(outcomes: list[SearchOutcome]) -> dict[str, Any]:
    results = shown_results(outcomes)
    dates = [r.published for r in results if r.published is not None]
    return dict(
        n_evidence_dropped=sum(o.dropped_after_cutoff + o.dropped_undated for o in outcomes),
        n_evidence_in_prompt=len(results),
        latest_evidence_date=max(dates) if dates else None,
        queries=[o.attempted_query for o in outcomes],
        search_failures=[o.failure_type or "unknown" for o in outcomes if not o.ok],
    )
