"""Report figures: non-empty PNGs whose plotted points are the table values."""

import base64
import doctest

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from matplotlib.text import Text

from agent_schemas.errors import DataValidationError
from benchmarks.viewer import plots
from benchmarks.viewer.plots import figure_to_base64_png, plot_cost_vs_brier, plot_reliability_diagram
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


# --- the run viewer's figures --------------------------------------------------------------------


def _boxes_overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_cost_vs_brier_labels_never_overlap_when_methods_share_a_cost():
    # five aggregation methods cost exactly the ensemble and have nearly equal Brier scores
    df = pd.DataFrame({"label": ["mean", "median", "min", "geomean_odds", "extremized", "debate", "supervisor", "pipeline"],
                       "tokens_per_question": [2300.0] * 5 + [4400, 4000, 6000],
                       "brier": [0.2101, 0.2102, 0.2100, 0.2103, 0.2099, 0.23, 0.20, 0.19]})
    refs = {"crowd": 0.2101, "always_0.5": 0.25}
    fig = plot_cost_vs_brier(df, cost_col="tokens_per_question", label_col="label", x_label="tokens per question",
                             references=refs)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "tokens per question"
    assert [t.get_text() for t in ax.texts] == list(df["label"]) + ["crowd (no tokens)", "always_0.5 (no tokens)"]
    fig.draw_without_rendering()
    boxes = [Text.get_window_extent(t) for t in ax.texts]  # the text alone, not its leader line
    assert not any(_boxes_overlap(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    # labels keep the vertical order of their points (higher Brier, higher label)
    y = list(df["brier"]) + list(refs.values())
    label_y = [(b.y0 + b.y1) / 2 for b in boxes]
    order = sorted(range(len(y)), key=lambda i: (y[i], i))
    assert [label_y[i] for i in order] == sorted(label_y)
    # every label is joined to its own point
    for text, (xi, yi) in zip(ax.texts, [*zip(df["tokens_per_question"], df["brier"]), *[(ax.get_xlim()[1], v) for v in refs.values()]]):
        assert text.xy == pytest.approx((xi, yi))


def test_spread_labels_keeps_order_gap_and_bounds():
    rng = np.random.default_rng(1)
    for n in (1, 2, 7, 15):
        targets = rng.random(n)
        y = plots.spread_labels(targets, gap=0.06)
        order = np.argsort(targets, kind="mergesort")
        assert np.all(np.diff(y[order]) >= 0.06 - 1e-12)
        assert y.min() >= 0 and y.max() <= 1
    crowded = plots.spread_labels(np.full(30, 0.5), gap=0.06)  # 30 labels cannot keep 0.06 in [0, 1]: spread evenly
    np.testing.assert_allclose(np.sort(crowded), np.linspace(0, 1, 30))
    with pytest.raises(ValueError, match="gap"):
        plots.spread_labels([0.1], gap=0)


def test_reliability_small_multiples_one_panel_per_method_with_bin_counts():
    tables = _tables()
    tables["third"] = reliability_diagram([0.05, 0.15, 0.95, 0.92], [0, 0, 1, 0], n_bins=10)
    fig = plots.plot_reliability_small_multiples(tables, ncols=2)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 3 and len(fig.axes) == 4  # a 2 x 2 grid, the last panel hidden
    for ax, (name, table) in zip(visible, tables.items()):
        shown = table[table["count"] > 0]
        assert ax.get_title(loc="left").startswith(name)
        np.testing.assert_allclose(ax.collections[0].get_offsets(), shown[["mean_p_yes", "observed_frequency"]].to_numpy())
        assert [t.get_text() for t in ax.texts] == [str(c) for c in shown["count"]]
        rate = (shown["count"] * shown["observed_frequency"]).sum() / shown["count"].sum()
        base = [ln for ln in ax.get_lines() if ln.get_linestyle() == ":"]
        assert len(base) == 1 and base[0].get_ydata()[0] == pytest.approx(rate)
        no_skill = next(ln for ln in ax.get_lines() if ln.get_color() == "tab:green")
        np.testing.assert_allclose(no_skill.get_ydata(), [rate / 2, (1 + rate) / 2])  # halfway to perfect
    assert visible[2].get_title(loc="left") == "third  (n=4)"
    with pytest.raises(DataValidationError, match="tables is empty"):
        plots.plot_reliability_small_multiples({})


def test_member_spread_histogram_counts_every_finite_spread():
    spreads = [0.0, 0.12, 0.14, 0.5, 0.51, 0.99, float("nan")]
    fig = plots.plot_member_spread(spreads, threshold=0.2)
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches]
    assert sum(heights) == 6 and heights[2] == 2  # [0.10, 0.15) holds 0.12 and 0.14
    assert "1 with < 2 members left out" in ax.get_title()
    assert any(ln.get_xdata()[0] == 0.2 for ln in ax.get_lines())
    assert any("median 0.32" in t.get_text() for t in ax.texts)  # (0.14 + 0.50) / 2


def test_paired_differences_draw_intervals_and_mark_the_missing_ones():
    df = pd.DataFrame({"label": ["mean", "a", "b", "c"], "delta_brier_vs_baseline": [np.nan, -0.02, 0.01, 0.03],
                       "delta_brier_ci_low": [np.nan, -0.05, np.nan, 0.01], "delta_brier_ci_high": [np.nan, 0.01, np.nan, 0.05]})
    fig = plots.plot_paired_differences(df, baseline="mean")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]  # the baseline row has no difference
    points = ax.collections[0]
    np.testing.assert_allclose(points.get_offsets()[:, 0], [-0.02, 0.01, 0.03])
    assert points.get_facecolors()[1][3] == 0  # hollow: no interval
    segments = ax.collections[1].get_segments()
    np.testing.assert_allclose([s[:, 0] for s in segments], [[-0.05, 0.01], [0.01, 0.05]])
    assert [t.get_text() for t in ax.texts] == ["interval not available"]
    assert "Δ Brier vs mean" in ax.get_xlabel()
    with pytest.raises(DataValidationError, match="no row has"):
        plots.plot_paired_differences(df.iloc[:1], baseline="mean")


