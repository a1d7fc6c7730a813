"""How a model gives a numeric forecast, and how its answer becomes a CDF on the grid.

The answer
----------
A model states seven percentiles of the value, in the question's unit: :data:`PERCENTILES` = 5, 10, 25, 50,
75, 90 and 95: the median, the quartiles and the central 80% and 90% intervals. (Metaculus's template bots ask
for 10, 20, 40, 60, 80 and 90; stating 5 and 95 puts the tails that the CRPS, the 90% coverage and the
out-of-range buckets weigh in the model's own words instead of an extrapolation, and the quartiles give the
central 50% interval directly.) Each is a plain JSON number in its own required property, ``percentile_5`` ...
``percentile_95``, in increasing order. What llama.cpp's JSON-schema grammar (the embedded model) enforces of
this: all seven properties, in this order, and no other; each a JSON number (never a string, NaN or infinity).
What it cannot: that the values do not decrease, that they lie within a closed bound, that they are > 0 on a
log scale (it ignores ``minimum``/``maximum``, and an integer enum cannot hold values in the question's unit):
the reader refuses each of these with a ForecastParseError (``tests/providers/test_llama_kinds.py`` checks both
sides on SmolLM2-135M, which often states equal or decreasing percentiles).

Reading it (:func:`read_percentiles`) refuses, with a :class:`~agent_schemas.errors.ForecastParseError`:
a missing percentile, a value that is not a finite number, percentiles that decrease (never reordered: a
model that wrote them out of order said something we cannot stand behind), a value beyond a **closed** bound,
and a value <= 0 on a log-scaled question. Equal adjacent values are accepted: they say the value has a
**point mass** there (a count that is 0 with probability 25% states ``percentile_5 = percentile_10
= percentile_25 = 0``); the CDF jumps by the levels between them at that value.

From percentiles to the CDF (:func:`cdf_from_percentiles`)
----------------------------------------------------------
1. **Knots.** Each stated percentile is a knot ``(location, level)``. A closed lower bound adds the knot
   ``(0, 0)`` and a closed upper bound ``(1, 1)``: no mass beyond them. At an open bound, when the outermost
   stated value lies inside the range, the bound gets half the outermost level outside it: ``(0, 0.025)``
   below the 5th percentile, ``(1, 0.975)`` above the 95th (the convention of Metaculus ``forecasting-tools``:
   the tail beyond the stated points holds half of what is left, the other half lies beyond the bound); when
   the outermost stated value lies beyond the bound, the knots on either side of the bound already give it.
2. **Interpolation.** The CDF is linear in location between knots (so uniform density between stated
   percentiles; on a log-scaled question, uniform in log value), read on the grid as the probability of the
   buckets up to each point (:mod:`agent_schemas.kinds.numeric.grid`): a point mass at a grid value lands in
   the bin above it.
3. **Minimum mass everywhere (the mix).** The result is mixed with a little of an uninformed forecast:
   ``F = (1 - 0.01 - 0.001 k) F_stated + 0.01 t + 0.001 [open lower]``, ``k`` the number of open bounds:
   1% spread uniformly over the range and 0.1% beyond each open bound. Every inner bin then holds at least
   0.01 / 200 = 5e-5 and each open out-of-range bucket at least 0.001, so the log score of any outcome is
   finite and the CDF meets Metaculus's own limits (increments >= 5e-5, ``F_0 >= 0.001`` and
   ``F_200 <= 0.999`` at open bounds); a closed bound keeps ``F_0 = 0`` / ``F_200 = 1``. These are the weights
   ``forecasting-tools`` standardises CDFs with; written as a mixture, the result is a proper distribution.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from agent_schemas.errors import ForecastParseError
from agent_schemas.kinds.numeric.grid import LOCATIONS, N_POINTS, format_value, location_of
from agent_schemas.kinds.numeric.spec import NumericSpec
from agent_schemas.kinds.values import parse_number

__all__ = [
    "FIELDS", "MIX_OUTSIDE", "MIX_UNIFORM", "PERCENTILES", "cdf_from_percentiles", "percentile_properties",
    "percentile_template", "read_percentiles",
]

PERCENTILES: tuple[int, ...] = (5, 10, 25, 50, 75, 90, 95)
"""The percentiles a model states, in increasing order."""

FIELDS: tuple[str, ...] = tuple(f"percentile_{p}" for p in PERCENTILES)
"""Answer fields, one per percentile: ``percentile_5`` ... ``percentile_95``."""

MIX_UNIFORM: float = 0.01
"""Weight of the uniform distribution over the range in the mix (every inner bin gets >= 5e-5)."""

MIX_OUTSIDE: float = 0.001
"""Weight of the mass placed beyond each open bound in the mix (Metaculus's least out-of-range mass)."""

_LEVELS = np.array(PERCENTILES, dtype=np.float64) / 100.0


def percentile_properties(spec: NumericSpec) -> dict[str, dict[str, Any]]:
    """JSON-schema properties of the answer: one plain ``"type": "number"`` per percentile, in increasing
    order (llama.cpp's grammar writes properties in order and enforces the number type)."""
    unit = f" in {spec.unit}" if spec.unit else ""
    return {field: {"type": "number",
                    "description": f"The value{unit} the outcome has a {p}% chance of falling below (its {p}th percentile)."}
            for p, field in zip(PERCENTILES, FIELDS)}


def percentile_template(spec: NumericSpec) -> str:
    """The answer's fields as a task text shows them inside its JSON template."""
    unit = f" in {spec.unit}" if spec.unit else ""
    return ", ".join(f'"{field}": <number{unit}>' for field in FIELDS)


def read_percentiles(spec: NumericSpec, obj: Mapping[str, Any], *, raw_text: str = "") -> np.ndarray | None:
    """The seven stated percentiles of an answer object, in the question's unit, validated; None when the
    object states none of them (it is not an answer).

    Returns
    -------
    ndarray of shape (7,) or None
        Values for :data:`PERCENTILES`, non-decreasing.

    Raises
    ------
    ForecastParseError
        For a missing percentile, a value that is not a finite number (:func:`~agent_schemas.kinds.values.parse_number`),
        percentiles that decrease, a value beyond a closed bound, or a value <= 0 on a log scale; carrying
        ``raw_text``, the field and the value.
    """
    given = [f for f in FIELDS if obj.get(f) is not None]
    if not given:
        return None
    missing = [f for f in FIELDS if f not in given]
    if missing:
        raise ForecastParseError(f"the answer gives {len(given)} of the {len(FIELDS)} percentiles; missing: {', '.join(missing)}",
                                 raw_text=raw_text, field=missing[0], value=None)
    values = np.array([parse_number(obj[f], field=f, raw_text=raw_text) for f in FIELDS])
    for i in range(1, len(FIELDS)):
        if values[i] < values[i - 1]:
            raise ForecastParseError(
                f"{FIELDS[i]} ({format_value(values[i])}) is below {FIELDS[i - 1]} ({format_value(values[i - 1])}): "
                "percentiles must not decrease (refusing to reorder them)", raw_text=raw_text, field=FIELDS[i], value=float(values[i]))
    unit = f" {spec.unit}" if spec.unit else ""
    for f, v in zip(FIELDS, values):
        if not spec.open_lower and v < spec.lower:
            raise ForecastParseError(f"{f} ({format_value(v)}) is below the closed lower bound {format_value(spec.lower)}{unit}",
                                     raw_text=raw_text, field=f, value=float(v))
        if not spec.open_upper and v > spec.upper:
            raise ForecastParseError(f"{f} ({format_value(v)}) is above the closed upper bound {format_value(spec.upper)}{unit}",
                                     raw_text=raw_text, field=f, value=float(v))
        if spec.log_scale and v <= 0:
            raise ForecastParseError(f"{f} ({format_value(v)}) must be > 0 on a log-scaled question",
                                     raw_text=raw_text, field=f, value=float(v))
    return values


def cdf_from_percentiles(spec: NumericSpec, values: Any, levels: Any = _LEVELS) -> np.ndarray:
    """The grid CDF of stated percentiles (the module docstring's three steps), vectorised over answers.

    Parameters
    ----------
    spec : NumericSpec
        The question's range (one question; answers given for it).
    values : array-like of shape (..., n_levels)
        Stated values in the question's unit, non-decreasing along the last axis, inside any closed bound and
        > 0 on a log scale (as :func:`read_percentiles` returns them; not checked here).
    levels : array-like of shape (n_levels,), default PERCENTILES / 100
        Their probability levels, increasing, in (0, 1).

    Returns
    -------
    ndarray of shape (..., 201)
        Valid CDFs (:func:`~agent_schemas.kinds.numeric.grid.check_cdf`).

    Examples
    --------
    >>> from agent_schemas.kinds.numeric.spec import NumericSpec
    >>> spec = NumericSpec(lower=0, upper=100)
    >>> cdf = cdf_from_percentiles(spec, [10, 20, 30, 50, 70, 80, 90])
    >>> round(float(cdf[100]), 4)  # the median, 50, at location 0.5: 0.99 * 0.5 + 0.01 * 0.5
    0.5
    """
    vals = np.asarray(values, dtype=np.float64)
    lv = np.asarray(levels, dtype=np.float64)
    lead = vals.shape[:-1]
    locs = np.asarray(location_of(spec, vals), dtype=np.float64).reshape(-1, lv.size)
    n = locs.shape[0]
    levs = np.broadcast_to(lv, locs.shape)
    # one knot at each bound (closed: (0, 0) / (1, 1); open: half the outermost level at the bound when the outermost
    # stated value is inside, else a copy of the outermost knot, which adds nothing)
    if spec.open_lower:
        inside = locs[:, 0] > 0
        low = (np.where(inside, 0.0, locs[:, 0]), np.where(inside, lv[0] / 2, lv[0]))
    else:
        low = (np.zeros(n), np.zeros(n))
    if spec.open_upper:
        inside = locs[:, -1] < 1
        high = (np.where(inside, 1.0, locs[:, -1]), np.where(inside, 1 - (1 - lv[-1]) / 2, lv[-1]))
    else:
        high = (np.ones(n), np.ones(n))
    kx = np.column_stack([low[0], locs, high[0]])
    ky = np.column_stack([low[1], levs, high[1]])
    raw = _interpolate_knots(kx, ky)
    weight = 1.0 - MIX_UNIFORM - MIX_OUTSIDE * (spec.open_lower + spec.open_upper)
    out = weight * raw + MIX_UNIFORM * LOCATIONS + (MIX_OUTSIDE if spec.open_lower else 0.0)
    if not spec.open_lower:
        out[:, 0] = 0.0
    if not spec.open_upper:
        out[:, -1] = 1.0
    return out.reshape(*lead, N_POINTS)


def _interpolate_knots(kx: np.ndarray, ky: np.ndarray) -> np.ndarray:
    """``(n, 201)``: the CDF through knots ``(kx, ky)`` (``(n, n_knots)``, both non-decreasing along a row,
    the first knot at or below location 0 and the last at or above 1), linear between knots, read at the grid as
    the left limit ``P(X < t_j)`` for ``j < 200`` and the right limit ``P(X <= 1)`` at ``j = 200``."""
    n, m = kx.shape
    t = LOCATIONS[None, :, None]
    first_ge = (kx[:, None, :] < t).sum(axis=2)                      # left: knot i-1 < t <= knot i
    first_gt = (kx[:, None, :] <= t).sum(axis=2)                     # right: knot i-1 <= t < knot i
    i = first_ge.copy()
    i[:, -1] = first_gt[:, -1]
    rows = np.arange(n)[:, None]
    hi = np.minimum(i, m - 1)
    lo = np.maximum(i - 1, 0)
    x0, x1, y0, y1 = kx[rows, lo], kx[rows, hi], ky[rows, lo], ky[rows, hi]
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(x1 > x0, (LOCATIONS[None, :] - x0) / (x1 - x0), 0.0)
    out = y0 + (y1 - y0) * np.clip(frac, 0.0, 1.0)
    out = np.where(i == 0, ky[:, :1], out)
    return np.where(i >= m, ky[:, -1:], out)
