"""Report figures: non-empty PNGs whose plotted points are the table values."""

import base64
import doctest

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from agent_schemas.errors import DataValidationError
from benchmarks import plots
from benchmarks.plots import figure_to_base64_png, plot_cost_vs_brier, plot_reliability_diagram
from benchmarks.scoring import reliability_diagram

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _tables():
    rng = np.random.default_rng(0)
    p = rng.random(400)
    o = (rng.random(400) < p).astype(int)
    return {
        "mean": reliability_diagram(p, o, n_bins=10),
        "extremized": reliability_diagram(np.clip(p * 0.5, 0, 1), o, n_bins=10),  # bins above 0.5 empty
    }


def test_reliability_diagram_points_equal_the_tables():
    tables = _tables()
    fig = plot_reliability_diagram(tables)
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    for name, table in tables.items():
        shown = table[table["count"] > 0]
        np.testing.assert_array_equal(lines[name].get_xdata(), shown["mean_p_yes"].to_numpy())
        np.testing.assert_array_equal(lines[name].get_ydata(), shown["observed_frequency"].to_numpy())
    assert len(lines["extremized"].get_xdata()) == 5  # empty bins are not drawn
    png = base64.b64decode(figure_to_base64_png(fig))
    assert png.startswith(PNG_SIGNATURE) and len(png) > 5000


def test_reliability_diagram_draws_on_given_axes():
    fig = Figure()
    ax = fig.add_subplot()
    assert plot_reliability_diagram(_tables(), ax=ax) is fig
    assert ax.get_legend() is not None


def test_cost_vs_brier_points_and_error_bars():
    df = pd.DataFrame({
        "method": ["mean", "debate", "supervisor"],
        "cost_usd": [0.4, 2.5, 1.1],
        "brier": [0.21, 0.18, 0.19],
        "brier_ci_low": [0.19, 0.15, 0.17],
        "brier_ci_high": [0.23, 0.20, 0.22],
    })
    fig = plot_cost_vs_brier(df)
    ax = fig.axes[0]
    np.testing.assert_array_equal(ax.collections[0].get_offsets(), df[["cost_usd", "brier"]].to_numpy())
    assert [t.get_text() for t in ax.texts] == ["mean", "debate", "supervisor"]
    segments = ax.collections[1].get_segments()  # error bars: from ci_low to ci_high
    np.testing.assert_allclose([s[:, 1] for s in segments], df[["brier_ci_low", "brier_ci_high"]].to_numpy())
    png = base64.b64decode(figure_to_base64_png(fig, dpi=60))
    assert png.startswith(PNG_SIGNATURE) and len(png) > 2000


def test_cost_vs_brier_label_column_and_custom_axes():
    df = pd.DataFrame({"label": ["a", "b"], "tokens": [1000, 3000], "brier": [0.2, 0.1]})
    fig = plot_cost_vs_brier(df, cost_col="tokens")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.texts] == ["a", "b"]
    assert ax.get_xlabel() == "tokens"
    assert len(ax.collections) == 1  # no interval columns, no error bars
    np.testing.assert_array_equal(ax.collections[0].get_offsets(), [[1000, 0.2], [3000, 0.1]])


def test_plot_errors():
    with pytest.raises(DataValidationError, match="lacks column 'cost_usd'"):
        plot_cost_vs_brier(pd.DataFrame({"brier": [0.2]}))
    with pytest.raises(DataValidationError, match="tables is empty"):
        plot_reliability_diagram({})
    with pytest.raises(DataValidationError, match="lacks columns"):
        plot_reliability_diagram({"m": pd.DataFrame({"count": [1]})})


def test_doctests_pass():
    result = doctest.testmod(plots)
    assert result.attempted >= 4
    assert result.failed == 0
