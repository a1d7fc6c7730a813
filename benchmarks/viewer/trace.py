"""One question as the run viewer shows it: a ``results.jsonl`` record turned into what its drill-down reads.

Everything is taken from the record itself (:class:`benchmarks.run_folder.record.QuestionRecord`): the case facts
from the prompts actually sent (``trace.recorded_calls``), members, aggregates, debate, supervisor, the
searches with each result marked as reaching a prompt or not, the path to the final probability, usage
by role, and what the harness held back from the agents (outcome, actual resolution date, crowd value).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import ValidationError

from agent_schemas import PipelineTrace, RecordedCall, UsageLedger
from agent_schemas.kinds import DEFAULT_KIND
from agent_tools.case_facts import CASE_FACTS_HEADER
from benchmarks.run_folder.record import QuestionRecord
from benchmarks.scoring.diversity import ambiguity_terms
from benchmarks.viewer.kind_figures import KindQuestionView, kind_question_view

__all__ = ["PathStep", "QuestionRow", "QuestionView", "ResultRow", "SearchRow", "case_facts_sent", "final_path", "question_listed",
           "question_row", "question_view", "search_rows"]


@dataclass(frozen=True)
class ResultRow:
    """One search result and whether it reached a prompt."""

    title: str
    url: str
    published: dt.date | None
    source: str
    snippet: str
    in_prompt: bool
    reason: str  # why it did not reach a prompt ("" when it did)


@dataclass(frozen=True)
class SearchRow:
    """One search: who ran it, its status, and its raw results (before the cutoff guard)."""

    who: str
    query: str
    status: str
    failure: str
    cutoff: str
    results: list[ResultRow]
    dropped_after_cutoff: int | None = None  # the guard's counts, when the guarded outcome is recorded
    dropped_undated: int | None = None


@dataclass(frozen=True)
class PathStep:
    """One step on the way to the final probability."""

    name: str
    p_yes: float | None
    note: str
    used: bool
    distribution: list[float] | None = None
    """The step's forecast of a question of another kind than binary (its kind's vector), else None."""


@dataclass(frozen=True)
class QuestionRow:
    """What the page's question list shows of one question (its row), read from the ``results.jsonl`` line as it
    is, without validating the whole record: cheap enough for every question of a large run.

    Attributes
    ----------
    text, source, forecast_date, status : str
        The question text (its id when the line has none), source, forecast date (ISO) and status.
    outcome : int or None
        0/1, None when unresolved.
    final_p_yes, mean_p_yes : float or None
        The pipeline's final p_yes and the ``mean`` method's (in [0, 1]).
    member_spread, method_range : float or None
        Largest minus smallest p_yes of the successful members, and over the methods (None below two).
    total_tokens : int or None
        Tokens of the question (input + output, every role); None when unknown.
    total_cost : float or None
        Its cost (USD); None when unknown.
    findings : int
        Leakage-audit findings.
    """

    text: str
    source: str
    forecast_date: str
    status: str
    outcome: int | None
    final_p_yes: float | None
    mean_p_yes: float | None
    member_spread: float | None
    method_range: float | None
    total_tokens: int | None
    total_cost: float | None
    findings: int


def question_row(raw: dict[str, Any]) -> QuestionRow:
    """The :class:`QuestionRow` of one parsed ``results.jsonl`` line (a field it lacks reads as missing)."""
    trace = raw.get("trace") if isinstance(raw.get("trace"), dict) else {}
    methods = raw.get("methods") if isinstance(raw.get("methods"), dict) else {}
    question = trace.get("question") if isinstance(trace.get("question"), dict) else {}
    try:
        total = UsageLedger.model_validate(trace.get("ledger") or {}).total()
        tokens, cost = total.total_tokens, total.cost_usd
    except ValidationError:
        tokens = cost = None
    return QuestionRow(
        text=str(question.get("text") or raw.get("question_id", "")), source=str(raw.get("source") or ""),
        forecast_date=str(raw.get("forecast_date") or ""), status=str(raw.get("status") or ""), outcome=raw.get("outcome"),
        final_p_yes=trace.get("final_p_yes"), mean_p_yes=(methods.get("mean") or {}).get("p_yes"),
        member_spread=_spread([f.get("p_yes") for f in trace.get("forecasts") or [] if f.get("status") == "ok"]),
        method_range=_spread([m.get("p_yes") for m in methods.values()]), total_tokens=tokens, total_cost=cost,
        findings=int((raw.get("audit") or {}).get("findings", 0)))


@dataclass
class QuestionView:
    """What the viewer shows for one question of one run (see the module docstring).

    ``record`` is None when the line could not be read as a :class:`QuestionRecord` (an older format);
    ``error`` then says why and ``raw`` keeps the fields that could be read.
    """

    index: int
    run_id: str
    question_id: str
    record: QuestionRecord | None
    error: str = ""
    raw: dict[str, Any] = field(default_factory=dict)
    case_facts: str | None = None
    case_fact_versions: int = 0
    member_spread: float | None = None
    method_range: float | None = None
    steps: list[PathStep] = field(default_factory=list)
    searches: list[SearchRow] = field(default_factory=list)
    usage_rows: list[dict[str, Any]] = field(default_factory=list)
    total_tokens: int | None = None
    total_cost: float | None = None
    scores: list[dict[str, Any]] = field(default_factory=list)
    crowd_p_yes: float | None = None
    prompts: list[RecordedCall] | None = None
    kind_view: KindQuestionView | None = None
    """A question of a kind with its own leaderboard (multiple choice, numeric...): its outcome and forecasts in the
    kind's words, each method's score by the kind's primary rule, and its figure
    (:func:`benchmarks.viewer.kind_figures.kind_question_view`); None for a binary question."""
    row: QuestionRow | None = None
    """Its row in the page's question list (:func:`question_row`)."""
    embedded: bool = True
    """False for a question whose whole trace the page does not embed (:data:`benchmarks.viewer.page.PAGE_TRACES`):
    ``record`` is then None and only ``row`` is read."""
    diversity: tuple[float, float, float] | None = None
    """The question's ambiguity decomposition (:func:`benchmarks.scoring.diversity.ambiguity_terms`): mean member
    Brier, Brier of the members' mean, diversity; members as scored (clipped to the combination rule's bounds).
    None without a successful member or an outcome."""

    @property
    def text(self) -> str:
        """The question text (the id when the record is unreadable)."""
        if self.record:
            return self.record.trace.question.text
        return self.row.text if self.row else str(self.raw.get("question_id", self.question_id))

    @property
    def findings(self) -> int:
        """Leakage-audit findings of this question (0 on a clean run)."""
        return int((self.record.audit if self.record else self.raw.get("audit", {})).get("findings", 0))


