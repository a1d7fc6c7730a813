"""Pooling rules of the binary kind: ensemble members' p_yes into one probability per question.

Every aggregator is a pure, vectorised function over an array ``p`` of shape
``(n_questions, n_members)`` holding each member's probability of Yes in [0, 1], with NaN for a
member that did not answer (a failed member is never replaced by a default probability). Each returns
an array of shape ``(n_questions,)``; a question whose members are all NaN aggregates to NaN, silently
(no "mean of empty slice" warnings).

Methods (names as in :data:`AGGREGATORS`):

``mean``
    Linear opinion pool, :math:`\\bar p = \\frac1m \\sum_i p_i`.
``median``
    Median of the members.
``min`` / ``max``
    Smallest / largest member p_yes. ``min`` is the design card's conservative aggregate.
``trimmed_mean``
    Mean after cutting ``floor(trim * m)`` members from each end, as :func:`scipy.stats.trim_mean`.
``geomean_odds``
    Geometric mean of odds, :math:`\\mathrm{odds} = (\\prod_i \\frac{p_i}{1-p_i})^{1/m}`, returned as a
    probability ``odds / (1 + odds)``; equivalently ``sigmoid(mean(logit(p_i)))`` (Satopää et al. 2014;
    Neyman & Roughgarden 2022).
``extremized``
    ``sigmoid(d * mean(logit(p_i)))`` with ``d = 1.5`` by default: the geometric mean of odds pushed away
    from 0.5 (Baron et al. 2014; the logit model of Satopää et al. 2014). Fit ``d`` on resolved questions
    with :func:`fit_extremizing_factor`.

Log-odds clipping
-----------------
Any probability entering a logit is first clipped to ``[LOGIT_EPS, 1 - LOGIT_EPS]`` with
``LOGIT_EPS = 1e-4``, so a member answering exactly 0 or 1 contributes a log-odds of about -9.21 / +9.21
instead of -inf / +inf (which would make the whole question's aggregate 0, 1 or NaN). Members within
``[1e-4, 1 - 1e-4]`` are unaffected. The value bounds the pull of one certain member: with five members,
one at 0 and four at 0.3, the geometric mean of odds is 0.074 (it would be 0 without clipping).

References
----------
.. [1] Satopää, V. A., Baron, J., Foster, D. P., Mellers, B. A., Tetlock, P. E., & Ungar, L. H. (2014).
   Combining multiple probability predictions using a simple logit model. *International Journal of
   Forecasting*, 30(2), 344-356.
.. [2] Baron, J., Mellers, B. A., Tetlock, P. E., Stone, E., & Ungar, L. H. (2014). Two reasons to make
   aggregated probability forecasts more extreme. *Decision Analysis*, 11(2), 133-145.
.. [3] Neyman, E., & Roughgarden, T. (2022). Are you smarter than a random expert? The robust
   aggregation of substitutable signals. *Proceedings of the 23rd ACM Conference on Economics and
   Computation (EC '22)*.
.. [4] Platt, J. (1999). Probabilistic outputs for support vector machines and comparisons to regularized
   likelihood methods. *Advances in Large Margin Classifiers*, 61-74.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from agent_schemas.errors import DataValidationError
from agent_schemas.probabilities import check_probabilities

__all__ = [
    "AGGREGATORS", "DEFAULT_EXTREMIZING_FACTOR", "LOGIT_EPS", "aggregate", "aggregate_many", "as_members", "check_eps",
    "expit", "extremized", "geomean_odds", "load_scipy_special", "logit", "max", "mean", "median", "min", "nan_row_mean", "trimmed_mean",
]

LOGIT_EPS: float = 1e-4
"""Probabilities are clipped to ``[LOGIT_EPS, 1 - LOGIT_EPS]`` before any logit (|log-odds| <= 9.21)."""

DEFAULT_EXTREMIZING_FACTOR: float = 1.5
"""Default ``d`` of :func:`extremized`: a moderate push; fit it with :func:`fit_extremizing_factor`."""

# --- validation --------------------------------------------------------------------------------


def as_members(p: Any, name: str = "p") -> np.ndarray:
    """Return ``p`` as a float 2-D array (NaN: a member that did not answer), raising DataValidationError
    for a bad shape or values (:func:`agent_schemas.probabilities.check_probabilities`)."""
    return check_probabilities(p, name, ndim=2, shape="(n_questions, n_members)", allow_nan=True,
                               hint="For a single question pass [members] wrapped in a list, e.g. np.atleast_2d(members).")


def check_eps(eps: float) -> None:
    if not 0 < eps < 0.5:
        raise DataValidationError(f"eps must be in (0, 0.5); got {eps!r}", field="eps", value=eps)


def load_scipy_special() -> None:
    """Import :mod:`scipy.special` (the logistic function of the pools) now: a pipeline does so when it is built,
    so the import (about half a second) never runs on an event loop with calls in flight (issue 38: a run's
    per-minute pace fell from 0.95 to 0.85 of its limit when the first question's aggregates imported it)."""
    import scipy.special  # noqa: F401, PLC0415


def expit(x: Any) -> Any:
    """``scipy.special.expit`` (the logistic function), imported on first use: scipy's import is most of the
    package's import time (``benchmarks/perf/import_time.py``)."""
    from scipy.special import expit as scipy_expit  # noqa: PLC0415

    return scipy_expit(x)


def logit(p: np.ndarray, eps: float) -> np.ndarray:
    q = np.clip(p, eps, 1 - eps)
    return np.log(q / (1.0 - q))  # special.logit's formula; its ufunc is ~4x slower on a million members


def nan_row_mean(x: np.ndarray) -> np.ndarray:
    """Row mean over non-NaN entries; NaN (no warning) for an all-NaN row."""
    present = ~np.isnan(x)
    counts = present.sum(axis=1)
    sums = np.where(present, x, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts


def _counts(arr: np.ndarray) -> np.ndarray:
    """Members present per question (count), shape (n_questions,)."""
    return np.sum(~np.isnan(arr), axis=1)


def _mean_log_odds(arr: np.ndarray, eps: float) -> np.ndarray:
    """Mean log-odds of the members present (clipped to ``[eps, 1 - eps]``); NaN for a question with none."""
    return nan_row_mean(logit(arr, eps))


def _median_of_sorted(ordered: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Row medians of members sorted along axis 1 (NaN last), ``n`` present per row."""
    # Sort-based rather than np.nanmedian, whose masked-array path for short rows costs ~1 ms per call.
    rows = np.arange(ordered.shape[0])
    lo = ordered[rows, np.maximum((n - 1) // 2, 0)]  # the two middle members (the same one for odd n)
    hi = ordered[rows, n // 2]
    out = (lo + hi) / 2
    out[n == 0] = np.nan
    return out


def _trimmed_mean_of_sorted(ordered: np.ndarray, n: np.ndarray, trim: float) -> np.ndarray:
    """Row trimmed means (:func:`trimmed_mean`) of members sorted along axis 1 (NaN last), ``n`` present per row."""
    k = np.floor(trim * n).astype(np.int64)  # = int(proportiontocut * nobs) in scipy
    j = np.arange(ordered.shape[1])
    keep = (j >= k[:, None]) & (j < (n - k)[:, None])
    sums = np.where(keep, ordered, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / (n - 2 * k)


def _check_trim(trim: float) -> None:
    if not 0 <= trim < 0.5:
        raise DataValidationError(f"trim must be in [0, 0.5); got {trim!r}", field="trim", value=trim)


def _check_d(d: float) -> None:
    if not (np.isfinite(d) and d >= 0):
        raise DataValidationError(f"d must be a finite number >= 0; got {d!r}", field="d", value=d)


# --- aggregators ---------------------------------------------------------------------------------


def mean(p: Any) -> np.ndarray:
    """Linear opinion pool: the mean of the members' p_yes, :math:`\\frac1m\\sum_i p_i`.

    Parameters
    ----------
    p : array-like of shape (n_questions, n_members)
        Member probabilities of Yes in [0, 1]; NaN marks a missing member.

    Returns
    -------
    ndarray of shape (n_questions,)
        Mean over the members present; NaN for a question with no member.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) if ``p`` is not 2-D or has values outside [0, 1].

    Examples
    --------
    >>> mean([[0.2, 0.6, np.nan], [np.nan, np.nan, np.nan]])
    array([0.4, nan])
    """
    return nan_row_mean(as_members(p))


def median(p: Any) -> np.ndarray:
    """Median of the members' p_yes (the average of the two middle members for an even count).

    Parameters
    ----------
    p : array-like of shape (n_questions, n_members)
        Member probabilities of Yes in [0, 1]; NaN marks a missing member.

    Returns
    -------
    ndarray of shape (n_questions,)
        Median over the members present; NaN for a question with no member.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) if ``p`` is not 2-D or has values outside [0, 1].

    Examples
    --------
    >>> median([[0.1, 0.9, 0.3], [0.2, np.nan, 0.4]])
    array([0.3, 0.3])
    """
    arr = as_members(p)
    if arr.shape[1] == 0:
        return np.full(arr.shape[0], np.nan)
    return _median_of_sorted(np.sort(arr, axis=1), _counts(arr))


def min(p: Any) -> np.ndarray:  # noqa: A001 - the method's name in AGGREGATORS
    """Smallest member p_yes (the design card's conservative aggregate).

    Parameters
    ----------
    p : array-like of shape (n_questions, n_members)
        Member probabilities of Yes in [0, 1]; NaN marks a missing member.

    Returns
    -------
    ndarray of shape (n_questions,)
        Minimum over the members present; NaN for a question with no member.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) if ``p`` is not 2-D or has values outside [0, 1].

    Examples
    --------
    >>> min([[0.2, np.nan, 0.7], [np.nan, np.nan, np.nan]])
    array([0.2, nan])
    """
    arr = as_members(p)
    if arr.shape[1] == 0:
        return np.full(arr.shape[0], np.nan)
    return np.fmin.reduce(arr, axis=1)  # fmin ignores NaN unless all are NaN; never warns


def max(p: Any) -> np.ndarray:  # noqa: A001 - the method's name in AGGREGATORS
    """Largest member p_yes.

    Parameters
    ----------
    p : array-like of shape (n_questions, n_members)
        Member probabilities of Yes in [0, 1]; NaN marks a missing member.

    Returns
    -------
    ndarray of shape (n_questions,)
        Maximum over the members present; NaN for a question with no member.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) if ``p`` is not 2-D or has values outside [0, 1].

    Examples
    --------
    >>> max([[0.2, np.nan, 0.7]])
    array([0.7])
    """
    arr = as_members(p)
    if arr.shape[1] == 0:
        return np.full(arr.shape[0], np.nan)
    return np.fmax.reduce(arr, axis=1)


def trimmed_mean(p: Any, trim: float = 0.2) -> np.ndarray:
    """Trimmed mean of the members' p_yes, with :func:`scipy.stats.trim_mean` semantics per question.

    For a question with ``m`` members present, the ``k = floor(trim * m)`` smallest and ``k`` largest
    are cut and the remaining ``m - 2k`` are averaged. With ``trim < 0.5`` at least one member remains.

    Parameters
    ----------
    p : array-like of shape (n_questions, n_members)
        Member probabilities of Yes in [0, 1]; NaN marks a missing member.
    trim : float, default=0.2
        Proportion cut from each end, in [0, 0.5).

    Returns
    -------
    ndarray of shape (n_questions,)
        Trimmed mean over the members present; NaN for a question with no member.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) if ``p`` is not 2-D, has values outside [0, 1], or ``trim`` is outside [0, 0.5).

    Examples
    --------
    Five members, ``floor(0.2 * 5) = 1`` cut from each end; four members, none cut:

    >>> trimmed_mean([[0.0, 0.1, 0.2, 0.3, 1.0], [0.0, 0.1, 0.2, np.nan, 1.0]])
    array([0.2  , 0.325])
    """
    _check_trim(trim)
    arr = as_members(p)
    if arr.shape[1] == 0:
        return np.full(arr.shape[0], np.nan)
    return _trimmed_mean_of_sorted(np.sort(arr, axis=1), _counts(arr), trim)


def geomean_odds(p: Any, eps: float = LOGIT_EPS) -> np.ndarray:
    """Geometric mean of odds, returned as a probability.

    .. math:: \\mathrm{odds} = \\Big(\\prod_{i=1}^m \\frac{p_i}{1-p_i}\\Big)^{1/m}, \\qquad
              \\hat p = \\frac{\\mathrm{odds}}{1+\\mathrm{odds}} = \\sigma\\Big(\\frac1m\\sum_i \\operatorname{logit} p_i\\Big)

    This is the logit-model aggregate of Satopää et al. (2014) with ``d = 1`` and the "geometric mean of
    odds" studied as a robust aggregator by Neyman & Roughgarden (2022). Members are clipped to
    ``[eps, 1 - eps]`` first (see the module's note on :data:`LOGIT_EPS`).

    Parameters
    ----------
    p : array-like of shape (n_questions, n_members)
        Member probabilities of Yes in [0, 1]; NaN marks a missing member.
    eps : float, default=LOGIT_EPS (1e-4)
        Clipping before the logit, in (0, 0.5).

    Returns
    -------
    ndarray of shape (n_questions,)
        Aggregate p_yes in [eps, 1 - eps]; NaN for a question with no member.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) if ``p`` is not 2-D or has values outside [0, 1].

    References
    ----------
    Satopää et al. (2014), *Int. J. Forecasting* 30(2); Neyman & Roughgarden (2022), EC '22.

    Examples
    --------
    Odds 0.25 and 1 have geometric mean 0.5, i.e. p_yes 1/3; a 0 and a 1 member cancel:

    >>> geomean_odds([[0.2, 0.5], [0.0, 1.0]])
    array([0.33333333, 0.5       ])
    """
    return extremized(p, d=1.0, eps=eps)


def extremized(p: Any, d: float = DEFAULT_EXTREMIZING_FACTOR, eps: float = LOGIT_EPS) -> np.ndarray:
    """Extremized geometric mean of odds, :math:`\\hat p = \\sigma\\big(d \\cdot \\frac1m\\sum_i \\operatorname{logit} p_i\\big)`.

    ``d > 1`` pushes the aggregate away from 0.5. Baron et al. (2014) give two reasons aggregates should
    be more extreme than the members (members hold partial, partly independent information; members
    shrink towards 0.5), and Satopää et al. (2014) fit ``d`` (their ``a``) by maximum likelihood in this
    very logit model, finding values above 1. The default ``d = 1.5`` is a moderate choice, not a fitted
    value: fit ``d`` on resolved questions with :func:`fit_extremizing_factor`. ``d = 1`` gives
    :func:`geomean_odds`.

    Parameters
    ----------
    p : array-like of shape (n_questions, n_members)
        Member probabilities of Yes in [0, 1]; NaN marks a missing member.
    d : float, default=1.5
        Extremizing factor, >= 0 (``d < 1`` shrinks towards 0.5).
    eps : float, default=LOGIT_EPS (1e-4)
        Members are clipped to ``[eps, 1 - eps]`` before the logit, in (0, 0.5).

    Returns
    -------
    ndarray of shape (n_questions,)
        Aggregate p_yes in (0, 1); NaN for a question with no member.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) if ``p`` is not 2-D, has values outside [0, 1], or ``d < 0``.

    References
    ----------
    Baron et al. (2014), *Decision Analysis* 11(2); Satopää et al. (2014), *Int. J. Forecasting* 30(2).

    Examples
    --------
    Members 0.2 and 0.8 have mean log-odds 0 whatever ``d``; 0.6 and 0.8 are pushed beyond their
    geometric mean of odds (0.7101):

    >>> extremized([[0.2, 0.8], [0.6, 0.8]], d=2.0)
    array([0.5       , 0.85714286])
    """
    _check_d(d)
    check_eps(eps)
    arr = as_members(p)
    if arr.shape[1] == 0:
        return np.full(arr.shape[0], np.nan)
    return expit(d * _mean_log_odds(arr, eps))


AGGREGATORS: dict[str, Callable[[Any], np.ndarray]] = {
    "mean": mean,
    "median": median,
    "min": min,
    "max": max,
    "trimmed_mean": trimmed_mean,
    "geomean_odds": geomean_odds,
    "extremized": extremized,
}
"""Aggregation methods by name; each maps ``(n_questions, n_members)`` to ``(n_questions,)``."""


def aggregate(method: str, p: Any, **kwargs: Any) -> np.ndarray:
    """Aggregate members' p_yes with the method named ``method`` in :data:`AGGREGATORS`.

    Parameters
    ----------
    method : str
        One of ``mean, median, min, max, trimmed_mean, geomean_odds, extremized``.
    p : array-like of shape (n_questions, n_members)
        Member probabilities of Yes in [0, 1]; NaN marks a missing member.
    **kwargs
        Passed to the method, e.g. ``trim=`` for ``trimmed_mean`` or ``d=`` for ``extremized``.

    Returns
    -------
    ndarray of shape (n_questions,)
        Aggregate p_yes per question; NaN for a question with no member.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for an unknown method (the message lists the valid names) or bad ``p``.

    Examples
    --------
    >>> aggregate("median", [[0.1, 0.2, 0.9]])
    array([0.2])
    """
    try:
        fn = AGGREGATORS[method]
    except (KeyError, TypeError):
        raise _unknown_method(method) from None
    return fn(p, **kwargs)


def _unknown_method(method: Any) -> DataValidationError:
    return DataValidationError(f"unknown aggregation method {method!r}; valid: {', '.join(AGGREGATORS)}",
                               field="method", value=method)


def aggregate_many(p: Any, methods: Sequence[str] = tuple(AGGREGATORS), *, trim: float = 0.2,
                   d: float = DEFAULT_EXTREMIZING_FACTOR, eps: float = LOGIT_EPS) -> dict[str, np.ndarray]:
    """Several aggregates of the same members in one pass: each equals its function in :data:`AGGREGATORS`.

    The members are checked once, sorted once (``median``, ``trimmed_mean``, ``min``, ``max``) and their
    log-odds averaged once (``geomean_odds``, ``extremized``), so a large panel (10,000 questions x 100
    members) costs little more than one method; ``benchmarks/perf/panel_aggregate.py`` measures it.

    Parameters
    ----------
    p : array-like of shape (n_questions, n_members)
        Member probabilities of Yes in [0, 1]; NaN marks a missing member.
    methods : sequence of str, default every method of :data:`AGGREGATORS`
        Names among ``mean, median, min, max, trimmed_mean, geomean_odds, extremized``.
    trim : float, default=0.2
        ``trimmed_mean``'s proportion cut from each end, in [0, 0.5).
    d : float, default=1.5
        ``extremized``'s factor, >= 0.
    eps : float, default=LOGIT_EPS (1e-4)
        Clipping before the logit (``geomean_odds``, ``extremized``), in (0, 0.5).

    Returns
    -------
    dict of str to ndarray of shape (n_questions,)
        ``{method: aggregate p_yes per question}`` in the order of ``methods``; NaN for a question with no member.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for an unknown method, bad ``p``, or ``trim``, ``d`` or ``eps`` out of range.

    Examples
    --------
    >>> out = aggregate_many([[0.2, 0.5, np.nan]], ["mean", "geomean_odds"])
    >>> {k: v.round(4).tolist() for k, v in out.items()}
    {'mean': [0.35], 'geomean_odds': [0.3333]}
    """
    for m in methods:
        if m not in AGGREGATORS:
            raise _unknown_method(m)
    _check_trim(trim)
    _check_d(d)
    check_eps(eps)
    arr = as_members(p)
    if arr.shape[1] == 0:
        return {m: np.full(arr.shape[0], np.nan) for m in methods}
    n = _counts(arr)
    ordered = np.sort(arr, axis=1) if set(methods) & {"median", "trimmed_mean", "min", "max"} else arr
    z = _mean_log_odds(arr, eps) if set(methods) & {"geomean_odds", "extremized"} else None
    rows = np.arange(arr.shape[0])
    out: dict[str, np.ndarray] = {}
    for m in methods:
        if m == "mean":
            out[m] = nan_row_mean(arr)
        elif m == "median":
            out[m] = _median_of_sorted(ordered, n)
        elif m == "trimmed_mean":
            out[m] = _trimmed_mean_of_sorted(ordered, n, trim)
        elif m in ("min", "max"):  # NaN sort last: the first and the n-th sorted member
            first = ordered[rows, 0 if m == "min" else np.maximum(n - 1, 0)]
            out[m] = np.where(n > 0, first, np.nan)
        else:
            out[m] = expit((1.0 if m == "geomean_odds" else d) * z)
    return out
