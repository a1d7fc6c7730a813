"""Binned calibration: expected calibration error, the reliability-diagram table, the Murphy decomposition
of the Brier score, and the Brier skill score. Bins are equal-width on [0, 1] (see :mod:`benchmarks.scoring`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from agent_schemas.errors import DataValidationError
from benchmarks.scoring.validation import check_n_bins, check_probs, validate_forecasts

__all__ = ["Bins", "MurphyDecomposition", "brier_skill_score", "calibration_bins", "ece_of_bins", "expected_calibration_error",
           "murphy_decomposition", "murphy_of_bins", "reliability_diagram", "reliability_frame_of_bins"]

_EDGE_TOL = 1e-9  # in bin widths; see the module docstring


def _bin_index(p: np.ndarray, n_bins: int) -> np.ndarray:
    idx = (p * n_bins + _EDGE_TOL).astype(np.intp)  # truncation == floor for p >= 0
    np.minimum(idx, n_bins - 1, out=idx)
    return idx


@dataclass(frozen=True)
class Bins:
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


def calibration_bins(p: np.ndarray, o: np.ndarray, n_bins: int) -> Bins:
    idx = _bin_index(p, n_bins)
    return Bins(
        idx=idx,
        count=np.bincount(idx, minlength=n_bins),
        sum_p=np.bincount(idx, weights=p, minlength=n_bins),
        sum_o=np.bincount(idx, weights=o, minlength=n_bins),
    )


def ece_of_bins(b: Bins, n: int) -> float:
    nz = b.count > 0
    return float(np.abs(b.sum_p[nz] - b.sum_o[nz]).sum() / n)  # sum_k n_k |pbar_k - obar_k| / n


def reliability_frame_of_bins(b: Bins, n_bins: int) -> pd.DataFrame:
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
    n_bins = check_n_bins(n_bins)
    p, o = validate_forecasts(p_yes, outcomes)
    return ece_of_bins(calibration_bins(p, o, n_bins), p.size)


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
    n_bins = check_n_bins(n_bins)
    p, o = validate_forecasts(p_yes, outcomes)
    return reliability_frame_of_bins(calibration_bins(p, o, n_bins), n_bins)


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


def murphy_of_bins(p: np.ndarray, o: np.ndarray, b: Bins, brier: float) -> MurphyDecomposition:
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
    n_bins = check_n_bins(n_bins)
    p, o = validate_forecasts(p_yes, outcomes)
    d = p - o
    d *= d
    return murphy_of_bins(p, o, calibration_bins(p, o, n_bins), float(d.sum() / p.size))


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
    p, o = validate_forecasts(p_yes, outcomes)
    ref = np.asarray(reference, dtype=np.float64)
    if ref.ndim == 0:
        ref = np.full_like(p, float(ref))
    elif ref.shape != p.shape:
        raise DataValidationError(f"reference must be a scalar or have shape {p.shape}; got {ref.shape}", field="reference", value=ref.shape)
    check_probs(ref, "reference")
    bs_ref = float(np.mean((ref - o) ** 2))
    if bs_ref == 0.0:
        raise DataValidationError("reference has Brier score 0: the skill score is undefined", field="reference")
    d = p - o
    return 1.0 - float(np.dot(d, d) / p.size) / bs_ref
