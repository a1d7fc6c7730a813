"""An ensemble of forecasters run concurrently, with an explicit failure policy.

Pattern from Metaculus forecasting-tools ``ForecastBot``: gather with exceptions captured, require a
minimum fraction of successful members, keep each failed member with its typed error, aggregate
only the successes and say so.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import math
import time
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from pydantic import BaseModel, Field

from agent_providers import Ask, Provider, run_sync
from agent_schemas import Forecast, MemberEvidence, Question, SearchResult, TokenUsage, VisibleQuestion, as_visible
from agent_schemas.kinds import AnySpec, BinarySpec, QuestionKind, kind_of
from agent_research.config import EVIDENCE_MODES, EvidenceMode, MemberSettings
from agent_research.evidence_modes import deal, result_names
from agent_research.forecaster import ForecasterAgent, MemberProgress, Research
from agent_research.prompts import PERSONAS
from agent_tools import ToolExecutor, shown_results


#: The evidence of a member whose share of a split is empty while other members' are not.
EMPTY_SHARE_NOTE = ("The search results for this question were divided among the forecasters, and your share is empty: "
                    "you were shown none of them. Forecast from the case facts.")


class EnsembleResult(BaseModel):
    """Every member's forecast (failures included) and whether the success policy was met."""

    question_id: str
    spec: AnySpec = Field(default_factory=BinarySpec, description="The question's kind spec: how its forecasts pool.")
    forecasts: list[Forecast] = Field(description="One per member, in member order; failed ones carry their error.")
    n_members: int
    n_ok: int
    min_success_fraction: float
    policy_met: bool = Field(description="n_ok / n_members >= min_success_fraction (and n_ok >= 1).")
    usage: TokenUsage = Field(description="Usage summed over members (tokens, calls, USD).")
    wall_time_s: float = Field(0.0, description="Wall time of the ensemble in seconds.")
    aggregates: dict[str, float | list[float] | None] | None = Field(
        None, description="Aggregates of the successful members computed in advance, by method (p_yes in [0, 1], or the "
                          "kind's vector; None where none): a given ensemble's, vectorised over many questions "
                          "(GivenForecasts). None: aggregate() computes them.")
    shown: dict[str, list[SearchResult]] | None = Field(
        None, description="Split or private evidence: member agent id -> the search results its prompt showed, in order "
                          "(what the debate and the supervisor are shown too). None with shared evidence.")
    member_evidence: MemberEvidence | None = Field(
        None, description="Split or private evidence: the same, by result name, with the split's pool and seed (the trace's record).")

    @property
    def kind(self) -> QuestionKind:
        """The question's kind (:mod:`agent_schemas.kinds`)."""
        return kind_of(self.spec)

    @property
    def ok_forecasts(self) -> list[Forecast]:
        return [f for f in self.forecasts if f.ok]

    def stack(self) -> np.ndarray:
        """Members' forecast vectors as shape (n_members, size), a row of NaN for a failed member."""
        kind, size = self.kind, self.kind.size(self.spec)
        rows = [kind.forecast_of(f) if f.ok else None for f in self.forecasts]
        return np.array([np.full(size, np.nan) if r is None else r for r in rows], dtype=float).reshape(len(rows), size)

    def p_yes_row(self) -> np.ndarray:
        """Member probabilities of a binary question as shape (n_members,), NaN for failed members."""
        return np.array([f.p_yes if f.ok and f.p_yes is not None else np.nan for f in self.forecasts], dtype=float)

    def aggregate(self, method: str = "mean") -> float | list[float] | None:
        """The successful members pooled by ``method`` (a rule of the question's kind: ``kind.pools``), in the
        kind's stored form (p_yes for binary, a list otherwise); None if none succeeded. A method of
        :attr:`aggregates` is read from there."""
        if self.n_ok == 0:
            return None
        if self.aggregates is not None and method in self.aggregates:
            return self.aggregates[method]
        return self.kind.value(self.kind.pool(method, self.stack()[None])[0])

    def spread(self) -> float:
        """How far the successful members are apart (the kind's :meth:`~agent_schemas.kinds.base.QuestionKind.spread`:
        max - min p_yes for binary); 0.0 for fewer than 2."""
        ok = self.stack()[[f.ok for f in self.forecasts]]
        return self.kind.spread(self.spec, ok)


