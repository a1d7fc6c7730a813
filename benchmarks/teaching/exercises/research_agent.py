"""Checks of notebook 04's exercises (the research agent); each computes its right value with the toolkit.

1. :func:`check_crowd_line`: what showing the crowd adds to the prompt, and when the crowd was observed.
2. :func:`check_parsed_answers`: what the forecaster makes of four unusual answers.
3. :func:`check_more_results`: what each extra search result costs in prompt tokens, and the cutoff.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agent_providers import ScriptedProvider
from agent_providers.scripted import count_tokens_approx
from agent_research import ForecasterAgent
from agent_schemas import Question, SearchOutcome
from agent_tools import ToolExecutor
from benchmarks.teaching.grading import Verdict, grade_answers, is_unanswered, not_answered

__all__ = ["UNUSUAL_ANSWERS", "check_crowd_line", "check_more_results", "check_parsed_answers"]


def _lines(messages: Sequence[Any]) -> list[str]:
    return [line for m in messages for line in m.content.splitlines()]


def check_crowd_line(answer: Any, agent: ForecasterAgent, question: Question, outcomes: list[SearchOutcome]) -> Verdict:
    """Exercise 1: ``answer = {"lines added": n, "days from the crowd's observation to the forecast date": d}``
    when ``agent`` builds its prompt from ``question.visible(show_crowd=True)`` instead of the plain view."""
    plain = set(_lines(agent.build_messages(question, outcomes)))
    shown = question.visible(show_crowd=True)
    added = [line for line in _lines(agent.build_messages(shown, outcomes)) if line not in plain]
    expected = {"lines added": len(added),
                "days from the crowd's observation to the forecast date": (question.forecast_date - shown.freeze_date).days}
    return grade_answers(1, answer, expected, what="the crowd in the prompt",
                         hint="ForecastBench freezes a question set, crowd included, before its forecast date; the "
                         "question's metadata has the freeze date (notebook 03, section 1).")


#: Exercise 2's answers, as a model might write them.
UNUSUAL_ANSWERS: dict[str, str] = {
    "a word for the percent": json.dumps({"rationale": "x", "key_evidence": [], "p_yes_percent": "seventy"}),
    "a fraction under p_yes": json.dumps({"rationale": "x", "p_yes": 0.7}),
    "a percent as a string": json.dumps({"rationale": "x", "key_evidence": [], "p_yes_percent": "70"}),
    "closing brace missing": '{"rationale": "x", "p_yes_percent": 70',
}


def check_parsed_answers(answer: Any, question: Question, executor: ToolExecutor) -> Verdict:
    """Exercise 2: for each of :data:`UNUSUAL_ANSWERS`, the p_yes the forecaster reads from it (a probability in
    [0, 1], within 1e-9) or ``"fails"``; the right values come from a ``ForecasterAgent`` that receives it."""
    expected: dict[str, Any] = {}
    for name, text in UNUSUAL_ANSWERS.items():
        f = ForecasterAgent(ScriptedProvider([text]), executor=executor, max_results=2).forecast(question)
        expected[name] = f.p_yes if f.status == "ok" else "fails"
    return grade_answers(2, answer, expected, tolerance=1e-9, what="what the parser reads",
                         hint="the parser is lenient where the meaning is unambiguous and strict where it is not; "
                         "a p_yes_percent is a percent, a p_yes a fraction.")


async def check_more_results(answer: Any, agent: ForecasterAgent, question: Question, outcomes: list[SearchOutcome],
                             executor: ToolExecutor) -> Verdict:
    """Exercise 3: ``answer = {"prompt tokens per extra result": t, "the latest evidence date can pass the
    cutoff": bool}`` for ``agent`` with ``max_results=5`` instead of its own. Tokens are ``ceil(characters /
    4)`` of the whole prompt, per result added; within 15 tokens (a prediction, not a count)."""
    if is_unanswered(answer):
        return not_answered(3, "the cost of more results ('prompt tokens per extra result', 'the latest evidence "
                               "date can pass the cutoff')")
    wide = ForecasterAgent(ScriptedProvider(), executor=executor, n_queries=agent.n_queries, max_results=5,
                           max_evidence=agent.max_evidence, max_tokens=agent.max_tokens, seed=agent.seed)
    wide_outcomes, _ = await wide.research(question)

    def tokens(a: ForecasterAgent, outs: list[SearchOutcome]) -> int:
        return sum(count_tokens_approx(m.content) for m in a.build_messages(question, outs))

    extra = sum(len(o.results) for o in wide_outcomes) - sum(len(o.results) for o in outcomes)
    dates = [r.published for o in wide_outcomes for r in o.results if r.published is not None]
    expected = {"prompt tokens per extra result": (tokens(wide, wide_outcomes) - tokens(agent, outcomes)) / max(extra, 1),
                "the latest evidence date can pass the cutoff": bool(dates) and max(dates) > question.forecast_date}
    return grade_answers(3, answer, expected, tolerance={"prompt tokens per extra result": 15.0},
                         what="the cost of more results",
                         hint="an evidence item in the prompt (section 2) is a numbered title, a source line, a URL "
                         "and a snippet of at most 200 characters; and the guard sees every result.")
