"""Per-question proper scoring rules: :func:`brier_score` and :func:`log_loss` (both losses: lower is better)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from agent_schemas.errors import DataValidationError
from agent_schemas.kinds.binary import rules as binary_rules
from benchmarks.scoring.validation import validate_forecasts

__all__ = ["LOG_LOSS_EPS", "brier_score", "log_loss", "log_loss_unchecked", "log_score"]

LOG_LOSS_EPS: float = binary_rules.LOG_LOSS_EPS
"""Default clipping of :func:`log_loss` (2.22e-16, as :func:`sklearn.metrics.log_loss` for float64)."""


def brier_score(p_yes: Any, outcomes: Any) -> np.ndarray:
    """Per-question Brier score, :math:`(p_i - o_i)^2`.

    Lower is better: 0 for a certain correct forecast, 1 for a certain wrong one, 0.25 for always
    answering 0.5. The mean over questions is :func:`sklearn.metrics.brier_score_loss`.

    Parameters
    ----------
    p_yes : array-like of shape (n_questions,)
        Forecast probability of Yes, in [0, 1]; no NaN.
    outcomes : array-like of shape (n_questions,)
        Resolutions: 1 for Yes, 0 for No (bool accepted); no NaN.

    Returns
    -------
    ndarray of shape (n_questions,)
        Squared error per question, in [0, 1].

    Raises
    ------
    DataValidationError
        (a ``ValueError``) if ``p_yes`` has NaN or values outside [0, 1], ``outcomes`` are not 0/1, the
        shapes differ or the input is empty. The message names the index and value.

    References
    ----------
    Brier (1950), *Monthly Weather Review* 78(1).

    Examples
    --------
    >>> brier_score([0.9, 0.2, 0.5], [1, 1, 0])
    array([0.01, 0.64, 0.25])
    """
    p, o = validate_forecasts(p_yes, outcomes)
    return binary_rules.brier(p, o)


def log_loss(p_yes: Any, outcomes: Any, eps: float = LOG_LOSS_EPS) -> np.ndarray:
    """Per-question log loss: the negative log-likelihood :math:`-\\ln q_i` in nats.

    Here :math:`q_i = p_i` if the question resolved Yes and :math:`1 - p_i` if No, clipped to
    ``[eps, 1 - eps]``, so the loss is never NaN or infinite: 0 is perfect, lower is better, and a certain
    wrong forecast costs ``-ln(eps)`` (36.04 with the default). It follows the field's naming: a
    ``*_loss`` is lower-better; the log score as a reward (:math:`\\ln q_i`, higher better) is its
    negative. With the default ``eps`` (float64 machine epsilon) the mean equals
    :func:`sklearn.metrics.log_loss`, which clips the same way.

    Parameters
    ----------
    p_yes : array-like of shape (n_questions,)
        Forecast probability of Yes, in [0, 1]; no NaN.
    outcomes : array-like of shape (n_questions,)
        Resolutions: 1 for Yes, 0 for No (bool accepted); no NaN.
    eps : float, default=LOG_LOSS_EPS (2.22e-16)
        Clipping of the probability given to the realised outcome, in (0, 0.5).

    Returns
    -------
    ndarray of shape (n_questions,)
        Negative log-likelihood per question, in [-ln(1 - eps), -ln(eps)].

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for invalid ``p_yes``/``outcomes`` (see :func:`brier_score`) or ``eps``.

    References
    ----------
    Good, I. J. (1952). Rational decisions. *JRSS B*, 14(1), 107-114.

    Examples
    --------
    >>> log_loss([0.5, 0.8, 0.0], [1, 0, 0]).round(4)
    array([0.6931, 1.6094, 0.    ])
    """
    if not 0 < eps < 0.5:
        raise DataValidationError(f"eps must be in (0, 0.5); got {eps!r}", field="eps", value=eps)
    p, o = validate_forecasts(p_yes, outcomes)
    return log_loss_unchecked(p, o, eps)


def log_score(p_yes: Any, outcomes: Any, eps: float = LOG_LOSS_EPS) -> np.ndarray:
    """Deprecated name of :func:`log_loss` (it returned the loss); warns, and goes in the next release."""
    warnings.warn("benchmarks.scoring.log_score is deprecated: it is a loss, use log_loss", DeprecationWarning, stacklevel=2)
    return log_loss(p_yes, outcomes, eps)


def log_loss_unchecked(p: np.ndarray, o: np.ndarray, eps: float) -> np.ndarray:
    """:func:`log_loss` of arrays already validated (float64, same shape, p in [0, 1], o in {0, 1}): the binary
    kind's rule (:func:`agent_schemas.kinds.binary.rules.log_loss`)."""
    return binary_rules.log_loss(p, o, eps)
