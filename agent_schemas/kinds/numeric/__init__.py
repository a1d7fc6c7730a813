"""The numeric kind: a question whose answer is a number in a range, forecast as a CDF on a 201-point grid.

Forecast vector: the CDF ``F_0..F_200`` at the grid's locations (:mod:`~agent_schemas.kinds.numeric.grid`:
Metaculus's grid, its bounds and its checks), stored on records as ``distribution``. Outcome: the value, in the
question's unit (a float; never beyond a closed bound). A model states seven percentiles, turned into a CDF with
documented tails and a minimum mass everywhere (:mod:`~agent_schemas.kinds.numeric.answers`). Pools: the linear
pool, quantile averaging, the point-wise median and trimmed mean, the least confident member
(:mod:`~agent_schemas.kinds.numeric.pools`). Scores: CRPS (the primary score, in units of the range), the log
loss of the outcome's bucket, Metaculus's continuous baseline score; diagnostics: PIT and central-interval
coverage (:mod:`~agent_schemas.kinds.numeric.scores`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from agent_schemas.errors import DataValidationError
from agent_schemas.kinds.base import KindSpec, Pool, QuestionKind
from agent_schemas.kinds.cells import bad_cell, cell_bool, cell_number, cell_text
from agent_schemas.kinds.numeric import plots as _plots
from agent_schemas.kinds.numeric import pools as _pools
from agent_schemas.kinds.numeric import scores as _scores
from agent_schemas.kinds.numeric.answers import (
    FIELDS,
    PERCENTILES,
    cdf_from_percentiles,
    percentile_properties,
    percentile_template,
    read_percentiles,
)
from agent_schemas.kinds.numeric.grid import (
    N_POINTS,
    OPEN_BOUND_MIN_MASS,
    Ranges,
    check_cdf,
    check_cdfs,
    check_spec,
    format_value,
    quantile_locations,
    uninformed_cdf,
    value_at,
)
from agent_schemas.kinds.numeric.spec import NumericSpec

__all__ = ["NUMERIC", "NumericKind", "NumericSpec"]


class NumericKind(QuestionKind):
    """The numeric kind (see the module docstring)."""

    name: ClassVar[str] = "numeric"
    label: ClassVar[str] = "numeric"
    spec_type: ClassVar[type[KindSpec]] = NumericSpec
    pools: ClassVar[Mapping[str, Pool]] = _pools.POOLS
    default_methods: ClassVar[tuple[str, ...]] = ("mean", "quantile_average", "median", "least_confident")
    scores: ClassVar[Mapping[str, str]] = {
        "crps": "CRPS of the piecewise-linear CDF over the range, in units of the range's width (lower is better)",
        "log_loss": "negative log of the probability of the outcome's bucket (below, 200 bins, above), in nats",
        "baseline_score": "Metaculus's continuous baseline score, 100 * ln(q / q_uninformed) / 2 (higher is better)",
    }
    higher_is_better: ClassVar[frozenset[str]] = frozenset({"baseline_score"})
    primary_score: ClassVar[str] = "crps"
    peer_divisor: ClassVar[float] = 2.0

    # --- the question ---------------------------------------------------------------------------------
    def check_outcome(self, spec: KindSpec, outcome: Any) -> float:
        s = check_spec(spec)
        if isinstance(outcome, bool) or not isinstance(outcome, numbers.Real):
            raise ValueError(f"a numeric outcome must be a number (in {s.unit or 'the question unit'}), got {outcome!r}")
        value = float(outcome)
        if not math.isfinite(value):
            raise ValueError(f"a numeric outcome must be finite, got {outcome!r}")
        if not s.open_lower and value < s.lower:
            raise ValueError(f"outcome {value!r} is below the closed lower bound {s.lower!r} of the range")
        if not s.open_upper and value > s.upper:
            raise ValueError(f"outcome {value!r} is above the closed upper bound {s.upper!r} of the range")
        if s.log_scale and value <= 0:
            raise ValueError(f"outcome {value!r} of a log-scaled question must be > 0")
        return value

    spec_columns: ClassVar[tuple[str, ...]] = ("range_min", "range_max", "open_lower", "open_upper", "unit", "log_scale")
    uninformed_note: ClassVar[str] = "uniform over the range, 5% beyond each open bound (Metaculus's uninformed forecast)"

    def spec_from_cells(self, cells: Mapping[str, Any]) -> NumericSpec:
        """``range_min`` and ``range_max`` (numbers, required), ``open_lower`` / ``open_upper`` / ``log_scale``
        (true/false, default false) and ``unit`` (text)."""
        lower = cell_number(cells, "range_min")
        upper = cell_number(cells, "range_max")
        log_scale = cell_bool(cells, "log_scale")
        if not lower < upper:  # type: ignore[operator]
            raise bad_cell("range_max", cells.get("range_max"), f"range_max must be above range_min ({lower:g})")
        if log_scale and lower <= 0:  # type: ignore[operator]
            raise bad_cell("range_min", cells.get("range_min"), "a log-scaled range (log_scale true) needs range_min > 0")
        return NumericSpec(lower=lower, upper=upper, open_lower=cell_bool(cells, "open_lower"),
                           open_upper=cell_bool(cells, "open_upper"), unit=cell_text(cells, "unit"), log_scale=log_scale)

    def outcome_from_cell(self, spec: KindSpec, value: Any) -> float:
        """A number in the question's unit, within its closed bounds."""
        x = cell_number({"outcome": value}, "outcome")
        try:
            return self.check_outcome(spec, x)
        except ValueError as exc:
            raise bad_cell("outcome", value, str(exc)) from None

    def worst_case(self, spec: KindSpec, outcome: int | float) -> np.ndarray:
        """All the mass at the end of the range farther from the outcome (the least an open bound must hold,
        0.001, beyond it): a CDF as valid as any forecast's."""
        s = check_spec(spec)
        t = float(Ranges.of([s]).locations(np.array([float(outcome)]))[0])
        below = OPEN_BOUND_MIN_MASS if s.open_lower else 0.0
        top = 1.0 - (OPEN_BOUND_MIN_MASS if s.open_upper else 0.0)
        out = np.full(N_POINTS, top)
        if t <= 0.5:  # the outcome is low: all mass in the top bin
            out[:-1] = below
        else:  # the outcome is high: all mass in the bottom bin
            out[0] = below
        return out

    def question_lines(self, spec: KindSpec) -> list[str]:
        s = check_spec(spec)
        unit = f" {s.unit}" if s.unit else ""
        low, high = format_value(s.lower), format_value(s.upper)
        lines = [f"The answer is a number{f' in {s.unit}' if s.unit else ''}, in the range {low} to {high}{unit}."]
        lines.append(f"The lower bound is open: the value may be below {low}." if s.open_lower
                     else f"The lower bound is closed: the value cannot be below {low}.")
        lines.append(f"The upper bound is open: the value may be above {high}." if s.open_upper
                     else f"The upper bound is closed: the value cannot be above {high}.")
        if s.log_scale:
            lines.append("The range is on a logarithmic scale: think in ratios (doubling, halving), not differences.")
        return lines

    def outcome_text(self, spec: KindSpec, outcome: int | float) -> str:
        s = check_spec(spec)
        return f"{format_value(float(outcome), digits=7)} {s.unit}".strip()

    # --- the forecast form ----------------------------------------------------------------------------
    def size(self, spec: KindSpec) -> int:
        return N_POINTS

    def check_forecast(self, spec: KindSpec, values: Any, *, name: str = "forecast") -> np.ndarray:
        return check_cdf(check_spec(spec), values, name)

    def uninformed(self, spec: KindSpec) -> np.ndarray:
        return uninformed_cdf(check_spec(spec))

    def forecast_text(self, spec: KindSpec, forecast: np.ndarray | None) -> str:
        if forecast is None:
            return "failed"
        s = check_spec(spec)
        cdf = np.asarray(forecast, dtype=np.float64)[None, :]

        def at(level: float) -> str:
            if cdf[0, 0] > level:
                return f"below {format_value(s.lower)}"
            if cdf[0, -1] < level:
                return f"above {format_value(s.upper)}"
            return format_value(value_at(s, float(quantile_locations(cdf, level)[0])))

        unit = f" {s.unit}" if s.unit else ""
        return f"median {at(0.5)}; 90% in [{at(0.05)}, {at(0.95)}]{unit}"

    # --- answers ----------------------------------------------------------------------------------------
    def answer_properties(self, spec: KindSpec) -> dict[str, dict[str, Any]]:
        return percentile_properties(check_spec(spec))

    def answer_template(self, spec: KindSpec) -> str:
        return percentile_template(check_spec(spec))

    def answer_request(self, spec: KindSpec, *, short: bool = False) -> str:
        s = check_spec(spec)
        unit = f" in {s.unit}" if s.unit else ""
        levels = ", ".join(str(p) for p in PERCENTILES[:-1]) + f" and {PERCENTILES[-1]}"
        phrase = (f"percentiles {levels} of the value{unit} (each the value the outcome has that percent chance of "
                  "falling below), as plain numbers that never decrease")
        return phrase if short else f"the {phrase}"

    def answer_of(self, spec: KindSpec, forecast: np.ndarray) -> dict[str, Any]:
        """The stated percentiles of ``forecast``: its quantiles at :data:`~agent_schemas.kinds.numeric.answers.PERCENTILES`
        (a quantile beyond an open bound is stated at the bound)."""
        s = check_spec(spec)
        cdf = np.asarray(forecast, dtype=np.float64)[None, :]
        return {field: float(value_at(s, float(quantile_locations(cdf, p / 100)[0])))
                for p, field in zip(PERCENTILES, FIELDS)}

    def debate_claim(self, spec: KindSpec, side: str, estimate: np.ndarray | None) -> str:
        s = check_spec(spec)
        direction = "HIGHER" if side == "bull" else "LOWER"
        if estimate is None:
            return f"the value will be {direction} than the current estimate says"
        median = format_value(value_at(s, float(quantile_locations(np.asarray(estimate)[None, :], 0.5)[0])))
        unit = f" {s.unit}" if s.unit else ""
        return f"the value will be {direction} than the current estimate's median, {median}{unit}"

    def spread(self, spec: KindSpec, forecasts: np.ndarray) -> float:
        """How far members' forecasts are apart: the largest difference between two members' medians, in units of
        the range (in [0, 1]; 0.0 for fewer than 2)."""
        arr = np.asarray(forecasts, dtype=np.float64)
        if arr.shape[0] < 2:
            return 0.0
        medians = quantile_locations(arr, 0.5)
        return float(medians.max() - medians.min())

    def clip(self, spec: KindSpec, forecast: np.ndarray, low: float, high: float) -> np.ndarray:
        """Unchanged: every numeric forecast read from an answer already holds a minimum mass in every bin (the
        minimum-slope mix of :mod:`~agent_schemas.kinds.numeric.answers`) and pools and blends of such CDFs keep
        it, so no log score is infinite; the binary clip bounds have no meaning on a CDF."""
        return np.asarray(forecast, dtype=np.float64)

    def answer_keys(self, spec: KindSpec) -> tuple[str, ...]:
        return FIELDS

    def read_answer(self, spec: KindSpec, obj: Mapping[str, Any], *, raw_text: str = "") -> np.ndarray | None:
        s = check_spec(spec)
        values = read_percentiles(s, obj, raw_text=raw_text)
        return None if values is None else cdf_from_percentiles(s, values)

    # --- scoring -------------------------------------------------------------------------------------
    def _checked(self, specs: Sequence[KindSpec], forecasts: Any, outcomes: Any) -> tuple[Ranges, np.ndarray, np.ndarray]:
        """The ranges, checked CDFs ``(n, 201)`` and outcome locations ``(n,)`` (NaN: unresolved)."""
        ranges = Ranges.of(specs)
        try:
            cdfs = np.asarray(forecasts, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise DataValidationError(f"forecasts must be numbers of shape (n_questions, {N_POINTS}): {exc}", field="forecasts") from exc
        cdfs = check_cdfs(ranges, cdfs.reshape(0, N_POINTS) if cdfs.size == 0 else cdfs, "forecasts")
        try:
            y = np.asarray(outcomes, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise DataValidationError(f"outcomes must be numbers of shape (n_questions,): {exc}", field="outcomes") from exc
        if y.shape != (len(ranges),):
            raise DataValidationError(f"outcomes must have shape ({len(ranges)},); got {y.shape}", field="outcomes", value=y.shape)
        for bad, why in (
            (np.isinf(y), "is not finite"),
            (~ranges.open_lower & (y < ranges.lower), "is below the question's closed lower bound"),
            (~ranges.open_upper & (y > ranges.upper), "is above the question's closed upper bound"),
            (ranges.log_scale & (y <= 0), "must be > 0 on a log-scaled question"),
        ):
            if bad.any():
                i = int(np.argmax(bad))
                raise DataValidationError(f"outcomes[{i}] = {y[i]!r} {why} (range [{ranges.lower[i]:g}, {ranges.upper[i]:g}])",
                                          field="outcomes", row=i, value=float(y[i]))
        return ranges, cdfs, ranges.locations(y)

    def score(self, specs: Sequence[KindSpec], forecasts: Any, outcomes: Any) -> dict[str, np.ndarray]:
        ranges, cdfs, t = self._checked(specs, forecasts, outcomes)
        log_q = _scores.log_probability(cdfs, t)
        return {
            "crps": _scores.crps(cdfs, t),
            "log_loss": -log_q,
            "baseline_score": _scores.baseline_score(log_q, t, ranges.open_lower, ranges.open_upper),
        }

    def outcome_log_probability(self, specs: Sequence[KindSpec], forecasts: Any, outcomes: Any) -> np.ndarray:
        _, cdfs, t = self._checked(specs, forecasts, outcomes)
        return _scores.log_probability(cdfs, t)

    def diagnostics(self, specs: Sequence[KindSpec], forecasts: Any, outcomes: Any) -> dict[str, np.ndarray]:
        _, cdfs, t = self._checked(specs, forecasts, outcomes)
        pit = _scores.pit(cdfs, t)
        return {"pit": pit, "in_50": _scores.interval_hits(pit, 0.5), "in_90": _scores.interval_hits(pit, 0.9)}

    # --- pooling -------------------------------------------------------------------------------------
    def pool_many(self, stack: Any, methods: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Several pools of one stack in one pass (:func:`agent_schemas.kinds.numeric.pools.pool_many`: the
        rows checked once, the members sorted once for ``median`` and ``trimmed_mean``)."""
        arr = np.asarray(stack, dtype=np.float64)
        if arr.ndim != 3:
            raise DataValidationError(f"stack must be 3-D (n_questions, n_members, size); got shape {arr.shape}",
                                      field="stack", value=arr.shape)
        return _pools.pool_many(arr, tuple(methods or self.default_methods))


    # --- figures ------------------------------------------------------------------------------------
    calibration_caption: ClassVar[str] = (
        "PIT histogram: F(outcome) of every forecast, in 10 bins of [0, 1]; flat at the dashed line (density "
        "1) for a calibrated forecaster, a hump in the middle when its intervals are too wide, a U when too "
        "narrow, a slope when biased. Each legend gives how often the outcome fell in the central 50% and 90% "
        "intervals (0.5 and 0.9 when calibrated); the central 50% is shaded.")

    def plot_forecasts(self, ax: Any, spec: KindSpec, forecasts: Mapping[str, np.ndarray], outcome: int | float | None,
                       *, members: Mapping[str, np.ndarray] | None = None) -> None:
        """Each forecast's CDF over the range, the members' lighter, the outcome a vertical line
        (:func:`agent_schemas.kinds.numeric.plots.plot_forecasts`)."""
        _plots.plot_forecasts(ax, check_spec(spec), forecasts, None if outcome is None else float(outcome), members)

    def plot_calibration(self, ax: Any, diagnostics: Mapping[str, Mapping[str, np.ndarray]]) -> None:
        """PIT histogram with the central 50% and 90% interval coverage
        (:func:`agent_schemas.kinds.numeric.plots.plot_calibration`)."""
        _plots.plot_calibration(ax, diagnostics)


NUMERIC = NumericKind()
