"""Prompt text and answer schemas of the reconciliation specialists (bull, bear, supervisor).

Answer schemas ask for an integer percent (``p_yes_percent``, an ``enum`` of 0..100) because the
embedded llama.cpp grammar enforces integer enums but ignores ``minimum``/``maximum``; the parser still
validates every value.
"""

from __future__ import annotations

from typing import Any

from agent_tools.evidence import fence
from agent_tools.parsing import EVIDENCE_ITEM_FORMAT, evidence_list_schema, probability_schema, text_schema

DEBATE_ROLE = {
    side: (
        f"## YOUR ROLE\nYou are the {side.upper()} in a structured forecasting debate between a BULL and a BEAR: "
        f"argue that the probability of Yes is {direction} than the current estimate. Answer the other side's "
        "last argument directly. Be honest: if the other side is right, move your probability."
    )
    for side, direction in (("bull", "HIGHER"), ("bear", "LOWER"))
}

DEBATE_TASK = (
    "## TASK\nGive your argument (at most 200 characters), your probability that the question resolves Yes as "
    "an integer percent, and up to 1 key evidence item (a claim and the number [n] of the forecasters' "
    "evidence it comes from). Answer with one JSON object only:\n"
    '{"argument": "<text>", '
    f'"key_evidence": [{EVIDENCE_ITEM_FORMAT}], '
    '"p_yes_percent": <integer 0-100>}'
)


def debate_schema(n_sources: int) -> dict[str, Any]:
    """JSON schema of a debate turn: ``argument``, at most one evidence item citing one of the
    ``n_sources`` numbered member evidence items (:func:`summary_sources`), then ``p_yes_percent``."""
    return {
        "type": "object",
        "properties": {"argument": text_schema(), "key_evidence": evidence_list_schema(1, n_sources),
                       **probability_schema("p_yes_percent")},
        "required": ["argument", "key_evidence", "p_yes_percent"],
    }


SUPERVISOR_ROLE = (
    "## YOUR ROLE\nYou are the SUPERVISOR. The forecasters above answered the same question and disagree. "
    "You name the specific points of disagreement, look for evidence that settles them (dated on or before "
    "the forecast date), and give a reconciled probability."
)

SUPERVISOR_DISAGREEMENT_TASK = (
    SUPERVISOR_ROLE.replace("{", "{{").replace("}", "}}") + "\n\n"
    "## TASK\nName up to {max_queries} specific points on which the forecasters disagree, and for each a short "
    "web search query that could settle it. Answer with one JSON object only:\n"
    '{{"disagreements": [{{"topic": "<text>", "description": "<the positions taken>", '
    '"agents": ["<member id>"], "query": "<search query>"}}]}}'
)

def disagreement_schema(max_items: int) -> dict[str, Any]:
    """JSON schema of the supervisor's first answer: at most ``max_items`` disagreements, short fields.

    Field lengths (characters) keep the answer of a grammar-constrained small model within the token limit.
    """
    return {
        "type": "object",
        "properties": {
            "disagreements": {
                "type": "array",
                "maxItems": max(1, max_items),
                "items": {
                    "type": "object",
                    "properties": {
                        "topic": text_schema(50),
                        "description": text_schema(80),
                        "agents": {"type": "array", "maxItems": 2, "items": text_schema(12)},
                        "query": text_schema(50),
                    },
                    "required": ["topic", "description", "agents", "query"],
                },
            }
        },
        "required": ["disagreements"],
    }


SUPERVISOR_DECISION_TASK = (
    SUPERVISOR_ROLE + "\n\n"
    "## TASK\nReconcile the forecasts. Give the probability that the question resolves Yes as an integer "
    "percent, your confidence in this reconciliation (high, medium or low: low when the evidence gaps "
    "above leave the disagreement open), a short rationale, and up to 1 key evidence item (a claim and the "
    "number [n] of the forecasters' evidence or clarifying search result it comes from). Answer with "
    "one JSON object only:\n"
    '{"rationale": "<text>", '
    f'"key_evidence": [{EVIDENCE_ITEM_FORMAT}], '
    '"confidence": "high|medium|low", "p_yes_percent": <integer 0-100>}'
)


def decision_schema(n_sources: int) -> dict[str, Any]:
    """JSON schema of the supervisor's decision: ``rationale``, at most one evidence item citing one of the
    ``n_sources`` numbered sources (the members' evidence, then the clarifying search results), a
    ``confidence`` and ``p_yes_percent``."""
    return {
        "type": "object",
        "properties": {
            "rationale": text_schema(),
            "key_evidence": evidence_list_schema(1, n_sources),
            "confidence": {"type": "string", "enum": ["high", "medium", "low"]},
            **probability_schema("p_yes_percent"),
        },
        "required": ["rationale", "key_evidence", "confidence", "p_yes_percent"],
    }


def summary_sources(summaries) -> list:
    """The members' evidence items (:class:`agent_schemas.EvidenceItem`) in the order
    :func:`render_agent_summaries` numbers them ``[1]``, ``[2]``, ...: what a debate turn or the
    supervisor's decision cites by number."""
    return [e for s in summaries for e in s.top_evidence]


def render_agent_summaries(summaries) -> str:
    """Render member summaries (p_yes, one-line rationale, top evidence numbered ``[n]`` in the order of
    :func:`summary_sources`, with sources) as a Markdown list inside an ``<untrusted_agent_text>`` fence
    (:func:`agent_tools.evidence.fence`): rationales and claims were written by models that read untrusted
    sources, so they are quoted as data, one line each."""
    lines = []
    n = 0
    for s in summaries:
        p = "failed" if s.p_yes is None else f"{100 * s.p_yes:.0f}%"
        lines.append(f"- {s.agent_id} ({s.model}): p_yes {p}. {s.rationale}")
        for e in s.top_evidence:
            n += 1
            src = e.source_url or "no source"
            date = e.published.isoformat() if e.published else "undated"
            lines.append(f"    - evidence [{n}]: {e.claim} [{src}, {date}]")
    return "## FORECASTERS (structured summaries)\n" + fence(lines, "agent")


def render_debate_so_far(side: str, own_last, opponent_last) -> str | None:
    """This side's last position and the opponent's last argument, fenced as agent text (None when
    there is neither yet). ``own_last`` / ``opponent_last`` are :class:`agent_schemas.DebateTurn` or None;
    a failed opponent turn is not shown."""
    opponent = "bear" if side == "bull" else "bull"
    quoted = []
    if own_last is not None and own_last.p_yes is not None:
        quoted.append(f"Your last position: p_yes {100 * own_last.p_yes:.0f}%: {own_last.argument}")
    if opponent_last is not None and opponent_last.status == "ok":
        quoted.append(f"The {opponent.upper()}'s last argument: p_yes {100 * opponent_last.p_yes:.0f}%: {opponent_last.argument}")
    return "## THE DEBATE SO FAR\n" + fence(quoted, "agent") if quoted else None


def render_disagreements(disagreements, coverage) -> str:
    """The supervisor's named disagreements with their evidence coverage, fenced as agent text (the
    topics and descriptions were written by the supervisor model after reading the members)."""
    if not disagreements:
        return "## DISAGREEMENTS\nNone named."
    lines = [f"- {d.topic}: {d.description} -> {c.status.upper()}: {c.reason}" for d, c in zip(disagreements, coverage)]
    return "## DISAGREEMENTS AND EVIDENCE COVERAGE\n" + fence(lines, "agent")
