"""Proper scoring rules, calibration and bootstrap intervals for binary forecasts.

Per-question scores come first (:func:`brier_score`, :func:`log_score` return one value per question);
means, calibration summaries, per-method and per-segment tables and bootstrap intervals are computed
from those arrays. All functions are vectorised numpy and validate their input first, raising
:class:`agent_schemas.DataValidationError` (a ``ValueError``) that names the argument, the index and the
offending value, e.g. ``"p_yes has values outside [0, 1]: 1.198 at index 3"``.

Conventions
-----------
* ``p_yes`` is the forecast probability of Yes in [0, 1]; ``outcomes`` are 1 (Yes) / 0 (No).
  NaN in either is an error in the array functions (a missing forecast or an unresolved question must be
  dropped by the caller); :func:`score_table` drops such rows itself and counts them.
* Brier score and log score are losses: lower is better.
* Calibration bins are ``n_bins`` equal-width bins on [0, 1]; ``p`` goes to bin
  ``min(floor(p * n_bins), n_bins - 1)``, so 0.0 is in the first bin and 1.0 in the last. Bins are
  closed on the left: 0.2 lies in [0.2, 0.3). A value within 1e-9 bin widths below an edge counts as on
  the edge, so decimal forecasts such as 0.57 (0.56999... in binary) land in the bin they name with
  ``n_bins=100``. (:func:`sklearn.calibration.calibration_curve` closes bins on the right instead, so
  values exactly on an interior edge are binned one lower there, and it drops empty bins.)

References
----------
.. [1] Brier, G. W. (1950). Verification of forecasts expressed in terms of probability.
   *Monthly Weather Review*, 78(1), 1-3.
.. [2] Murphy, A. H. (1973). A new vector partition of the probability score. *Journal of Applied
   Meteorology*, 12(4), 595-600.
.. [3] Stephenson, D. B., Coelho, C. A. S., & Jolliffe, I. T. (2008). Two extra components in the Brier
   score decomposition. *Weather and Forecasting*, 23(4), 752-757.
.. [4] Naeini, M. P., Cooper, G. F., & Hauskrecht, M. (2015). Obtaining well calibrated probabilities
   using Bayesian binning. *AAAI* (expected calibration error).
.. [5] Efron, B., & Tibshirani, R. J. (1993). *An Introduction to the Bootstrap*, ch. 13 (percentile
   intervals); Field, C. A., & Welsh, A. H. (2007). Bootstrapping clustered data. *JRSS B*, 69(3).
.. [6] Cameron, A. C., Gelbach, J. B., & Miller, D. L. (2008). Bootstrap-based improvements for inference
   with clustered errors. *Review of Economics and Statistics*, 90(3), 414-427 (few-cluster bias).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from agent_schemas.errors import DataValidationError
from agent_schemas.probabilities import as_float_array, check_probabilities

__all__ = [
    "BootstrapCI",
    "HORIZON_BUCKETS",
    "MIN_CLUSTERS_FOR_INTERVAL",
    "LOG_SCORE_EPS",
    "MurphyDecomposition",
    "ScoreSummary",
    "brier_score",
    "brier_skill_score",
    "clustered_bootstrap_ci",
    "expected_calibration_error",
    "horizon_bucket",
    "log_score",
    "murphy_decomposition",
    "paired_difference_ci",
    "reliability_diagram",
    "score_summary",
    "score_table",
    "segment_table",
]

LOG_SCORE_EPS: float = float(np.finfo(np.float64).eps)
"""Default clipping of :func:`log_score` (2.22e-16, as :func:`sklearn.metrics.log_loss` for float64)."""

_EDGE_TOL = 1e-9  # in bin widths; see the module docstring
_DRAWS_PER_BLOCK = 2**18  # bootstrap cluster draws per block (2 MiB of indices, 4 MiB gathered): cache-sized
_PARALLEL_MIN_DRAWS = 2**22  # below this many draws, threads cost more than they save
_MAX_THREADS = 4

MIN_CLUSTERS_FOR_INTERVAL: int = 10
"""Fewest clusters a bootstrap interval is reported for. Below it the percentile interval of a cluster
bootstrap is too narrow to mean anything (one cluster gives a zero-width interval; Cameron, Gelbach &
Miller 2008 [6] show poor coverage with few clusters): the bounds are NaN and tables flag them. It is a
floor, not a guarantee of coverage."""


# --- validation ----------------------------------------------------------------------------------


def _as_1d_float(x: Any, name: str) -> np.ndarray:
    return as_float_array(x, name, ndim=1, shape="(n_questions,)")


def _first_bad(arr: np.ndarray, bad: np.ndarray) -> tuple[int, float]:
    i = int(np.argmax(bad))
    return i, float(arr[i])


def _check_probs(p: np.ndarray, name: str) -> None:
    """Raise unless every value is in [0, 1] and not NaN (:func:`agent_schemas.probabilities.check_probabilities`)."""
    check_probabilities(p, name, nan_note=" (a missing forecast); drop unanswered questions first")


def _validate(p_yes: Any, outcomes: Any) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(p, o)`` as float64 1-D arrays of equal, non-zero length, or raise DataValidationError."""
    p = _as_1d_float(p_yes, "p_yes")
    o_raw = np.asarray(outcomes)
    o = _as_1d_float(o_raw, "outcomes")
    if p.shape != o.shape:
        raise DataValidationError(f"p_yes and outcomes must have the same shape: {p.shape} vs {o.shape}", field="outcomes", value=o.shape)
    if p.size == 0:
        raise DataValidationError("p_yes is empty: nothing to score", field="p_yes")
    _check_probs(p, "p_yes")
    if o_raw.dtype != np.bool_:
        if not (o.min() >= 0.0 and o.max() <= 1.0 and not np.count_nonzero(o * (1.0 - o))):
            nan = np.isnan(o)
            if nan.any():
                i = int(np.argmax(nan))
                raise DataValidationError(
                    f"outcomes has NaN at index {i} (an unresolved question); drop it first",
                    field="outcomes", row=i, value=float("nan"),
                )
            i, v = _first_bad(o, (o != 0) & (o != 1))
            raise DataValidationError(f"outcomes must be 0 or 1: {v!r} at index {i}", field="outcomes", row=i, value=v)
    return p, o