def test_brier_by_confidence_band_draws_one_point_per_band_in_table_order():
    df = pd.DataFrame({"confidence": ["overall (weakest link)"] * 2 + ["supervisor, as stated"] * 2,
                       "label": ["pipeline", "pipeline", "sup$er$", "sup$er$"], "band": ["high", "low", "high", "low"],
                       "n": [40, 12, 30, 3], "brier": [0.12, 0.21, 0.15, 0.3],
                       "brier_ci_low": [0.08, 0.12, 0.1, np.nan], "brier_ci_high": [0.16, 0.3, 0.2, np.nan]})
    ax = plots.plot_brier_by_confidence(df).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "overall (weakest link) / pipeline: high (n=40)", "overall (weakest link) / pipeline: low (n=12)",
        "supervisor, as stated / sup\\$er\\$: high (n=30)", "supervisor, as stated / sup\\$er\\$: low (n=3)"]  # $ drawn literally
    points = ax.collections[0]
    np.testing.assert_allclose(points.get_offsets()[:, 0], [0.12, 0.21, 0.15, 0.3])
    np.testing.assert_allclose(points.get_offsets()[:, 1], [3, 2, 1, 0])  # top row first
    assert points.get_facecolors()[3][3] == 0  # hollow: too few clusters for an interval
    np.testing.assert_allclose([seg[:, 0] for seg in ax.collections[1].get_segments()], [[0.08, 0.16], [0.12, 0.3], [0.1, 0.2]])
    with pytest.raises(DataValidationError, match="no confidence band"):
        plots.plot_brier_by_confidence(df.iloc[:0])


def test_figure_to_svg_is_inline_text_and_reproducible():
    def build():
        df = pd.DataFrame({"label": ["<b>run</b>:mean & co"], "cost_usd": [1.0], "brier": [0.2]})
        return plot_cost_vs_brier(df, label_col="label")

    a, b = plots.figure_to_svg(build(), salt="x"), plots.figure_to_svg(build(), salt="x")
    assert a == b and a.startswith("<svg") and "<?xml" not in a
    assert "&lt;b&gt;run&lt;/b&gt;:mean &amp; co" in a and "<b>" not in a
    assert "<text" in a  # text stays text
    assert plots.figure_to_svg(build(), salt="y") != a  # ids follow the salt: two figures of a page never collide


def test_new_figures_render_labels_with_dollar_signs_literally():
    label = "run$1$:a$\\foo$"
    df = pd.DataFrame({"label": [label, "mean"], "tokens_per_question": [10.0, 20.0], "brier": [0.2, 0.1],
                       "delta_brier_vs_baseline": [0.01, float("nan")], "delta_brier_ci_low": [0.0, float("nan")],
                       "delta_brier_ci_high": [0.02, float("nan")]})
    figures = [
        plot_cost_vs_brier(df, cost_col="tokens_per_question", label_col="label", references={label: 0.25}),
        plots.plot_reliability_small_multiples({label: reliability_diagram([0.2, 0.8], [0, 1])}),
        plots.plot_paired_differences(df, baseline=label),
    ]
    for fig in figures:
        assert label in plots.figure_to_svg(fig)  # drawn as written, not parsed as mathtext