def case_facts_sent(calls: list[RecordedCall]) -> tuple[str | None, int]:
    """The case-facts block as the models received it, read from the prompts actually sent.

    Every agent prompt opens with the pinned block (:data:`agent_tools.case_facts.CASE_FACTS_HEADER`)
    followed by the next ``## `` section. Returns the first block found and the number of distinct blocks
    among all prompts (1 on a healthy run: the facts never drift between agents); ``(None, 0)`` when no
    prompt was recorded.
    """
    blocks: list[str] = []
    for call in calls:
        for m in call.messages:
            start = m.content.find(CASE_FACTS_HEADER)
            if start < 0:
                continue
            rest = m.content[start:]
            end = rest.find("\n## ", len(CASE_FACTS_HEADER))
            blocks.append((rest if end < 0 else rest[:end]).rstrip())
            break
    distinct = list(dict.fromkeys(blocks))
    return (distinct[0] if distinct else None), len(distinct)


def _prompt_links(calls: list[RecordedCall], roles: set[str]) -> tuple[set[str], str]:
    """The last word of every prompt line of ``roles`` (where rendered evidence puts its URL:
    ``[n] title — source, date — url``), and the prompts' whole text."""
    text = "\n".join(m.content for c in calls if c.role in roles for m in c.messages)
    return {line.split()[-1] for line in text.splitlines() if line.strip()}, text


