"""Checks of notebook 03's exercises (state and replay); each computes its right value with the toolkit.

1. :func:`check_case_facts`: which dates the case facts of an early-resolved question show, and the audit.
2. :func:`check_replay_with_more_rounds`: what a replay finds when the debate allows one more round.
3. :func:`check_resume_without_cache`: the provider calls of a resume whose response cache was deleted.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agent_research import PipelineConfig
from agent_schemas import PipelineTrace, Question
from agent_tools.case_facts import render_case_facts
from benchmarks.protocol.leakage import audit_prompts
from benchmarks.teaching.grading import Verdict, grade_answers, grade_number, is_placeholder, not_answered

__all__ = ["MUSK_QUESTION", "check_case_facts", "check_replay_with_more_rounds", "check_resume_without_cache"]

#: Exercise 1's question: scheduled to close 2074-12-31, resolved Yes on 2026-06-12.
MUSK_QUESTION = "Will Elon Musk become the first trillionaire"


def check_case_facts(answer: Any, markets: Sequence[Question]) -> Verdict:
    """Exercise 1: ``answer`` says whether the case facts of :data:`MUSK_QUESTION` show its scheduled close
    date and its actual resolution date, and whether the leakage audit finds hindsight in them."""
    musk = next(x for x in markets if x.text.startswith(MUSK_QUESTION))
    facts = render_case_facts(musk)
    audit = audit_prompts([facts], musk)
    expected = {"shows the scheduled close date": musk.scheduled_close_date.isoformat() in facts,
                "shows the actual resolution date": musk.resolution_date.isoformat() in facts,
                "the audit finds hindsight": audit["hindsight_resolution_date"] + audit["hindsight_outcome"] > 0}
    return grade_answers(1, answer, expected, what="the case facts and their audit",
                         hint="the facts are rendered from question.visible(); section 1 lists which fields that "
                         "view has, and the audit looks for what the scorer holds back.")


def check_replay_with_more_rounds(answer: Any, trace: PipelineTrace, replay: Callable[[PipelineConfig], PipelineTrace],
                                  config: PipelineConfig) -> Verdict:
    """Exercise 2: ``answer = {"debate turns found in the trace": n, "the final p_yes changes": bool}`` when
    ``trace`` (recorded with ``config``) is replayed by ``replay`` with a debate of 3 rounds instead of 2."""
    three = config.model_copy(update={"debate": config.debate.model_copy(update={"max_rounds": 3})})
    again = replay(three)
    turns = [t for rd in again.debate.rounds for t in (rd.bull, rd.bear)] if again.debate else []
    expected = {"debate turns found in the trace": sum(t.status == "ok" for t in turns),
                "the final p_yes changes": again.final_p_yes != trace.final_p_yes}
    return grade_answers(2, answer, expected, what="the replay with 3 debate rounds",
                         hint="a replay is keyed by the whole request, and each debate prompt states the round and "
                         "the maximum number of rounds; for the final p_yes, read the trace's final_source.")


async def check_resume_without_cache(answer: Any, runner_for: Callable[..., Any],
                                     interrupt: Callable[[Path], int]) -> Verdict:
    """Exercise 3: ``answer`` is the number of provider calls a resume makes after an interrupted run's
    ``cache/`` folder was deleted. The check makes such a run with the notebook's ``runner_for`` and
    ``interrupt`` (in its own run folder) and counts; exact."""
    if is_placeholder(answer):
        return not_answered(3, "the provider calls of the resume")
    first = runner_for("check-no-cache")
    await first.arun()
    interrupt(first.run_dir)
    shutil.rmtree(first.run_dir / "cache")
    resumed = await runner_for("check-no-cache", fresh=False).arun(resume=True)
    return grade_number(3, answer, resumed.provider_stats["calls"], tolerance=0, what="the provider calls of the resume",
                        hint="results.jsonl says which questions are done, the cache which calls were paid; how "
                        "many questions are unfinished, and how many calls does one question take (section 5)?")
