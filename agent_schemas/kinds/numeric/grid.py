"""The forecast form of a numeric question: a CDF on a fixed grid of 201 points over the question's range.

The grid (Metaculus's)
----------------------
A numeric forecast is a vector ``F`` of :data:`N_POINTS` = 201 cumulative probabilities at fixed
**locations** ``t_j = j / 200`` (``j = 0..200``) of the range. A location maps to a value in the question's
unit linearly, ``x = lower + (upper - lower) t``, or geometrically for a log-scaled question,
``x = lower (upper / lower)^t`` (Metaculus's log scale with its zero point at 0). Metaculus stores every
continuous forecast this way (201 points since 2024); using the same grid means a forecast here can be posted
there, scored by its formulas, and compared with its crowd. Everything below works in locations, so questions
with different units and scales pool and average alike.

``F_j`` is the probability of the outcome's **bucket** being at most ``j``, with Metaculus's 202 buckets:
bucket 0 below the range, bucket ``j`` (1..200) the bin ``[t_{j-1}, t_j)`` (the last bin also holds ``t = 1``)
and bucket 201 above the range (:func:`bucket_of`). For a distribution without atoms that is just
``P(X <= x_j)``; a point mass at a grid value counts in the bin above it, where its outcome would land. Between
grid points the CDF is linear in location (the piecewise-linear CDF scored by CRPS and read by PIT).

Bounds
------
A **closed** bound holds no mass beyond it: ``F_0 = 0`` (closed lower), ``F_200 = 1`` (closed upper). An
**open** bound keeps some mass beyond it, at least :data:`OPEN_BOUND_MIN_MASS` = 0.001 (Metaculus's limit:
``F_0 >= 0.001`` with an open lower bound, ``F_200 <= 0.999`` with an open upper one), so that an outcome
beyond the range never has probability 0. Where beyond the bound that mass lies is not said: a quantile that
falls there is reported at the bound (**censored**, :func:`quantile_locations`), and the scores treat it alike.

Checking
--------
:func:`check_cdf` (one forecast) and :func:`check_cdfs` (many) refuse a vector of the wrong length, a value
that is not finite or outside [0, 1], a CDF that decreases, or one that breaks its bounds, each beyond a float
tolerance of :data:`CDF_TOLERANCE` = 1e-9 (pooling sums and means of CDFs are exact to ~1e-15), naming the
position and the value. Within that tolerance, the returned vector has the float noise removed (clipped to
[0, 1], made non-decreasing, closed ends set to exactly 0 and 1): it moves no value by more than 1e-9.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agent_schemas.errors import DataValidationError
from agent_schemas.kinds.base import KindSpec
from agent_schemas.kinds.numeric.spec import NumericSpec

__all__ = [
    "CDF_TOLERANCE", "LOCATIONS", "N_BINS", "N_POINTS", "OPEN_BOUND_MIN_MASS", "OUT_OF_RANGE_BASELINE", "Ranges",
    "bucket_of", "cdf_at", "check_cdf", "check_cdfs", "check_spec", "first_at_least", "format_value", "grid_values",
    "location_of", "quantile_locations", "uninformed_cdf", "value_at",
]

N_POINTS: int = 201
"""Points of the CDF grid (Metaculus's): locations ``j / 200``, ``j = 0..200``."""

N_BINS: int = N_POINTS - 1
"""Inner bins of the grid (200); with the two out-of-range buckets, 202 buckets."""

LOCATIONS: np.ndarray = np.linspace(0.0, 1.0, N_POINTS)
"""``(201,)``: the grid's locations ``t_j = j / 200`` (read-only)."""
LOCATIONS.flags.writeable = False

CDF_TOLERANCE: float = 1e-9
"""Float tolerance of the CDF checks: a decrease, an excursion outside [0, 1] or a miss of a bound by at most
this much is float noise, not an error."""

OPEN_BOUND_MIN_MASS: float = 0.001
"""Least probability beyond an open bound (Metaculus: ``F_0 >= 0.001``, ``F_200 <= 0.999``)."""

_CHECK_ROWS = 1024  # rows checked at a time by check_cdfs

OUT_OF_RANGE_BASELINE: float = 0.05
"""Probability beyond each open bound of the uninformed forecast, as Metaculus's baseline score assumes
(Metaculus ``scoring/score_math.py``, ``evaluate_forecasts_baseline_accuracy``: 0.05 per open out-of-range
bucket, the rest spread evenly over the 200 inner bins)."""


def check_spec(spec: KindSpec, name: str = "spec") -> NumericSpec:
    """``spec`` if it is a :class:`NumericSpec`, else a DataValidationError naming its kind."""
    if not isinstance(spec, NumericSpec):
        raise DataValidationError(f"{name} must be a numeric question's spec; got kind {getattr(spec, 'kind', type(spec).__name__)!r}",
                                  field=name, value=getattr(spec, "kind", None))
    return spec


# --- locations and values ----------------------------------------------------------------------------


def location_of(spec: NumericSpec, value: Any) -> Any:
    """Location ``t`` of ``value`` (in the question's unit): 0 at ``lower``, 1 at ``upper``, beyond [0, 1]
    outside the range; linear, or ``ln(x / lower) / ln(upper / lower)`` on a log scale (``value > 0``)."""
    x = np.asarray(value, dtype=np.float64)
    if spec.log_scale:
        out = np.log(x / spec.lower) / np.log(spec.upper / spec.lower)
    else:
        out = (x - spec.lower) / (spec.upper - spec.lower)
    return float(out) if out.ndim == 0 else out


def value_at(spec: NumericSpec, t: Any) -> Any:
    """Value in the question's unit at location ``t`` (:func:`location_of` undone)."""
    loc = np.asarray(t, dtype=np.float64)
    if spec.log_scale:
        out = spec.lower * (spec.upper / spec.lower) ** loc
    else:
        out = spec.lower + (spec.upper - spec.lower) * loc
    return float(out) if out.ndim == 0 else out


def grid_values(spec: NumericSpec) -> np.ndarray:
    """``(201,)``: the grid's values ``x_j`` in the question's unit (``x_0 = lower``, ``x_200 = upper``)."""
    out = value_at(spec, LOCATIONS)
    out[0], out[-1] = spec.lower, spec.upper  # exact ends (the geometric form rounds them)
    return out


@dataclass(frozen=True)
class Ranges:
    """The ranges of many numeric questions as arrays of shape ``(n_questions,)``, for vectorised scoring."""

    lower: np.ndarray
    upper: np.ndarray
    open_lower: np.ndarray
    open_upper: np.ndarray
    log_scale: np.ndarray

    @classmethod
    def of(cls, specs: Sequence[KindSpec], name: str = "specs") -> Ranges:
        """The ranges of ``specs`` (each a :class:`NumericSpec`, else DataValidationError naming its row)."""
        rows = []
        for i, s in enumerate(specs):
            if not isinstance(s, NumericSpec):
                raise DataValidationError(f"{name}[{i}] must be a numeric question's spec; got kind {getattr(s, 'kind', type(s).__name__)!r}",
                                          field=name, row=i, value=getattr(s, "kind", None))
            rows.append((s.lower, s.upper, s.open_lower, s.open_upper, s.log_scale))
        cols = list(zip(*rows)) if rows else [(), (), (), (), ()]
        return cls(np.asarray(cols[0], dtype=np.float64), np.asarray(cols[1], dtype=np.float64),
                   np.asarray(cols[2], dtype=bool), np.asarray(cols[3], dtype=bool), np.asarray(cols[4], dtype=bool))

    def __len__(self) -> int:
        return len(self.lower)

    def locations(self, values: np.ndarray) -> np.ndarray:
        """``(n,)`` locations of ``values`` (one per question; NaN stays NaN), as :func:`location_of`."""
        with np.errstate(divide="ignore", invalid="ignore"):
            linear = (values - self.lower) / (self.upper - self.lower)
            if not self.log_scale.any():
                return linear
            log = np.log(values / self.lower) / np.log(self.upper / self.lower)
        return np.where(self.log_scale, log, linear)


def format_value(x: float, digits: int = 4) -> str:
    """``x`` for people: thousands separators and about ``digits`` significant digits (``1,234``, ``0.0123``,
    ``-5.5``, ``1.23e+08``): below 10 million a value keeps all its integer digits (``1,234,568``), from 10
    million up or below 0.001 it is written in scientific notation."""
    if not np.isfinite(x):
        return str(x)
    ax = abs(x)
    if ax != 0 and (ax >= 1e7 or ax < 1e-3):
        return f"{x:.{max(1, digits - 1)}g}"
    decimals = 0 if ax == 0 else max(0, digits - 1 - int(np.floor(np.log10(ax))))
    text = f"{x:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


# --- checks ------------------------------------------------------------------------------------------


def check_cdf(spec: NumericSpec, values: Any, name: str = "forecast") -> np.ndarray:
    """``values`` as a valid CDF of a question of ``spec`` (see the module docstring), shape ``(201,)``.

    Raises
    ------
    DataValidationError
        Naming ``name``, the position and the value: not 201 numbers, a value not finite or outside [0, 1], a
        decrease, ``F_0 != 0`` with a closed lower bound, ``F_200 != 1`` with a closed upper one, less than
        0.001 beyond an open bound.
    """
    try:
        arr = np.array(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataValidationError(f"{name} must be {N_POINTS} numbers (a CDF): {exc}", field=name) from exc
    if arr.shape != (N_POINTS,):
        raise DataValidationError(f"{name} of a numeric question is a CDF of {N_POINTS} values; got shape {arr.shape}",
                                  field=name, value=arr.shape)
    return check_cdfs(Ranges.of([spec]), arr[None, :], name, one=True)[0]


def check_cdfs(ranges: Ranges, cdfs: np.ndarray, name: str = "forecasts", *, one: bool = False) -> np.ndarray:
    """``cdfs`` (float64, shape ``(n, 201)``, row ``i`` a forecast of the question of ``ranges[i]``) checked as
    :func:`check_cdf` does, a block of rows at a time (no temporary of the array's size). Returns ``cdfs``
    itself when no value needs cleaning, else a cleaned copy. ``one``: the message names positions only.

    Raises
    ------
    DataValidationError
        For a wrong shape or the first bad value, naming the row (unless ``one``), the position and the value.
    """
    if cdfs.ndim != 2 or cdfs.shape[1] != N_POINTS:
        raise DataValidationError(f"{name} must have shape (n_questions, {N_POINTS}); got {cdfs.shape}", field=name, value=cdfs.shape)
    if cdfs.shape[0] != len(ranges):
        raise DataValidationError(f"{name} has {cdfs.shape[0]} rows for {len(ranges)} questions", field=name, value=cdfs.shape[0])

    def fail(row: int, why: str) -> DataValidationError:
        where = "" if one else f" in row {row}"
        return DataValidationError(f"{name}{where} {why}", field=name, row=None if one else row)

    tol = CDF_TOLERANCE
    noisy = False
    for s in range(0, cdfs.shape[0], _CHECK_ROWS):
        block = cdfs[s:s + _CHECK_ROWS]
        low, high = block.min(), block.max()                       # NaN propagates
        least_step = np.subtract(block[:, 1:], block[:, :-1]).min()
        if low >= 0 and high <= 1 and least_step >= 0:
            continue
        bad = ~np.isfinite(block)
        if bad.any():
            r, j = (int(v) for v in np.argwhere(bad)[0])
            raise fail(s + r, f"is not a number at position {j}: {block[r, j]}")
        bad = (block < -tol) | (block > 1 + tol)
        if bad.any():
            r, j = (int(v) for v in np.argwhere(bad)[0])
            raise fail(s + r, f"has a value outside [0, 1] at position {j}: {block[r, j]:.6g}")
        bad = np.diff(block, axis=1) < -tol
        if bad.any():
            r, j = (int(v) for v in np.argwhere(bad)[0])
            raise fail(s + r, f"decreases at position {j + 1}: {block[r, j]:.9g} then {block[r, j + 1]:.9g} (a CDF never decreases)")
        noisy = True
    for mask, col, cond, why in (
        (~ranges.open_lower, 0, lambda v: np.abs(v) > tol, "the lower bound is closed, so position 0 (below the range) must be 0"),
        (~ranges.open_upper, -1, lambda v: np.abs(v - 1) > tol, "the upper bound is closed, so position 200 must be 1"),
        (ranges.open_lower, 0, lambda v: v < OPEN_BOUND_MIN_MASS - tol,
         f"the lower bound is open, so position 0 (the probability below the range) must be at least {OPEN_BOUND_MIN_MASS}"),
        (ranges.open_upper, -1, lambda v: v > 1 - OPEN_BOUND_MIN_MASS + tol,
         f"the upper bound is open, so position 200 must be at most {1 - OPEN_BOUND_MIN_MASS:g} (at least {OPEN_BOUND_MIN_MASS} above the range)"),
    ):
        bad = mask & cond(cdfs[:, col])
        if bad.any():
            r = int(np.argmax(bad))
            raise fail(r, f"breaks its bound: {why}; got {cdfs[r, col]:.9g}")
    ends_off = (~ranges.open_lower & (cdfs[:, 0] != 0)).any() or (~ranges.open_upper & (cdfs[:, -1] != 1)).any()
    if not (noisy or ends_off):
        return cdfs
    out = np.clip(cdfs, 0.0, 1.0)
    np.maximum.accumulate(out, axis=1, out=out)
    out[~ranges.open_lower, 0] = 0.0
    out[~ranges.open_upper, -1] = 1.0
    return out


def uninformed_cdf(spec: NumericSpec) -> np.ndarray:
    """Metaculus's baseline forecast (what its baseline score compares with): :data:`OUT_OF_RANGE_BASELINE`
    (5%) beyond each open bound and the rest uniform in location over the range; ``(201,)``."""
    below = OUT_OF_RANGE_BASELINE if spec.open_lower else 0.0
    inside = 1.0 - OUT_OF_RANGE_BASELINE * (spec.open_lower + spec.open_upper)
    out = below + inside * LOCATIONS
    out[0], out[-1] = below, below + inside
    return out


# --- reading a CDF -------------------------------------------------------------------------------------


def first_at_least(cdfs: np.ndarray, levels: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Index of the first grid point where a CDF reaches a level: ``min{j : F_j >= level}`` (201 when it never
    does), by a bisection vectorised over the queries (8 gathers each; the CDF is non-decreasing).

    Parameters
    ----------
    cdfs : ndarray of shape (n, 201)
    levels : ndarray of shape (k,)
        One level per query.
    rows : ndarray of int of shape (k,), optional
        The row of ``cdfs`` each query reads; default: query ``i`` reads row ``i`` (``k = n``).

    Returns
    -------
    ndarray of int of shape (k,), in 0..201
    """
    flat = cdfs.reshape(-1)
    k = levels.shape[0]
    base = (np.arange(k) if rows is None else rows) * N_POINTS
    lo = np.zeros(k, dtype=np.intp)
    hi = np.full(k, N_POINTS, dtype=np.intp)
    for _ in range(8):  # 2**8 > 202 candidates
        mid = (lo + hi) >> 1
        below = flat[base + np.minimum(mid, N_POINTS - 1)] < levels
        active = lo < hi
        lo = np.where(active & below, mid + 1, lo)
        hi = np.where(active & ~below, mid, hi)
    return lo


def quantile_locations(cdfs: np.ndarray, level: float | np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Censored quantiles of piecewise-linear CDFs, in location: the measure of ``{t in [0, 1] : F(t) < level}``.

    Inside the range that is the inverse of the CDF (linear between grid points); a quantile below the range
    is 0 and one above it is 1 (mass beyond an open bound is placed at the bound).

    Parameters
    ----------
    cdfs : ndarray of shape (n, 201)
        Valid CDFs.
    level : float or ndarray of shape (k,)
        Probability level(s) in (0, 1), one per query.
    rows : ndarray of int of shape (k,), optional
        The row of ``cdfs`` each query reads; default: query ``i`` reads row ``i`` (``k = n``).

    Returns
    -------
    ndarray of shape (k,), in [0, 1]
    """
    which = np.arange(cdfs.shape[0]) if rows is None else rows
    lv = np.broadcast_to(np.asarray(level, dtype=np.float64), which.shape)
    j = first_at_least(cdfs, lv, which)
    inner = (j > 0) & (j < N_POINTS)
    jj = np.clip(j, 1, N_POINTS - 1)
    a, b = cdfs[which, jj - 1], cdfs[which, jj]
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(b > a, (lv - a) / (b - a), 1.0)
    t = (jj - 1 + np.clip(frac, 0.0, 1.0)) / N_BINS
    return np.where(inner, t, np.where(j == 0, 0.0, 1.0))


def cdf_at(cdfs: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``F(t)`` of each piecewise-linear CDF at its location ``t`` in [0, 1] (linear between grid points);
    shapes ``(n, 201)`` and ``(n,)`` to ``(n,)``."""
    pos = np.clip(t, 0.0, 1.0) * N_BINS
    k = np.minimum(np.floor(pos).astype(np.intp), N_BINS - 1)
    u = pos - k
    rows = np.arange(cdfs.shape[0])
    return cdfs[rows, k] + u * (cdfs[rows, k + 1] - cdfs[rows, k])


def bucket_of(t: np.ndarray) -> np.ndarray:
    """Metaculus's bucket of each location (``string_location_to_bucket_index`` in its ``utils/the_math``):
    0 below the range, 201 above it, 200 at ``t = 1``, else ``floor(200 t + 1e-7) + 1`` (the bin
    ``[t_{j-1}, t_j)``; the 1e-7 of a bin puts a value on a grid point in the bin above it despite float error).
    ``(n,)`` float to ``(n,)`` int; NaN gives -1."""
    t = np.asarray(t, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        inner = np.floor(np.clip(np.nan_to_num(t, nan=0.0), 0.0, 1.0) * N_BINS + 1e-7).astype(np.intp) + 1
        out = np.where(t < 0, 0, np.where(t > 1, N_POINTS, np.minimum(inner, N_BINS)))
    return np.where(np.isnan(t), -1, out)
