"""Every score of one set of forecasts from one validation and one binning pass (:func:`score_summary`)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from agent_schemas.errors import DataValidationError
from benchmarks.scoring.calibration import MurphyDecomposition, calibration_bins, ece_of_bins, murphy_of_bins, reliability_frame_of_bins
from benchmarks.scoring.rules import LOG_LOSS_EPS, log_loss_unchecked
from benchmarks.scoring.validation import check_n_bins, validate_forecasts

__all__ = ["ScoreSummary", "score_summary"]


@dataclass(frozen=True)
class ScoreSummary:
    """All scores of one set of forecasts from one validation and one binning pass.

    Attributes
    ----------
    n : int
        Number of questions.
    brier : float
        Mean Brier score (lower is better).
    log_loss : float
        Mean log loss in nats (lower is better; see :func:`benchmarks.scoring.log_loss`).
    ece : float
        Expected calibration error (lower is better).
    reliability_table : pandas.DataFrame
        The :func:`reliability_diagram` table.
    murphy : MurphyDecomposition
        Murphy decomposition of ``brier``.
    brier_scores : ndarray of shape (n,)
        Per-question Brier scores (for bootstrap intervals).
    """

    n: int
    brier: float
    log_loss: float
    ece: float
    reliability_table: pd.DataFrame
    murphy: MurphyDecomposition
    brier_scores: np.ndarray

    @property
    def log_score(self) -> float:
        """Deprecated name of :attr:`log_loss` (warns; goes in the next release)."""
        warnings.warn("ScoreSummary.log_score is deprecated: it is a loss, use log_loss", DeprecationWarning, stacklevel=2)
        return self.log_loss


def score_summary(p_yes: Any, outcomes: Any, n_bins: int = 10, eps: float = LOG_LOSS_EPS) -> ScoreSummary:
    """Brier score, log score, ECE, reliability table and Murphy decomposition in one pass.

    Equivalent to calling :func:`brier_score`, :func:`log_loss`, :func:`expected_calibration_error`,
    :func:`reliability_diagram` and :func:`murphy_decomposition`, but validates and bins once.

    Parameters
    ----------
    p_yes : array-like of shape (n_questions,)
        Forecast probability of Yes, in [0, 1]; no NaN.
    outcomes : array-like of shape (n_questions,)
        Resolutions: 1 for Yes, 0 for No; no NaN.
    n_bins : int, default=10
        Number of equal-width calibration bins.
    eps : float, default=LOG_LOSS_EPS
        Log-loss clipping (see :func:`benchmarks.scoring.log_loss`).

    Returns
    -------
    ScoreSummary

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for invalid input (see :func:`brier_score`) or ``n_bins < 1``.

    Examples
    --------
    >>> s = score_summary([0.9, 0.2, 0.5], [1, 1, 0])
    >>> round(s.brier, 4), s.n
    (0.3, 3)
    """
    n_bins = check_n_bins(n_bins)
    if not 0 < eps < 0.5:
        raise DataValidationError(f"eps must be in (0, 0.5); got {eps!r}", field="eps", value=eps)
    p, o = validate_forecasts(p_yes, outcomes)
    n = p.size
    bs = p - o
    bs *= bs
    brier = float(bs.sum() / n)
    b = calibration_bins(p, o, n_bins)
    return ScoreSummary(
        n=n,
        brier=brier,
        log_loss=float(log_loss_unchecked(p, o, eps).sum() / n),
        ece=ece_of_bins(b, n),
        reliability_table=reliability_frame_of_bins(b, n_bins),
        murphy=murphy_of_bins(p, o, b, brier),
        brier_scores=bs,
    )
