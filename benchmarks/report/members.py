"""What a run's members did, in one sentence when it decides how to read the leaderboard.

A weak model (SmolLM2-135M) answers 0% or 100% to most questions, and its members contradict each other. Every
pool and reconciler then combines certain guesses, and each scores worse than always 0.5; a newcomer reading
"debate 0.386, supervisor 0.817 against always-0.5 0.250" should learn that this is the members, not
reconciliation. :func:`member_behaviour` measures it from the records (each member's answer as it gave it, before
the combination's clipping): the share of answers at 0% or 100% and the median, over questions, of the spread
across members (max - min p_yes). :func:`degenerate_members_note` says it in one sentence when the members are
degenerate (:data:`DEGENERATE_SHARE` of their answers or more at 0%/100%) and points to a method that works on
real forecasters (``aggregate --panel superforecasters``).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["DEGENERATE_SHARE", "EXTREME", "MemberBehaviour", "degenerate_members_note", "member_behaviour"]

#: An answer within this distance of 0 or 1 counts as a 0%/100% answer (the embedded model answers whole percents).
EXTREME = 0.005
#: Share of 0%/100% answers from which the members are called degenerate.
DEGENERATE_SHARE = 0.5


@dataclass(frozen=True)
class MemberBehaviour:
    """The members' answers over a run's ok questions."""

    n_answers: int
    """Successful member forecasts counted."""
    n_extreme: int
    """Of them, answers of 0% or 100% (within :data:`EXTREME`)."""
    n_questions: int
    """Questions with at least two member answers (those the spread is measured on)."""
    median_spread: float | None
    """Median over those questions of max - min member p_yes (in [0, 1]); None without such a question."""

    @property
    def share_extreme(self) -> float:
        """n_extreme / n_answers (0 without answers)."""
        return self.n_extreme / self.n_answers if self.n_answers else 0.0

    @property
    def degenerate(self) -> bool:
        """At least :data:`DEGENERATE_SHARE` of the answers are 0% or 100%."""
        return self.n_answers > 0 and self.share_extreme >= DEGENERATE_SHARE


def member_behaviour(records: Iterable[Mapping[str, Any]]) -> MemberBehaviour:
    """:class:`MemberBehaviour` of the ok records of ``results.jsonl`` (each record's ``trace.forecasts``: the
    members' answers with ``status`` "ok" and a ``p_yes``).

    >>> recs = [{"status": "ok", "trace": {"forecasts": [{"status": "ok", "p_yes": p} for p in ps]}}
    ...         for ps in ([0.0, 1.0, 1.0], [0.0, 0.0, 0.3], [0.5, 0.6, 1.0])]
    >>> b = member_behaviour(recs)
    >>> b.n_extreme, b.n_answers, b.median_spread, b.degenerate
    (6, 9, 0.5, True)
    """
    n_answers = n_extreme = 0
    spreads = []
    for r in records:
        if r.get("status") != "ok":
            continue
        ps = [float(f["p_yes"]) for f in (r.get("trace") or {}).get("forecasts", [])
              if f.get("status") == "ok" and f.get("p_yes") is not None]
        n_answers += len(ps)
        n_extreme += sum(p <= EXTREME or p >= 1 - EXTREME for p in ps)
        if len(ps) >= 2:
            spreads.append(max(ps) - min(ps))
    return MemberBehaviour(n_answers, n_extreme, len(spreads), statistics.median(spreads) if spreads else None)


def degenerate_members_note(b: MemberBehaviour) -> str:
    """One sentence on what degenerate members did and where to see a method that works; '' when they are not.

    >>> note = degenerate_members_note(MemberBehaviour(36, 30, 12, 1.0))
    >>> note.startswith("The members answered 0% or 100% in 30 of 36 forecasts (83%), and on the median question they differed by 100 points")
    True
    >>> note.endswith("run `forecast-reconcile aggregate --panel superforecasters`.")
    True
    >>> degenerate_members_note(MemberBehaviour(36, 3, 12, 0.2))
    ''
    """
    if not b.degenerate:
        return ""
    spread = ("" if b.median_spread is None else
              f", and on the median question they differed by {round(100 * b.median_spread)} points (max - min p_yes)")
    return (f"The members answered 0% or 100% in {b.n_extreme} of {b.n_answers} forecasts ({b.share_extreme:.0%}){spread}: "
            "every pool and reconciler here combines near-certain guesses, so the scores above say how the members failed, "
            "not whether reconciliation helps; for the methods on real forecasters run "
            "`forecast-reconcile aggregate --panel superforecasters`.")
