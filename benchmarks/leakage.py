"""The leakage audit: read the prompts a run actually sent and look for what was unknowable on the forecast date.

The cutoff guard (:class:`agent_tools.ToolExecutor`) and the visible question
(:meth:`agent_schemas.Question.visible`) keep hindsight out of prompts by construction. This audit checks
the result independently, from the prompts recorded in each trace (``PipelineTrace.recorded_calls``), with
the facts only the harness holds (the outcome and the actual resolution date). It counts, per question:

``prompts_scanned``
    Provider requests whose messages were recorded.
``evidence_in_prompt`` / ``dropped_by_cutoff_guard``
    Search results shown in the members' prompts and the supervisor's decision prompt (each prompt shows a
    result once, :func:`agent_tools.shown_results`), and results the guard dropped.
``evidence_dated_after_cutoff``
    Evidence items rendered into a prompt with a publication date after the forecast date. The two
    renderers' date labels are read: search results (``[n] title — source, YYYY-MM-DD — url``) and
    member evidence in summaries (``- evidence [n]: claim [source, YYYY-MM-DD]``).
``hindsight_resolution_date``
    Prompts that contain the question's actual resolution date (ISO ``2026-02-02`` or ``February 2,
    2026``) where it differs from the close date shown to forecasters and does not occur in the visible
    question itself; also prompts stating a horizon derived from it (``horizon N days``).
``hindsight_outcome``
    Prompts that state the outcome next to the question: its id, source id or text followed within 100
    characters by "resolved (to) Yes/No" or "outcome: Yes/No/0/1", or a line "Outcome: ...".

``findings`` is the sum of the last three; a clean run has 0. The counts are heuristics with a known
direction: they can flag a legitimate text that happens to match (a false alarm is read in the run
viewer), but a planted actual resolution date, outcome statement or late evidence item is always found.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable

from agent_schemas import PipelineTrace, Question
from agent_tools import shown_results

__all__ = ["AUDIT_KEYS", "audit_prompts", "leakage_audit"]

#: Keys of :func:`leakage_audit`, in report order.
AUDIT_KEYS: tuple[str, ...] = (
    "prompts_scanned", "evidence_in_prompt", "dropped_by_cutoff_guard", "evidence_dated_after_cutoff",
    "hindsight_resolution_date", "hindsight_outcome", "findings",
)

_ISO = r"(\d{4}-\d{2}-\d{2})"
#: Date labels of rendered evidence: ``agent_tools.evidence.render_evidence`` item headers and the
#: member summaries of ``agent_specialists.prompts.render_agent_summaries``.
_EVIDENCE_DATE_RES = (
    re.compile(rf"^\s*\[\d+\] .*? — .*?, {_ISO}(?: — |\s*$)", re.M),
    re.compile(rf"^\s*- evidence(?: \[\d+\])?: .*\[[^\[\]]*, {_ISO}\]\s*$", re.M),
)
_OUTCOME_STATEMENT = r"(?:resolved(?:\s+to)?\s+(?:yes|no)\b|outcome\W{0,3}(?:yes|no|0|1)\b)"
_OUTCOME_LINE = re.compile(r"^\W*outcome\s*[:=]\s*(?:yes|no|0|1|true|false)\b", re.I | re.M)


def _date_spellings(d: dt.date) -> list[str]:
    return [d.isoformat(), f"{d.strftime('%B')} {d.day}, {d.year}"]


def evidence_dates(text: str) -> list[dt.date]:
    """Publication dates of the evidence items rendered in ``text`` (see the module docstring)."""
    out = []
    for rx in _EVIDENCE_DATE_RES:
        for m in rx.finditer(text):
            try:
                out.append(dt.date.fromisoformat(m.group(1)))
            except ValueError:
                continue
    return out


def audit_prompts(prompts: Iterable[str], question: Question) -> dict[str, int]:
    """Scan prompt texts for hindsight about ``question`` (harness-side facts: outcome, actual resolution date).

    Parameters
    ----------
    prompts : iterable of str
        Each prompt as one text (its messages joined).
    question : Question
        The full question record.

    Returns
    -------
    dict of str to int
        ``prompts_scanned``, ``evidence_dated_after_cutoff``, ``hindsight_resolution_date``,
        ``hindsight_outcome`` (counts; see the module docstring).
    """
    visible = question.visible(show_crowd=True)
    visible_text = "\n".join(str(v) for v in (visible.text, visible.background, visible.resolution_criteria,
                                               visible.freeze_value_explanation or "") if v)
    hidden_dates: list[str] = []
    hidden_horizon: re.Pattern[str] | None = None
    rd = question.resolution_date
    if rd is not None and rd != visible.scheduled_close_date:
        hidden_dates = [s for s in _date_spellings(rd) if s not in visible_text]
        days = (rd - question.forecast_date).days
        if visible.days_to_scheduled_close != days:
            hidden_horizon = re.compile(rf"\bhorizon\W{{1,3}}{days}\s*days?\b", re.I)
    anchors = [re.escape(a) for a in {question.id, question.source_question_id or "", question.text.strip()[:120]} if a]
    near = re.compile(rf"(?:{'|'.join(anchors)})[\s\S]{{0,100}}?{_OUTCOME_STATEMENT}", re.I) if anchors else None
    counts = {"prompts_scanned": 0, "evidence_dated_after_cutoff": 0, "hindsight_resolution_date": 0, "hindsight_outcome": 0}
    for text in prompts:
        counts["prompts_scanned"] += 1
        counts["evidence_dated_after_cutoff"] += sum(d > question.forecast_date for d in evidence_dates(text))
        if any(s in text for s in hidden_dates) or (hidden_horizon is not None and hidden_horizon.search(text)):
            counts["hindsight_resolution_date"] += 1
        if (near is not None and near.search(text)) or _OUTCOME_LINE.search(text):
            counts["hindsight_outcome"] += 1
    return counts


def leakage_audit(trace: PipelineTrace, question: Question) -> dict[str, int]:
    """The audit counts of one question (keys :data:`AUDIT_KEYS`), from its trace and its full record.

    Raises
    ------
    ValueError
        If ``trace`` is not a trace of ``question`` (ids differ).
    """
    if trace.question.id != question.id:
        raise ValueError(f"trace of {trace.question.id!r} audited against question {question.id!r}")
    prompts = ["\n\n".join(m.content for m in call.messages) for call in trace.recorded_calls if call.messages]
    counts = audit_prompts(prompts, question)
    dropped = sum(f.n_evidence_dropped for f in trace.forecasts)
    in_prompt = sum(f.n_evidence_in_prompt for f in trace.forecasts)
    if trace.supervisor is not None:
        dropped += sum(o.dropped_after_cutoff + o.dropped_undated for o in trace.supervisor.search_outcomes)
        in_prompt += len(shown_results(trace.supervisor.search_outcomes))  # as the decision prompt numbers them
    findings = counts["evidence_dated_after_cutoff"] + counts["hindsight_resolution_date"] + counts["hindsight_outcome"]
    out = {"evidence_in_prompt": in_prompt, "dropped_by_cutoff_guard": dropped, **counts, "findings": findings}
    return {k: int(out[k]) for k in AUDIT_KEYS}
