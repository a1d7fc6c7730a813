"""How different an ensemble's members are, and what that difference is worth: the ambiguity decomposition of the
linear pool's Brier score, the correlation of the members' errors with the effective number of independent members,
how a reconciler's gain over the pool splits, and how close members stay to a crowd price they were shown.

Every function takes the members as one matrix ``p_members`` of shape ``(n_questions, n_members)``, NaN where a
member gave no forecast for a question (a panel's forecasters answer different questions), and is vectorised numpy.

**Ambiguity decomposition** (Krogh & Vedelsby 1995 [1], stated there for the squared error of a weighted average;
for the Brier score of the equally weighted linear pool it is exact). On a question with members ``p_1..p_m``,
their mean ``pbar`` and outcome ``o``::

    (1/m) sum_i (p_i - o)^2  =  (pbar - o)^2  +  (1/m) sum_i (p_i - pbar)^2
    mean member Brier        =  pool Brier    +  diversity (the members' spread)

The pool beats the average member by exactly the members' spread: disagreement is the whole of the pool's gain.
Averaged over questions (each question weighs one), the three terms keep the identity; each gets a clustered
bootstrap interval (:func:`benchmarks.scoring.clustered_bootstrap_ci`, the same seed and so the same clusters drawn
for the three). The pool here is the mean of the members *as scored* (each clipped to the combination rule's bounds
by the caller), so it can differ in the fourth decimal from the ``mean`` method row, which clips the mean of the
unclipped members.

**Correlation of errors** (:func:`error_correlation`). Member ``i``'s error on question ``q`` is ``p_qi - o_q``; the
Pearson correlation of two members' errors over the questions both answered (pairwise complete, as
:meth:`pandas.DataFrame.corr` with ``min_periods``). The mean pairwise correlation ``rho`` over the pairs with at
least ``min_overlap`` common questions gives the **effective number of independent members** of a pool of ``m``::

    n_eff = m / (1 + (m - 1) * rho)

the number of independent, equally accurate members whose mean has the variance of the mean of ``m`` members with
pairwise correlation ``rho`` (Clemen & Winkler 1985 [2]; Kish's design effect [3]). ``n_eff`` is 1 for identical
members (``rho = 1``) and ``m`` for uncorrelated ones; when ``1 + (m - 1) * rho <= 0`` (a mean correlation below
``-1 / (m - 1)``, which no equicorrelated set can have: an estimate's noise) it is infinite. With members answering
different questions ``m`` is the mean number of members per question.

**A reconciler against the pool** (:func:`reconciliation_split`). A debate or a supervisor reads the members and
gives one forecast ``r``: it removes the members' whole spread (the pool's gain over the average member) and
replaces it by a choice. Its gain over the pool, ``G = (pbar - o)^2 - (r - o)^2`` (positive: better than the pool),
splits exactly in two through ``c = clip(r, min_i p_i, max_i p_i)``, the reconciled forecast held inside the
members' range::

    G  =  [(pbar - o)^2 - (c - o)^2]  +  [(c - o)^2 - (r - o)^2]
          toward the better member       beyond every member

The first term is the gain of moving from the pool toward one end of the members' range; with a 0/1 outcome the
end nearer the outcome is the better member's (the member closest to the outcome), so the term is positive when the
reconciler moved toward the better member and negative when it moved toward the worse one. The second term is
zero unless ``r`` left the members' range: positive when it went past the better member (further toward the
outcome than every member), negative when it went past the worse one. Its gain over the average member is the
spread plus ``G``.

**Crowd copying** (:func:`crowd_closeness`). When members are shown the crowd's price ``c_q``: the Pearson
correlation of every member forecast with its question's price, and the share of member forecasts within
``tolerance`` (0.02) of it.

References
----------
.. [1] Krogh, A., & Vedelsby, J. (1995). Neural network ensembles, cross validation, and active learning.
   *Advances in Neural Information Processing Systems 7*, 231-238 (the ambiguity decomposition, eq. 6).
.. [2] Clemen, R. T., & Winkler, R. L. (1985). Limits for the precision and value of information from dependent
   sources. *Operations Research*, 33(2), 427-442 (equivalent number of independent experts).
.. [3] Kish, L. (1965). *Survey Sampling*. Wiley, section 8.2 (design effect ``1 + (m - 1) * rho``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from agent_schemas.errors import DataValidationError
from benchmarks.scoring.bootstrap import (MIN_CLUSTERS_FOR_INTERVAL, BootstrapCI, check_bootstrap_args, bootstrap_mean,
                                          cluster_codes)
from benchmarks.scoring.validation import as_1d_float, check_probs, validate_forecasts

__all__ = ["AmbiguityDecomposition", "CROWD_TOLERANCE", "CrowdCloseness", "ErrorCorrelation", "MIN_OVERLAP",
           "ReconciliationSplit", "ambiguity_decomposition", "ambiguity_terms", "crowd_closeness", "effective_members",
           "error_correlation", "reconciliation_split"]

#: Fewest questions two members must both have answered for their error correlation to be estimated (count).
MIN_OVERLAP = 10
#: How close to the crowd's price a member forecast counts as "at the price" (probability units).
CROWD_TOLERANCE = 0.02
#: A reconciled forecast within this distance of the pool (or of the members' range) has not moved (probability units):
#: the pool computed in another order differs in the last bits (0.3 against 0.30000000000000004).
_MOVE_TOLERANCE = 1e-9


def _members(p_members: Any, outcomes: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated ``(p, o, present)``: p of shape (n, m) with NaN for an absent member, o of shape (n,) 0/1, and the
    mask of present forecasts; every question has at least one member."""
    p = np.asarray(p_members, dtype=np.float64)
    if p.ndim != 2:
        raise DataValidationError(f"p_members must have shape (n_questions, n_members); got {p.shape}", field="p_members", value=p.shape)
    present = ~np.isnan(p)
    if p.size == 0 or p.shape[0] == 0:
        raise DataValidationError("p_members is empty: nothing to decompose", field="p_members")
    if present.any():
        vals = p[present]
        if vals.min() < 0.0 or vals.max() > 1.0:
            bad = np.argwhere(present & ((p < 0.0) | (p > 1.0)))[0]
            raise DataValidationError(f"p_members has values outside [0, 1]: {float(p[tuple(bad)])!r} at row {bad[0]}, column {bad[1]}",
                                      field="p_members", row=int(bad[0]), value=float(p[tuple(bad)]))
    empty = ~present.any(axis=1)
    if empty.any():
        i = int(np.argmax(empty))
        raise DataValidationError(f"p_members has no forecast at row {i}: every question needs a member", field="p_members", row=i)
    _, o = validate_forecasts(np.full(p.shape[0], 0.5), outcomes)
    return p, o, present


