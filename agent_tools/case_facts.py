"""The pinned "case facts" block that opens every agent prompt.

The block restates the question exactly as given (question, resolution criteria, forecast date,
resolution date, key numbers) and is never summarised or rewritten by any agent: each prompt
rebuilds it from the :class:`agent_schemas.Question`, so the facts cannot drift across debate rounds or
pipeline stages. Question text comes from the question source and is shown as-is.
"""

from __future__ import annotations

from agent_schemas import Question

CASE_FACTS_HEADER = "## CASE FACTS (pinned; restated verbatim, never summarised)"


def render_case_facts(question: Question, *, background_chars: int = 1200) -> str:
    """Render the pinned case-facts block for ``question``.

    Parameters
    ----------
    question : Question
        The question; its text and resolution criteria are included verbatim.
    background_chars : int
        Background is trimmed to this many characters (the rest is not needed to state the case).

    Returns
    -------
    str
        A Markdown block starting with :data:`CASE_FACTS_HEADER`.
    """
    lines = [
        CASE_FACTS_HEADER,
        f"- Question: {question.text.strip()}",
        f"- Forecast date (information cutoff): {question.forecast_date.isoformat()}",
        f"- Resolution date: {question.resolution_date.isoformat() if question.resolution_date else 'not given'}",
    ]
    if question.resolution_criteria.strip():
        lines.append(f"- Resolution criteria: {question.resolution_criteria.strip()}")
    key_numbers = _key_numbers(question)
    if key_numbers:
        lines.append(f"- Key numbers: {key_numbers}")
    if question.background.strip():
        bg = question.background.strip()
        if len(bg) > background_chars:
            bg = bg[: background_chars - 1] + "…"
        lines.append(f"- Background: {bg}")
    return "\n".join(lines)


def _key_numbers(question: Question) -> str:
    parts = []
    if question.horizon_days is not None:
        parts.append(f"horizon {question.horizon_days} days")
    freeze = question.metadata.get("freeze_value_explanation")
    value = question.metadata.get("freeze_value")
    if freeze and value is not None:
        parts.append(f"{freeze}: {value}")
    return "; ".join(parts)