def _result_key(url: str, title: str) -> str:
    """A result's identity across the cutoff guard, which trims titles and snippets but keeps URLs."""
    return url.strip() or title[:40]


def search_rows(trace: PipelineTrace) -> list[SearchRow]:
    """Every recorded search (``trace.recorded_searches``: raw outcomes, before the cutoff guard), with each
    result marked as reaching a prompt or not.

    A member's result reached a prompt when a forecaster prompt line ends with its URL (or, without a URL,
    holds its title); a
    supervisor result when the supervisor's guarded outcome kept it. A result that did not is explained
    by its date against the cutoff ("published after the cutoff", "undated") or else by the result limit
    ("over the result limit": the guard keeps the first ``max_results``). Members that ran one query get
    one row naming them all; supervisor searches with no raw recording are listed from their guarded
    outcome.
    """
    members_by_query: dict[str, list[str]] = {}
    for f in trace.forecasts:
        for q in f.queries:
            members_by_query.setdefault(q, []).append(f.agent_id)
    sup = trace.supervisor
    guarded = {o.attempted_query: o for o in sup.search_outcomes} if sup else {}
    member_links, member_prompts = _prompt_links(trace.recorded_calls, {"forecaster"})
    rows: list[SearchRow] = []
    seen: set[tuple[str, str, bool]] = set()  # members running one query get one row naming them all
    seen_supervisor: set[str] = set()
    for rec in trace.recorded_searches:
        query, outcome = rec.query, rec.outcome
        cutoff = rec.cutoff_date or trace.question.forecast_date.isoformat()
        by_supervisor = sup is not None and query in sup.queries and query not in members_by_query
        if (query, cutoff, by_supervisor) in seen:
            continue
        seen.add((query, cutoff, by_supervisor))
        kept_outcome = guarded.get(query) if by_supervisor else None
        kept_keys = {_result_key(r.url, r.title) for r in kept_outcome.results} if kept_outcome else set()
        results = []
        for r in outcome.results:
            published, url, title = r.published, r.url, r.title
            if by_supervisor:
                reached = _result_key(url, title) in kept_keys
            else:
                reached = url.strip() in member_links if url.strip() else bool(title) and title in member_prompts
            if reached:
                reason = ""
            elif published is None:
                reason = "undated"
            elif published.isoformat() > cutoff:
                reason = "published after the cutoff"
            else:
                reason = "over the result limit"
            results.append(ResultRow(title, url, published, r.source, r.snippet, reached, reason))
        who = "supervisor" if by_supervisor else ", ".join(members_by_query.get(query, [])) or "research"
        if by_supervisor:
            seen_supervisor.add(query)
        rows.append(SearchRow(
            who=who, query=query, status=outcome.status,
            failure=" ".join(str(v) for v in (outcome.failure_type, outcome.error_message) if v),
            cutoff=cutoff, results=results,
            dropped_after_cutoff=kept_outcome.dropped_after_cutoff if kept_outcome else None,
            dropped_undated=kept_outcome.dropped_undated if kept_outcome else None,
        ))
    for query, o in guarded.items():  # supervisor searches with no raw recording (e.g. a failed backend)
        if query in seen_supervisor:
            continue
        results = [ResultRow(r.title, r.url, r.published, r.source, r.snippet, True, "") for r in o.results]
        rows.append(SearchRow("supervisor", query, o.status, " ".join(v for v in (o.failure_type, o.error_message) if v),
                              o.cutoff_date.isoformat() if o.cutoff_date else "", results,
                              o.dropped_after_cutoff, o.dropped_undated))
    return rows


