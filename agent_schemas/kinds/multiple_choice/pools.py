"""Pooling rules of the multiple-choice kind, vectorised over questions.

Every rule maps a stack ``(n_questions, n_members, k)`` of members' probability vectors (a row of NaN for a
member that did not answer) to ``(n_questions, k)``, each row summing to 1; a question with no member pools to
a row of NaN. Rules that do not keep the sum at 1 by themselves are **renormalised** (divided by their sum).

``mean``
    Linear opinion pool, :math:`\\bar p_k = \\frac1m\\sum_i p_{ik}` (Stone 1961; Genest & Zidek 1986).
``median``
    Per-option median, renormalised (the median of each option is not a distribution by itself). When every
    option's median is 0 (three members each certain of a different option) the row falls back to the mean.
``log_pool``
    Geometric (logarithmic) pool, :math:`p_k \\propto \\exp(\\frac1m\\sum_i \\ln p_{ik})`, renormalised
    (Genest & Zidek 1986; the multi-option geometric mean Metaculus uses for peer scores). Members are clipped
    to at least :data:`EPS` first, so one member's 0 cannot veto an option.
``extremized``
    Sharpened log pool, :math:`p_k \\propto \\exp(\\frac{d}{m}\\sum_i \\ln p_{ik})` with ``d = 1.5``: the
    multi-option form of extremizing the geometric mean of odds (Satopää et al. 2014, whose binary logit model
    it reduces to for two options; Baron et al. 2014 on why aggregates should be more extreme).
``trimmed_mean``
    Per-option trimmed mean with :func:`scipy.stats.trim_mean` semantics (cut ``floor(0.2 m)`` members from
    each end), renormalised.
``least_confident``
    The member whose forecast has the highest Shannon entropy (the least committed; the analogue of the
    binary ``min``, the design card's conservative aggregate). Ties go to the first such member.

References
----------
Stone, M. (1961). The opinion pool. *Ann. Math. Statist.* 32(4). Genest, C. & Zidek, J. V. (1986). Combining
probability distributions: a critique and an annotated bibliography. *Statist. Sci.* 1(1). Satopää et al.
(2014), *Int. J. Forecasting* 30(2). Baron et al. (2014), *Decision Analysis* 11(2).
"""

from __future__ import annotations

import numpy as np

__all__ = ["DEFAULT_EXTREMIZING_FACTOR", "EPS", "POOLS", "TRIM", "extremized", "least_confident", "log_pool", "mean",
           "median", "trimmed_mean"]

#: Floor of a member's probability inside a logarithm (``log_pool``, ``extremized``, the entropy).
EPS = 1e-4
#: Proportion cut from each end by ``trimmed_mean``.
TRIM = 0.2
#: ``d`` of ``extremized``.
DEFAULT_EXTREMIZING_FACTOR = 1.5


def _present(stack: np.ndarray) -> np.ndarray:
    """(n, m) bool: the member answered (its row has no NaN)."""
    return ~np.isnan(stack).any(axis=2)


def _renormalised(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return x / x.sum(axis=1, keepdims=True)


def mean(stack: np.ndarray) -> np.ndarray:
    """Linear pool of the members present; NaN row for a question with none."""
    present = _present(stack)
    n = present.sum(axis=1)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(present[:, :, None], stack, 0.0).sum(axis=1) / n


def median(stack: np.ndarray) -> np.ndarray:
    """Per-option median of the members present, renormalised (the mean where every median is 0)."""
    ordered = np.sort(stack, axis=1)  # NaN rows sort last in every column
    n = _present(stack).sum(axis=1)
    rows = np.arange(stack.shape[0])
    lo = ordered[rows, np.maximum((n - 1) // 2, 0), :]
    hi = ordered[rows, np.minimum(n // 2, stack.shape[1] - 1), :]
    med = (lo + hi) / 2
    med[n == 0] = np.nan
    total = med.sum(axis=1)
    out = _renormalised(med)
    zero = total == 0
    if zero.any():
        out[zero] = mean(stack[zero])
    return out


def _mean_log(stack: np.ndarray) -> np.ndarray:
    present = _present(stack)
    n = present.sum(axis=1)[:, None]
    logs = np.log(np.clip(np.where(present[:, :, None], stack, 1.0), EPS, 1.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(present[:, :, None], logs, 0.0).sum(axis=1) / n


def _power_pool(stack: np.ndarray, d: float) -> np.ndarray:
    z = d * _mean_log(stack)
    top = np.max(np.where(np.isnan(z), -np.inf, z), axis=1, keepdims=True) if z.size else z
    return _renormalised(np.exp(z - np.where(np.isfinite(top), top, 0.0)))  # shifted by the row's max: no overflow


def log_pool(stack: np.ndarray) -> np.ndarray:
    """Geometric (log) pool of the members present, members floored at :data:`EPS`, renormalised."""
    with np.errstate(invalid="ignore"):
        return _power_pool(stack, 1.0)


def extremized(stack: np.ndarray, d: float = DEFAULT_EXTREMIZING_FACTOR) -> np.ndarray:
    """Log pool sharpened by the power ``d`` (>= 0), renormalised."""
    if not (np.isfinite(d) and d >= 0):
        raise ValueError(f"d must be a finite number >= 0; got {d!r}")
    with np.errstate(invalid="ignore"):
        return _power_pool(stack, d)


def trimmed_mean(stack: np.ndarray, trim: float = TRIM) -> np.ndarray:
    """Per-option trimmed mean (``floor(trim * m)`` members cut from each end), renormalised."""
    if not 0 <= trim < 0.5:
        raise ValueError(f"trim must be in [0, 0.5); got {trim!r}")
    ordered = np.sort(stack, axis=1)
    n = _present(stack).sum(axis=1)
    k = np.floor(trim * n).astype(np.int64)
    j = np.arange(stack.shape[1])
    keep = (j[None, :] >= k[:, None]) & (j[None, :] < (n - k)[:, None])
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(keep[:, :, None], ordered, 0.0).sum(axis=1) / (n - 2 * k)[:, None]
    return _renormalised(means)


def least_confident(stack: np.ndarray) -> np.ndarray:
    """The forecast of the member with the highest entropy (the first on a tie); NaN row when none answered."""
    present = _present(stack)
    p = np.clip(np.where(present[:, :, None], stack, 1.0), EPS, 1.0)
    entropy = np.where(present, -(np.where(present[:, :, None], stack, 0.0) * np.log(p)).sum(axis=2), -np.inf)
    pick = np.argmax(entropy, axis=1)
    out = stack[np.arange(stack.shape[0]), pick, :].copy()
    out[~present.any(axis=1)] = np.nan
    return out


POOLS = {"mean": mean, "median": median, "log_pool": log_pool, "extremized": extremized,
         "trimmed_mean": trimmed_mean, "least_confident": least_confident}
"""The multiple-choice pooling rules by method name."""
