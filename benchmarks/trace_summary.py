"""A short, human-readable summary of a pipeline trace: probabilities per step and tokens per role."""

from __future__ import annotations

from agent_schemas import PipelineTrace, Question


def _pct(p: float | None) -> str:
    return "failed" if p is None else f"{p:.3f}"


def summarise_trace(trace: PipelineTrace, question: Question | None = None) -> str:
    """Render ``trace`` as plain text (Markdown-friendly).

    The trace holds the question as the agents saw it; pass the full ``question`` record to also print
    what the harness held back (outcome, crowd probability).
    """
    q = trace.question
    lines = [f"question {q.id}: {q.text}", f"forecast date {q.forecast_date}"]
    if question is not None:
        lines[-1] += f", outcome {question.outcome}, crowd {question.crowd_p_yes} (held back from the agents)"
    for f in trace.forecasts:
        extra = f"error {f.error.type}" if f.error else f"{f.n_evidence_in_prompt} evidence items"
        lines.append(f"  {f.agent_id} [{f.persona}] p_yes {_pct(f.p_yes)} ({extra})")
    lines.append("  aggregates: " + ", ".join(f"{k} {_pct(v)}" for k, v in trace.aggregates.items()))
    if trace.debate is not None:
        d = trace.debate
        rounds = "; ".join(f"r{r.round_number} bull {_pct(r.bull.p_yes)} bear {_pct(r.bear.p_yes)}" for r in d.rounds)
        lines.append(f"  debate: {rounds} -> midpoint {_pct(d.p_yes)} (consensus {d.consensus_reached})")
    if trace.supervisor is not None:
        s = trace.supervisor
        gaps = sum(c.status == "gap" for c in s.coverage)
        lines.append(f"  supervisor: p_yes {_pct(s.p_yes)} confidence {s.confidence}, {len(s.disagreements)} disagreements, {gaps} coverage gaps")
    lines.append(f"  final p_yes {_pct(trace.final_p_yes)} via {trace.final_source}")
    lines.append("  tokens by role: " + ", ".join(
        f"{role} {u.input_tokens or 0}+{u.output_tokens or 0} ({u.calls} calls)" for role, u in trace.ledger.by_role().items()))
    lines.append(f"  wall time {trace.wall_time_s:.1f} s")
    return "\n".join(lines)
