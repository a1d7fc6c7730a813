"""Pools of a hub's members, vectorised over events.

**Quantile pools** map the members' cube ``(n_events, n_members, n_levels)`` (NaN for a member that did not give
the event all its levels: such a forecast is left out of the pool and counted by the caller) to ``(n_events,
n_levels)``; an event without members pools to NaN.

``median``
    Median of the members' quantiles at each level: the rule of the hub's official ensemble (hubverse
    ``hubEnsembles::simple_ensemble(agg_fun = median)``).
``mean``
    Mean of the members' quantiles at each level (Vincentization; Vincent 1912, Ratcliff 1979).
``trimmed_mean``
    Mean at each level after cutting ``floor(0.2 m)`` members from each end (:func:`scipy.stats.trim_mean`
    semantics; :data:`TRIM`).
``linear_pool``
    The quantiles of the equal-weight mixture of the members' distributions (Stone 1961; ``hubEnsembles::
    linear_pool``). Each member's CDF is the piecewise-linear interpolation of its quantiles (a flat stretch, two
    equal quantiles, is a point mass); **tails**: below the lowest level and above the highest, the CDF goes on
    with the slope of the outermost segment until it reaches 0 or 1 (a uniform density of the same height; for
    levels 0.01 and 0.025 the lower tail is ``(q_0.025 - q_0.01) x 0.01 / 0.015`` wide). hubEnsembles instead fits
    normal tails and samples; the two differ only beyond the 1% and 99% levels of each member. The mixture of
    piecewise-linear CDFs is piecewise linear with a knot at every member's knot: its density is summed from the
    members' density steps at their knots, sorted (one sort per event, no member evaluated at another's knots), and
    inverted exactly; a level is the lowest value at which the mixture's CDF
    reaches it (where the CDF is flat, the left end).
``trained_mean``
    Walk-forward trained weights: each member's weight for an event is :math:`r^{-2}`, where :math:`r` is the
    geometric mean of :math:`(\\mathrm{WIS}_{member} + 1) / (\\mathrm{WIS}_{median} + 1)` over the events whose
    outcome was observed before the event's reference date (target end date at least :data:`REPORTING_LAG_DAYS`
    earlier: the week's count is reported the Wednesday after it ends, the forecast is due the Wednesday before
    its reference date) and that the member forecast; a member with fewer than :data:`MIN_PAST_EVENTS` such events
    gets :math:`r = 1` (as good as the median). Then the weighted mean of the members' quantiles. The ratio to the
    median pool on the same event makes a state's and the nation's scores comparable; the exponent was fixed before
    looking at the results, not tuned. An outcome observed later never reaches a weight, by construction
    (:func:`walk_forward_weights`).

**Option pools** are the multiple-choice kind's rules (:mod:`agent_schemas.kinds.multiple_choice.pools`): ``mean``
(the hub's official rule for options), ``log_pool`` (renormalised), ``median`` (renormalised).

References
----------
Stone, M. (1961). The opinion pool. *Ann. Math. Statist.* 32(4). Ratcliff, R. (1979). Group reaction time
distributions and an analysis of distribution statistics. *Psychol. Bull.* 86(3). Ray, E. L. et al. (2023).
Comparing trained and untrained probabilistic ensemble forecasts of COVID-19 cases and deaths in the United States.
*Int. J. Forecasting* 39(3).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from agent_schemas.kinds.multiple_choice import pools as option_rules

__all__ = ["MIN_PAST_EVENTS", "OPTION_POOLS", "QUANTILE_POOLS", "REPORTING_LAG_DAYS", "TRIM", "linear_pool", "mean", "median",
           "option_pools", "quantile_pools", "trimmed_mean", "walk_forward_weights", "weighted_mean"]

#: Fraction of members cut from each end by ``trimmed_mean``.
TRIM = 0.2
#: An outcome counts as known at a reference date when its week ended at least this many days before it.
REPORTING_LAG_DAYS = 7
#: Fewest past events before a member's own weight is used (else ``r = 1``).
MIN_PAST_EVENTS = 10
#: Events per chunk of the linear pool (its arrays are chunk x members x 2 (levels + 1) floats).
_CHUNK = 512


def median(x: np.ndarray) -> np.ndarray:
    """Median of the members' quantiles per level, ``(n_events, n_levels)``."""
    with np.errstate(all="ignore"):
        out = np.sort(x, axis=1)
    n = (~np.isnan(x[:, :, 0])).sum(axis=1)
    lo, hi = np.maximum((n - 1) // 2, 0), np.maximum(n // 2, 0)
    e = np.arange(x.shape[0])
    res = 0.5 * (out[e, lo] + out[e, hi])
    res[n == 0] = np.nan
    return res


def mean(x: np.ndarray) -> np.ndarray:
    """Mean of the members' quantiles per level (Vincentization), ``(n_events, n_levels)``."""
    n = (~np.isnan(x[:, :, 0])).sum(axis=1)
    with np.errstate(all="ignore"):
        return np.where(n[:, None] > 0, np.nansum(x, axis=1) / n[:, None], np.nan)


def trimmed_mean(x: np.ndarray, trim: float = TRIM) -> np.ndarray:
    """Mean per level of the members left after cutting ``floor(trim m)`` from each end, ``(n_events, n_levels)``."""
    s = np.sort(x, axis=1)  # NaN last
    n = (~np.isnan(x[:, :, 0])).sum(axis=1)
    cut = np.floor(trim * n).astype(np.int64)
    j = np.arange(x.shape[1])[None, :]
    keep = (j >= cut[:, None]) & (j < (n - cut)[:, None])
    with np.errstate(all="ignore"):
        return np.where(n[:, None] > 0, np.where(keep[:, :, None], s, 0.0).sum(axis=1) / (n - 2 * cut)[:, None], np.nan)


def weighted_mean(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``sum_i w_i x_i / sum_i w_i`` over the members present, ``(n_events, n_levels)``; ``w`` is ``(n_events, n_members)``."""
    ok = ~np.isnan(x[:, :, 0])
    w = np.where(ok, w, 0.0)
    tot = w.sum(axis=1)
    with np.errstate(all="ignore"):
        return np.where(tot[:, None] > 0, np.einsum("em,eml->el", w, np.nan_to_num(x)) / tot[:, None], np.nan)


def _knots(x: np.ndarray, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each member's CDF knots ``(..., n_levels + 2)`` with the tails' ends, and the CDF values there."""
    t0, t1, tk1, tk = levels[0], levels[1], levels[-2], levels[-1]
    lo = x[..., 0] - (x[..., 1] - x[..., 0]) * t0 / (t1 - t0)
    hi = x[..., -1] + (x[..., -1] - x[..., -2]) * (1.0 - tk) / (tk - tk1)
    return np.concatenate([lo[..., None], x, hi[..., None]], axis=-1), np.concatenate([[0.0], levels, [1.0]])


def _linear_pool_chunk(x: np.ndarray, levels: np.ndarray) -> np.ndarray:
    ok = ~np.isnan(x[:, :, 0])
    x = x[:, ok.any(axis=0)]
    ok = ~np.isnan(x[:, :, 0])
    c = x.shape[0]
    knots, taus = _knots(x, levels)  # (c, m, k)
    top = np.nanmax(np.where(ok[:, :, None], knots, np.nan), axis=(1, 2))
    knots = np.where(ok[:, :, None], knots, np.nan_to_num(top, nan=0.0)[:, None, None])  # an absent member: weight 0
    w = ok / np.maximum(ok.sum(axis=1, keepdims=True), 1)
    # each member's CDF is linear on every segment: a density step up at its left knot and down at its right knot, or a
    # jump (a point mass) where the segment has no width
    width = np.diff(knots, axis=2)
    mass = np.diff(taus)[None, None, :] * w[:, :, None]
    # a segment narrower than 1e-9 of the event's range is a point mass: its density would be so high that summing the
    # density steps in floating point would lose the other members' (cancellation)
    span = top - np.nanmin(knots, axis=(1, 2))
    flat_seg = width <= 1e-9 * np.maximum(span, 1e-300)[:, None, None]
    with np.errstate(all="ignore"):
        dens = np.where(flat_seg, 0.0, mass / np.where(flat_seg, 1.0, width))
    pos = np.concatenate([knots[:, :, :-1], knots[:, :, 1:]], axis=2).reshape(c, -1)
    ddens = np.concatenate([dens, -dens], axis=2).reshape(c, -1)
    jump = np.concatenate([np.where(flat_seg, mass, 0.0), np.zeros_like(mass)], axis=2).reshape(c, -1)
    order = np.argsort(pos, axis=1, kind="stable")
    pos, ddens, jump = (np.take_along_axis(a, order, axis=1) for a in (pos, ddens, jump))
    d = np.cumsum(ddens, axis=1)  # the mixture's density right of each point
    seg = d[:, :-1] * np.diff(pos, axis=1)
    g_after = np.cumsum(jump, axis=1) + np.concatenate([np.zeros((c, 1)), np.cumsum(seg, axis=1)], axis=1)
    g_after = np.maximum.accumulate(g_after, axis=1)
    n = pos.shape[1]
    # invert at the levels: the first point where the mixture reaches the level; inside the segment before it unless a jump there does
    shift = 2.0 * np.arange(c)[:, None]
    t = np.searchsorted((g_after + shift).reshape(-1), (levels[None, :] + shift).reshape(-1), side="left").reshape(c, -1) - (np.arange(c) * n)[:, None]
    t = np.clip(t, 1, n - 1)
    e = np.arange(c)[:, None]
    g_prev, d_prev, p_prev = g_after[e, t - 1], d[e, t - 1], pos[e, t - 1]
    g_before = g_after[e, t] - jump[e, t]
    with np.errstate(all="ignore"):
        inside = p_prev + (levels[None, :] - g_prev) / d_prev
    out = np.where((g_before >= levels[None, :]) & (d_prev > 0), np.minimum(inside, pos[e, t]), pos[e, t])
    return out


def linear_pool(x: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Quantiles at ``levels`` of the equal-weight mixture of the members' distributions (module docstring), ``(n_events, n_levels)``.

    >>> levels = np.array([0.25, 0.5, 0.75])
    >>> x = np.array([[[0., 1, 2], [10., 11, 12]]])  # uniform on [-1, 3] and on [9, 13], with their tails
    >>> linear_pool(x, levels).round(3).tolist()  # the median: the lowest x where the mixture's CDF reaches 0.5
    [[1.0, 3.0, 11.0]]
    """
    levels = np.asarray(levels, dtype=np.float64)
    out = np.full((x.shape[0], x.shape[2]), np.nan)
    # only events with members: an empty one's NaN would break the sorted order the chunk's one searchsorted relies on
    have = np.flatnonzero(~np.isnan(x[:, :, 0]).all(axis=1))
    for s in range(0, have.size, _CHUNK):
        rows = have[s:s + _CHUNK]
        out[rows] = _linear_pool_chunk(x[rows], levels)
    return out


def walk_forward_weights(member_wis: np.ndarray, reference_wis: np.ndarray, reference_dates: np.ndarray,
                         end_dates: np.ndarray) -> np.ndarray:
    """Each member's weight per event, ``(n_events, n_members)``, from outcomes observed before the event's reference date only.

    Parameters
    ----------
    member_wis : ndarray of shape (n_events, n_members)
        Each member's WIS per event (NaN where it did not forecast it).
    reference_wis : ndarray of shape (n_events,)
        The WIS of the median pool on each event (the scale the members' scores are divided by).
    reference_dates, end_dates : ndarray of datetime64 of shape (n_events,)
        Each event's reference date and target end date.

    Returns
    -------
    ndarray of shape (n_events, n_members)
        :math:`r^{-2}` (module docstring); an event's weights use only events whose end date is at least
        :data:`REPORTING_LAG_DAYS` days before its reference date.
    """
    ratio = np.log((member_wis + 1.0) / (reference_wis[:, None] + 1.0))
    have = ~np.isnan(ratio)
    order = np.argsort(end_dates, kind="stable")
    csum = np.vstack([np.zeros((1, ratio.shape[1])), np.cumsum(np.where(have, ratio, 0.0)[order], axis=0)])
    ccount = np.vstack([np.zeros((1, ratio.shape[1])), np.cumsum(have[order], axis=0)])
    known_by = reference_dates - np.timedelta64(REPORTING_LAG_DAYS, "D")
    past = np.searchsorted(end_dates[order], known_by, side="right")  # events with end date <= reference - lag
    s, n = csum[past], ccount[past]
    with np.errstate(all="ignore"):
        r = np.where(n >= MIN_PAST_EVENTS, np.exp(s / np.maximum(n, 1)), 1.0)
    return r ** -2.0


#: Quantile pools by name: ``rule(x, levels)``.
QUANTILE_POOLS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "median": lambda x, levels: median(x), "mean": lambda x, levels: mean(x),
    "trimmed_mean": lambda x, levels: trimmed_mean(x), "linear_pool": linear_pool,
}
#: Option pools by name.
OPTION_POOLS = {"mean": option_rules.mean, "log_pool": option_rules.log_pool, "median": option_rules.median}


def quantile_pools(x: np.ndarray, levels: np.ndarray, weights: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Every quantile pool of the members' cube ``x`` (absent members NaN), each ``(n_events, n_levels)``; with
    ``weights`` ``(n_events, n_members)`` also ``trained_mean``."""
    out = {name: rule(x, levels) for name, rule in QUANTILE_POOLS.items()}
    if weights is not None:
        out["trained_mean"] = weighted_mean(x, weights)
    return out


def option_pools(p: np.ndarray) -> dict[str, np.ndarray]:
    """Every option pool of the members' stack ``(n_events, n_members, k)`` (absent members NaN), each ``(n_events, k)``."""
    return {name: rule(p) for name, rule in OPTION_POOLS.items()}