class Ensemble:
    """M forecasters answering the same question concurrently.

    Parameters
    ----------
    members : sequence of ForecasterAgent
        The members (same or different providers, models, temperatures, personas). Their
        ``agent_id`` values must be unique.
    concurrency : int
        Maximum members running at once (asyncio semaphore).
    member_timeout_s : float, optional
        Per-member deadline in seconds; a member past it is recorded as failed with ``ProviderTimeout``
        and the usage of every attempt it made (see :meth:`ForecasterAgent.aforecast`).
    min_success_fraction : float
        Fraction of members that must succeed for ``policy_met`` (0 < f <= 1).
    evidence : {"shared", "split", "private"}
        Who sees which search results (:mod:`agent_research.evidence_modes` defines the three). "split" makes
        one research pass per question, the first member's, and deals its results among the members.
    seed : int, optional
        Seeds the split's deal (with the question id); the run's seed (``PipelineConfig.seed``).

    Raises
    ------
    ValueError
        For an empty member list, duplicate agent ids, an unknown evidence mode or parameters out of range.
    """

    def __init__(
        self,
        members: Sequence[ForecasterAgent],
        *,
        concurrency: int = 4,
        member_timeout_s: float | None = 300.0,
        min_success_fraction: float = 0.5,
        evidence: EvidenceMode = "shared",
        seed: int | None = None,
    ) -> None:
        if evidence not in EVIDENCE_MODES:
            raise ValueError(f"unknown evidence mode {evidence!r}; valid: {', '.join(EVIDENCE_MODES)}")
        if not members:
            raise ValueError("members is empty: an ensemble needs at least one forecaster")
        ids = [m.agent_id for m in members]
        if len(set(ids)) != len(ids):
            raise ValueError(f"member agent_id values must be unique, got {ids}")
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        if not 0 < min_success_fraction <= 1:
            raise ValueError(f"min_success_fraction must be in (0, 1], got {min_success_fraction}")
        if member_timeout_s is not None and member_timeout_s <= 0:
            raise ValueError(f"member_timeout_s must be > 0 seconds, got {member_timeout_s}")
        self.members = list(members)
        self.concurrency = concurrency
        self.member_timeout_s = member_timeout_s
        self.min_success_fraction = min_success_fraction
        self.evidence: EvidenceMode = evidence
        self.seed = seed
        self._fresh_state()

    def _fresh_state(self) -> None:
        #: split: question id -> (the one research pass in flight or done, what it found and spent)
        self._passes: dict[str, tuple[asyncio.Future, MemberProgress]] = {}
        #: split or private: question id -> member agent id -> the results its prompt showed
        self._shown: dict[str, dict[str, list[SearchResult]]] = {}

    def __copy__(self) -> "Ensemble":
        """A shallow copy with its own per-question evidence state (a replay runs on a copy)."""
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._fresh_state()
        return clone

    @classmethod
    def from_providers(
        cls,
        providers: Sequence[Provider] | Provider,
        *,
        n_members: int = 3,
        executor: ToolExecutor | None = None,
        personas: Sequence[str | None] | None = None,
        temperatures: Sequence[float | None] | None = None,
        seed: int | None = 0,
        member: MemberSettings | None = None,
        max_tokens: int | None = 400,
        **kwargs,
    ) -> "Ensemble":
        """Build ``n_members`` forecasters cycling over providers, personas and temperatures.

        Default personas cycle through :data:`agent_research.prompts.PERSONAS`; default temperatures
        are 0.7 for every member (diversity without randomness across runs comes from the per-member
        seed ``seed + i``). ``member`` holds the settings every member shares (research queries, results
        per query, evidence items; default :class:`MemberSettings`) and ``max_tokens`` the generated-token
        limit of each call (tokens). ``seed`` also seeds a split's deal. Remaining keyword arguments (``evidence``...)
        go to :class:`Ensemble`.
        """
        provs = [providers] if isinstance(providers, Provider) else list(providers)
        if not provs:
            raise ValueError("providers is empty")
        personas = list(personas) if personas is not None else list(PERSONAS)
        temperatures = list(temperatures) if temperatures is not None else [0.7]
        shared = (member or MemberSettings()).model_dump()
        members = [
            ForecasterAgent(
                provs[i % len(provs)],
                executor=executor,
                persona=personas[i % len(personas)] if personas else None,
                temperature=temperatures[i % len(temperatures)],
                seed=None if seed is None else seed + i,
                agent_id=f"member-{i}",
                max_tokens=max_tokens,
                **shared,
            )
            for i in range(n_members)
        ]
        return cls(members, seed=seed, **kwargs)

    async def arun(self, question: VisibleQuestion | Question, *, cutoff_date: dt.date | None = None) -> EnsembleResult:
        """Run every member on ``question``; never raises for member failures (each is a failed forecast
        with its typed error and spent usage; a member past ``member_timeout_s`` keeps the usage of every
        attempt it made, the one in flight as an unanswered call). A :class:`Question` is reduced to its visible part first.
        ``cutoff_date`` caps every member's searches (default the forecast date; :meth:`aforecast_member`)."""
        question = as_visible(question)
        sem = asyncio.Semaphore(self.concurrency)
        t0 = time.perf_counter()

        async def one(member: ForecasterAgent) -> Forecast:
            async with sem:
                return await self.aforecast_member(member, question, cutoff_date=cutoff_date)

        forecasts = list(await asyncio.gather(*(one(m) for m in self.members)))
        return self.result(question, forecasts, time.perf_counter() - t0)

    async def aforecast_member(self, member: ForecasterAgent, question: VisibleQuestion, *, ask: Ask | None = None,
                               cutoff_date: dt.date | None = None) -> Forecast:
        """One member's forecast under this ensemble's deadline (``member_timeout_s``) and evidence mode; never raises
        for a failure inside the member (see :meth:`ForecasterAgent.aforecast`, which also explains ``ask`` and
        ``cutoff_date``, the date its searches are capped at)."""
        return await member.aforecast(question, timeout_s=self.member_timeout_s, ask=ask, cutoff_date=cutoff_date,
                                      research=self.research_of(member))

    def result(self, question: VisibleQuestion, forecasts: list[Forecast], wall_time_s: float) -> EnsembleResult:
        """The :class:`EnsembleResult` of ``forecasts`` (one per member) under this ensemble's success policy, with
        what each member was shown under split or private evidence (the question's evidence state ends here)."""
        n_ok = sum(f.ok for f in forecasts)
        need = math.ceil(self.min_success_fraction * len(forecasts) - 1e-12)
        shown, evidence = self._evidence_of(question)
        return EnsembleResult(
            question_id=question.id,
            spec=question.spec,
            forecasts=forecasts,
            n_members=len(forecasts),
            n_ok=n_ok,
            min_success_fraction=self.min_success_fraction,
            policy_met=n_ok >= max(1, need),
            usage=TokenUsage.sum(f.usage for f in forecasts),
            wall_time_s=wall_time_s,
            shown=shown,
            member_evidence=evidence,
        )

    def _evidence_of(self, question: VisibleQuestion) -> tuple[dict[str, list[SearchResult]] | None, MemberEvidence | None]:
        shown = self._shown.pop(question.id, {})
        task, found = self._passes.pop(question.id, (None, None))
        if self.evidence == "shared":
            return None, None
        shown = {m.agent_id: shown[m.agent_id] for m in self.members if m.agent_id in shown}  # member order
        pool = shown_results(found.outcomes) if task is not None and task.done() and not task.cancelled() and task.exception() is None else []
        name = result_names([*pool, *(r for rs in shown.values() for r in rs)])
        return shown, MemberEvidence(
            mode=self.evidence, seed=self.seed if self.evidence == "split" else None,
            pool=[name[r.url, r.title] for r in pool], shown={a: [name[r.url, r.title] for r in rs] for a, rs in shown.items()})

    def research_of(self, member: ForecasterAgent) -> Research | None:
        """How ``member`` gets its evidence under :attr:`evidence` (:data:`agent_research.forecaster.Research`): None
        for shared (the member's own :meth:`~ForecasterAgent.gather_evidence`), its share of the question's one
        research pass for split, its own queries for private. Split and private remember what the member was shown
        for :meth:`result`."""
        if self.evidence == "shared":
            return None
        index = next((i for i, m in enumerate(self.members) if m is member), None)
        if index is None:
            raise ValueError(f"{member.agent_id} is not a member of this ensemble")
        gather = self._share(index) if self.evidence == "split" else member.gather_own_evidence

        async def research(question: VisibleQuestion, progress: MemberProgress, cutoff_date: dt.date | None) -> None:
            await gather(question, progress, cutoff_date)
            self._shown.setdefault(question.id, {})[member.agent_id] = shown_results(progress.outcomes)

        return research

    def _share(self, index: int) -> Research:
        async def share(question: VisibleQuestion, progress: MemberProgress, cutoff_date: dt.date | None) -> None:
            if question.id not in self._passes:  # the first member to ask starts the question's one pass
                found = MemberProgress()
                self._passes[question.id] = (asyncio.ensure_future(self.members[0].gather_evidence(question, found, cutoff_date)), found)
            task, found = self._passes[question.id]
            try:
                await asyncio.shield(task)  # a member's deadline does not cancel the others' pass
            finally:  # the query-writing call, if any, is the first member's (what it spent by then, if its deadline passes first)
                if index == 0:
                    progress.charge(found.usage)
            shares = deal(shown_results(found.outcomes), len(self.members), self.seed, question.id)
            mine = {(r.url, r.title) for r in shares[index]}
            progress.outcomes.extend(o.model_copy(update={"results": [r for r in o.results if (r.url, r.title) in mine]})
                                     for o in found.outcomes)
            if not mine and any(shares):
                progress.empty_note = EMPTY_SHARE_NOTE

        return share

    def run(self, question: VisibleQuestion | Question) -> EnsembleResult:
        """Synchronous form of :meth:`arun`."""
        return run_sync(self.arun(question))


