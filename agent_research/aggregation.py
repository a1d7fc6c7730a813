"""Fitted recalibration of pooled p_yes (extremizing factor, Platt scaling), and the binary pooling rules.

The pooling rules themselves (mean, median, min, max, trimmed mean, geometric mean of odds, extremized)
belong to the binary question kind, :mod:`agent_schemas.kinds.binary.pools`, which documents each rule and
its source; they are re-exported here under their long-standing names. This module adds what is fitted on
resolved questions: :func:`fit_extremizing_factor` (Satopää et al. 2014) and :func:`fit_platt_scaling`
(Platt 1999).

References
----------
.. [1] Satopää, V. A., Baron, J., Foster, D. P., Mellers, B. A., Tetlock, P. E., & Ungar, L. H. (2014).
   Combining multiple probability predictions using a simple logit model. *International Journal of
   Forecasting*, 30(2), 344-356.
.. [2] Platt, J. (1999). Probabilistic outputs for support vector machines and comparisons to regularized
   likelihood methods. *Advances in Large Margin Classifiers*, 61-74.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from agent_schemas.errors import DataValidationError
from agent_schemas.kinds.binary.pools import (
    AGGREGATORS,
    DEFAULT_EXTREMIZING_FACTOR,
    LOGIT_EPS,
    aggregate,
    aggregate_many,
    as_members,
    check_eps,
    expit,
    extremized,
    geomean_odds,
    load_scipy_special,
    logit,
    max,
    mean,
    median,
    min,
    nan_row_mean,
    trimmed_mean,
)
from agent_schemas.probabilities import check_probabilities

__all__ = [
    "AGGREGATORS",
    "DEFAULT_EXTREMIZING_FACTOR",
    "LOGIT_EPS",
    "PlattScaler",
    "aggregate",
    "aggregate_many",
    "extremized",
    "fit_extremizing_factor",
    "fit_platt_scaling",
    "geomean_odds",
    "load_scipy_special",
    "max",
    "mean",
    "median",
    "min",
    "trimmed_mean",
]


def _as_probs_1d(p: Any, name: str) -> np.ndarray:
    return check_probabilities(p, name, ndim=1, shape="(n_questions,)")


def _as_vector(values: Any, n: int, name: str, what: str) -> np.ndarray:
    """``values`` as a float array of shape (n,), or a DataValidationError naming ``name`` (``what``: the values it takes)."""
    try:
        v = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataValidationError(f"{name} must be {what}: {exc}", field=name) from exc
    if v.shape != (n,):
        raise DataValidationError(f"{name} must have shape ({n},) to match the forecasts; got {v.shape}", field=name)
    return v


def _first_bad(v: np.ndarray, bad: np.ndarray, name: str, rule: str) -> None:
    if bad.any():
        i = int(np.argmax(bad))
        raise DataValidationError(f"{name} must be {rule}: {float(v[i])!r} at index {i}", field=name, row=i, value=float(v[i]))


def _as_weights(weights: Any, n: int) -> np.ndarray:
    w = _as_vector(weights, n, "sample_weight", "numbers")
    _first_bad(w, ~np.isfinite(w) | (w < 0), "sample_weight", "finite and >= 0")
    if not w.sum() > 0:
        raise DataValidationError("sample_weight is 0 for every question: nothing to fit", field="sample_weight", value=0)
    return w


def _as_outcomes(outcomes: Any, n: int) -> np.ndarray:
    o = _as_vector(outcomes, n, "outcomes", "0/1 numbers")
    _first_bad(o, (o != 0) & (o != 1), "outcomes", "0 or 1")  # NaN is also bad here: unresolved questions cannot be fitted
    if n < 2:
        raise DataValidationError(f"need at least 2 resolved outcomes to fit; got {n}", field="outcomes", value=n)
    n_yes = int(o.sum())
    if n_yes in (0, n):
        raise DataValidationError(
            f"outcomes contain a single class ({n_yes} Yes of {n}); fitting needs both Yes and No outcomes",
            field="outcomes",
            value=n_yes,
        )
    return o



# --- fitted recalibration ------------------------------------------------------------------------


def fit_extremizing_factor(
    p_members: Any,
    outcomes: Any,
    bounds: tuple[float, float] = (0.0, 10.0),
    eps: float = LOGIT_EPS,
) -> float:
    """Fit the extremizing factor ``d`` of :func:`extremized` by maximum likelihood.

    With :math:`z_q = \\frac1{m_q}\\sum_i \\operatorname{logit} p_{qi}` (members clipped to ``[eps, 1-eps]``),
    minimises the log loss :math:`\\sum_q \\log(1 + e^{-s_q d z_q})`, :math:`s_q = 2 o_q - 1`, over ``d`` in
    ``bounds`` with :func:`scipy.optimize.minimize_scalar` (bounded Brent). This is the maximum-likelihood
    estimate of Satopää et al. (2014)'s logit model without intercept. A result at a bound means the
    optimum lies outside ``bounds`` (e.g. the members are perfectly separated).

    Parameters
    ----------
    p_members : array-like of shape (n_questions, n_members)
        Member probabilities of Yes in [0, 1]; NaN marks a missing member. Every question needs at least
        one member.
    outcomes : array-like of shape (n_questions,)
        Resolutions, 1 for Yes and 0 for No; both classes must occur.
    bounds : (float, float), default=(0.0, 10.0)
        Search interval for ``d``.
    eps : float, default=LOGIT_EPS (1e-4)
        Clipping before the logit.

    Returns
    -------
    float
        The fitted ``d``.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for bad probabilities, a question with no member, outcomes not 0/1, fewer than
        2 outcomes, a single outcome class, or invalid ``bounds``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(0, 1.5, size=4000)               # members' mean log-odds
    >>> y = rng.random(4000) < 1 / (1 + np.exp(-2 * z))  # truth is twice as extreme
    >>> members = 1 / (1 + np.exp(-np.stack([z, z], axis=1)))
    >>> round(fit_extremizing_factor(members, y), 1)
    2.0
    """
    check_eps(eps)
    lo, hi = bounds
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise DataValidationError(f"bounds must be finite with low < high; got {bounds!r}", field="bounds", value=bounds)
    arr = as_members(p_members, "p_members")
    z = nan_row_mean(logit(arr, eps)) if arr.shape[1] else np.full(arr.shape[0], np.nan)
    if np.isnan(z).any():
        row = int(np.argmax(np.isnan(z)))
        raise DataValidationError(f"p_members row {row} has no member (all NaN); drop it before fitting", field="p_members", row=row)
    o = _as_outcomes(outcomes, arr.shape[0])
    sz = (2 * o - 1) * z

    def nll(d: float) -> float:
        return float(np.logaddexp(0.0, -d * sz).sum())

    from scipy import optimize  # imported here, not at module level: most of the package's import time

    res = optimize.minimize_scalar(nll, bounds=(lo, hi), method="bounded", options={"xatol": 1e-8})
    return float(res.x)


@dataclass(frozen=True)
class PlattScaler:
    """Platt scaling, :math:`\\hat p = \\sigma(a \\cdot \\operatorname{logit} p + b)` (Platt 1999).

    Attributes
    ----------
    a : float
        Slope on the log-odds (> 1 extremizes, < 1 shrinks towards 0.5).
    b : float
        Intercept on the log-odds (> 0 shifts towards Yes).
    eps : float
        Inputs are clipped to ``[eps, 1 - eps]`` before the logit.
    """

    a: float
    b: float
    eps: float = LOGIT_EPS

    def transform(self, p: Any) -> np.ndarray:
        """Recalibrate probabilities.

        Parameters
        ----------
        p : array-like of any shape
            p_yes in [0, 1]; NaN passes through as NaN.

        Returns
        -------
        ndarray of the same shape
            :math:`\\sigma(a \\cdot \\operatorname{logit}(\\mathrm{clip}(p)) + b)`.

        Raises
        ------
        DataValidationError
            (a ``ValueError``) if ``p`` has values outside [0, 1].

        Examples
        --------
        >>> PlattScaler(a=2.0, b=0.0).transform([0.5, 0.75])
        array([0.5, 0.9])
        """
        arr = check_probabilities(p, "p", allow_nan=True)
        return expit(self.a * logit(arr, self.eps) + self.b)


def fit_platt_scaling(
    p: Any,
    outcomes: Any,
    eps: float = LOGIT_EPS,
    target_smoothing: bool = False,
    sample_weight: Any = None,
) -> PlattScaler:
    """Fit Platt scaling :math:`\\sigma(a \\cdot \\operatorname{logit} p + b)` by minimising the log loss.

    A logistic regression of the outcomes on ``logit(p)`` (Platt 1999), solved with
    :func:`scipy.optimize.minimize` (L-BFGS-B, analytic gradient). Unpenalised by default, so for
    perfectly separated data the maximum-likelihood ``a`` is unbounded; ``target_smoothing=True`` uses
    Platt's regularised targets ``(N+ + 1) / (N+ + 2)`` and ``1 / (N- + 2)`` instead of 1 and 0, which
    always gives a finite fit. With ``sample_weight`` each question's log loss counts ``w_q`` times
    (as ``sample_weight`` in :class:`sklearn.linear_model.LogisticRegression`), and ``N+``, ``N-`` are
    the weight sums of each outcome: integer weights fit as the questions repeated that often.

    Parameters
    ----------
    p : array-like of shape (n_questions,)
        p_yes in [0, 1] to recalibrate; no NaN.
    outcomes : array-like of shape (n_questions,)
        Resolutions, 1 for Yes and 0 for No; at least 2, both classes.
    eps : float, default=LOGIT_EPS (1e-4)
        Clipping before the logit.
    target_smoothing : bool, default=False
        Use Platt's (1999) smoothed targets.
    sample_weight : array-like of shape (n_questions,), optional
        Weight of each question, finite and >= 0, not all 0 (default: 1 each).

    Returns
    -------
    PlattScaler
        The fitted ``(a, b)``; call ``.transform(p)``.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for bad probabilities or NaN, outcomes not 0/1, fewer than 2 outcomes, a
        single outcome class, or weights of another shape, negative, not finite or all 0.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> x = rng.normal(0, 2, size=20000)
    >>> y = rng.random(20000) < 1 / (1 + np.exp(-(0.5 * x - 1.0)))
    >>> s = fit_platt_scaling(1 / (1 + np.exp(-x)), y)
    >>> round(s.a, 1), round(s.b, 1)
    (0.5, -1.0)
    """
    check_eps(eps)
    arr = _as_probs_1d(p, "p")
    o = _as_outcomes(outcomes, arr.shape[0])
    w = np.ones_like(o) if sample_weight is None else _as_weights(sample_weight, o.shape[0])
    if target_smoothing:
        n_pos = float(w @ o)
        n_neg = float(w.sum()) - n_pos
        t = np.where(o == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
    else:
        t = o
    x = logit(arr, eps)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        a, b = theta
        f = a * x + b
        # -[t log s(f) + (1-t) log s(-f)] = logaddexp(0, f) - t f
        value = float(w @ (np.logaddexp(0.0, f) - t * f))
        r = w * (expit(f) - t)
        return value, np.array([float(r @ x), float(r.sum())])

    from scipy import optimize  # imported here, not at module level: most of the package's import time

    res = optimize.minimize(loss, x0=np.array([1.0, 0.0]), jac=True, method="L-BFGS-B",
                            options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 1000})
    a, b = (float(v) for v in res.x)
    return PlattScaler(a=a, b=b, eps=eps)
