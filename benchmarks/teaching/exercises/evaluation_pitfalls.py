"""Checks of notebook 11's exercises (evaluation pitfalls); each computes its right value with the toolkit.

1. :func:`check_early_flag_gain`: the Brier gain over the crowd that the "resolved early" flag buys.
2. :func:`check_small_n_ece`: the mean ECE of a perfectly calibrated forecaster at small and large n.
3. :func:`check_skipping_method`: how the leaderboard treats a method that skips the unsure questions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from benchmarks import scoring
from benchmarks.scoring.ranking import rank_methods
from benchmarks.teaching.grading import Verdict, grade_answers, grade_number

__all__ = ["ECE_DRAWS", "ECE_TOLERANCE", "SKIPPED_SHARE", "check_early_flag_gain", "check_skipping_method", "check_small_n_ece"]


def check_early_flag_gain(answer: Any, recalibrated_by: Callable[[np.ndarray], np.ndarray], early: np.ndarray,
                          crowd: np.ndarray, y: np.ndarray, later: np.ndarray) -> Verdict:
    """Exercise 1: ``answer`` is the crowd's mean Brier score on the later questions minus that of the crowd
    Platt-recalibrated per value of the ``early`` flag (``recalibrated_by``, the notebook's); within 0.003."""
    gain = scoring.brier_score(crowd[later], y[later]).mean() - scoring.brier_score(recalibrated_by(early), y[later]).mean()
    return grade_number(1, answer, float(gain), tolerance=3e-3, what="the Brier gain of the early flag",
                        hint="recalibrated_by(early) gives the later questions' forecasts; section 1 scored the "
                        "knowable 'closes within 30 days' flag the same way.")


#: Exercise 2's simulation: draws per sample size, and the tolerance per size (the mean of a simulation).
ECE_DRAWS = 400
ECE_TOLERANCE = {"30 questions": 0.015, "1000 questions": 0.004}


def check_small_n_ece(answer: Any, crowd: np.ndarray) -> Verdict:
    """Exercise 2: ``answer = {"30 questions": e, "1000 questions": e}``, the mean ECE (10 bins) of a perfectly
    calibrated forecaster whose forecasts are drawn from ``crowd`` without replacement and whose outcomes
    are drawn from its forecasts; the check simulates :data:`ECE_DRAWS` draws per size (its own seed), so a
    simulation of the student's own lands within :data:`ECE_TOLERANCE`."""
    rng = np.random.default_rng(2024)
    expected = {}
    for key in ECE_TOLERANCE:
        n = int(key.split()[0])
        eces = []
        for _ in range(ECE_DRAWS):
            p = rng.choice(crowd, size=n, replace=False)
            eces.append(scoring.expected_calibration_error(p, (rng.random(n) < p).astype(int)))
        expected[key] = float(np.mean(eces))
    return grade_answers(2, answer, expected, tolerance=ECE_TOLERANCE, what="the ECE of a perfect forecaster",
                         hint="simulate it: forecasts from the crowd, outcomes drawn from the forecasts, "
                         "scoring.expected_calibration_error, averaged over a few hundred draws.")


#: Exercise 3's method skips this share of the questions, those where the crowd is closest to 0.5.
SKIPPED_SHARE = 0.15


def check_skipping_method(answer: Any, long: pd.DataFrame, crowd: np.ndarray) -> Verdict:
    """Exercise 3: ``answer = {"ranked": bool, "questions imputed": n, "Brier with the skipped as its worst case": b}``
    for a method that copies the crowd (``long``: one row per question) but skips the :data:`SKIPPED_SHARE` of
    questions where the crowd is closest to 0.5, ranked by :func:`benchmarks.scoring.ranking.rank_methods` against the
    crowd; the Brier within 0.0005."""
    unsure = np.abs(crowd - 0.5)
    keep = unsure > np.quantile(unsure, SKIPPED_SHARE)
    frame = pd.concat([long.assign(method="crowd"), long[keep].assign(method="crowd, skipping")], ignore_index=True)
    row = rank_methods(frame, method_col="method", baseline="crowd", n_resamples=200, seed=0).set_index("method").loc["crowd, skipping"]
    expected = {"ranked": bool(row["ranked"]), "questions imputed": int(row["n_imputed"]),
                "Brier with the skipped as its worst case": float(row["brier_worst_case"])}
    return grade_answers(3, answer, expected, tolerance={"Brier with the skipped as its worst case": 5e-4},
                         what="the skipping method on the leaderboard",
                         hint="rank_methods ranks a method with at most 5% of the questions imputed; a skipped question "
                         "is imputed as the forecast opposite to its outcome, Brier 1 (section 6).")
