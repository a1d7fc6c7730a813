"""Per-question scoring rules of the binary kind, on validated arrays (the checked public functions are
:func:`benchmarks.scoring.brier_score` and :func:`benchmarks.scoring.log_loss`, which call these)."""

from __future__ import annotations

import numpy as np

__all__ = ["LOG_LOSS_EPS", "baseline_score", "brier", "log_loss"]

LOG_LOSS_EPS: float = float(np.finfo(np.float64).eps)
"""Clipping of the probability given to the outcome (2.22e-16, as :func:`sklearn.metrics.log_loss` for float64)."""


def brier(p: np.ndarray, o: np.ndarray) -> np.ndarray:
    """Brier score per question, :math:`(p - o)^2` (Brier 1950, *Monthly Weather Review* 78(1)); ``p`` in
    [0, 1], ``o`` 0/1, both shape ``(n,)``; returns ``(n,)`` in [0, 1]."""
    d = p - o
    return d * d


def log_loss(p: np.ndarray, o: np.ndarray, eps: float = LOG_LOSS_EPS) -> np.ndarray:
    """Negative log-likelihood of the outcome in nats, :math:`-\\ln q`, ``q = p`` if Yes else ``1 - p``,
    clipped to ``[eps, 1 - eps]`` as :func:`sklearn.metrics.log_loss`; shape ``(n,)``."""
    q = np.where(o == 1.0, p, 1.0 - p)  # a new array: the in-place steps below never touch the inputs
    np.clip(q, eps, 1.0 - eps, out=q)
    np.log(q, out=q)
    np.negative(q, out=q)
    return q


def baseline_score(p: np.ndarray, o: np.ndarray, eps: float = LOG_LOSS_EPS) -> np.ndarray:
    """Metaculus's baseline score, :math:`100 (\\log_2 q + 1)` with ``q`` the probability given to the
    outcome: 0 for 50%, 100 for certainty on the outcome, higher is better (Metaculus Scores FAQ, "What is
    the Baseline score?": ``100 * ln(N q) / ln N`` with N = 2 options); ``q`` clipped as :func:`log_loss`."""
    q = np.clip(np.where(o == 1, p, 1.0 - p), eps, 1.0 - eps)
    return 100.0 * (np.log2(q) + 1.0)
