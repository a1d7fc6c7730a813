"""Clustered bootstrap intervals of a mean score and of a paired difference (Efron & Tibshirani 1993; Field &
Welsh 2007), with no interval below :data:`MIN_CLUSTERS_FOR_INTERVAL` clusters.

The interval is the **hybrid** interval: the smallest interval holding three 95% intervals computed from the
clusters and one set of cluster-bootstrap resamples, cut to the range of the scores:

1. the **expanded percentile** interval (Hesterberg 2015): the percentile interval taken at the tail
   probability :func:`expanded_tail` instead of ``(1 - confidence) / 2``, wider by the small-sample factor a
   t interval has over a normal one;
2. the **t interval with the bootstrap standard error**, ``mean +- t_{G-1} sqrt(G / (G - 1)) sd*``
   (``sd*`` the resampled means' standard deviation; symmetric: it holds where many paired differences are
   zero and the percentiles bunch up);
3. **Hall's skewness-corrected t interval** (:func:`skew_corrected_t`; Hall 1992): longer on the side the
   cluster totals are skewed to, which the percentile interval gets the wrong way round when a few clusters
   carry most of a Brier score (a market pool where most questions are unlikely).

2 and 3 cost O(clusters) on top of the resampling (the ratio to one scoring pass at 100,000 clusters,
``benchmarks/perf/scoring_speed.py``: 6.95, target 10). Coverage measured by
``python benchmarks/perf/interval_coverage.py --world sim|skewed`` (1,500 draws of k clusters with
replacement; nominal 0.95, Monte Carlo error about 0.006): ``sim``, the 736 clusters of a 1,112-question
simulated run, the Brier of mean, supervisor and min and the paired differences of supervisor, debate and
extremized against mean; ``skewed``, a world like the market pool (``p ~ Beta(0.5, 3)``, 1-5 questions per
cluster, one outcome draw per cluster), the Brier of mean and the paired differences of median,
extremized and min against mean. The range over the targets:

=========  ===============  ===============  ===============  ===============
clusters   sim, expanded    sim, hybrid      skewed, expanded skewed, hybrid
=========  ===============  ===============  ===============  ===============
12         0.893-0.923      0.917-0.967      0.792-0.851      0.803-0.946
30         0.923-0.943      0.948-0.969      0.883-0.913      0.907-0.962
50         0.928-0.944      0.948-0.964      0.907-0.929      0.939-0.958
200        0.940-0.957      0.945-0.965      0.938-0.948      0.952-0.963
=========  ===============  ===============  ===============  ===============

The plain percentile interval (``interval="percentile"``) covers less than either (0.765-0.815 at 12
clusters in the skewed world). In a prototype on the simulator, bootstrap-t covered the Brier means better at
12 clusters (0.94) but the paired differences worse (0.88-0.89), and BCa (0.83-0.92) no better. No interval
reaches 0.92 on every target of the skewed world at 30 clusters (``extremized - mean``: 0.907): below
:data:`benchmarks.scoring.ranking.MIN_CLUSTERS_TO_RANK` (50) the leaderboard shows no ranks.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats as _stats

from agent_schemas.errors import DataValidationError
from benchmarks.scoring.validation import as_1d_float, first_bad

__all__ = ["BootstrapCI", "INTERVALS", "MIN_CLUSTERS_FOR_INTERVAL", "bootstrap_mean", "check_bootstrap_args", "cluster_codes",
           "clustered_bootstrap_ci", "count_clusters", "expanded_tail", "paired_difference_ci", "skew_corrected_t"]

#: Interval kinds of :func:`bootstrap_mean`: ``"hybrid"`` (the default), ``"expanded"`` and ``"percentile"`` (kept to
#: measure against).
INTERVALS = ("hybrid", "expanded", "percentile")

_DRAWS_PER_BLOCK = 2**18  # bootstrap cluster draws per block (2 MiB of indices, 4 MiB gathered): cache-sized
_PARALLEL_MIN_DRAWS = 2**22  # below this many draws, threads cost more than they save
_MAX_THREADS = 4

MIN_CLUSTERS_FOR_INTERVAL: int = 10
"""Fewest clusters a bootstrap interval is reported for. Below it the interval of a cluster
bootstrap is too narrow to mean anything (one cluster gives a zero-width interval; Cameron, Gelbach &
Miller 2008 [6] show poor coverage with few clusters): the bounds are NaN and tables flag them. It is a
floor, not a guarantee of coverage."""


class BootstrapCI(NamedTuple):
    """A point estimate with a bootstrap interval; unpacks as ``(mean, low, high)``."""

    mean: float
    low: float
    high: float


def cluster_codes(clusters: Any, n: int) -> np.ndarray:
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


def check_bootstrap_args(n_resamples: Any, confidence: Any, interval: Any = "hybrid") -> None:
    """Raise DataValidationError unless ``n_resamples`` is a positive integer, ``confidence`` in (0, 1) and
    ``interval`` one of :data:`INTERVALS`."""
    if interval not in INTERVALS:
        raise DataValidationError(f"interval must be one of {', '.join(INTERVALS)}; got {interval!r}", field="interval", value=interval)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise DataValidationError(f"n_resamples must be a positive integer; got {n_resamples!r}", field="n_resamples", value=n_resamples)
    if not 0 < confidence < 1:
        raise DataValidationError(f"confidence must be in (0, 1); got {confidence!r}", field="confidence", value=confidence)


def _check_scores(x: Any, name: str) -> np.ndarray:
    s = as_1d_float(x, name)
    if s.size == 0:
        raise DataValidationError(f"{name} is empty", field=name)
    if not np.isfinite(s).all():
        i, v = first_bad(s, ~np.isfinite(s))
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


def expanded_tail(confidence: float, n_clusters: int) -> float:
    """Tail probability of the expanded percentile interval (Hesterberg 2015, section 5.1.1).

    ``Phi(-sqrt(G / (G - 1)) * t_{G-1}((1 + confidence) / 2))`` for ``G = n_clusters``: the percentile
    interval taken at this tail on each side is as much wider than the plain one as a t interval with the
    ``G / (G - 1)`` variance correction is wider than a normal interval. It tends to ``(1 - confidence) / 2``
    as ``G`` grows.

    Parameters
    ----------
    confidence : float in (0, 1)
    n_clusters : int, >= 2

    Returns
    -------
    float
        The lower quantile level of the interval; the upper one is ``1 - tail``.

    References
    ----------
    Hesterberg, T. C. (2015). What teachers should know about the bootstrap. *The American Statistician*,
    69(4), 371-386.

    Examples
    --------
    >>> round(expanded_tail(0.95, 12), 4), round(expanded_tail(0.95, 10_000), 4)
    (0.0108, 0.025)
    """
    g = float(n_clusters)
    return float(_stats.norm.cdf(-np.sqrt(g / (g - 1.0)) * _stats.t.ppf((1.0 + confidence) / 2.0, g - 1.0)))


def count_clusters(codes: np.ndarray) -> int:
    return int(np.count_nonzero(np.bincount(codes))) if codes.size else 0


def bootstrap_mean(scores: np.ndarray, codes: np.ndarray, n_resamples: int, confidence: float, seed: Any,
               min_clusters: int = MIN_CLUSTERS_FOR_INTERVAL, interval: str = "hybrid") -> BootstrapCI:
    """Hybrid (or, with ``interval="expanded"`` or ``"percentile"``, expanded or plain percentile) interval of
    the mean of ``scores`` when whole clusters are resampled with replacement (the kinds: module docstring).

    Per-cluster sums and counts are computed once; each resample draws ``n_clusters`` cluster indices and
    takes ``sum(sums[drawn]) / sum(counts[drawn])``. Sums and counts travel together as one complex array
    so each resample needs a single gather. Cost is O(n_resamples * n_clusters), independent of n; blocks
    are sized to stay in cache and run on up to ``_MAX_THREADS`` threads (numpy releases the GIL) when
    there are many draws.
    """
    counts = np.bincount(codes)
    if np.count_nonzero(counts) < max(min_clusters, 2):  # one cluster has no spread to resample (and no t quantile)
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
        tot = packed.take(drawn, mode="clip").sum(axis=1)  # drawn in range: "clip" skips take's bounds check (same values)
        stats[start:start + rows] = tot.real / tot.imag

    blocks = _resample_blocks(n_clusters, n_resamples, seed)
    n_threads = min(_MAX_THREADS, os.cpu_count() or 1, len(blocks))
    if n_threads > 1 and n_resamples * n_clusters >= _PARALLEL_MIN_DRAWS:
        with ThreadPoolExecutor(n_threads) as pool:
            list(pool.map(run, blocks))
    else:
        for block in blocks:
            run(block)
    tail = (1.0 - confidence) / 2 if interval == "percentile" else expanded_tail(confidence, n_clusters)
    low, high = np.quantile(stats, [tail, 1 - tail])
    mean = float(scores.mean())
    if interval == "hybrid":
        q = float(_stats.t.ppf((1.0 + confidence) / 2.0, n_clusters - 1))
        half = q * np.sqrt(n_clusters / (n_clusters - 1.0)) * float(stats.std(ddof=1))
        skew_low, skew_high = skew_corrected_t(sums, counts, q)
        low, high = min(low, mean - half, skew_low), max(high, mean + half, skew_high)
        # no resample's mean leaves the scores' range (a Brier mean is never negative): neither does the interval
        low, high = max(low, float(scores.min())), min(high, float(scores.max()))
    return BootstrapCI(mean, float(low), float(high))


def skew_corrected_t(sums: np.ndarray, counts: np.ndarray, q: float) -> tuple[float, float]:
    """Hall's (1992) skewness-corrected t interval of the ratio mean ``sum(sums) / sum(counts)`` over clusters.

    With ``G`` clusters, ``N = sum(counts)``, the mean ``m``, the cluster residuals ``u_g = (sums_g - m
    counts_g) / (N / G)``, the cluster-robust standard error ``se = sqrt(G / (G - 1) * sum(u_g^2)) / G``
    and the residuals' skewness ``gamma = mean(u^3) / mean(u^2)^1.5``, Hall's transformation
    ``g(t) = t + a t^2 + a^2 t^3 / 3 + b`` (``a = gamma / (3 sqrt(G))``, ``b = gamma / (6 sqrt(G))``) makes the
    studentised mean nearly symmetric; inverted, ``g^-1(y) = ((1 + 3 a (y - b))^(1/3) - 1) / a``, the interval is
    ``[m - g^-1(q) se, m - g^-1(-q) se]``: longer on the side the scores are skewed to.

    Parameters
    ----------
    sums, counts : numpy.ndarray of shape (n_clusters,)
        Per-cluster sums of the scores and question counts (counts > 0); ``n_clusters >= 2``.
    q : float
        The two-sided quantile of the reference distribution (``t_{G-1}((1 + confidence) / 2)``).

    Returns
    -------
    (float, float)
        The interval's bounds, in the scores' unit.

    References
    ----------
    Hall, P. (1992). On the removal of skewness by transformation. *JRSS B*, 54(1), 221-228; Zhou, X.-H. &
    Dinh, P. (2005). Nonparametric confidence intervals for the one- and two-sample problems.
    *Biostatistics*, 6(2), 187-200.

    Examples
    --------
    >>> sums = np.array([0.1, 0.0, 0.2, 0.1, 0.0, 0.1, 0.3, 0.0, 0.1, 2.0])  # mean 0.29, one large cluster
    >>> low, high = skew_corrected_t(sums, np.ones(10), 2.262)  # t_9(0.975) = 2.262
    >>> round(low, 4), round(high, 4)  # right-skewed: the upper side is longer
    (0.0073, 1.7043)
    """
    g = sums.size
    m = sums.sum() / counts.sum()
    u = (sums - m * counts) * (g / counts.sum())
    m2 = float(np.mean(u * u))
    se = np.sqrt(g / (g - 1.0) * m2 * g) / g
    gamma = float(np.mean(u ** 3)) / m2 ** 1.5 if m2 > 0 else 0.0
    a, b = gamma / (3.0 * np.sqrt(g)), gamma / (6.0 * np.sqrt(g))

    def inverse(y: float) -> float:
        return y - b if abs(a) < 1e-12 else float((np.cbrt(1.0 + 3.0 * a * (y - b)) - 1.0) / a)

    return float(m - inverse(q) * se), float(m - inverse(-q) * se)


def clustered_bootstrap_ci(
    scores: Any,
    clusters: Any,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: Any = 0,
    min_clusters: int = MIN_CLUSTERS_FOR_INTERVAL,
    interval: str = "hybrid",
) -> BootstrapCI:
    """Mean of per-question scores with a clustered (block) bootstrap interval.

    Questions in one cluster (e.g. one question family or source series) are correlated, so whole
    clusters are resampled with replacement (``n_clusters`` draws per resample) and each resample's
    statistic is the mean over all questions drawn, ``sum of the drawn clusters' score sums / sum of their
    counts``. The default interval is the **hybrid**: the smallest interval holding the expanded percentile
    interval (the ``tail`` and ``1 - tail`` quantiles of the resampled means, ``tail`` from
    :func:`expanded_tail`; Hesterberg 2015), the t interval ``mean +- t_{G-1} sqrt(G / (G - 1)) sd*`` with the
    resampled means' standard deviation ``sd*``, and Hall's skewness-corrected t interval
    (:func:`skew_corrected_t`), cut to the range of the scores (where every resampled mean lies); the module
    docstring has its measured coverage. ``"expanded"`` is the first
    alone, ``"percentile"`` the plain percentile interval (tail ``(1 - confidence) / 2``; Efron & Tibshirani
    1993). With one question per cluster it is the ordinary bootstrap. With fewer than ``min_clusters`` clusters no interval is estimated: the bounds
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
    interval : {"hybrid", "expanded", "percentile"}, default="hybrid"
        The interval's kind (see above).

    Returns
    -------
    BootstrapCI
        ``(mean, low, high)``: the plain mean of ``scores`` and the interval bounds (NaN below
        ``min_clusters`` clusters).

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for empty or non-finite scores, mismatched or missing cluster labels,
        ``n_resamples < 1``, ``confidence`` outside (0, 1) or an unknown ``interval``.

    References
    ----------
    Efron & Tibshirani (1993), ch. 13; Field & Welsh (2007), *JRSS B* 69(3); Hesterberg (2015), *The
    American Statistician* 69(4); Hall (1992), *JRSS B* 54(1).

    Examples
    --------
    >>> ci = clustered_bootstrap_ci([0.1, 0.2, 0.3, 0.4], ["a", "a", "b", "b"], n_resamples=200, min_clusters=2)
    >>> round(ci.mean, 2), ci.low <= ci.mean <= ci.high
    (0.25, True)
    >>> clustered_bootstrap_ci([0.1, 0.3], ["a", "a"]).low  # one cluster: no interval
    nan
    """
    check_bootstrap_args(n_resamples, confidence, interval)
    s = _check_scores(scores, "scores")
    return bootstrap_mean(s, cluster_codes(clusters, s.size), int(n_resamples), float(confidence), seed, int(min_clusters), interval)


def paired_difference_ci(
    scores_a: Any,
    scores_b: Any,
    clusters: Any,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: Any = 0,
    min_clusters: int = MIN_CLUSTERS_FOR_INTERVAL,
    interval: str = "hybrid",
) -> BootstrapCI:
    """Mean difference ``scores_a - scores_b`` with a paired, clustered bootstrap interval.

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
    interval : {"hybrid", "expanded", "percentile"}, default="hybrid"
        The interval's kind, as in :func:`clustered_bootstrap_ci`.

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
    >>> a = [0.1, 0.2, 0.1, 0.2, 0.1, 0.3, 0.1, 0.2, 0.1, 0.2, 0.2, 0.1]
    >>> b = [x + d for x, d in zip(a, [0.1, 0.1, 0.2, 0.1, 0.15, 0.1, 0.2, 0.1, 0.1, 0.05, 0.1, 0.1])]
    >>> ci = paired_difference_ci(a, b, range(12), n_resamples=200)  # 12 clusters of one question
    >>> round(ci.mean, 4), ci.high < 0
    (-0.1167, True)
    """
    check_bootstrap_args(n_resamples, confidence, interval)
    a = _check_scores(scores_a, "scores_a")
    b = _check_scores(scores_b, "scores_b")
    if a.shape != b.shape:
        raise DataValidationError(f"scores_a and scores_b must have the same shape: {a.shape} vs {b.shape}", field="scores_b", value=b.shape)
    return bootstrap_mean(a - b, cluster_codes(clusters, a.size), int(n_resamples), float(confidence), seed, int(min_clusters), interval)