def final_path(trace: PipelineTrace) -> list[PathStep]:
    """The steps to the final probability: aggregate, debate, supervisor, clipping, final.

    Each step carries its own p_yes (the debate's midpoint, the supervisor's answer) and whether the
    combination used it, read from ``trace.final_source`` (written by
    :meth:`agent_research.combination.CombinationRule.combine`: ``aggregate -> debate(w=0.5) ->
    supervisor(high, w=1.0)``); a step that was not run, failed or got weight 0 is marked unused with the
    reason. The weights are in the step names, so the final value follows from the steps shown.
    """
    used = trace.final_source.split(" -> ") if trace.final_source else []
    steps = [PathStep(f"aggregate ({trace.aggregation_method})", trace.aggregate_p_yes,
                      f"{trace.n_ok} of {len(trace.forecasts)} members answered", "aggregate" in used,
                      trace.aggregate_distribution)]
    d = trace.debate
    if d is None:
        steps.append(PathStep("debate", None, "not run", False))
    else:
        step = next((s for s in used if s.startswith("debate")), "")
        note = (f"its p_yes: midpoint of bull {_side(trace, d.bull_final_probability)} and bear {_side(trace, d.bear_final_probability)} "
                f"after {len(d.rounds)} round(s)" + (", consensus" if d.consensus_reached else ""))
        if d.status != "ok":
            note = f"failed: {d.error.type if d.error else 'no probability'}"
        steps.append(PathStep(f"debate {step[len('debate'):]}".strip(), d.p_yes, note, bool(step), d.distribution))
    s = trace.supervisor
    if s is None:
        steps.append(PathStep("supervisor", None, "not run", False))
    else:
        step = next((x for x in used if x.startswith("supervisor")), "")
        effective = s.grounding.effective if s.grounding else s.confidence
        stated = f" (stated {s.confidence})" if s.confidence != effective else ""
        note = f"its p_yes, at confidence {effective or '—'}{stated}"
        if s.status != "ok":
            note = f"failed: {s.error.type if s.error else 'no probability'}"
        elif not step:
            note += ": weight 0, not used"
        steps.append(PathStep(f"supervisor {step[len('supervisor'):]}".strip(), s.p_yes, note, bool(step), s.distribution))
    clip = next((x for x in used if x.startswith("clip")), "")
    if clip:
        steps.append(PathStep(clip, None, "clipped so one confident miss cannot dominate a log loss", True))
    steps.append(PathStep("final", trace.final_p_yes, trace.final_source or trace.status, True, trace.final_distribution))
    return steps


