"""Human-readable pipeline traces: a short summary, and the full explanation the ``forecast`` command prints.

:func:`explain_trace` says what every step did: each member's p_yes and rationale, the aggregates, each
debate turn, the supervisor's disagreements, searches and decision with its reasoning, and the
combination arithmetic in words (:func:`combination_in_words`, computed by the pipeline's own
:meth:`agent_research.CombinationRule.steps`). Text written by models is printed on one line each with
control characters removed.

A question of any kind (:mod:`agent_schemas.kinds`) is explained the same way: a binary forecast is written
``p_yes 0.620`` (three decimals, as the combination arithmetic is), any other in its kind's own words
(:meth:`~agent_schemas.kinds.base.QuestionKind.forecast_text`: ``Arsenal 40%, Liverpool 35%, ...``;
``median 1,200; 90% in [900, 1,600] admissions``).
"""

from __future__ import annotations

from typing import Any

from agent_research import CombinationRule, CombinationStep
from agent_schemas import PipelineTrace, Question
from agent_schemas.questions import QuestionFacts
from benchmarks.questions.browse import short_id

__all__ = ["combination_in_words", "explain_trace", "summarise_trace"]


def _pct(p: float | None) -> str:
    return "failed" if p is None else f"{p:.3f}"


def _value(q: QuestionFacts, value: float | list[float] | None) -> str:
    """A forecast of ``q`` in its stored form (a binary question's p_yes, a float; the kind's vector, a list) in
    words: ``0.620``, or the kind's :meth:`~agent_schemas.kinds.base.QuestionKind.forecast_text`."""
    if isinstance(value, (int, float)):
        return f"{value:.3f}"
    return q.kind.forecast_text(q.spec, q.kind.vector(value))


def _said(q: QuestionFacts, value: float | list[float] | None) -> str:
    """:func:`_value` named: ``p_yes 0.620`` (a kind's own words already say what they are)."""
    return f"p_yes {value:.3f}" if isinstance(value, (int, float)) else _value(q, value)


def _said_of(q: QuestionFacts, obj: Any, prefix: str = "") -> str:
    """:func:`_said` of the forecast an artifact holds in ``prefix`` + its kind's stored field (``p_yes``,
    ``distribution``)."""
    return _said(q, q.kind.value(q.kind.forecast_of(obj, prefix)))


def _text(text: str, limit: int = 300) -> str:
    """Model text on one line, control characters removed, cut to ``limit`` characters."""
    line = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _step_words(step: CombinationStep, rule: CombinationRule, method: str, q: QuestionFacts) -> str:
    if step.kind == "aggregate":
        return f"aggregate ({method}) {_value(q, step.p_after)}"
    if step.kind == "clip":
        bounds = f"[{rule.clip_low:g}, {rule.clip_high:g}]"
        return f"clipped to {bounds}: {_value(q, step.p_after)}" + ("" if step.status == "applied" else " (unchanged)")
    stated = f", stated {step.reported_confidence}" if step.reported_confidence not in (None, step.confidence) else ""
    name = "debate midpoint" if step.kind == "debate" else f"supervisor ({step.confidence} confidence{stated})"
    if step.status == "not run":
        return f"no {step.kind}"
    if step.status == "failed":
        return f"{step.kind} failed: left out"
    if step.status == "ignored":
        return f"{name} {_value(q, step.value)} ignored (weight 0)"
    if step.weight == 1:
        return f"{name} replaces it: {_value(q, step.p_after)}"
    w = step.weight or 0.0
    if isinstance(step.value, (int, float)):
        return (f"{name} {step.value:.3f} blended with weight {w:g} "
                f"({1 - w:g} x {step.p_before:.3f} + {w:g} x {step.value:.3f}) = {step.p_after:.3f}")
    return (f"{name} ({_value(q, step.value)}) blended with weight {w:g}: {1 - w:g} x the estimate + {w:g} x its forecast "
            f"(a mixture) = {_value(q, step.p_after)}")


def combination_in_words(trace: PipelineTrace) -> str:
    """The trace's combination arithmetic in words, e.g. ``aggregate (mean) 0.100 -> debate midpoint
    0.300 blended with weight 0.5 (0.5 x 0.100 + 0.5 x 0.300) = 0.200 -> supervisor (high confidence)
    replaces it: 0.300 -> clipped to [0.01, 0.99]: 0.300 (unchanged)``; '' when there is no aggregate."""
    q = trace.question
    aggregate = q.kind.value(q.kind.forecast_of(trace, "aggregate_"))
    if aggregate is None:
        return ""
    rule = CombinationRule.from_description(trace.combination_rule) if trace.combination_rule else CombinationRule()
    steps = rule.steps(aggregate, trace.debate, trace.supervisor, q.spec)
    return " -> ".join(_step_words(s, rule, trace.aggregation_method, q) for s in steps)


