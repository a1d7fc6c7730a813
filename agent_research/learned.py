"""Weighted linear pools whose weights are learned from resolved questions.

A weighted linear opinion pool combines ``K`` probabilities of a question as

.. math:: \\hat p_q = \\frac{\\sum_k w_k\\, m_{qk}\\, p_{qk}}{\\sum_k w_k\\, m_{qk}}, \\qquad w_k \\ge 0,\\ \\sum_k w_k = 1,

where ``m_qk`` is 1 when input ``k`` is present for question ``q`` (a failed member or a specialist
that failed is NaN and left out, the weights of the others renormalised). The inputs are the members of
an ensemble (learned member weights) or the outputs of reconciliation methods such as mean, debate and
supervisor (a learned blend). :func:`fit_pool_weights` fits the weights by penalised maximum likelihood:

.. math:: \\min_w\\ \\sum_q \\ell(\\hat p_q, o_q) + \\lambda \\sum_k (w_k - 1/K)^2

with the log loss ``l`` (the same criterion as :func:`agent_research.aggregation.fit_extremizing_factor`
and :func:`~agent_research.aggregation.fit_platt_scaling`) and a ridge pull ``lambda`` towards equal
weights, so that a few dozen questions cannot drive a weight to 0 by chance; ``lambda = 10`` weighs a unit
squared deviation like ten questions' log loss. Members of one ensemble are strongly correlated, so their
likelihood is flat along the weights and a weaker pull lets noise set them: on 2,000 simulated questions
with three equally good members, ``lambda = 1`` left weights between 0.19 and 0.39 and a pool measurably
worse than the plain mean, ``lambda = 10`` one indistinguishable from it, while a member biased by one unit
of log-odds still got weight 0.00 (``tests/benchmarks/test_fitted.py``). The
weights are parametrised by a softmax and solved with BFGS on an analytic gradient; each question's pool is computed
from its present inputs' parameters less their largest, so a sparse panel (each member answering a few questions)
never divides 0 by 0, and no fitted weight is below ``exp(-THETA_SPAN)`` of the largest.

These functions only fit what they are given: who may see which outcomes (no look-ahead) is decided
by the caller, the benchmark harness (:mod:`benchmarks.protocol.fitted`).

References
----------
Stone, M. (1961). The opinion pool. *Annals of Mathematical Statistics*, 32(4), 1339-1342 (the linear
pool); Ranjan, R., & Gneiting, T. (2010). Combining probability forecasts. *JRSS B*, 72(1), 71-91
(weights fitted by likelihood).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agent_schemas.errors import DataValidationError

__all__ = ["DEFAULT_POOL_PENALTY", "POOL_EPS", "THETA_SPAN", "fit_pool_weights", "weighted_pool"]

#: Ridge pull of :func:`fit_pool_weights` towards equal weights (log-loss units per unit squared deviation).
DEFAULT_POOL_PENALTY = 10.0
#: Pooled probabilities are clipped to ``[POOL_EPS, 1 - POOL_EPS]`` inside the log loss.
POOL_EPS = 1e-4
#: :func:`fit_pool_weights` gives no weight below ``exp(-THETA_SPAN)`` (about 4e-18) of the largest: a weight that
#: underflows to 0.0 would leave a question whose inputs all have it with no pooled probability.
THETA_SPAN = 40.0


def _inputs(p: Any) -> np.ndarray:
    try:
        arr = np.asarray(p, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataValidationError(f"p must be numeric probabilities: {exc}", field="p") from exc
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise DataValidationError(f"p must be 2-D of shape (n_questions, n_inputs) with n_inputs >= 1; got shape {arr.shape}",
                                  field="p", value=arr.shape)
    bad = (arr < 0) | (arr > 1)
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        raise DataValidationError(f"p has values outside [0, 1]: {float(arr[row, col])!r} at (row {row}, column {col})",
                                  field="p", row=row, value=float(arr[row, col]))
    return arr


def _weights(weights: Any, k: int) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    if w.shape != (k,) or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise DataValidationError(f"weights must be {k} finite non-negative numbers with a positive sum; got {weights!r}",
                                  field="weights", value=str(weights))
    return w / w.sum()


def weighted_pool(p: Any, weights: Any) -> np.ndarray:
    """The weighted linear pool of each question's present inputs (module docstring).

    Parameters
    ----------
    p : array-like of shape (n_questions, n_inputs)
        Probabilities of Yes in [0, 1]; NaN marks a missing input.
    weights : array-like of shape (n_inputs,)
        Non-negative weights (normalised to sum 1).

    Returns
    -------
    ndarray of shape (n_questions,)
        Pooled p_yes; NaN for a question whose present inputs all have weight 0 (or none is present).

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for bad shapes, probabilities outside [0, 1] or invalid weights.

    Examples
    --------
    >>> weighted_pool([[0.2, 0.8], [0.2, np.nan]], [0.75, 0.25])
    array([0.35, 0.2 ])
    """
    arr = _inputs(p)
    w = _weights(weights, arr.shape[1])
    present = ~np.isnan(arr)
    num = np.where(present, arr, 0.0) @ w
    den = present.astype(float) @ w
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def fit_pool_weights(p: Any, outcomes: Any, *, penalty: float = DEFAULT_POOL_PENALTY) -> np.ndarray:
    """Fit the weights of :func:`weighted_pool` by penalised maximum likelihood (module docstring).

    Parameters
    ----------
    p : array-like of shape (n_questions, n_inputs)
        Probabilities of Yes in [0, 1]; NaN marks a missing input. Questions with no input are ignored.
    outcomes : array-like of shape (n_questions,)
        Resolutions, 1 for Yes and 0 for No; both must occur.
    penalty : float, default=DEFAULT_POOL_PENALTY (10.0)
        Ridge pull towards equal weights, >= 0 (0: plain maximum likelihood).

    Returns
    -------
    ndarray of shape (n_inputs,)
        Weights >= 0 summing to 1. An input never present keeps the weight the penalty gives it.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for bad probabilities, outcomes not 0/1 or of one class only, fewer than 2
        questions with an input, or a negative penalty.

    Examples
    --------
    A member that always says the opposite of what happens gets (almost) no weight:

    >>> good = np.array([0.8, 0.3, 0.7, 0.2] * 25); o = np.array([1, 0, 1, 0] * 25)
    >>> w = fit_pool_weights(np.column_stack([good, 1 - good]), o)
    >>> bool(w[0] > 0.95)
    True
    """
    arr = _inputs(p)
    o = np.asarray(outcomes, dtype=float)
    if o.shape != (arr.shape[0],):
        raise DataValidationError(f"outcomes must have shape ({arr.shape[0]},) to match p; got {o.shape}", field="outcomes")
    if not ((o == 0) | (o == 1)).all():
        i = int(np.argmax(~((o == 0) | (o == 1))))
        raise DataValidationError(f"outcomes must be 0 or 1: {float(o[i])!r} at index {i}", field="outcomes", row=i, value=float(o[i]))
    if not (np.isfinite(penalty) and penalty >= 0):
        raise DataValidationError(f"penalty must be a finite number >= 0; got {penalty!r}", field="penalty", value=penalty)
    present = ~np.isnan(arr)
    keep = present.any(axis=1)
    arr, present, o = arr[keep], present[keep], o[keep]
    n, k = arr.shape
    if n < 2 or o.min() == o.max():
        raise DataValidationError(f"need at least 2 questions with both outcomes to fit; got {n} ({int(o.sum())} Yes)",
                                  field="outcomes", value=n)
    from scipy import optimize, special  # imported here, not at module level: most of the package's import time

    x = np.where(present, arr, 0.0)
    prior = np.full(k, 1.0 / k)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w = special.softmax(theta)
        # each question's weights among its present inputs, r_qk = m_qk w_k / sum_j m_qj w_j, from theta less its
        # largest present value: never 0 / 0, also where the global softmax underflows (sparse panels)
        shifted = np.where(present, theta - np.max(np.where(present, theta, -np.inf), axis=1, keepdims=True), -np.inf)
        r = np.exp(shifted)
        r /= r.sum(axis=1, keepdims=True)
        pq = np.clip((r * x).sum(axis=1), POOL_EPS, 1 - POOL_EPS)
        value = -float(np.sum(o * np.log(pq) + (1 - o) * np.log1p(-pq))) + penalty * float(np.sum((w - prior) ** 2))
        dl_dp = (pq - o) / (pq * (1 - pq))
        # d p_q / d theta_k = r_qk (p_qk - p_q); the penalty through the softmax
        g_pen = 2 * penalty * (w - prior)
        return value, (dl_dp[:, None] * r * (x - pq[:, None])).sum(axis=0) + w * (g_pen - w @ g_pen)

    res = optimize.minimize(loss, x0=np.zeros(k), jac=True, method="BFGS", options={"gtol": 1e-7, "maxiter": 500})
    # no weight below exp(-THETA_SPAN) of the largest (instead of an underflow to 0.0, which would leave a question whose
    # inputs all have such a weight with no pooled probability); a weight that small changes no other question's pool
    return special.softmax(np.maximum(res.x, res.x.max() - THETA_SPAN))
