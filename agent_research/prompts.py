"""Prompt text of the forecaster agents (one module, imported by every orchestration of the pipeline)."""

from __future__ import annotations

from agent_schemas.kinds import BinarySpec, KindSpec, kind_of
from agent_tools.parsing import EVIDENCE_ITEM_FORMAT

FORECASTER_ROLE = (
    "## YOUR ROLE\nYou are a careful forecaster. You reason from base rates first, then adjust for "
    "specific evidence."
)

def forecaster_task(max_evidence: int = 2, spec: KindSpec = BinarySpec()) -> str:
    """The forecaster's task text for a question of ``spec``'s kind, asking for at most ``max_evidence`` key
    evidence items and the forecast in the kind's form (:meth:`~agent_schemas.kinds.base.QuestionKind.answer_request`)."""
    kind = kind_of(spec)
    return (
        "## TASK\n"
        "Give a one-sentence rationale (at most 200 characters), up to "
        f"{max_evidence} key evidence items taken from the evidence above (a claim and the number [n] of "
        "the search result it comes from), your confidence in this forecast (high, medium or low: low when "
        f"the evidence is thin or missing), and {kind.answer_request(spec)}. Answer with one JSON object only:\n"
        '{"rationale": "<text>", '
        f'"key_evidence": [{EVIDENCE_ITEM_FORMAT}], '
        f'"confidence": "high|medium|low", {kind.answer_template(spec)}}}'
    )


FORECASTER_TASK = forecaster_task()

EVIDENCE_HEADER = "## EVIDENCE (search results dated on or before the forecast date)"
NO_EVIDENCE_NOTE = "## EVIDENCE\nNo research was run for this forecast."
SEARCH_FAILED_NOTE = "## EVIDENCE\nResearch was attempted but the search failed ({failure}); treat evidence as missing, not as absent."

#: Personas give ensemble members different reasoning styles (diversity of members).
PERSONAS: dict[str, str] = {
    "base_rate": "You anchor on historical base rates of similar events and move away from them only for strong evidence.",
    "news": "You weigh the most recent dated evidence heavily and look for signs of change.",
    "skeptic": "You look for reasons the question could resolve contrary to the obvious expectation.",
    "statistician": "You reason about trends, volatility and the time remaining until resolution.",
}


#: Header of the persona, the last part of a member's prompt (what members do not share comes last).
PERSONA_HEADER = "## YOUR STYLE\n"


def persona_line(persona: str | None) -> str:
    """The persona sentence for ``persona`` (a key of :data:`PERSONAS` or free text); '' for None."""
    if not persona:
        return ""
    return PERSONAS.get(persona, persona)