def summarise_trace(trace: PipelineTrace, question: Question | None = None) -> str:
    """Render ``trace`` as a few plain lines (Markdown-friendly): probabilities per step and tokens per role.

    The trace holds the question as the agents saw it; pass the full ``question`` record to also print
    what the harness held back (outcome, crowd probability).
    """
    q = trace.question
    lines = [f"question {q.id}: {q.text}", f"forecast date {q.forecast_date}"]
    if question is not None:
        lines[-1] += f", outcome {question.outcome}, crowd {_crowd(question)} (held back from the agents)"
    for f in trace.forecasts:
        extra = f"error {f.error.type}" if f.error else f"{f.n_evidence_in_prompt} evidence items"
        stated = f" confidence {f.confidence}" if f.confidence else ""
        lines.append(f"  {f.agent_id} [{f.persona}] {_said_of(q, f)}{stated} ({extra})")
    lines.append("  aggregates: " + ", ".join(f"{k} {_said(q, v)}" for k, v in trace.aggregates.items()))
    if trace.debate is not None:
        d = trace.debate
        rounds = "; ".join(f"r{r.round_number} bull {_said_of(q, r.bull)} bear {_said_of(q, r.bear)}" for r in d.rounds)
        lines.append(f"  debate: {rounds} -> midpoint {_said_of(q, d)} (consensus {d.consensus_reached})")
    if trace.supervisor is not None:
        s = trace.supervisor
        gaps = sum(c.status == "gap" for c in s.coverage)
        effective = s.grounding.effective if s.grounding else s.confidence
        lines.append(f"  supervisor: {_said_of(q, s)} confidence {effective} (stated {s.confidence}), "
                     f"{len(s.disagreements)} disagreements, {gaps} coverage gaps")
    if trace.confidence is not None:
        flags = f" [{', '.join(trace.confidence.flags)}]" if trace.confidence.flags else ""
        lines.append(f"  overall confidence {trace.confidence.overall} (weakest link){flags}")
    lines.append(f"  final {_said_of(q, trace, 'final_')} via {trace.final_source}")
    words = combination_in_words(trace)
    if words:
        lines.append(f"  combination: {words}")
    lines.append("  tokens by role: " + ", ".join(
        f"{role} {u.input_tokens or 0}+{u.output_tokens or 0} ({u.calls} calls)" for role, u in trace.ledger.by_role().items()))
    lines.append(f"  wall time {trace.wall_time_s:.1f} s")
    return "\n".join(lines)


def _crowd(question: Question) -> str:
    """The crowd's forecast at freeze of ``question`` (held back from the agents) in words; ``none`` without one."""
    if question.crowd_p_yes is not None:
        return f"{question.crowd_p_yes:.3f}"
    crowd = question.kind.crowd(question)
    return "none" if crowd is None else question.kind.forecast_text(question.spec, crowd)


def _aggregate_lines(trace: PipelineTrace) -> list[str]:
    """The aggregates of the members' forecasts: one line for a binary question's p_yes, one per pooling rule for
    a kind whose forecast is a vector (each line in the kind's words)."""
    q = trace.question
    if isinstance(q.kind.value(q.kind.uninformed(q.spec)), float):  # the kind's stored form is one probability
        return ["AGGREGATES of the members' p_yes: " + ", ".join(f"{k} {_pct(v)}" for k, v in trace.aggregates.items())]
    return [f"AGGREGATES of the members' {q.kind.label} forecasts (the pipeline continues from {trace.aggregation_method}):",
            *(f"  {k}: {_said(q, v)}" for k, v in trace.aggregates.items())]