def _check_n_bins(n_bins: Any) -> int:
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise DataValidationError(f"n_bins must be a positive integer; got {n_bins!r}", field="n_bins", value=n_bins)
    return int(n_bins)


# --- per-question scores -------------------------------------------------------------------------


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
    p, o = _validate(p_yes, outcomes)
    d = p - o
    return d * d


def log_score(p_yes: Any, outcomes: Any, eps: float = LOG_SCORE_EPS) -> np.ndarray:
    """Per-question log score as a loss: the negative log-likelihood :math:`-\\ln q_i` in nats.

    Here :math:`q_i = p_i` if the question resolved Yes and :math:`1 - p_i` if No, clipped to
    ``[eps, 1 - eps]``, so the score is never NaN or infinite: 0 is perfect, lower is better, and a certain
    wrong forecast scores ``-ln(eps)`` (36.04 with the default). Sign convention: this is "log loss";
    the log score as a reward (:math:`\\ln q_i`, higher better) is its negative. With the default ``eps``
    (float64 machine epsilon) the mean equals :func:`sklearn.metrics.log_loss`, which clips the same way.

    Parameters
    ----------
    p_yes : array-like of shape (n_questions,)
        Forecast probability of Yes, in [0, 1]; no NaN.
    outcomes : array-like of shape (n_questions,)
        Resolutions: 1 for Yes, 0 for No (bool accepted); no NaN.
    eps : float, default=LOG_SCORE_EPS (2.22e-16)
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
    >>> log_score([0.5, 0.8, 0.0], [1, 0, 0]).round(4)
    array([0.6931, 1.6094, 0.    ])
    """
    if not 0 < eps < 0.5:
        raise DataValidationError(f"eps must be in (0, 0.5); got {eps!r}", field="eps", value=eps)
    p, o = _validate(p_yes, outcomes)
    return _log_loss(p, o, eps)


def _log_loss(p: np.ndarray, o: np.ndarray, eps: float) -> np.ndarray:
    q = np.where(o == 1.0, p, 1.0 - p)
    np.clip(q, eps, 1.0 - eps, out=q)
    np.log(q, out=q)
    np.negative(q, out=q)
    return q


# --- binned calibration ----------------------------------------------------------------------------


def _bin_index(p: np.ndarray, n_bins: int) -> np.ndarray:
    idx = (p * n_bins + _EDGE_TOL).astype(np.intp)  # truncation == floor for p >= 0
    np.minimum(idx, n_bins - 1, out=idx)
    return idx


