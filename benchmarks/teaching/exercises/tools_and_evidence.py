"""Checks of notebook 02's exercises (tools and evidence); each computes its right value with the toolkit.

1. :func:`check_leakier_rounds`: which group of rounds a naive search leaks more for.
2. :func:`check_guard_rule`: the student's cutoff rule as a function, against the ``ToolExecutor``'s guard.
3. :func:`check_overfetch`: how many results reach the prompt at three over-fetch factors.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from agent_schemas import Question, SearchOutcome, SearchResult
from agent_tools import SearchClient, ToolExecutor
from benchmarks.teaching.grading import FunctionCase, Verdict, grade_answers, grade_choice, grade_function

__all__ = ["EARLY_ROUNDS", "LATE_FROM", "OVERFETCH_FACTORS", "check_guard_rule", "check_leakier_rounds", "check_overfetch"]

#: Exercise 1's groups: the earliest two rounds after 2025, and the rounds from this date on.
EARLY_ROUNDS = ("2025-10-26", "2025-11-09")
LATE_FROM = "2026-06-07"
#: Exercise 3's over-fetch factors (results asked for: 5 times the factor, at most 10).
OVERFETCH_FACTORS = (1, 2, 4)


def check_leakier_rounds(answer: Any, markets: Sequence[Question], late_share: Callable[[Question], float]) -> Verdict:
    """Exercise 1: ``answer`` is ``"early rounds"`` or ``"late rounds"``, the group of ``markets`` whose naive
    top-5 results (``late_share``, the notebook's function) are more often dated after the forecast date."""
    groups = {"early rounds": [x for x in markets if x.round in EARLY_ROUNDS],
              "late rounds": [x for x in markets if (x.round or "") >= LATE_FROM]}
    share = {name: float(np.nanmean([late_share(x) for x in qs])) for name, qs in groups.items()}
    leakier = max(share, key=share.get)
    return grade_choice(1, answer, leakier, options=tuple(groups), what="the group whose naive search leaks more",
                        hint="every corpus document is dated by its freeze date: how many documents dated after "
                        "its forecast date can a question asked in October 2025 meet, and one asked in July 2026?")


class _FixedResults(SearchClient):
    """A backend that returns the same results for every query, whatever the cutoff."""

    name = "fixed-results"

    def __init__(self, results: Sequence[SearchResult]):
        self.results = list(results)

    def search(self, query: str, *, max_results: int = 5, cutoff_date: dt.date | None = None) -> SearchOutcome:
        return SearchOutcome(status="ok", attempted_query=query, results=self.results[:max_results])


def check_guard_rule(function: Callable[[dt.date | None, dt.date], bool], question: Question, result: SearchResult) -> Verdict:
    """Exercise 2: ``function(published, forecast_date)`` says whether a search result published on that date
    (``None``: undated) reaches the prompt through a default ``ToolExecutor`` with the question's cutoff.

    The right values come from the executor itself, on copies of ``result`` dated around the forecast date
    (the day before, the day itself, the day after, a year later) and undated.
    """
    cutoff = question.forecast_date
    dates = {"the day before the forecast date": cutoff - dt.timedelta(days=1), "the forecast date itself": cutoff,
             "the day after": cutoff + dt.timedelta(days=1), "a year after": cutoff + dt.timedelta(days=365),
             "an undated result (published=None)": None}
    cases = []
    for label, published in dates.items():
        copy = result.model_copy(update={"published": published, "url": f"https://example.invalid/{published}"})
        kept = ToolExecutor(_FixedResults([copy])).execute_search(question.text, max_results=1, cutoff_date=cutoff)
        cases.append(FunctionCase(label, (published, cutoff), bool(kept.results)))
    return grade_function(2, function, cases, tolerance=0.0, what="kept_by_guard",
                         hint="the forecast date is the last day whose information may be used; an undated result "
                         "cannot be checked, and the default policy fails closed (section 4).")


def check_overfetch(answer: Any, engine: SearchClient, question: Question) -> Verdict:
    """Exercise 3: ``answer = {"overfetch=1": n, "overfetch=2": n, "overfetch=4": n}``, the results that reach
    the prompt when ``engine`` (one that ignores the cutoff) is asked for 5 results of the question's text
    through a ``ToolExecutor`` with that over-fetch factor and a cap of 10."""
    expected = {}
    for factor in OVERFETCH_FACTORS:
        kept = ToolExecutor(engine, overfetch=factor, max_results_cap=10).execute_search(
            question.text, max_results=5, cutoff_date=question.forecast_date)
        expected[f"overfetch={factor}"] = len(kept.results)
    return grade_answers(3, answer, expected, what="the results in the prompt",
                         hint="the executor asks the engine for min(5 x overfetch, 10) results and drops those "
                         "dated after the forecast date; the naive top 10 of section 2 shows which those are.")
