"""Per-question scores and calibration diagnostics of numeric forecasts (grid CDFs), vectorised.

Everything here works in **locations** (:mod:`agent_schemas.kinds.numeric.grid`: 0 at the range's lower end, 1
at its upper end, log-spaced for a log-scaled question), so scores of questions with different units average.
Inputs are validated by the caller (:meth:`NumericKind.score`): ``cdfs`` of shape ``(n, 201)``, valid, and
outcome locations ``t`` of shape ``(n,)`` (NaN for an unresolved question gives NaN).

Scores
------
``crps``
    The continuous ranked probability score of the piecewise-linear CDF, ``int_0^1 (F(t) - [y <= t])^2 dt``
    over the range (Matheson & Winkler 1976; Gneiting & Raftery 2007), computed exactly (:func:`crps`). Over the
    range only: mass beyond an open bound counts as lying at the bound and an outcome beyond the range as lying
    at the bound it passed. That is the threshold-weighted CRPS with weight 1 on the range (Gneiting & Ranjan
    2011), a proper score that needs no guess of where beyond the bound the mass lies or how far the outcome
    went; it equals the plain CRPS for closed bounds. In units of the range's width (location), in [0, 1].
``log_loss``
    ``-ln q`` with ``q`` the probability of the outcome's **bucket** (:func:`bucket_probability`): Metaculus's
    202 buckets, below the range, the 200 inner bins, above the range; clipped at 2.2e-16 (as the binary log
    loss) when a bucket holds no mass. A probability mass, not a density: comparable across questions.
``baseline_score``
    Metaculus's continuous baseline score, ``100 ln(q / q_0) / 2`` with ``q_0`` the uninformed forecast's mass
    in that bucket: 0.05 out of range, ``(1 - 0.05 k) / 200`` inside, ``k`` open bounds (Metaculus
    ``scoring/score_math.py``, ``evaluate_forecasts_baseline_accuracy``). Higher is better; 0 for the uninformed
    forecast.

Diagnostics
-----------
``pit``
    The probability integral transform ``F(y)`` (Dawid 1984), linear between grid points; uniform on [0, 1] for
    forecasts that are the outcome's true distribution. An outcome beyond an open bound gets the middle of the
    mass beyond it (``F_0 / 2`` below, ``(1 + F_200) / 2`` above): where in that mass it lies is not known.
``in_50``, ``in_90``
    1 when the outcome lies in the forecast's central 50% / 90% interval (``0.25 <= pit <= 0.75``;
    ``0.05 <= pit <= 0.95``), else 0: coverage, to compare with 0.5 and 0.9.

References
----------
.. [1] Matheson, J. E., & Winkler, R. L. (1976). Scoring rules for continuous probability distributions.
   *Management Science*, 22(10), 1087-1096.
.. [2] Gneiting, T., & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and estimation. *JASA*,
   102(477), 359-378.
.. [3] Gneiting, T., & Ranjan, R. (2011). Comparing density forecasts using threshold- and quantile-weighted
   scoring rules. *Journal of Business & Economic Statistics*, 29(3), 411-422.
.. [4] Dawid, A. P. (1984). Statistical theory: the prequential approach. *JRSS A*, 147(2), 278-292.
"""

from __future__ import annotations

import numpy as np

from agent_schemas.kinds.binary.rules import LOG_LOSS_EPS
from agent_schemas.kinds.numeric.grid import N_BINS, N_POINTS, OUT_OF_RANGE_BASELINE, bucket_of, cdf_at

__all__ = ["CHUNK_ROWS", "baseline_score", "bucket_probability", "crps", "interval_hits", "log_probability", "pit"]

CHUNK_ROWS: int = 1024
"""Forecasts handled at a time by :func:`crps` (1.6 MiB of CDFs), so its temporaries stay in cache."""

_H = 1.0 / N_BINS


