"""Figures of numeric forecasts (grid CDFs), drawn on a matplotlib ``Axes`` the caller creates (this package never
imports matplotlib: the viewer owns figures and their rendering).

* :func:`plot_forecasts`: one question's forecasts as CDFs over the question's range, the outcome marked;
* :func:`plot_calibration`: the PIT histogram of one or more forecasters, with their central 50% and 90%
  interval coverage (:func:`pit_histogram`, :func:`coverage`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from agent_schemas.kinds.numeric.grid import N_POINTS, format_value, value_at
from agent_schemas.kinds.numeric.spec import NumericSpec

__all__ = ["PIT_BINS", "coverage", "coverage_text", "pit_histogram", "plot_calibration", "plot_forecasts"]

#: Bins of the PIT histogram: 10 equal-width bins of [0, 1].
PIT_BINS = 10

_MEMBER_STYLE = {"color": "0.55", "linewidth": 0.8, "linestyle": (0, (3, 2))}


def plot_forecasts(ax: Any, spec: NumericSpec, forecasts: Mapping[str, np.ndarray], outcome: float | None,
                   members: Mapping[str, np.ndarray] | None = None) -> None:
    """Each forecast's CDF over the range, one coloured line per label of ``forecasts`` (methods, baselines) and
    the ``members`` as thin grey dashed lines under one legend entry; the outcome a vertical line labelled with its
    value. The x axis is the question's value in its unit (logarithmic for a log-scaled question), the y axis
    ``P(value <= x)`` in [0, 1]. Each CDF is drawn at the grid's 201 locations (:func:`~agent_schemas.kinds.numeric.grid.value_at`)."""
    x = value_at(spec, np.linspace(0.0, 1.0, N_POINTS))
    for i, (label, cdf) in enumerate((members or {}).items()):
        ax.plot(x, np.asarray(cdf, dtype=float), label=f"members ({len(members or {})})" if i == 0 else "_member",
                zorder=1, **_MEMBER_STYLE)
    for label, cdf in forecasts.items():
        ax.plot(x, np.asarray(cdf, dtype=float), label=str(label), linewidth=1.4, zorder=2)
    if spec.log_scale:
        ax.set_xscale("log")
    if outcome is not None:
        unit = f" {spec.unit}" if spec.unit else ""
        ax.axvline(float(outcome), color="black", linestyle="--", linewidth=1.2, zorder=3,
                   label=f"outcome {format_value(float(outcome))}{unit}")
    ax.set_ylim(0, 1)
    ax.set_xlabel(spec.unit or "value")
    ax.set_ylabel("P(value <= x)")
    ax.legend(fontsize="x-small", loc="center left", bbox_to_anchor=(1.01, 0.5))


def pit_histogram(pit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The PIT histogram of ``pit`` (``(n,)`` values in [0, 1]; NaN left out) as ``(density, edges)``: density per
    bin of :data:`PIT_BINS` equal-width bins (``count / (n * bin width)``, so 1.0 everywhere for a calibrated
    forecaster; Gneiting, Balabdaoui & Raftery 2007, "Probabilistic forecasts, calibration and sharpness", JRSS B
    69(2)), ``edges`` of shape ``(PIT_BINS + 1,)``. Empty input gives a density of zeros."""
    values = np.asarray(pit, dtype=float)
    values = values[~np.isnan(values)]
    edges = np.linspace(0.0, 1.0, PIT_BINS + 1)
    if values.size == 0:
        return np.zeros(PIT_BINS), edges
    density, _ = np.histogram(values, bins=edges, density=True)
    return density, edges


def coverage(diagnostics: Mapping[str, np.ndarray]) -> dict[str, tuple[float, int]]:
    """Central-interval coverage from a forecaster's diagnostics (``in_50``, ``in_90``: 1.0 where the outcome lay in
    the central 50% / 90% interval; NaN left out): ``{"50%": (share, n), "90%": (share, n)}``, share in [0, 1]
    (NaN with no value). A calibrated forecaster covers 0.5 and 0.9."""
    out = {}
    for name, key in (("50%", "in_50"), ("90%", "in_90")):
        hits = np.asarray(diagnostics[key], dtype=float)
        hits = hits[~np.isnan(hits)]
        out[name] = (float(hits.mean()) if hits.size else float("nan"), int(hits.size))
    return out


def coverage_text(diagnostics: Mapping[str, np.ndarray]) -> str:
    """``"in 50%: 48% · in 90%: 87% (n=200)"``: :func:`coverage` in words."""
    cov = coverage(diagnostics)
    parts = [f"in {name}: {'—' if share != share else f'{100 * share:.0f}%'}" for name, (share, _) in cov.items()]
    return " · ".join(parts) + f" (n={cov['50%'][1]})"


def plot_calibration(ax: Any, diagnostics: Mapping[str, Mapping[str, np.ndarray]]) -> None:
    """PIT histogram (:func:`pit_histogram`), one step line per label of ``diagnostics`` (each the numeric kind's
    ``diagnostics`` of a forecaster over its questions: ``pit``, ``in_50``, ``in_90``), its legend entry the label and,
    on a second line, its central 50% and 90% interval coverage (:func:`coverage_text`); the y axis from 0 to at
    least 2. A flat histogram at 1 (dashed) is calibrated; a hump in the middle is under-confidence (intervals too
    wide), a U over-confidence (too narrow), a slope a bias. The central 50% interval's PIT range, [0.25, 0.75], is
    shaded."""
    ax.axvspan(0.25, 0.75, color="0.93", zorder=0)
    ax.axhline(1.0, linestyle="--", color="0.5", linewidth=1)
    top = 2.0
    for label, d in diagnostics.items():
        density, edges = pit_histogram(d["pit"])
        ax.stairs(density, edges, label=f"{label}\n{coverage_text(d)}", linewidth=1.4)
        top = max(top, 1.1 * float(density.max()))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, top)
    ax.set_xlabel("PIT: F(outcome)")
    ax.set_ylabel("density")
    ax.legend(fontsize="x-small", loc="upper center")