class GivenForecasts:
    """An ensemble whose members' forecasts are given rather than run: a panel of people, or an earlier run.

    It answers :meth:`arun` as :class:`Ensemble` does, so a :class:`agent_research.ForecastPipeline` built on it
    (``ForecastPipeline.from_config(..., ensemble=GivenForecasts(...))``) aggregates the given forecasts and
    its debate and supervisor read their probabilities and rationales (each member's rationale cut to one
    line of 300 characters, as for forecasters that ran: :meth:`agent_schemas.Forecast.summary`). No
    provider is called for the members and no member is run: :attr:`members` is empty.

    A question's members are the forecasts given for it; a forecaster who gave none for a question is
    absent from it, not failed. Every given forecast with ``status="ok"`` counts as a success, so the
    policy is met when at least one was given (``min_success_fraction`` is 1.0 over the forecasts given);
    a question with none gives a failed ensemble (0 of 0 members).

    Parameters
    ----------
    forecasts : iterable of Forecast
        Every given forecast; ``question_id`` says which question each belongs to, and ``agent_id`` (the
        forecaster) must be unique within a question.
    aggregates : mapping of str to mapping of str to float or None, optional
        Every method's aggregate of each question's given forecasts computed in advance, ``{question_id:
        {method: p_yes}}`` (a panel's, vectorised over all its questions: :func:`benchmarks.panels.pool_probabilities`;
        None or NaN where none), handed to the pipeline in :attr:`EnsembleResult.aggregates` instead of being
        computed per question. They must be the aggregates of these forecasts (not checked: the caller computes
        them from the same rows); a method or question they lack is computed as usual.

    Raises
    ------
    ValueError
        When a forecaster gave two forecasts for one question.

    Examples
    --------
    >>> from agent_schemas import Forecast
    >>> given = GivenForecasts([Forecast(question_id="q1", agent_id="ann", p_yes=0.2, rationale="base rate"),
    ...                         Forecast(question_id="q1", agent_id="bob", p_yes=0.6)])
    >>> given.result_for("q1").aggregate("mean")
    0.4
    """

    def __init__(self, forecasts: Iterable[Forecast],
                 aggregates: Mapping[str, Mapping[str, float | list[float] | None]] | None = None) -> None:
        #: No forecaster agents to run (the pipeline wraps and replays only the agents it runs).
        self.members: list[ForecasterAgent] = []
        #: The aggregates given with the forecasts, by question (NaN read as None; a kind's vector kept as a list).
        self.aggregates = {q: {m: _given_aggregate(v) for m, v in row.items()} for q, row in (aggregates or {}).items()}
        self.by_question: dict[str, list[Forecast]] = {}
        seen: set[tuple[str, str]] = set()  # (question, forecaster): one look-up per forecast, not a scan of the question's
        for f in forecasts:
            pair = (f.question_id, f.agent_id)
            if pair in seen:
                raise ValueError(f"forecaster {f.agent_id!r} gave two forecasts for question {f.question_id!r}")
            seen.add(pair)
            self.by_question.setdefault(f.question_id, []).append(f)

    def result_for(self, question_id: str, wall_time_s: float = 0.0, spec: AnySpec | None = None) -> EnsembleResult:
        """The :class:`EnsembleResult` of the forecasts given for ``question_id`` (none: a failed ensemble), a
        question of ``spec`` (default binary)."""
        forecasts = list(self.by_question.get(question_id, []))
        n_ok = sum(f.ok for f in forecasts)
        return EnsembleResult(question_id=question_id, spec=spec or BinarySpec(), forecasts=forecasts, n_members=len(forecasts), n_ok=n_ok,
                              min_success_fraction=1.0, policy_met=n_ok >= 1,
                              usage=TokenUsage.sum(f.usage for f in forecasts), wall_time_s=wall_time_s,
                              aggregates=self.aggregates.get(question_id))

    async def arun(self, question: VisibleQuestion | Question, *, cutoff_date: dt.date | None = None) -> EnsembleResult:
        """The given forecasts of ``question`` (:meth:`result_for` its id); nothing is run (nothing searches:
        ``cutoff_date`` is accepted as :meth:`Ensemble.arun` takes it)."""
        q = as_visible(question)
        return self.result_for(q.id, spec=q.spec)

    def run(self, question: VisibleQuestion | Question) -> EnsembleResult:
        """Synchronous form of :meth:`arun`."""
        q = as_visible(question)
        return self.result_for(q.id, spec=q.spec)


def _given_aggregate(value: float | list[float] | None) -> float | list[float] | None:
    """A given aggregate as stored: None for a missing one (None or NaN), a float p_yes, or a kind's vector."""
    if value is None:
        return None
    if isinstance(value, (list, tuple, np.ndarray)):
        arr = np.asarray(value, dtype=float)
        return None if np.isnan(arr).any() else arr.tolist()
    return None if value != value else float(value)
