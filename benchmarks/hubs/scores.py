"""Per-event scores of hub forecasts, as the hubs score them, vectorised over events (and members).

Quantile forecasts ``q`` of shape ``(..., n_levels)`` at ``levels`` ``(n_levels,)``, outcomes ``y`` of shape ``(...)``;
a row of NaN (a model that skipped the event) scores NaN.

``wis``
    Weighted interval score (Bracher et al. 2021, PLOS Comput Biol 17(2):e1008618), for a level set holding the median
    and symmetric pairs :math:`(\\alpha/2, 1-\\alpha/2)`: :math:`\\frac{1}{K+1/2}(\\frac12|y-m| + \\sum_k
    \\frac{\\alpha_k}{2} IS_{\\alpha_k})`, which equals twice the mean pinball loss over the levels (the data card's
    definition; for any level set this is what is computed). The pinball losses are
    :func:`scoringrules.quantile_score`. (``scoringrules.weighted_interval_score`` 0.10 is not used: on its numpy
    backend it adds ``w_median * median`` instead of ``w_median * |y - median|``.)
``dispersion``, ``overprediction``, ``underprediction``
    WIS's three parts (Bracher et al. 2021, eq. 3; ``scoringutils``), summing to ``wis``: the weighted widths of
    the intervals, the outcome below an interval's lower end (the forecast too high), above an upper end (too low);
    :func:`wis_parts` gives the rule per level.
``ae_median``
    :math:`|y - q_{0.5}|`.
``cover50``, ``cover90``
    Whether ``y`` lies in the central 50% (levels 0.25-0.75) and 90% (0.05-0.95) intervals, ends included (1.0 or 0.0).

Option forecasts ``p`` of shape ``(n_events, k)`` with the outcome's index ``o``: the ranked probability score (mean over
the ``k - 1`` cumulative splits, FluSight's normalisation), the multi-category Brier score and the log loss, all from
:mod:`agent_schemas.kinds.multiple_choice.scores` (the RPS there is :func:`scoringrules.rps_score`).
"""

from __future__ import annotations

import numpy as np

from agent_schemas.kinds.multiple_choice import scores as option_scores

__all__ = ["QUANTILE_SCORES", "OPTION_SCORES", "coverage", "option_score_table", "pinball", "quantile_score_table", "wis", "wis_parts"]

#: Per-event columns of :func:`quantile_score_table`, lower is better except coverage (nearer its nominal level is better).
QUANTILE_SCORES = ("wis", "dispersion", "overprediction", "underprediction", "ae_median", "cover50", "cover90")
#: Per-event columns of :func:`option_score_table` (lower is better).
OPTION_SCORES = ("rps", "brier", "log_loss")


