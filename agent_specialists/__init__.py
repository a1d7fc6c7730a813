"""Reconciliation specialists: :class:`DebateAgent` (bull vs bear) and :class:`SupervisorAgent`.

They use providers and tools, never ``agent_research`` (the pipeline there uses them).
"""

from agent_specialists.debate import DebateAgent, Side
from agent_specialists.member_weights import MemberRecord, MemberWeighting
from agent_specialists.supervisor import SupervisorAgent, SupervisorProgress

__all__ = ["DebateAgent", "MemberRecord", "MemberWeighting", "Side", "SupervisorAgent", "SupervisorProgress"]