def ambiguity_terms(p_members: Any, outcomes: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per question: the mean member Brier, the Brier of the members' mean, and the members' spread around it.

    Parameters
    ----------
    p_members : array-like of shape (n_questions, n_members)
        Members' p_yes in [0, 1]; NaN where a member gave no forecast (each question needs one at least).
    outcomes : array-like of shape (n_questions,)
        1 (Yes) / 0 (No).

    Returns
    -------
    member_brier, pool_brier, diversity : ndarray of shape (n_questions,)
        ``mean_i (p_i - o)^2``, ``(pbar - o)^2`` and ``mean_i (p_i - pbar)^2``; ``member_brier = pool_brier +
        diversity`` up to rounding (Krogh & Vedelsby 1995; module docstring). Losses in [0, 1]: lower is better,
        except the diversity, the pool's gain over the average member.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for a matrix that is not 2-D, a value outside [0, 1], a question without a member, or
        outcomes that are not 0/1 or do not match the rows.

    Examples
    --------
    Two members at 0.6 and 0.9 on a question that resolved Yes: 0.085 = 0.0625 + 0.0225.

    >>> [t.round(4).tolist() for t in ambiguity_terms([[0.6, 0.9]], [1])]
    [[0.085], [0.0625], [0.0225]]
    """
    p, o, present = _members(p_members, outcomes)
    if o.size != p.shape[0]:
        raise DataValidationError(f"outcomes must have {p.shape[0]} values, one per row of p_members; got {o.size}", field="outcomes", value=o.size)
    count = present.sum(axis=1)
    x = np.where(present, p, 0.0)
    pbar = x.sum(axis=1) / count
    err = np.where(present, p - o[:, None], 0.0)
    dev = np.where(present, p - pbar[:, None], 0.0)
    return (err * err).sum(axis=1) / count, (pbar - o) ** 2, (dev * dev).sum(axis=1) / count


@dataclass(frozen=True)
class AmbiguityDecomposition:
    """The ambiguity decomposition of a pool over many questions (:func:`ambiguity_decomposition`).

    Attributes
    ----------
    n : int
        Questions (count).
    members_per_question : float
        Mean members per question (count).
    mean_member_brier, pool_brier, diversity : BootstrapCI
        The three terms averaged over questions, each with its clustered bootstrap interval (NaN bounds below
        :data:`benchmarks.scoring.MIN_CLUSTERS_FOR_INTERVAL` clusters). ``mean_member_brier.mean == pool_brier.mean
        + diversity.mean`` up to rounding.
    identity_error : float
        Largest ``|mean member Brier - pool Brier - diversity|`` over the questions and the overall means: the
        identity's rounding error (about 1e-17; the tests require under 1e-12).
    member_brier_q, pool_brier_q, diversity_q : ndarray of shape (n,)
        The terms per question (:func:`ambiguity_terms`).
    """

    n: int
    members_per_question: float
    mean_member_brier: BootstrapCI
    pool_brier: BootstrapCI
    diversity: BootstrapCI
    identity_error: float
    member_brier_q: np.ndarray
    pool_brier_q: np.ndarray
    diversity_q: np.ndarray

    @property
    def diversity_share(self) -> float:
        """The diversity as a share of the mean member Brier (fraction): how much of a member's loss pooling removes."""
        return self.diversity.mean / self.mean_member_brier.mean if self.mean_member_brier.mean > 0 else float("nan")


def _intervals(arrays: list[np.ndarray], clusters: Any, n_resamples: int, confidence: float, seed: Any,
               min_clusters: int) -> list[BootstrapCI]:
    check_bootstrap_args(n_resamples, confidence)
    n = arrays[0].size
    codes = cluster_codes(np.arange(n) if clusters is None else clusters, n)
    return [bootstrap_mean(a, codes, int(n_resamples), float(confidence), seed, int(min_clusters)) for a in arrays]


def ambiguity_decomposition(p_members: Any, outcomes: Any, clusters: Any = None, *, n_resamples: int = 1000,
                            confidence: float = 0.95, seed: Any = 0,
                            min_clusters: int = MIN_CLUSTERS_FOR_INTERVAL) -> AmbiguityDecomposition:
    """Mean member Brier = Brier of the members' mean + the members' spread, over questions, with intervals.

    Parameters
    ----------
    p_members : array-like of shape (n_questions, n_members)
        Members' p_yes in [0, 1] as scored; NaN where a member gave no forecast.
    outcomes : array-like of shape (n_questions,)
        1 (Yes) / 0 (No).
    clusters : array-like of shape (n_questions,), optional
        Cluster label of each question (related questions share one); default each question its own.
    n_resamples, confidence, seed, min_clusters
        The clustered bootstrap's (:func:`benchmarks.scoring.clustered_bootstrap_ci`); the same seed for the
        three terms, so each resample draws the same clusters for them.

    Returns
    -------
    AmbiguityDecomposition

    Raises
    ------
    DataValidationError
        As :func:`ambiguity_terms`, and for bad clusters or bootstrap arguments.

    References
    ----------
    Krogh & Vedelsby (1995), *NIPS 7*, 231-238.

    Examples
    --------
    >>> d = ambiguity_decomposition([[0.6, 0.9], [0.2, 0.4]], [1, 0])
    >>> round(d.mean_member_brier.mean, 4), round(d.pool_brier.mean, 4), round(d.diversity.mean, 4)
    (0.0925, 0.0763, 0.0163)
    """
    member, pool, div = ambiguity_terms(p_members, outcomes)
    present = ~np.isnan(np.asarray(p_members, dtype=np.float64))
    cis = _intervals([member, pool, div], clusters, n_resamples, confidence, seed, min_clusters)
    overall = abs(member.mean() - pool.mean() - div.mean())
    err = float(max(np.abs(member - pool - div).max(), overall))
    return AmbiguityDecomposition(n=int(member.size), members_per_question=float(present.sum(axis=1).mean()),
                                  mean_member_brier=cis[0], pool_brier=cis[1], diversity=cis[2], identity_error=err,
                                  member_brier_q=member, pool_brier_q=pool, diversity_q=div)


def effective_members(m: float, rho: float) -> float:
    """Effective number of independent members of a pool of ``m`` with mean pairwise error correlation ``rho``.

    ``m / (1 + (m - 1) * rho)`` (Clemen & Winkler 1985; module docstring); infinite when the denominator is not
    positive, NaN when ``rho`` is NaN.

    >>> effective_members(5, 0.0), effective_members(5, 1.0), effective_members(5, 0.5)
    (5.0, 1.0, 1.6666666666666667)
    """
    if rho != rho:
        return float("nan")
    den = 1.0 + (m - 1.0) * rho
    return float(m / den) if den > 0 else float("inf")


@dataclass(frozen=True)
class ErrorCorrelation:
    """The correlation of members' errors (:func:`error_correlation`).

    Attributes
    ----------
    matrix : ndarray of shape (n_members, n_members)
        Pearson correlation of the errors ``p - o`` over the questions both members answered; 1 on the diagonal of
        a member with varying errors; NaN for a pair with fewer than ``min_overlap`` common questions or an error
        without variance.
    overlap : ndarray of shape (n_members, n_members)
        Questions both answered (count).
    mean_correlation : float
        Mean over the estimated pairs ``i < j`` (NaN when none is).
    n_pairs : int
        Pairs estimated (count).
    members_per_question : float
        Mean members per question, the ``m`` of ``n_effective`` (count).
    n_effective : float
        :func:`effective_members` of ``members_per_question`` and ``mean_correlation``.
    """

    matrix: np.ndarray
    overlap: np.ndarray
    mean_correlation: float
    n_pairs: int
    members_per_question: float
    n_effective: float


def error_correlation(p_members: Any, outcomes: Any, *, min_overlap: int = MIN_OVERLAP) -> ErrorCorrelation:
    """Pairwise correlation of members' errors and the effective number of independent members.

    Parameters
    ----------
    p_members : array-like of shape (n_questions, n_members)
        Members' p_yes in [0, 1]; NaN where a member gave no forecast.
    outcomes : array-like of shape (n_questions,)
        1 (Yes) / 0 (No).
    min_overlap : int, default=MIN_OVERLAP
        Fewest common questions of a pair whose correlation is estimated.

    Returns
    -------
    ErrorCorrelation
        The matrix equals ``pandas.DataFrame(p - o[:, None]).corr(min_periods=min_overlap)`` (pairwise complete).

    Raises
    ------
    DataValidationError
        As :func:`ambiguity_terms`, or for ``min_overlap < 2``.

    References
    ----------
    Clemen & Winkler (1985), *Operations Research* 33(2); Kish (1965), section 8.2.

    Examples
    --------
    >>> c = error_correlation([[0.9, 0.8, 0.1], [0.2, 0.3, 0.6], [0.7, 0.9, 0.5]], [1, 0, 1], min_overlap=3)
    >>> c.matrix.round(3).tolist()[0]
    [1.0, 0.826, 0.784]
    """
    if isinstance(min_overlap, bool) or not isinstance(min_overlap, (int, np.integer)) or min_overlap < 2:
        raise DataValidationError(f"min_overlap must be an integer of at least 2; got {min_overlap!r}", field="min_overlap", value=min_overlap)
    p, o, present = _members(p_members, outcomes)
    if o.size != p.shape[0]:
        raise DataValidationError(f"outcomes must have {p.shape[0]} values, one per row of p_members; got {o.size}", field="outcomes", value=o.size)
    mask = present.astype(np.float64)
    e = np.where(present, p - o[:, None], 0.0)
    n = mask.T @ mask                                  # n[i, j]: questions both answered
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_i = (e.T @ mask) / n                      # mean of i's errors over the questions j also answered
        mean_j = mean_i.T
        cov = (e.T @ e) / n - mean_i * mean_j
        var_i = ((e * e).T @ mask) / n - mean_i ** 2
        var_j = var_i.T
        corr = cov / np.sqrt(var_i * var_j)
    tiny = 1e-14
    corr[(n < min_overlap) | (var_i <= tiny) | (var_j <= tiny)] = np.nan
    corr = np.clip(corr, -1.0, 1.0)
    upper = corr[np.triu_indices(corr.shape[0], k=1)]
    valid = upper[~np.isnan(upper)]
    rho = float(valid.mean()) if valid.size else float("nan")
    m = float(present.sum(axis=1).mean())
    return ErrorCorrelation(matrix=corr, overlap=n.astype(np.int64), mean_correlation=rho, n_pairs=int(valid.size),
                            members_per_question=m, n_effective=effective_members(m, rho))


@dataclass(frozen=True)
class ReconciliationSplit:
    """A reconciled forecast against the members' pool (:func:`reconciliation_split`); positive gains are better.

    Attributes
    ----------
    n : int
        Questions (count).
    spread : float
        Mean members' spread around their mean (the diversity term): the pool's gain over the average member, which
        the reconciler removes by giving one forecast.
    gain_vs_pool : BootstrapCI
        ``(pbar - o)^2 - (r - o)^2`` averaged, with its clustered interval.
    toward_better_member, beyond_every_member : BootstrapCI
        The two parts of ``gain_vs_pool`` (module docstring), each with its interval; they add to it.
    gain_vs_average_member : float
        ``spread + gain_vs_pool.mean``: the reconciler's gain over a member picked at random.
    share_toward_outcome, share_away, share_outside_range : float
        Fractions of the questions on which ``r`` moved from the pool toward the outcome, away from it, and left the
        members' range (by more than 1e-9: a reconciler that returned the pool did not move).
    mean_shift : float
        Mean ``|r - pbar|`` (probability units): how far the reconciler went from the pool.
    """

    n: int
    spread: float
    gain_vs_pool: BootstrapCI
    toward_better_member: BootstrapCI
    beyond_every_member: BootstrapCI
    gain_vs_average_member: float
    share_toward_outcome: float
    share_away: float
    share_outside_range: float
    mean_shift: float


def reconciliation_split(p_members: Any, outcomes: Any, reconciled: Any, clusters: Any = None, *, n_resamples: int = 1000,
                         confidence: float = 0.95, seed: Any = 0,
                         min_clusters: int = MIN_CLUSTERS_FOR_INTERVAL) -> ReconciliationSplit:
    """A reconciler's gain over the members' mean, split into "toward the better member" and "beyond every member".

    Parameters
    ----------
    p_members : array-like of shape (n_questions, n_members)
        The members the reconciler read, p_yes in [0, 1] as scored; NaN where absent.
    outcomes : array-like of shape (n_questions,)
        1 (Yes) / 0 (No).
    reconciled : array-like of shape (n_questions,)
        The reconciled p_yes in [0, 1] (a debate's, a supervisor's, the pipeline's), as scored.
    clusters, n_resamples, confidence, seed, min_clusters
        As :func:`ambiguity_decomposition`.

    Returns
    -------
    ReconciliationSplit

    Raises
    ------
    DataValidationError
        As :func:`ambiguity_terms`, or for ``reconciled`` outside [0, 1] or of another length.

    Examples
    --------
    Members 0.6 and 0.9 (mean 0.75), outcome Yes. A debate at 0.85 gains 0.0625 - 0.0225 = 0.04 over the pool,
    all toward the better member; one at 0.95 gains 0.06: 0.0525 up to 0.9 and 0.0075 beyond it.

    >>> s = reconciliation_split([[0.6, 0.9]], [1], [0.95])
    >>> round(s.gain_vs_pool.mean, 4), round(s.toward_better_member.mean, 4), round(s.beyond_every_member.mean, 4)
    (0.06, 0.0525, 0.0075)
    """
    p, o, present = _members(p_members, outcomes)
    r = as_1d_float(reconciled, "reconciled")
    check_probs(r, "reconciled")
    if r.size != p.shape[0] or o.size != p.shape[0]:
        raise DataValidationError(f"reconciled and outcomes must have {p.shape[0]} values, one per row of p_members; got "
                                  f"{r.size} and {o.size}", field="reconciled", value=r.size)
    count = present.sum(axis=1)
    pbar = np.where(present, p, 0.0).sum(axis=1) / count
    lo, hi = np.nanmin(p, axis=1), np.nanmax(p, axis=1)
    c = np.clip(r, lo, hi)
    pool_b, c_b, r_b = (pbar - o) ** 2, (c - o) ** 2, (r - o) ** 2
    toward, beyond = pool_b - c_b, c_b - r_b
    gain = pool_b - r_b
    dev = np.where(present, p - pbar[:, None], 0.0)
    spread = float(((dev * dev).sum(axis=1) / count).mean())
    cis = _intervals([gain, toward, beyond], clusters, n_resamples, confidence, seed, min_clusters)
    moved = (r - pbar) * (2.0 * o - 1.0)
    tol = _MOVE_TOLERANCE  # a reconciler that returned the pool moved nowhere, whatever the last bit of its sum
    return ReconciliationSplit(n=int(r.size), spread=spread, gain_vs_pool=cis[0], toward_better_member=cis[1],
                               beyond_every_member=cis[2], gain_vs_average_member=spread + cis[0].mean,
                               share_toward_outcome=float((moved > tol).mean()), share_away=float((moved < -tol).mean()),
                               share_outside_range=float(((r < lo - tol) | (r > hi + tol)).mean()),
                               mean_shift=float(np.abs(r - pbar).mean()))


@dataclass(frozen=True)
class CrowdCloseness:
    """How close members stay to a crowd price (:func:`crowd_closeness`).

    Attributes
    ----------
    n_forecasts : int
        Member forecasts compared (count).
    correlation : float
        Pearson correlation of member p_yes with their question's price (NaN when either has no variance).
    share_within : float
        Fraction of member forecasts within ``tolerance`` of the price.
    mean_abs_distance : float
        Mean ``|p - price|`` (probability units).
    tolerance : float
        The tolerance used (probability units).
    """

    n_forecasts: int
    correlation: float
    share_within: float
    mean_abs_distance: float
    tolerance: float


def crowd_closeness(p_members: Any, crowd: Any, *, tolerance: float = CROWD_TOLERANCE) -> CrowdCloseness:
    """How close members' forecasts stay to the crowd's price: correlation and share within ``tolerance``.

    Parameters
    ----------
    p_members : array-like of shape (n_questions, n_members)
        Members' p_yes in [0, 1]; NaN where absent.
    crowd : array-like of shape (n_questions,)
        The crowd's (market's) price of each question in [0, 1].
    tolerance : float, default=CROWD_TOLERANCE (0.02)
        Distance (probability units) at or under which a forecast counts as at the price (with 1e-9 of slack for
        decimal rounding: 0.52 against 0.50 counts).

    Returns
    -------
    CrowdCloseness

    Raises
    ------
    DataValidationError
        For values outside [0, 1], a length mismatch or a negative tolerance.

    Examples
    --------
    >>> c = crowd_closeness([[0.50, 0.62], [0.31, 0.29]], [0.52, 0.30])
    >>> c.share_within, round(c.mean_abs_distance, 4)
    (0.75, 0.035)
    """
    if not tolerance >= 0:
        raise DataValidationError(f"tolerance must be non-negative; got {tolerance!r}", field="tolerance", value=tolerance)
    p = np.asarray(p_members, dtype=np.float64)
    price = as_1d_float(crowd, "crowd")
    check_probs(price, "crowd")
    if p.ndim != 2 or p.shape[0] != price.size:
        raise DataValidationError(f"p_members must have shape ({price.size}, n_members) to match crowd; got {p.shape}", field="p_members", value=p.shape)
    present = ~np.isnan(p)
    x = p[present]
    check_probs(x, "p_members")
    y = np.broadcast_to(price[:, None], p.shape)[present]
    d = np.abs(x - y)
    corr = float(np.corrcoef(x, y)[0, 1]) if x.size > 1 and x.std() > 0 and y.std() > 0 else float("nan")
    return CrowdCloseness(n_forecasts=int(x.size), correlation=corr, share_within=float((d <= tolerance + 1e-9).mean()),
                          mean_abs_distance=float(d.mean()), tolerance=float(tolerance))
