"""The members' cases as the debate and the supervisor are shown them: one owner for both prompts.

A member's case is its summary (:func:`agent_specialists.prompts.render_agent_summaries`: forecast, one-line
rationale, the evidence it cited, numbered for citation) and, when the members did not share their search
results (split or private evidence, :mod:`agent_research.evidence_modes`), what it was shown: a second fenced
block of untrusted search results labelled by member (:func:`agent_tools.evidence.render_member_evidence`), so
that the specialists argue over the evidence the members had. With shared evidence the text is exactly the
summaries' (the prompts written before evidence modes).
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_schemas import AgentSummary
from agent_schemas.kinds import BinarySpec, KindSpec
from agent_specialists import prompts
from agent_tools.evidence import render_member_evidence

__all__ = ["SHOWN_HEADER", "render_member_cases"]

#: Header of the block of what each member was shown.
SHOWN_HEADER = "## WHAT EACH FORECASTER WAS SHOWN (the members did not share their search results)"


def render_member_cases(summaries: Sequence[AgentSummary], spec: KindSpec = BinarySpec()) -> str:
    """The member summaries (:func:`~agent_specialists.prompts.render_agent_summaries`), then, when any summary
    carries the results its member was shown (``AgentSummary.seen``), :data:`SHOWN_HEADER` and those results
    by member, in the summaries' order (a member shown nothing says so)."""
    text = prompts.render_agent_summaries(summaries, spec)
    if any(s.seen for s in summaries):
        text += "\n\n" + SHOWN_HEADER + "\n" + render_member_evidence({s.agent_id: s.seen for s in summaries})
    return text