def pinball(q: np.ndarray, y: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Pinball (quantile) loss of every level, shape ``q.shape``: :func:`scoringrules.quantile_score`,
    :math:`(\\mathbb 1\\{y < q\\} - \\tau)(q - y)`, in the outcome's unit."""
    import scoringrules  # noqa: PLC0415 - 0.9 s to import; only scoring needs it

    return np.asarray(scoringrules.quantile_score(np.asarray(y, dtype=np.float64)[..., None], q, levels), dtype=np.float64)


def wis(q: np.ndarray, y: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Weighted interval score, ``2 x`` the mean pinball loss over the levels (module docstring), shape ``y.shape``.

    >>> round(float(wis(np.array([1., 3, 5, 7, 12]), np.array(11.), np.array([.05, .25, .5, .75, .95]))), 4)
    3.42
    """
    return 2.0 * pinball(q, y, levels).mean(axis=-1)


def wis_parts(q: np.ndarray, y: np.ndarray, levels: np.ndarray) -> dict[str, np.ndarray]:
    """``wis`` and its three parts, each of shape ``y.shape``, summing to ``wis``.

    For a central interval :math:`[l, u]` at levels :math:`(\\tau, 1-\\tau)` the two pinball losses sum to
    :math:`\\tau(u - l) + (l - y)^+ + (y - u)^+` (Bracher et al. 2021, eq. 3, times :math:`\\alpha/2 = \\tau`), and
    the median's to :math:`\\frac12|y - m|`. So **over-prediction** sums :math:`(q - y)^+` over the levels below
    0.5 and :math:`\\frac12(m - y)^+`; **under-prediction** :math:`(y - q)^+` over the levels above 0.5 and
    :math:`\\frac12(y - m)^+`; **dispersion** is the rest, :math:`\\sum \\tau(u - l)` for a median-and-pairs level
    set (for another set it is whatever the pinball losses leave, so the three parts always sum to ``wis``). All
    are divided by ``n_levels / 2`` as ``wis`` is: scoringutils' ``dispersion``, ``overprediction`` and
    ``underprediction``.

    >>> parts = wis_parts(np.array([1., 3, 5, 7, 12]), np.array(11.), np.array([.05, .25, .5, .75, .95]))
    >>> {k: round(float(v), 4) for k, v in parts.items()}
    {'wis': 3.42, 'dispersion': 0.62, 'overprediction': 0.0, 'underprediction': 2.8}
    """
    levels = np.asarray(levels, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    loss = pinball(q, y, levels)
    yy = y[..., None]
    # a lower quantile (tau < 1/2) above the outcome over-predicts: loss = beta (m - q) + (q - y); an upper one (tau > 1/2)
    # below the outcome under-predicts: loss = beta (q - m) + (y - q); the median pays |y - m| / 2 to one side
    lower, upper, median = levels < 0.5, levels > 0.5, levels == 0.5
    over = np.where(lower & (yy < q), q - yy, 0.0) + np.where(median & (yy < q), 0.5 * (q - yy), 0.0)
    under = np.where(upper & (yy > q), yy - q, 0.0) + np.where(median & (yy > q), 0.5 * (yy - q), 0.0)
    n = levels.size / 2.0
    # an asymmetric level set: what the split leaves is the width part (it is exact for median-and-pairs sets)
    rest = loss - over - under
    return {"wis": loss.sum(axis=-1) / n, "dispersion": rest.sum(axis=-1) / n, "overprediction": over.sum(axis=-1) / n,
            "underprediction": under.sum(axis=-1) / n}


def coverage(q: np.ndarray, y: np.ndarray, levels: np.ndarray, low: float, high: float) -> np.ndarray:
    """1.0 where ``q[low] <= y <= q[high]``, else 0.0 (NaN where the forecast is missing or lacks either level)."""
    levels = np.asarray(levels, dtype=np.float64)
    i, j = np.flatnonzero(np.isclose(levels, low)), np.flatnonzero(np.isclose(levels, high))
    if not i.size or not j.size:
        return np.full(np.shape(y), np.nan)
    lo, hi = q[..., i[0]], q[..., j[0]]
    out = ((lo <= y) & (y <= hi)).astype(np.float64)
    out[np.isnan(lo) | np.isnan(hi)] = np.nan
    return out


def quantile_score_table(q: np.ndarray, y: np.ndarray, levels: np.ndarray) -> dict[str, np.ndarray]:
    """Every score of :data:`QUANTILE_SCORES` per event, each of shape ``y.shape`` (``q`` is ``y.shape + (n_levels,)``)."""
    levels = np.asarray(levels, dtype=np.float64)
    out = wis_parts(q, y, levels)
    mid = np.flatnonzero(np.isclose(levels, 0.5))
    out["ae_median"] = np.abs(y - q[..., mid[0]]) if mid.size else np.full(np.shape(y), np.nan)
    out["cover50"] = coverage(q, y, levels, 0.25, 0.75)
    out["cover90"] = coverage(q, y, levels, 0.05, 0.95)
    return out


def option_score_table(p: np.ndarray, o: np.ndarray) -> dict[str, np.ndarray]:
    """Every score of :data:`OPTION_SCORES` per event (shape ``(n_events,)``; NaN where the row ``p`` is NaN).

    ``p`` is ``(n_events, k)`` probabilities in the options' order, ``o`` the index of the option that happened.
    """
    p = np.asarray(p, dtype=np.float64)
    o = np.asarray(o, dtype=np.int64)
    ok = ~np.isnan(p).any(axis=1)
    out = {name: np.full(p.shape[0], np.nan) for name in OPTION_SCORES}
    if ok.any():
        pp, oo = option_scores.checked(np.clip(p[ok], 0.0, 1.0), o[ok])
        out["rps"][ok] = option_scores.rps(pp, oo)
        out["brier"][ok] = option_scores.brier(pp, oo)
        out["log_loss"][ok] = option_scores.log_loss(pp, oo)
    return out