def explain_trace(trace: PipelineTrace, question: Question | None = None) -> str:
    """Every step of ``trace`` in words (what the ``forecast`` command prints); see the module docstring.

    ``question`` (the full record) adds what the harness held back from the agents: outcome and crowd.
    """
    q = trace.question
    out = [f"QUESTION {short_id(q.id)} (forecast date {q.forecast_date}, {q.source}): {_text(q.text, 400)}"]
    if question is not None:
        outcome = "unresolved" if question.outcome is None else question.kind.outcome_text(question.spec, question.outcome)
        out.append(f"  held back from the agents: outcome {outcome}; crowd probability at freeze {_crowd(question)}")
    out += ["", f"MEMBERS ({trace.n_ok} of {len(trace.forecasts)} answered)"]
    for f in trace.forecasts:
        head = f"  {f.agent_id} [{f.persona or 'no persona'}, {f.model}]"
        if not f.ok:
            out.append(f"{head} failed: {f.error.type}: {_text(f.error.message, 200)}")
            continue
        searched = f"; searched {', '.join(repr(_text(x, 60)) for x in f.queries)}" if f.queries else ""
        stated = f", confidence {f.confidence}" if f.confidence else ""
        out.append(f"{head} {_said_of(q, f)}{stated} ({f.n_evidence_in_prompt} evidence items in its prompt{searched})")
        out.append(f"      rationale: {_text(f.rationale)}")
    out += [""] + _aggregate_lines(trace)
    d = trace.debate
    out.append("")
    if d is None:
        out.append("DEBATE: not run" + (" (the ensemble failed)" if trace.status == "failed" else ""))
    else:
        stop = "consensus reached" if d.consensus_reached else "no consensus"
        out.append(f"DEBATE ({len(d.rounds)} round{'s' * (len(d.rounds) != 1)}, {stop}; starts from the aggregate "
                   f"{_said_of(q, d, 'aggregate_')}; its forecast is the midpoint (mean) of the final bull and bear: {_said_of(q, d)})")
        for r in d.rounds:
            for turn in (r.bull, r.bear):
                label = f"  round {r.round_number} {turn.side:<4}"
                if turn.status != "ok":
                    out.append(f"{label} failed: {turn.error.type if turn.error else 'unknown'}")
                else:
                    out.append(f"{label} {_said_of(q, turn)}: {_text(turn.argument)}")
    s = trace.supervisor
    out.append("")
    if s is None:
        out.append("SUPERVISOR: not run")
    else:
        out.append(f"SUPERVISOR ({len(s.disagreements)} disagreement{'s' * (len(s.disagreements) != 1)} named)")
        for i, dis in enumerate(s.disagreements, 1):
            agents = f" ({', '.join(dis.agents)})" if dis.agents else ""
            out.append(f"  {i}. {_text(dis.topic, 80)}: {_text(dis.description, 160)}{agents}")
            cov = next((c for c in s.coverage if c.topic == dis.topic), None)
            search = f"search {_text(dis.query, 80)!r}" if dis.query else "no search"
            out.append(f"     {search} -> {cov.status if cov else '?'}{': ' + _text(cov.reason, 120) if cov and cov.reason else ''}")
            for e in (cov.evidence or []) if cov else []:  # each result as judged (agent_tools.relevance)
                out.append(f"       {'counted' if e.counted else 'not counted'}: {_text(e.title, 70)!r}: {_text(e.reason, 120)}")
        if s.status != "ok":
            out.append(f"  decision failed: {s.error.type if s.error else 'unknown'}: {_text(s.error.message if s.error else '', 200)}")
        else:
            out.append(f"  decision: {_said_of(q, s)}, confidence stated {s.confidence}")
            out.append(f"  reasoning: {_text(s.rationale)}")
            if s.grounding is not None:
                why = "; ".join(s.grounding.reasons) or ("every named disagreement is supported by a relevant result "
                                                          "dated on or before the cutoff")
                out.append(f"  grounded confidence: {s.grounding.effective} ({why})")
    qc = trace.confidence
    if qc is not None:
        stated = ", ".join(f"{a} {c or 'none'}" for a, c in qc.by_agent.items())
        flags = f"; QA flags: {', '.join(qc.flags)}" if qc.flags else ""
        out += ["", f"CONFIDENCE overall {qc.overall or 'none stated'} (the weakest link of: {stated}){flags}"]
        out += [f"  {note}" for note in qc.notes]
    out.append("")
    rule = trace.combination_rule
    if trace.status == "failed" or q.kind.forecast_of(trace, "final_") is None:
        reason = f"{trace.error.type}: {_text(trace.error.message, 200)}" if trace.error else "no final probability"
        out.append(f"FINAL: failed ({reason})")
    else:
        weights = rule.get("supervisor_weights", {})
        out.append(f"COMBINATION (debate weight {rule.get('debate_weight', '?')}; supervisor weight by grounded confidence: "
                   + ", ".join(f"{k} {v:g}" for k, v in weights.items()) + "; 1 replaces, 0 ignores)")
        out.append(f"  {combination_in_words(trace)}")
        out.append(f"FINAL {_said_of(q, trace, 'final_')}")
    total = trace.ledger.total()
    cost = "unknown" if total.cost_usd is None else f"${total.cost_usd:.4f}"
    out += ["", "TOKENS by role: " + ", ".join(
        f"{role} {u.input_tokens or 0:,} in + {u.output_tokens or 0:,} out ({u.calls} call{'s' * (u.calls != 1)})" for role, u in trace.ledger.by_role().items())
        + f"; cost {cost}; wall time {trace.wall_time_s:.1f} s"]
    return "\n".join(out)
