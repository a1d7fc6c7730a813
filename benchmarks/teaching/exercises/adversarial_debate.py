"""Checks of notebook 07's exercises (adversarial debate); each runs ``DebateAgent`` on the notebook's
scripted debaters for its right value.

1. :func:`check_stubborn_bull`: rounds, consensus and midpoint when the bull never moves.
2. :func:`check_loose_threshold`: rounds and midpoint with a consensus threshold of 0.2.
3. :func:`check_first_mover`: where the midpoint ends relative to the ensemble estimate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent_schemas import DebateArtifact
from benchmarks.teaching.grading import Verdict, grade_answers, grade_choice

__all__ = ["MAX_ROUNDS", "MIDPOINT_TOLERANCE", "check_first_mover", "check_loose_threshold", "check_stubborn_bull"]

#: The debates of the exercises run at most this many rounds (as in section 2).
MAX_ROUNDS = 4
#: A predicted midpoint counts within this distance (the debaters answer whole percents).
MIDPOINT_TOLERANCE = 0.005


def _summary(debate: DebateArtifact) -> dict[str, Any]:
    return {"rounds": len(debate.rounds), "consensus": debate.consensus_reached, "midpoint": debate.p_yes}


def check_stubborn_bull(answer: Any, package_debate: Callable[..., DebateArtifact], debater: Callable[..., Any]) -> Verdict:
    """Exercise 1: ``answer = {"rounds": n, "consensus": bool, "midpoint": p}`` of the package debate between a
    bull that never moves (``debater(concede_bull=0.0)``) and the conceding bear, threshold 0.05."""
    expected = _summary(package_debate(debater(concede_bull=0.0), max_rounds=MAX_ROUNDS, consensus_threshold=0.05))
    return grade_answers(1, answer, expected, tolerance={"midpoint": MIDPOINT_TOLERANCE}, what="the debate with a stubborn bull",
                         hint="write the turns down: the bull opens at estimate + 20 and stays there; the bear opens "
                         "at estimate - 20 and moves 40% of the gap (rounded to a whole percent) every turn; "
                         "consensus needs a gap below 0.05.")


def check_loose_threshold(answer: Any, package_debate: Callable[..., DebateArtifact], debater: Callable[..., Any]) -> Verdict:
    """Exercise 2: ``answer = {"rounds": n, "midpoint": p}`` of the package debate between the conceding
    debaters with ``consensus_threshold=0.2``."""
    full = _summary(package_debate(debater(), max_rounds=MAX_ROUNDS, consensus_threshold=0.2))
    expected = {"rounds": full["rounds"], "midpoint": full["midpoint"]}
    return grade_answers(2, answer, expected, tolerance={"midpoint": MIDPOINT_TOLERANCE}, what="the debate with threshold 0.2",
                         hint="the table of section 2 lists both sides after every round: after which round is the "
                         "gap first below 0.2?")


def check_first_mover(answer: Any, package_debate: Callable[..., DebateArtifact], debater: Callable[..., Any],
                      estimate: float) -> Verdict:
    """Exercise 3: ``answer`` is ``"above"``, ``"below"`` or ``"at"``: where the midpoint of the package
    debate between the conceding debaters (threshold 0.05) ends relative to the ensemble ``estimate``."""
    midpoint = package_debate(debater(), max_rounds=MAX_ROUNDS, consensus_threshold=0.05).p_yes
    where = "above" if midpoint > estimate else "below" if midpoint < estimate else "at"
    return grade_choice(3, answer, where, options=("above", "below", "at"), what="the midpoint against the estimate",
                        hint="the sides are symmetric, the turn order is not: who answers whom in round 1?")