def crps(cdfs: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Exact CRPS of piecewise-linear CDFs over the range, in location units (see the module docstring).

    With ``y`` the outcome's location clipped to [0, 1], in bin ``k`` at fraction ``u``,
    ``CRPS = int F^2 - 2 int_y^1 F + (1 - y)``: ``int_0^1 F^2 = h/3 sum_j (F_j^2 + F_j F_{j+1} + F_{j+1}^2)``
    (exact for a linear piece), ``int_0^y F`` the trapezoids up to bin ``k`` plus the part of bin ``k`` below
    ``y``. Three row reductions and one cumulative sum per forecast.

    Parameters
    ----------
    cdfs : ndarray of shape (n, 201)
        Valid grid CDFs.
    t : ndarray of shape (n,)
        The outcomes' locations (any real; NaN for unresolved).

    Returns
    -------
    ndarray of shape (n,)
        In [0, 1]; lower is better; NaN where ``t`` is NaN.
    """
    n = cdfs.shape[0]
    out = np.empty(n)
    y = np.clip(t, 0.0, 1.0)
    pos = np.nan_to_num(y, nan=0.0) * N_BINS
    k = np.minimum(pos.astype(np.intp), N_BINS - 1)
    u = pos - k
    buf = np.empty((min(n, CHUNK_ROWS), N_POINTS))
    for s in range(0, n, CHUNK_ROWS):
        f = cdfs[s:s + CHUNK_ROWS]
        r = f.shape[0]
        kk, uu, yy = k[s:s + r], u[s:s + r], y[s:s + r]
        rows = np.arange(r)
        f0, f200 = f[:, 0], f[:, -1]
        sq = np.einsum("ij,ij->i", f, f)
        cross = np.einsum("ij,ij->i", f[:, :-1], f[:, 1:])
        int_f2 = _H / 3 * (2 * sq - f0 * f0 - f200 * f200 + cross)
        int_f = _H * (f.sum(axis=1) - (f0 + f200) / 2)
        csum = np.cumsum(f, axis=1, out=buf[:r])
        fk, fk1 = f[rows, kk], f[rows, kk + 1]
        fy = fk + uu * (fk1 - fk)
        int_0y = _H * (csum[rows, kk] - (f0 + fk) / 2) + _H * uu * (fk + fy) / 2
        out[s:s + r] = int_f2 - 2 * (int_f - int_0y) + (1 - yy)
    return out


def bucket_probability(cdfs: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``(n,)``: the probability each CDF gives to the outcome's bucket (:func:`~agent_schemas.kinds.numeric.grid.bucket_of`):
    ``F_0`` below the range, ``F_j - F_{j-1}`` for bin ``j``, ``1 - F_200`` above it; NaN where ``t`` is NaN."""
    b = bucket_of(t)
    rows = np.arange(cdfs.shape[0])
    upper = np.where(b >= N_POINTS, 1.0, cdfs[rows, np.clip(b, 0, N_BINS)])
    lower = np.where(b <= 0, 0.0, cdfs[rows, np.clip(b - 1, 0, N_BINS)])
    return np.where(b < 0, np.nan, np.maximum(upper - lower, 0.0))


def log_probability(cdfs: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``(n,)``: ``ln`` of :func:`bucket_probability`, clipped below at ``ln(2.2e-16)`` (the binary log loss's
    clipping, :data:`~agent_schemas.kinds.binary.rules.LOG_LOSS_EPS`)."""
    return np.log(np.maximum(bucket_probability(cdfs, t), LOG_LOSS_EPS))


def baseline_score(log_q: np.ndarray, t: np.ndarray, open_lower: np.ndarray, open_upper: np.ndarray) -> np.ndarray:
    """Metaculus's continuous baseline score ``100 ln(q / q_0) / 2`` from ``log_q`` (:func:`log_probability`)
    and the outcome's location ``t``: ``q_0`` is 0.05 beyond the range and ``(1 - 0.05 k) / 200`` inside (``k``
    open bounds per question, from the ``(n,)`` bool arrays). Higher is better."""
    b = bucket_of(t)
    inner = (1.0 - OUT_OF_RANGE_BASELINE * (open_lower.astype(np.float64) + open_upper)) / N_BINS
    q0 = np.where((b == 0) | (b == N_POINTS), OUT_OF_RANGE_BASELINE, inner)
    return 100.0 * (log_q - np.log(q0)) / 2.0


def pit(cdfs: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``(n,)``: the PIT value ``F(y)`` of each outcome (see the module docstring); NaN where ``t`` is NaN."""
    inside = cdf_at(cdfs, np.nan_to_num(t, nan=0.0))
    out = np.where(t < 0, cdfs[:, 0] / 2, np.where(t > 1, (1.0 + cdfs[:, -1]) / 2, inside))
    return np.where(np.isnan(t), np.nan, out)


def interval_hits(pit_values: np.ndarray, coverage: float) -> np.ndarray:
    """``(n,)``: 1.0 where the outcome lies in the central ``coverage`` interval (its PIT within
    ``[1/2 - coverage/2, 1/2 + coverage/2]``), else 0.0; NaN where the PIT is NaN."""
    lo, hi = 0.5 - coverage / 2, 0.5 + coverage / 2
    hits = ((pit_values >= lo - 1e-12) & (pit_values <= hi + 1e-12)).astype(np.float64)
    return np.where(np.isnan(pit_values), np.nan, hits)
