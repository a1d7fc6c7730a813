"""Checks of notebook 09's exercises (evaluation and leaderboard); each computes its right value with the toolkit.

1. :func:`check_ece_of_always_half`: the ECE of always answering 0.5.
2. :func:`check_six_question_run`: whether a six-question harness run gives intervals and ranks.
3. :func:`check_source_clusters`: the crowd's interval when the resampling unit is the source.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from agent_schemas import Question
from benchmarks import scoring
from benchmarks.teaching.grading import Verdict, grade_answers, grade_choice, grade_number, is_unanswered, not_answered

__all__ = ["INTERVAL_CHOICES", "check_ece_of_always_half", "check_six_question_run", "check_source_clusters"]


def check_ece_of_always_half(answer: Any, questions: Sequence[Question]) -> Verdict:
    """Exercise 1: ``answer`` is the expected calibration error (10 bins) of answering 0.5 on every one of
    ``questions``; within 0.0005."""
    outcomes = [q.outcome for q in questions]
    ece = scoring.expected_calibration_error(np.full(len(outcomes), 0.5), outcomes)
    return grade_number(1, answer, ece, tolerance=5e-4, what="the ECE of always 0.5",
                        hint="every forecast is in one bin: its mean forecast is 0.5, its observed frequency the "
                        "yes-rate printed in section 1.")


async def check_six_question_run(answer: Any, simulated_run: Callable[[str, int], Any],
                                 write_report: Callable[..., Any], work: Path) -> Verdict:
    """Exercise 2: ``answer = {"intervals": bool, "ranks": bool}``: whether the leaderboard of a harness run of
    6 questions (``simulated_run``, the notebook's) shows Brier intervals and ranks. The check makes the run
    (in ``work``) and reads its report."""
    if is_unanswered(answer):
        return not_answered(2, "the six-question leaderboard ('intervals', 'ranks')")
    tiny = simulated_run("check-six-questions", 6)
    await tiny.arun()
    board = write_report([tiny.run_dir], Path(work) / "check-six-questions-report", baseline="mean").leaderboard
    expected = {"intervals": bool(board["brier_ci_low"].notna().any()), "ranks": bool(board["rank"].notna().any())}
    return grade_answers(2, answer, expected, what="the six-question leaderboard",
                         hint="six questions are at most six clusters; scoring.MIN_CLUSTERS_FOR_INTERVAL and "
                         "benchmarks.scoring.ranking.MIN_CLUSTERS_TO_RANK say how many each needs.")


#: Exercise 3's choices: the interval with source clusters against the harness's (siblings merged).
INTERVAL_CHOICES = ("wider", "narrower", "no interval")


def check_source_clusters(answer: Any, scores: np.ndarray, crowd_rows: pd.DataFrame) -> Verdict:
    """Exercise 3: ``answer`` is ``"wider"``, ``"narrower"`` or ``"no interval"``: the crowd's 95% Brier
    interval (``scores``, per question) resampled by source, against the harness's clusters
    (``crowd_rows["cluster"]``)."""
    by_source = scoring.clustered_bootstrap_ci(scores, crowd_rows["source"].to_numpy(), n_resamples=2000, seed=0)
    harness = scoring.clustered_bootstrap_ci(scores, crowd_rows["cluster"].to_numpy(), n_resamples=2000, seed=0)
    if np.isnan(by_source.low):
        expected = "no interval"
    else:
        expected = "wider" if by_source.high - by_source.low > harness.high - harness.low else "narrower"
    return grade_choice(3, answer, expected, options=INTERVAL_CHOICES, what="the interval with source clusters",
                        hint="count the clusters, and compare with scoring.MIN_CLUSTERS_FOR_INTERVAL (section 6).")
