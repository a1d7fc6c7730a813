"""Per-question scores of multiple-choice forecasts, vectorised over questions with the same number of options.

``forecasts`` is ``(n_questions, k)`` (each row a probability vector), ``outcomes`` ``(n_questions,)`` the
index of the option that happened.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agent_schemas.errors import DataValidationError
from agent_schemas.probabilities import check_probabilities

__all__ = ["LOG_EPS", "baseline_score", "brier", "checked", "log_loss", "one_hot", "rps"]

#: Clipping of the probability of the outcome inside a logarithm (float64 machine epsilon, as sklearn).
LOG_EPS = float(np.finfo(np.float64).eps)


def checked(forecasts: Any, outcomes: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(p, o)``: forecasts as ``(n, k)`` probabilities, outcomes as int indices ``(n,)`` in ``[0, k)``.

    Raises
    ------
    DataValidationError
        For probabilities outside [0, 1] or NaN, other shapes, or an outcome that is not an option's index.
    """
    p = check_probabilities(forecasts, "forecasts", ndim=2, shape="(n_questions, n_options)")
    o = np.asarray(outcomes)
    if o.shape != (p.shape[0],):
        raise DataValidationError(f"outcomes must have shape ({p.shape[0]},); got {o.shape}", field="outcomes")
    bad = ~np.isin(o, np.arange(p.shape[1]))
    if bad.any():
        i = int(np.argmax(bad))
        raise DataValidationError(f"outcomes must be option indices 0 to {p.shape[1] - 1}: {o[i]!r} at index {i}",
                                  field="outcomes", row=i, value=o[i])
    return p, o.astype(np.int64)


def one_hot(o: np.ndarray, k: int) -> np.ndarray:
    """``(n, k)`` indicator of the option that happened."""
    out = np.zeros((o.shape[0], k))
    out[np.arange(o.shape[0]), o] = 1.0
    return out


def brier(p: np.ndarray, o: np.ndarray) -> np.ndarray:
    """Multi-category Brier score :math:`\\sum_k (p_k - o_k)^2` in [0, 2] (Brier 1950, *Monthly Weather
    Review* 78(1), the original multi-category form). Two options score twice the binary Brier score."""
    d = p - one_hot(o, p.shape[1])
    return (d * d).sum(axis=1)


def log_loss(p: np.ndarray, o: np.ndarray, eps: float = LOG_EPS) -> np.ndarray:
    """:math:`-\\ln p_{o}` in nats, the probability clipped to ``[eps, 1]``."""
    return -np.log(np.clip(p[np.arange(p.shape[0]), o], eps, 1.0))


def rps(p: np.ndarray, o: np.ndarray) -> np.ndarray:
    """Ranked probability score of ordered options: the mean over the ``k - 1`` cumulative splits of
    :math:`(P_j - O_j)^2`, :math:`P_j = \\sum_{i \\le j} p_i` (Epstein 1969, *J. Appl. Meteor.* 8), in [0, 1]:
    :func:`scoringrules.rps_score` (the sum over the splits) divided by ``k - 1``, the normalisation of the
    FluSight hub's scoring."""
    import scoringrules  # noqa: PLC0415 - 0.9 s to import; only ordered options need it

    return np.asarray(scoringrules.rps_score(o + 1, p), dtype=np.float64) / (p.shape[1] - 1)


def baseline_score(p: np.ndarray, o: np.ndarray, eps: float = LOG_EPS) -> np.ndarray:
    """Metaculus's baseline score, :math:`100 \\ln(k\\, p_o) / \\ln k`: 0 for equal probabilities, 100 for
    certainty on the outcome, higher is better (Metaculus, ``scoring/score_math.py``, baseline accuracy)."""
    k = p.shape[1]
    return 100.0 * np.log(k * np.clip(p[np.arange(p.shape[0]), o], eps, 1.0)) / np.log(k)