def _p(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def _side(trace: PipelineTrace, x: float | list[float] | None) -> str:
    """A debater's final forecast in words: a probability (``0.62``), or the question's kind's text of a forecast
    vector (options' probabilities; a CDF's median and 90% interval)."""
    if x is None or not isinstance(x, list):
        return _p(x)
    return trace.question.kind.forecast_text(trace.question.spec, trace.question.kind.vector(x))


def _spread(values: list[float | None]) -> float | None:
    v = [x for x in values if x is not None]
    return (max(v) - min(v)) if len(v) >= 2 else None


def _kind_spread(trace: PipelineTrace) -> float | None:
    """How far the members of a question of another kind than binary are apart, by its kind's measure
    (:meth:`~agent_schemas.kinds.base.QuestionKind.spread`: on an option's probability; between medians, in units of
    the range); None with fewer than 2 forecasts."""
    kind, spec = trace.question.kind, trace.question.spec
    vectors = [kind.vector(f.distribution) for f in trace.forecasts if f.status == "ok" and f.distribution is not None]
    return kind.spread(spec, np.stack(vectors)) if len(vectors) >= 2 else None


def question_view(raw: dict[str, Any], *, index: int, run_id: str, with_prompts: bool, with_figure: bool = True,
                  figure_note: str = "") -> QuestionView:
    """Build the :class:`QuestionView` of one ``results.jsonl`` line.

    Parameters
    ----------
    raw : dict
        The parsed JSON line.
    index : int
        Position of the question in the page (its anchor ``#q-<index>``).
    run_id : str
        The run it belongs to.
    with_prompts : bool
        Keep the full prompts sent (``trace.recorded_calls``) for the drill-down.
    with_figure : bool
        Draw the figure of a question of a kind with its own leaderboard (:attr:`QuestionView.kind_view`); when
        False its drill-down says ``figure_note`` instead.

    Returns
    -------
    QuestionView
        With ``record=None`` and ``error`` set when the line is not a valid record: one unreadable
        line never stops the page.
    """
    qid = str(raw.get("question_id", f"#{index}"))
    try:
        rec = QuestionRecord.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        kept = {k: raw.get(k) for k in ("question_id", "status", "outcome", "source", "audit")}
        row = QuestionRow(text=qid, source=str(kept["source"]), forecast_date="", status="unreadable", outcome=kept["outcome"],
                          final_p_yes=None, mean_p_yes=None, member_spread=None, method_range=None, total_tokens=None,
                          total_cost=None, findings=int((kept["audit"] or {}).get("findings", 0)))
        return QuestionView(index, run_id, qid, None, error=f"unreadable record ({where}: {first.get('msg')})", raw=kept, row=row)
    t = rec.trace
    facts, versions = case_facts_sent(t.recorded_calls)
    method_ps = [m.get("p_yes") for m in rec.methods.values()]
    usage_rows = [{"method": e.method, "role": e.role, "model": e.model, "calls": e.usage.calls,
                   "input_tokens": e.usage.input_tokens, "output_tokens": e.usage.output_tokens,
                   "cost_usd": e.usage.cost_usd} for e in t.ledger.entries]
    total = t.ledger.total()
    scores = []
    for kind, table in (("method", rec.methods), ("baseline", rec.baselines)):
        for name, m in table.items():
            p = m.get("p_yes")
            brier = (p - rec.outcome) ** 2 if p is not None and rec.outcome is not None else None
            scores.append({"kind": kind, "name": name, "p_yes": p, "status": m.get("status", ""),
                           "note": m.get("note", ""), "brier": brier})
    ok = [f.p_yes for f in t.forecasts if f.status == "ok" and f.p_yes is not None]
    rule = t.combination_rule or {}
    lo, hi = float(rule.get("clip_low", 0.0)), float(rule.get("clip_high", 1.0))
    terms = (tuple(float(x[0]) for x in ambiguity_terms([[min(max(p, lo), hi) for p in ok]], [int(rec.outcome)]))
             if ok and rec.outcome in (0, 1) and rec.status == "ok" else None)
    return QuestionView(
        index=index, run_id=run_id, question_id=rec.question_id, record=rec, diversity=terms,
        case_facts=facts, case_fact_versions=versions,
        member_spread=_spread([f.p_yes for f in t.forecasts if f.status == "ok"]) if t.question.kind.name == DEFAULT_KIND
        else _kind_spread(t),
        method_range=_spread(method_ps),
        steps=final_path(t), searches=search_rows(t), usage_rows=usage_rows,
        total_tokens=total.total_tokens, total_cost=total.cost_usd, scores=scores,
        crowd_p_yes=(rec.baselines.get("crowd") or {}).get("p_yes"),
        prompts=list(t.recorded_calls) if with_prompts else None, row=question_row(raw),
        kind_view=None if t.question.kind.name == DEFAULT_KIND else  # binary questions have the page's own sections
        kind_question_view(t.question.kind, rec, with_figure=with_figure, salt=f"q{index}-", budget_note=figure_note),
    )


def question_listed(raw: dict[str, Any], *, index: int, run_id: str) -> QuestionView:
    """The :class:`QuestionView` of a question the page lists without embedding its trace: its row only
    (:func:`question_row`, the line not validated), ``embedded`` False. A line whose row cannot be read is listed as
    ``unreadable`` (one such line never stops the page)."""
    try:
        row = question_row(raw)
    except (AttributeError, TypeError, ValueError):  # e.g. a forecast that is not an object
        row = QuestionRow(text=str(raw.get("question_id", f"#{index}")), source=str(raw.get("source") or ""), forecast_date="",
                          status="unreadable", outcome=None, final_p_yes=None, mean_p_yes=None, member_spread=None,
                          method_range=None, total_tokens=None, total_cost=None, findings=0)
    return QuestionView(index=index, run_id=run_id, question_id=str(raw.get("question_id", f"#{index}")), record=None, row=row,
                        embedded=False, member_spread=row.member_spread, method_range=row.method_range,
                        total_tokens=row.total_tokens, total_cost=row.total_cost,
                        raw={k: raw.get(k) for k in ("question_id", "status", "outcome", "source", "audit")})
