"""Prompt text and answer schemas of the reconciliation specialists (bull, bear, supervisor).

Answer schemas ask for an integer percent (``p_yes_percent``, an ``enum`` of 0..100) because the
embedded llama.cpp grammar enforces integer enums but ignores ``minimum``/``maximum``; the parser still
validates every value.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from agent_schemas.kinds import BinarySpec, KindSpec, kind_of
from agent_tools.evidence import fence
from agent_tools.parsing import EVIDENCE_ITEM_FORMAT, evidence_list_schema, text_schema


def debate_role(side: str, spec: KindSpec = BinarySpec(), estimate: np.ndarray | None = None) -> str:
    """The role text of ``side`` ("bull" or "bear") on a question of ``spec``'s kind: argue for the claim of
    :meth:`~agent_schemas.kinds.base.QuestionKind.debate_claim` against the current ``estimate`` (the
    ensemble aggregate's vector, None when unknown)."""
    kind = kind_of(spec)
    return (
        f"## YOUR ROLE\nYou are the {side.upper()} in a structured forecasting debate between a BULL and a BEAR: "
        f"argue that {kind.debate_claim(spec, side, estimate)}. Answer the other side's "
        f"last argument directly. Be honest: if the other side is right, move your {kind.forecast_word}."
    )


#: The binary roles (``debate_role(side)``).
DEBATE_ROLE = {side: debate_role(side) for side in ("bull", "bear")}


def debate_task(spec: KindSpec = BinarySpec()) -> str:
    """The task text of a debate turn on a question of ``spec``'s kind."""
    kind = kind_of(spec)
    return (
        f"## TASK\nGive your argument (at most 200 characters), your {kind.answer_request(spec, short=True)}, "
        "and up to 1 key evidence item (a claim and the number [n] of the forecasters' "
        "evidence it comes from). Answer with one JSON object only:\n"
        '{"argument": "<text>", '
        f'"key_evidence": [{EVIDENCE_ITEM_FORMAT}], '
        f'{kind.answer_template(spec)}}}'
    )


#: The binary task (``debate_task()``).
DEBATE_TASK = debate_task()


@functools.lru_cache(maxsize=256)
def debate_schema(n_sources: int, spec: KindSpec = BinarySpec()) -> dict[str, Any]:
    """JSON schema of a debate turn: ``argument``, at most one evidence item citing one of the
    ``n_sources`` numbered member evidence items (:func:`summary_sources`), then the forecast in the form of
    ``spec``'s kind (``p_yes_percent`` for binary). The same dict for the same arguments (the response cache's key
    encodes a schema once per object): do not change it."""
    answer = kind_of(spec).answer_properties(spec)
    return {
        "type": "object",
        "properties": {"argument": text_schema(), "key_evidence": evidence_list_schema(1, n_sources), **answer},
        "required": ["argument", "key_evidence", *answer],
    }


def supervisor_role(spec: KindSpec = BinarySpec()) -> str:
    """The supervisor's role text on a question of ``spec``'s kind."""
    return (
        "## YOUR ROLE\nYou are the SUPERVISOR. The forecasters above answered the same question and disagree. "
        "You name the specific points of disagreement, look for evidence that settles them (dated on or before "
        f"the forecast date), and give a reconciled {kind_of(spec).forecast_word}."
    )


#: The binary role (``supervisor_role()``).
SUPERVISOR_ROLE = supervisor_role()

def disagreement_task(spec: KindSpec = BinarySpec()) -> str:
    """The supervisor's first task (name the disagreements) on a question of ``spec``'s kind, with a
    ``{max_queries}`` field to format."""
    return supervisor_role(spec).replace("{", "{{").replace("}", "}}") + SUPERVISOR_DISAGREEMENT_TASK_TAIL


SUPERVISOR_DISAGREEMENT_TASK_TAIL = (
    "\n\n"
    "## TASK\nName up to {max_queries} specific points on which the forecasters disagree, and for each a short "
    "web search query that could settle it. Answer with one JSON object only:\n"
    '{{"disagreements": [{{"topic": "<text>", "description": "<the positions taken>", '
    '"agents": ["<member id>"], "query": "<search query>"}}]}}'
)
#: The binary first task (``disagreement_task()``).
SUPERVISOR_DISAGREEMENT_TASK = disagreement_task()

@functools.lru_cache(maxsize=256)
def disagreement_schema(max_items: int) -> dict[str, Any]:
    """JSON schema of the supervisor's first answer: at most ``max_items`` disagreements, short fields.

    Field lengths (characters) keep the answer of a grammar-constrained small model within the token limit. The
    same dict for the same argument (the response cache's key encodes a schema once per object): do not change it.
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


def decision_task(spec: KindSpec = BinarySpec()) -> str:
    """The supervisor's decision task on a question of ``spec``'s kind."""
    kind = kind_of(spec)
    return (
        supervisor_role(spec) + "\n\n"
        f"## TASK\nReconcile the forecasts. Give the {kind.answer_request(spec, short=True)}, "
        "your confidence in this reconciliation (high, medium or low: low when the evidence gaps "
        "above leave the disagreement open), a short rationale, and up to 1 key evidence item (a claim and the "
        "number [n] of the forecasters' evidence or clarifying search result it comes from). Answer with "
        "one JSON object only:\n"
        '{"rationale": "<text>", '
        f'"key_evidence": [{EVIDENCE_ITEM_FORMAT}], '
        f'"confidence": "high|medium|low", {kind.answer_template(spec)}}}'
    )


#: The binary decision task (``decision_task()``).
SUPERVISOR_DECISION_TASK = decision_task()


@functools.lru_cache(maxsize=256)
def decision_schema(n_sources: int, spec: KindSpec = BinarySpec()) -> dict[str, Any]:
    """JSON schema of the supervisor's decision: ``rationale``, at most one evidence item citing one of the
    ``n_sources`` numbered sources (the members' evidence, then the clarifying search results), a
    ``confidence`` and the forecast in the form of ``spec``'s kind (``p_yes_percent`` for binary). The same dict for
    the same arguments (the response cache's key encodes a schema once per object): do not change it."""
    answer = kind_of(spec).answer_properties(spec)
    return {
        "type": "object",
        "properties": {
            "rationale": text_schema(),
            "key_evidence": evidence_list_schema(1, n_sources),
            "confidence": {"type": "string", "enum": ["high", "medium", "low"]},
            **answer,
        },
        "required": ["rationale", "key_evidence", "confidence", *answer],
    }


def summary_sources(summaries) -> list:
    """The members' evidence items (:class:`agent_schemas.EvidenceItem`) in the order
    :func:`render_agent_summaries` numbers them ``[1]``, ``[2]``, ...: what a debate turn or the
    supervisor's decision cites by number."""
    return [e for s in summaries for e in s.top_evidence]


def render_agent_summaries(summaries, spec: KindSpec = BinarySpec()) -> str:
    """Render member summaries (forecast, one-line rationale, top evidence numbered ``[n]`` in the order of
    :func:`summary_sources`, with sources) as a Markdown list inside an ``<untrusted_agent_text>`` fence
    (:func:`agent_tools.evidence.fence`): rationales and claims were written by models that read untrusted
    sources, so they are quoted as data, one line each."""
    kind = kind_of(spec)
    lines = []
    n = 0
    for s in summaries:
        lines.append(f"- {s.agent_id} ({s.model}): {kind.forecast_text(spec, kind.forecast_of(s))}. {s.rationale}")
        for e in s.top_evidence:
            n += 1
            src = e.source_url or "no source"
            date = e.published.isoformat() if e.published else "undated"
            lines.append(f"    - evidence [{n}]: {e.claim} [{src}, {date}]")
    return "## FORECASTERS (structured summaries)\n" + fence(lines, "agent")


def render_debate_so_far(side: str, own_last, opponent_last, spec: KindSpec = BinarySpec()) -> str | None:
    """This side's last position and the opponent's last argument, fenced as agent text (None when
    there is neither yet). ``own_last`` / ``opponent_last`` are :class:`agent_schemas.DebateTurn` or None;
    a failed opponent turn is not shown."""
    kind = kind_of(spec)
    opponent = "bear" if side == "bull" else "bull"
    quoted = []
    own = None if own_last is None else kind.forecast_of(own_last)
    if own is not None:
        quoted.append(f"Your last position: {kind.forecast_text(spec, own)}: {own_last.argument}")
    if opponent_last is not None and opponent_last.status == "ok":
        theirs = kind.forecast_text(spec, kind.forecast_of(opponent_last))
        quoted.append(f"The {opponent.upper()}'s last argument: {theirs}: {opponent_last.argument}")
    return "## THE DEBATE SO FAR\n" + fence(quoted, "agent") if quoted else None


def render_disagreements(disagreements, coverage) -> str:
    """The supervisor's named disagreements with their evidence coverage, fenced as agent text (the
    topics and descriptions were written by the supervisor model after reading the members)."""
    if not disagreements:
        return "## DISAGREEMENTS\nNone named."
    lines = [f"- {d.topic}: {d.description} -> {c.status.upper()}: {c.reason}" for d, c in zip(disagreements, coverage)]
    return "## DISAGREEMENTS AND EVIDENCE COVERAGE\n" + fence(lines, "agent")