@dataclass(frozen=True)
class _Bins:
    idx: np.ndarray  # (n,) bin of each forecast
    count: np.ndarray  # (n_bins,) int
    sum_p: np.ndarray  # (n_bins,)
    sum_o: np.ndarray  # (n_bins,)

    @property
    def mean_p(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.sum_p / self.count

    @property
    def mean_o(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.sum_o / self.count


def _bins(p: np.ndarray, o: np.ndarray, n_bins: int) -> _Bins:
    idx = _bin_index(p, n_bins)
    return _Bins(
        idx=idx,
        count=np.bincount(idx, minlength=n_bins),
        sum_p=np.bincount(idx, weights=p, minlength=n_bins),
        sum_o=np.bincount(idx, weights=o, minlength=n_bins),
    )


def _ece(b: _Bins, n: int) -> float:
    nz = b.count > 0
    return float(np.abs(b.sum_p[nz] - b.sum_o[nz]).sum() / n)  # sum_k n_k |pbar_k - obar_k| / n


def _reliability_frame(b: _Bins, n_bins: int) -> pd.DataFrame:
    k = np.arange(n_bins)
    return pd.DataFrame({
        "bin_lower": k / n_bins,
        "bin_upper": (k + 1) / n_bins,
        "count": b.count.astype(np.int64),
        "mean_p_yes": b.mean_p,
        "observed_frequency": b.mean_o,
    })


def expected_calibration_error(p_yes: Any, outcomes: Any, n_bins: int = 10) -> float:
    """Expected calibration error over equal-width bins.

    .. math:: \\mathrm{ECE} = \\sum_k \\frac{n_k}{n} \\, |\\bar p_k - \\bar o_k|

    with :math:`n_k` forecasts in bin :math:`k`, :math:`\\bar p_k` their mean p_yes and
    :math:`\\bar o_k` their observed frequency of Yes; empty bins contribute 0. Lower is better, in [0, 1].
    Binning: ``min(floor(p * n_bins), n_bins - 1)`` (0.0 in the first bin, 1.0 in the last; see the
    module docstring).

    Parameters
    ----------
    p_yes : array-like of shape (n_questions,)
        Forecast probability of Yes, in [0, 1]; no NaN.
    outcomes : array-like of shape (n_questions,)
        Resolutions: 1 for Yes, 0 for No; no NaN.
    n_bins : int, default=10
        Number of equal-width bins.

    Returns
    -------
    float
        The ECE, in [0, 1].

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for invalid input (see :func:`brier_score`) or ``n_bins < 1``.

    References
    ----------
    Naeini, Cooper & Hauskrecht (2015), *AAAI*.

    Examples
    --------
    Bin [0.1, 0.2) holds 0.1, 0.1 (frequency 0.5); bin [0.9, 1.0] holds 0.9, 1.0 (frequency 1):
    ECE = 0.5 * 0.4 + 0.5 * 0.05.

    >>> round(expected_calibration_error([0.1, 0.1, 0.9, 1.0], [0, 1, 1, 1]), 6)
    0.225
    """
    n_bins = _check_n_bins(n_bins)
    p, o = _validate(p_yes, outcomes)
    return _ece(_bins(p, o, n_bins), p.size)


def reliability_diagram(p_yes: Any, outcomes: Any, n_bins: int = 10) -> pd.DataFrame:
    """Reliability-diagram table: every equal-width bin with its count, mean p_yes and observed frequency.

    Parameters
    ----------
    p_yes : array-like of shape (n_questions,)
        Forecast probability of Yes, in [0, 1]; no NaN.
    outcomes : array-like of shape (n_questions,)
        Resolutions: 1 for Yes, 0 for No; no NaN.
    n_bins : int, default=10
        Number of equal-width bins.

    Returns
    -------
    pandas.DataFrame with ``n_bins`` rows
        Columns ``bin_lower``, ``bin_upper`` (bin edges in [0, 1]), ``count`` (int), ``mean_p_yes`` and
        ``observed_frequency`` (fraction of Yes). Empty bins are kept, with count 0 and NaN means
        (:func:`sklearn.calibration.calibration_curve` drops them).

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for invalid input (see :func:`brier_score`) or ``n_bins < 1``.

    Examples
    --------
    >>> reliability_diagram([0.1, 0.3, 0.35], [0, 1, 0], n_bins=2)
       bin_lower  bin_upper  count  mean_p_yes  observed_frequency
    0        0.0        0.5      3        0.25            0.333333
    1        0.5        1.0      0         NaN                 NaN
    """
    n_bins = _check_n_bins(n_bins)
    p, o = _validate(p_yes, outcomes)
    return _reliability_frame(_bins(p, o, n_bins), n_bins)


@dataclass(frozen=True)
class MurphyDecomposition:
    """Generalised Murphy decomposition of the mean Brier score (Stephenson, Coelho & Jolliffe 2008).

    With forecasts grouped into bins :math:`k` (``n_k`` forecasts, mean forecast :math:`\\bar p_k`,
    observed frequency :math:`\\bar o_k`, overall base rate :math:`\\bar o`):

    .. math::
        \\mathrm{BS} = \\underbrace{\\tfrac1n\\sum_k n_k(\\bar p_k-\\bar o_k)^2}_{\\text{reliability}}
        - \\underbrace{\\tfrac1n\\sum_k n_k(\\bar o_k-\\bar o)^2}_{\\text{resolution}}
        + \\underbrace{\\bar o(1-\\bar o)}_{\\text{uncertainty}}
        + \\underbrace{\\tfrac1n\\sum_k\\sum_{i\\in k}(p_i-\\bar p_k)^2}_{\\text{within-bin variance}}
        - 2\\,\\underbrace{\\tfrac1n\\sum_k\\sum_{i\\in k}(p_i-\\bar p_k)(o_i-\\bar o_k)}_{\\text{within-bin covariance}}

    which holds exactly (expand :math:`p_i-o_i = (p_i-\\bar p_k) - (o_i-\\bar o_k) + (\\bar p_k-\\bar o_k)`
    within each bin and use :math:`\\sum_k n_k\\bar o_k(1-\\bar o_k) = n\\bar o(1-\\bar o) - \\sum_k n_k(\\bar o_k-\\bar o)^2`).
    Murphy's (1973) three-term form is the special case where every forecast in a bin is equal, so both
    within-bin terms vanish.

    Attributes
    ----------
    brier : float
        Mean Brier score (lower is better).
    reliability : float
        Calibration error term (>= 0, lower is better).
    resolution : float
        Resolution term (>= 0, higher is better).
    uncertainty : float
        Base-rate variance :math:`\\bar o(1-\\bar o)`, in [0, 0.25].
    within_bin_variance : float
        Spread of forecasts within bins (>= 0).
    within_bin_covariance : float
        Covariance of forecasts and outcomes within bins (enters with factor -2).
    n_bins : int
        Number of equal-width bins used.
    """

    brier: float
    reliability: float
    resolution: float
    uncertainty: float
    within_bin_variance: float
    within_bin_covariance: float
    n_bins: int

    @property
    def within_bin(self) -> float:
        """The two extra terms together, ``within_bin_variance - 2 * within_bin_covariance``."""
        return self.within_bin_variance - 2.0 * self.within_bin_covariance

    def total(self) -> float:
        """``reliability - resolution + uncertainty + within_bin``; equals ``brier`` up to rounding."""
        return self.reliability - self.resolution + self.uncertainty + self.within_bin


def _murphy(p: np.ndarray, o: np.ndarray, b: _Bins, brier: float) -> MurphyDecomposition:
    n = p.size
    nz = b.count > 0
    cnt = b.count[nz]
    pbar = b.sum_p[nz] / cnt
    obar_k = b.sum_o[nz] / cnt
    obar = float(o.mean())
    pbar_full = np.zeros(b.count.size)
    obar_full = np.zeros(b.count.size)
    pbar_full[nz] = pbar
    obar_full[nz] = obar_k
    dp = p - pbar_full[b.idx]
    do = o - obar_full[b.idx]
    return MurphyDecomposition(
        brier=brier,
        reliability=float((cnt * (pbar - obar_k) ** 2).sum() / n),
        resolution=float((cnt * (obar_k - obar) ** 2).sum() / n),
        uncertainty=obar * (1.0 - obar),
        within_bin_variance=float(np.dot(dp, dp) / n),
        within_bin_covariance=float(np.dot(dp, do) / n),
        n_bins=b.count.size,
    )


def murphy_decomposition(p_yes: Any, outcomes: Any, n_bins: int = 10) -> MurphyDecomposition:
    """Decompose the mean Brier score into reliability, resolution, uncertainty and two within-bin terms.

    ``brier == reliability - resolution + uncertainty + within_bin_variance - 2 * within_bin_covariance``
    exactly (to floating-point rounding); see :class:`MurphyDecomposition` for the formulas.

    Parameters
    ----------
    p_yes : array-like of shape (n_questions,)
        Forecast probability of Yes, in [0, 1]; no NaN.
    outcomes : array-like of shape (n_questions,)
        Resolutions: 1 for Yes, 0 for No; no NaN.
    n_bins : int, default=10
        Number of equal-width bins (as :func:`reliability_diagram`).

    Returns
    -------
    MurphyDecomposition

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for invalid input (see :func:`brier_score`) or ``n_bins < 1``.

    References
    ----------
    Murphy (1973), *J. Applied Meteorology* 12(4); Stephenson, Coelho & Jolliffe (2008), *Weather and
    Forecasting* 23(4).

    Examples
    --------
    >>> m = murphy_decomposition([0.1, 0.1, 0.7, 0.9], [0, 1, 1, 1], n_bins=10)
    >>> round(m.brier, 4), round(m.total(), 4), round(m.uncertainty, 4)
    (0.23, 0.23, 0.1875)
    """
    n_bins = _check_n_bins(n_bins)
    p, o = _validate(p_yes, outcomes)
    d = p - o
    d *= d
    return _murphy(p, o, _bins(p, o, n_bins), float(d.sum() / p.size))


def brier_skill_score(p_yes: Any, outcomes: Any, reference: Any) -> float:
    """Brier skill score, :math:`1 - \\mathrm{BS} / \\mathrm{BS}_{ref}`.

    1 is perfect, 0 is no better than the reference, negative is worse. Against the base rate
    (``reference=np.mean(outcomes)``) it equals ``(resolution - reliability - within_bin) / uncertainty``.

    Parameters
    ----------
    p_yes : array-like of shape (n_questions,)
        Forecast probability of Yes, in [0, 1]; no NaN.
    outcomes : array-like of shape (n_questions,)
        Resolutions: 1 for Yes, 0 for No; no NaN.
    reference : float or array-like of shape (n_questions,)
        Reference forecasts in [0, 1]: one probability for every question (e.g. the base rate) or one
        per question (e.g. a baseline method).

    Returns
    -------
    float
        The skill score, in (-inf, 1].

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for invalid input, a reference of the wrong shape or outside [0, 1], or a
        reference with Brier score 0 (skill undefined).

    Examples
    --------
    >>> round(brier_skill_score([0.9, 0.2], [1, 0], reference=0.5), 4)
    0.9
    """
    p, o = _validate(p_yes, outcomes)
    ref = np.asarray(reference, dtype=np.float64)
    if ref.ndim == 0:
        ref = np.full_like(p, float(ref))
    elif ref.shape != p.shape:
        raise DataValidationError(f"reference must be a scalar or have shape {p.shape}; got {ref.shape}", field="reference", value=ref.shape)
    _check_probs(ref, "reference")
    bs_ref = float(np.mean((ref - o) ** 2))
    if bs_ref == 0.0:
        raise DataValidationError("reference has Brier score 0: the skill score is undefined", field="reference")
    d = p - o
    return 1.0 - float(np.dot(d, d) / p.size) / bs_ref


# --- everything at once ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ScoreSummary:
    """All scores of one set of forecasts from one validation and one binning pass.

    Attributes
    ----------
    n : int
        Number of questions.
    brier : float
        Mean Brier score (lower is better).
    log_score : float
        Mean log score as a loss, in nats (lower is better; see :func:`log_score`).
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
    log_score: float
    ece: float
    reliability_table: pd.DataFrame
    murphy: MurphyDecomposition
    brier_scores: np.ndarray


def score_summary(p_yes: Any, outcomes: Any, n_bins: int = 10, eps: float = LOG_SCORE_EPS) -> ScoreSummary:
    """Brier score, log score, ECE, reliability table and Murphy decomposition in one pass.

    Equivalent to calling :func:`brier_score`, :func:`log_score`, :func:`expected_calibration_error`,
    :func:`reliability_diagram` and :func:`murphy_decomposition`, but validates and bins once.

    Parameters
    ----------
    p_yes : array-like of shape (n_questions,)
        Forecast probability of Yes, in [0, 1]; no NaN.
    outcomes : array-like of shape (n_questions,)
        Resolutions: 1 for Yes, 0 for No; no NaN.
    n_bins : int, default=10
        Number of equal-width calibration bins.
    eps : float, default=LOG_SCORE_EPS
        Log-score clipping (see :func:`log_score`).

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
    n_bins = _check_n_bins(n_bins)
    if not 0 < eps < 0.5:
        raise DataValidationError(f"eps must be in (0, 0.5); got {eps!r}", field="eps", value=eps)
    p, o = _validate(p_yes, outcomes)
    n = p.size
    bs = p - o
    bs *= bs
    brier = float(bs.sum() / n)
    b = _bins(p, o, n_bins)
    return ScoreSummary(
        n=n,
        brier=brier,
        log_score=float(_log_loss(p, o, eps).sum() / n),
        ece=_ece(b, n),
        reliability_table=_reliability_frame(b, n_bins),
        murphy=_murphy(p, o, b, brier),
        brier_scores=bs,
    )


# --- bootstrap -------------------------------------------------------------------------------------


class BootstrapCI(NamedTuple):
    """A point estimate with a percentile bootstrap interval; unpacks as ``(mean, low, high)``."""

    mean: float
    low: float
    high: float


def _cluster_codes(clusters: Any, n: int) -> np.ndarray:
    """Non-negative integer code per question; equal labels share a code (codes may have gaps)."""
    labels = np.asarray(clusters)
    if labels.shape != (n,):
        raise DataValidationError(f"clusters must have shape ({n},) to match the scores; got {labels.shape}", field="clusters", value=labels.shape)
    if labels.dtype.kind in "iub" and n:
        lo, hi = int(labels.min()), int(labels.max())
        if hi - lo <= 4 * n:  # dense integer labels: offset them, no hashing (empty codes are dropped later)
            return labels.astype(np.intp) - lo
    codes, _ = pd.factorize(labels, use_na_sentinel=True)
    if (codes < 0).any():
        i = int(np.argmax(codes < 0))
        raise DataValidationError(f"clusters has a missing label at index {i}", field="clusters", row=i, value=None)
    return codes


def _check_bootstrap_args(n_resamples: Any, confidence: Any) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise DataValidationError(f"n_resamples must be a positive integer; got {n_resamples!r}", field="n_resamples", value=n_resamples)
    if not 0 < confidence < 1:
        raise DataValidationError(f"confidence must be in (0, 1); got {confidence!r}", field="confidence", value=confidence)


def _check_scores(x: Any, name: str) -> np.ndarray:
    s = _as_1d_float(x, name)
    if s.size == 0:
        raise DataValidationError(f"{name} is empty", field=name)
    if not np.isfinite(s).all():
        i, v = _first_bad(s, ~np.isfinite(s))
        raise DataValidationError(
            f"{name} has a non-finite value {v!r} at index {i}; drop unanswered or unresolved questions first",
            field=name, row=i, value=v,
        )
    return s


def _resample_blocks(n_clusters: int, n_resamples: int, seed: Any) -> list[tuple[int, int, np.random.Generator]]:
    """Split the resamples into blocks of about ``_DRAWS_PER_BLOCK`` cluster draws, each with its own generator.

    Blocks depend only on ``(n_clusters, n_resamples)`` and the generators on ``seed`` (spawned children
    of one :class:`numpy.random.SeedSequence`), so results do not depend on how many threads run them.
    """
    rows = max(1, _DRAWS_PER_BLOCK // n_clusters)
    starts = range(0, n_resamples, rows)
    if isinstance(seed, np.random.Generator):
        gens = seed.spawn(len(starts))
    else:
        gens = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(len(starts))]
    return [(start, min(rows, n_resamples - start), g) for start, g in zip(starts, gens)]


def _n_clusters(codes: np.ndarray) -> int:
    return int(np.count_nonzero(np.bincount(codes))) if codes.size else 0


def _bootstrap(scores: np.ndarray, codes: np.ndarray, n_resamples: int, confidence: float, seed: Any,
               min_clusters: int = MIN_CLUSTERS_FOR_INTERVAL) -> BootstrapCI:
    """Percentile interval of the mean of ``scores`` when whole clusters are resampled with replacement.

    Per-cluster sums and counts are computed once; each resample draws ``n_clusters`` cluster indices and
    takes ``sum(sums[drawn]) / sum(counts[drawn])``. Sums and counts travel together as one complex array
    so each resample needs a single gather. Cost is O(n_resamples * n_clusters), independent of n; blocks
    are sized to stay in cache and run on up to ``_MAX_THREADS`` threads (numpy releases the GIL) when
    there are many draws.
    """
    counts = np.bincount(codes)
    if np.count_nonzero(counts) < min_clusters:
        return BootstrapCI(float(scores.mean()), float("nan"), float("nan"))
    sums = np.bincount(codes, weights=scores)
    if counts.min() == 0:  # gaps in the codes are not clusters
        present = counts > 0
        counts, sums = counts[present], sums[present]
    counts = counts.astype(np.float64)
    n_clusters = sums.size
    packed = sums + 1j * counts
    stats = np.empty(n_resamples)

    def run(block: tuple[int, int, np.random.Generator]) -> None:
        start, rows, gen = block
        drawn = gen.integers(0, n_clusters, size=(rows, n_clusters))
        tot = packed.take(drawn).sum(axis=1)
        stats[start:start + rows] = tot.real / tot.imag

    blocks = _resample_blocks(n_clusters, n_resamples, seed)
    n_threads = min(_MAX_THREADS, os.cpu_count() or 1, len(blocks))
    if n_threads > 1 and n_resamples * n_clusters >= _PARALLEL_MIN_DRAWS:
        with ThreadPoolExecutor(n_threads) as pool:
            list(pool.map(run, blocks))
    else:
        for block in blocks:
            run(block)
    alpha = 1.0 - confidence
    low, high = np.quantile(stats, [alpha / 2, 1 - alpha / 2])
    return BootstrapCI(float(scores.mean()), float(low), float(high))


def clustered_bootstrap_ci(
    scores: Any,
    clusters: Any,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: Any = 0,
    min_clusters: int = MIN_CLUSTERS_FOR_INTERVAL,
) -> BootstrapCI:
    """Mean of per-question scores with a clustered (block) percentile bootstrap interval.

    Questions in one cluster (e.g. one question family or source series) are correlated, so whole
    clusters are resampled with replacement (``n_clusters`` draws per resample) and each resample's
    statistic is the mean over all questions drawn, ``sum of the drawn clusters' score sums / sum of their
    counts``. The interval is the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the
    resampled means (percentile method, Efron & Tibshirani 1993). With one question per cluster it is the
    ordinary bootstrap. With fewer than ``min_clusters`` clusters no interval is estimated: the bounds
    are NaN (never a zero-width or normal-looking interval; see :data:`MIN_CLUSTERS_FOR_INTERVAL`).

    Parameters
    ----------
    scores : array-like of shape (n_questions,)
        Per-question scores, e.g. :func:`brier_score`; finite (no NaN).
    clusters : array-like of shape (n_questions,)
        Cluster label of each question (any hashable values); no missing labels.
    n_resamples : int, default=1000
        Number of bootstrap resamples.
    confidence : float, default=0.95
        Interval coverage, in (0, 1).
    seed : int, numpy.random.SeedSequence, numpy.random.Generator or None, default=0
        Seed of the resampling (child generators are spawned from it); the same int seed gives the same
        interval, whatever the number of threads.
    min_clusters : int, default=MIN_CLUSTERS_FOR_INTERVAL
        Fewest distinct clusters for which an interval is estimated.

    Returns
    -------
    BootstrapCI
        ``(mean, low, high)``: the plain mean of ``scores`` and the interval bounds (NaN below
        ``min_clusters`` clusters).

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for empty or non-finite scores, mismatched or missing cluster labels,
        ``n_resamples < 1`` or ``confidence`` outside (0, 1).

    References
    ----------
    Efron & Tibshirani (1993), ch. 13; Field & Welsh (2007), *JRSS B* 69(3).

    Examples
    --------
    >>> ci = clustered_bootstrap_ci([0.1, 0.2, 0.3, 0.4], ["a", "a", "b", "b"], n_resamples=200, min_clusters=2)
    >>> round(ci.mean, 2), ci.low <= ci.mean <= ci.high
    (0.25, True)
    >>> clustered_bootstrap_ci([0.1, 0.3], ["a", "a"]).low  # one cluster: no interval
    nan
    """
    _check_bootstrap_args(n_resamples, confidence)
    s = _check_scores(scores, "scores")
    return _bootstrap(s, _cluster_codes(clusters, s.size), int(n_resamples), float(confidence), seed, int(min_clusters))


def paired_difference_ci(
    scores_a: Any,
    scores_b: Any,
    clusters: Any,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: Any = 0,
    min_clusters: int = MIN_CLUSTERS_FOR_INTERVAL,
) -> BootstrapCI:
    """Mean difference ``scores_a - scores_b`` with a paired, clustered percentile bootstrap interval.

    Both methods are scored on the same questions and every resample draws the same clusters for both,
    so the resampled difference of means is the resampled mean of the per-question differences. For
    Brier scores a negative difference means ``a`` is better than ``b``.

    Parameters
    ----------
    scores_a, scores_b : array-like of shape (n_questions,)
        Per-question scores of two methods on the same questions, in the same order; finite.
    clusters : array-like of shape (n_questions,)
        Cluster label of each question; no missing labels.
    n_resamples : int, default=1000
        Number of bootstrap resamples.
    confidence : float, default=0.95
        Interval coverage, in (0, 1).
    seed : int, numpy.random.SeedSequence, numpy.random.Generator or None, default=0
        Seed of the resampling, as in :func:`clustered_bootstrap_ci`.
    min_clusters : int, default=MIN_CLUSTERS_FOR_INTERVAL
        Fewest distinct clusters for which an interval is estimated (NaN bounds below it).

    Returns
    -------
    BootstrapCI
        ``(mean difference, low, high)``.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) as :func:`clustered_bootstrap_ci`, or if the score arrays differ in shape.

    Examples
    --------
    >>> ci = paired_difference_ci([0.1, 0.2, 0.1], [0.2, 0.3, 0.3], [0, 1, 2], n_resamples=200, min_clusters=3)
    >>> round(ci.mean, 4), ci.high < 0
    (-0.1333, True)
    """
    _check_bootstrap_args(n_resamples, confidence)
    a = _check_scores(scores_a, "scores_a")
    b = _check_scores(scores_b, "scores_b")
    if a.shape != b.shape:
        raise DataValidationError(f"scores_a and scores_b must have the same shape: {a.shape} vs {b.shape}", field="scores_b", value=b.shape)
    return _bootstrap(a - b, _cluster_codes(clusters, a.size), int(n_resamples), float(confidence), seed, int(min_clusters))


# --- tables ----------------------------------------------------------------------------------------

HORIZON_BUCKETS: tuple[str, ...] = ("<=7d", "8-30d", "31-90d", "91-180d", ">180d")
"""Labels of :func:`horizon_bucket`, in order: (0, 7], (7, 30], (30, 90], (90, 180], (180, inf) days."""

_HORIZON_EDGES = np.array([7.0, 30.0, 90.0, 180.0])

_TABLE_COLUMNS = [
    "n", "n_missing", "n_unresolved", "n_clusters", "brier", "brier_ci_low", "brier_ci_high", "log_score", "ece",
    "reliability", "resolution", "uncertainty", "within_bin", "brier_skill_vs_in_sample_rate", "n_common",
    "brier_skill_vs_baseline", "delta_brier_vs_baseline", "delta_brier_ci_low", "delta_brier_ci_high", "interval_note",
]


def horizon_bucket(days: Any) -> Any:
    """Bucket forecast horizons (days from forecast to resolution) for :func:`segment_table`.

    Buckets are right-closed: ``<=7d`` is [0, 7], ``8-30d`` is (7, 30], ``31-90d`` (30, 90],
    ``91-180d`` (90, 180], ``>180d`` above 180 (a fractional 7.5 days is ``8-30d``).

    Parameters
    ----------
    days : float or array-like of float
        Horizon in days, >= 0; NaN (unknown) maps to NaN.

    Returns
    -------
    str or pandas.Categorical
        A label from :data:`HORIZON_BUCKETS` for a scalar; an ordered categorical for an array.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for a negative horizon.

    Examples
    --------
    >>> horizon_bucket(7), horizon_bucket(31)
    ('<=7d', '31-90d')
    >>> list(horizon_bucket([0, 8, 400]))
    ['<=7d', '8-30d', '>180d']
    """
    arr = np.asarray(days, dtype=np.float64)
    if (arr < 0).any():
        flat = arr.ravel()
        i, v = _first_bad(flat, flat < 0)
        raise DataValidationError(f"days must be >= 0: {v!r} at index {i}", field="days", row=i, value=v)
    codes = np.searchsorted(_HORIZON_EDGES, arr, side="left")
    if arr.ndim == 0:
        return None if np.isnan(arr) else HORIZON_BUCKETS[int(codes)]
    codes = np.where(np.isnan(arr), -1, codes)
    return pd.Categorical.from_codes(codes.ravel(), categories=list(HORIZON_BUCKETS), ordered=True)


def _require_columns(df: pd.DataFrame, **cols: str | None) -> None:
    for role, col in cols.items():
        if col is not None and col not in df.columns:
            raise DataValidationError(
                f"{role}={col!r} is not a column of the data frame; columns are {list(df.columns)}",
                field=role, value=col,
            )


def _check_group_values(group: pd.DataFrame, values: np.ndarray, col: str, *, bad: np.ndarray, what: str) -> None:
    if bad.any():
        j = int(np.argmax(bad))
        raise DataValidationError(
            f"{col} has {what}: {float(values[j])!r} at row {group.index[j]!r}", field=col, row=None, value=float(values[j])
        )


def score_table(
    df: pd.DataFrame,
    *,
    method_col: str = "method",
    question_col: str = "question_id",
    p_col: str = "p_yes",
    outcome_col: str = "outcome",
    cluster_col: str | None = "cluster",
    baseline: str | None = "mean",
    n_bins: int = 10,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: Any = 0,
    min_clusters: int = MIN_CLUSTERS_FOR_INTERVAL,
) -> pd.DataFrame:
    """One row of scores per method, with clustered bootstrap intervals and paired deltas to a baseline.

    Rows with NaN ``p_yes`` (the method did not answer) or NaN outcome (unresolved) are dropped and
    counted in ``n_missing`` / ``n_unresolved``. Differences to the baseline are computed on the
    questions both methods answered (``n_common``), with a paired clustered bootstrap that draws the same
    clusters for both.

    Parameters
    ----------
    df : pandas.DataFrame
        Long format, one row per (method, question): ``method_col``, ``question_col``, ``p_col``
        (p_yes in [0, 1]), ``outcome_col`` (0/1) and ``cluster_col``.
    method_col, question_col, p_col, outcome_col : str
        Column names.
    cluster_col : str or None, default="cluster"
        Column with the bootstrap cluster of each question; None makes every question its own cluster.
    baseline : str or None, default="mean"
        Method the deltas and ``brier_skill_vs_baseline`` refer to; None leaves those columns NaN.
    n_bins : int, default=10
        Calibration bins for ECE and the Murphy decomposition.
    n_resamples, confidence, seed, min_clusters
        Bootstrap settings (see :func:`clustered_bootstrap_ci`); every method uses the same seed. Below
        ``min_clusters`` clusters the interval bounds are NaN and ``interval_note`` says why.

    Returns
    -------
    pandas.DataFrame
        One row per method (in order of first appearance), a default RangeIndex and the columns
        ``method_col`` (the method name), ``n``, ``n_missing``,
        ``n_unresolved``, ``n_clusters``, ``brier``, ``brier_ci_low``, ``brier_ci_high``, ``log_score``
        (nats, loss), ``ece``, ``reliability``, ``resolution``, ``uncertainty``, ``within_bin`` (Murphy
        terms), ``brier_skill_vs_in_sample_rate`` (Brier skill against always forecasting the yes-rate of
        the scored questions themselves, ``1 - brier / uncertainty``: an in-sample climatology, not the
        ``base_rate`` baseline, which uses only outcomes known before each forecast date), ``n_common``,
        ``brier_skill_vs_baseline``, ``delta_brier_vs_baseline`` (negative: better than the baseline),
        ``delta_brier_ci_low``, ``delta_brier_ci_high`` and ``interval_note`` ("" or why an interval is
        not available). Lower is better for every loss.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for a missing column, an unknown baseline, a duplicated (method, question)
        row, or invalid values (the message names the column and row).

    Examples
    --------
    >>> df = pd.DataFrame({"method": ["mean"] * 3 + ["min"] * 3, "question_id": [1, 2, 3] * 2,
    ...                    "p_yes": [0.8, 0.3, 0.6, 0.6, 0.1, 0.2], "outcome": [1, 0, 1] * 2})
    >>> t = score_table(df, cluster_col=None, n_resamples=100).set_index("method")
    >>> round(float(t.loc["min", "brier"]), 4), round(float(t.loc["min", "delta_brier_vs_baseline"]), 4)
    (0.27, 0.1733)
    """
    _require_columns(df, method_col=method_col, question_col=question_col, p_col=p_col, outcome_col=outcome_col, cluster_col=cluster_col)
    data = df[[c for c in dict.fromkeys([method_col, question_col, p_col, outcome_col, cluster_col]) if c is not None]]
    dup = data.duplicated([method_col, question_col])
    if dup.any():
        i = int(np.argmax(dup.to_numpy()))
        raise DataValidationError(
            f"duplicated (method, question) row at position {i}: {data.iloc[i][method_col]!r}, {data.iloc[i][question_col]!r}",
            field=question_col, row=i, value=data.iloc[i][question_col],
        )
    for role, col in (("method_col", method_col), ("cluster_col", cluster_col)):
        if col is not None and data[col].isna().any():
            i = int(np.argmax(data[col].isna().to_numpy()))
            raise DataValidationError(f"{col} has a missing value at row {data.index[i]!r}", field=col, row=i)
    methods = list(pd.unique(data[method_col]))
    if baseline is not None and baseline not in methods:
        raise DataValidationError(f"baseline {baseline!r} is not among the methods {methods}", field="baseline", value=baseline)

    per_method: dict[Any, pd.DataFrame] = {}
    counts: dict[Any, tuple[int, int]] = {}
    for method, group in data.groupby(method_col, sort=False):
        p = pd.to_numeric(group[p_col], errors="coerce").to_numpy(np.float64, na_value=np.nan)
        o = pd.to_numeric(group[outcome_col], errors="coerce").to_numpy(np.float64, na_value=np.nan)
        bad_p = np.isnan(p) & group[p_col].notna().to_numpy()
        if bad_p.any():
            j = int(np.argmax(bad_p))
            raise DataValidationError(f"{p_col} is not numeric: {group[p_col].iloc[j]!r} at row {group.index[j]!r}", field=p_col, value=group[p_col].iloc[j])
        _check_group_values(group, p, p_col, bad=(p < 0) | (p > 1), what="values outside [0, 1]")
        _check_group_values(group, o, outcome_col, bad=(o != 0) & (o != 1) & ~np.isnan(o), what="outcomes other than 0/1")
        unresolved = np.isnan(o)
        missing = np.isnan(p) & ~unresolved
        keep = ~(unresolved | np.isnan(p))
        counts[method] = (int(missing.sum()), int(unresolved.sum()))
        kept = pd.DataFrame({
            "question": group[question_col].to_numpy()[keep],
            "p": p[keep],
            "o": o[keep],
            "cluster": (group[cluster_col] if cluster_col is not None else group[question_col]).to_numpy()[keep],
        })
        per_method[method] = kept

    rows = []
    base_scores: pd.Series | None = None
    summaries: dict[Any, ScoreSummary] = {}
    for method, kept in per_method.items():
        if len(kept):
            summaries[method] = score_summary(kept["p"].to_numpy(), kept["o"].to_numpy(), n_bins=n_bins)
    if baseline is not None and baseline in summaries:
        kb = per_method[baseline]
        base_scores = pd.Series(summaries[baseline].brier_scores, index=kb["question"].to_numpy())

    for method, kept in per_method.items():
        row: dict[str, Any] = dict.fromkeys(_TABLE_COLUMNS, np.nan)
        row["n"] = len(kept)
        row["n_missing"], row["n_unresolved"] = counts[method]
        row["n_common"] = 0
        row["interval_note"] = ""
        s = summaries.get(method)
        if s is not None:
            codes = _cluster_codes(kept["cluster"].to_numpy(), s.n)
            ci = _bootstrap(s.brier_scores, codes, n_resamples, confidence, seed, min_clusters)
            m = s.murphy
            row.update(
                n_clusters=_n_clusters(codes),
                brier=s.brier, brier_ci_low=ci.low, brier_ci_high=ci.high, log_score=s.log_score, ece=s.ece,
                reliability=m.reliability, resolution=m.resolution, uncertainty=m.uncertainty, within_bin=m.within_bin,
                brier_skill_vs_in_sample_rate=(1.0 - s.brier / m.uncertainty) if m.uncertainty > 0 else np.nan,
            )
            if row["n_clusters"] < min_clusters:
                row["interval_note"] = f"no interval: {row['n_clusters']} clusters < {min_clusters}"
            if base_scores is not None:
                q = kept["question"].to_numpy()
                common = pd.Index(q).isin(base_scores.index)
                row["n_common"] = int(common.sum())
                if common.any():
                    a = s.brier_scores[common]
                    b = base_scores.loc[q[common]].to_numpy()
                    d = _bootstrap(a - b, _cluster_codes(kept["cluster"].to_numpy()[common], a.size), n_resamples, confidence,
                                   seed, min_clusters)
                    mean_b = float(b.mean())
                    row.update(
                        brier_skill_vs_baseline=(1.0 - float(a.mean()) / mean_b) if mean_b > 0 else np.nan,
                        delta_brier_vs_baseline=d.mean, delta_brier_ci_low=d.low, delta_brier_ci_high=d.high,
                    )
        rows.append(row)
    table = pd.DataFrame(rows, columns=_TABLE_COLUMNS)
    table["n_clusters"] = table["n_clusters"].fillna(0)
    table = table.astype({"n": "int64", "n_missing": "int64", "n_unresolved": "int64", "n_common": "int64", "n_clusters": "int64"})
    table.insert(0, method_col, list(per_method))
    return table


def segment_table(df: pd.DataFrame, segment_col: str, **kwargs: Any) -> pd.DataFrame:
    """:func:`score_table` per segment (e.g. source, question type or :func:`horizon_bucket`).

    Parameters
    ----------
    df : pandas.DataFrame
        As for :func:`score_table`, plus ``segment_col``.
    segment_col : str
        Column to split on; NaN segments form their own group.
    **kwargs
        Passed to :func:`score_table`. A segment in which the baseline method has no rows gets NaN deltas.

    Returns
    -------
    pandas.DataFrame
        The :func:`score_table` rows of every segment with ``segment_col`` as the first column (segments
        in sorted, or categorical, order) and a default RangeIndex.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for a missing column or as :func:`score_table`.

    Examples
    --------
    >>> df = pd.DataFrame({"method": ["mean"] * 4, "question_id": [1, 2, 3, 4], "p_yes": [0.8, 0.3, 0.6, 0.1],
    ...                    "outcome": [1, 0, 1, 0], "source": ["acled", "acled", "fred", "fred"]})
    >>> segment_table(df, "source", cluster_col=None, n_resamples=50)["brier"].round(3).tolist()
    [0.065, 0.085]
    """
    _require_columns(df, segment_col=segment_col)
    method_col = kwargs.get("method_col", "method")
    baseline = kwargs.get("baseline", "mean")
    parts = []
    keys = []
    for key, group in df.groupby(segment_col, sort=True, dropna=False, observed=True):
        kw = dict(kwargs)
        if baseline is not None and method_col in group and baseline not in set(group[method_col]):
            kw["baseline"] = None
        parts.append(score_table(group, **kw))
        keys.append(key)
    if not parts:
        raise DataValidationError("segment_table got an empty data frame", field=segment_col)
    for key, part in zip(keys, parts):
        part.insert(0, segment_col, [key] * len(part))
    out = pd.concat(parts, ignore_index=True)
    if isinstance(df[segment_col].dtype, pd.CategoricalDtype):
        out[segment_col] = pd.Categorical(out[segment_col], dtype=df[segment_col].dtype)
    return out
