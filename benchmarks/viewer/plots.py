"""Figures for the benchmark report: reliability diagrams, cost versus Brier score, member spread and paired
differences.

Figures are built on :class:`matplotlib.figure.Figure` directly, never through ``pyplot``'s global state,
so they work under any backend (including Agg on a headless machine), in threads and in notebooks, and
are freed when no longer referenced. :func:`figure_to_svg` turns one into inline SVG for the run viewer
(text stays text: small, sharp at any zoom, searchable); :func:`figure_to_base64_png` into a PNG.
"""

from __future__ import annotations

import base64
import io
from typing import Mapping, Sequence

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from agent_schemas.errors import DataValidationError
from benchmarks.scoring.diversity import MIN_OVERLAP

__all__ = ["figure_to_base64_png", "figure_to_svg", "plot_cost_vs_brier", "plot_diversity", "plot_member_spread", "plot_paired_differences",
           "plot_reliability_diagram", "plot_reliability_small_multiples", "spread_labels"]

_RELIABILITY_COLUMNS = ("mean_p_yes", "observed_frequency", "count")


def _literal(text: object) -> str:
    """``text`` as matplotlib should show it, literally: ``$`` escaped (a run id or method name such as
    ``a$\\foo$`` would otherwise be parsed as mathtext and fail to render), and a leading ``_`` kept
    visible (legend entries whose label starts with ``_`` are hidden)."""
    s = str(text).replace("$", r"\$")
    return " " + s if s.startswith("_") else s


def _axes(ax: Axes | None, figsize: tuple[float, float]) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def plot_reliability_diagram(tables: Mapping[str, pd.DataFrame], ax: Axes | None = None) -> Figure:
    """Reliability diagram: observed frequency of Yes against mean p_yes per bin, one line per method.

    Empty bins (count 0) are not drawn; the diagonal marks perfect calibration.

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        Method name to its :func:`benchmarks.scoring.reliability_diagram` table (columns ``mean_p_yes``,
        ``observed_frequency``, ``count``).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is created if None.

    Returns
    -------
    matplotlib.figure.Figure
        The figure holding the axes. The line of each method carries the method name as its label.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) if ``tables`` is empty or a table lacks a required column.

    Examples
    --------
    >>> from benchmarks.scoring import reliability_diagram
    >>> fig = plot_reliability_diagram({"mean": reliability_diagram([0.1, 0.8, 0.9], [0, 1, 1])})
    >>> fig.axes[0].get_xlabel()
    'mean p_yes in bin'
    """
    if not tables:
        raise DataValidationError("tables is empty: nothing to plot", field="tables")
    fig, ax = _axes(ax, (5.0, 5.0))
    ax.plot([0, 1], [0, 1], linestyle="--", color="0.6", linewidth=1, label="_perfect calibration")
    for name, table in tables.items():
        missing = [c for c in _RELIABILITY_COLUMNS if c not in table.columns]
        if missing:
            raise DataValidationError(f"reliability table for {name!r} lacks columns {missing}", field=str(name), value=missing)
        shown = table[table["count"] > 0]
        ax.plot(shown["mean_p_yes"].to_numpy(float), shown["observed_frequency"].to_numpy(float), marker="o", label=_literal(name))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("mean p_yes in bin")
    ax.set_ylabel("observed frequency of Yes")
    ax.set_title("Reliability diagram")
    ax.legend(loc="upper left", fontsize="small")
    return fig


def spread_labels(targets: Sequence[float], gap: float, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """Positions for labels along one axis: as close to ``targets`` as a greedy pass allows, ``gap`` apart.

    Labels keep the order of their targets. A forward pass pushes each label at least ``gap`` above the one
    below it; if the top label then passes ``high``, a backward pass pushes labels down from ``high``. When
    ``n`` labels need more than ``high - low`` (``(n - 1) * gap > high - low``) they are spread evenly over
    ``[low, high]`` and the caller must make room (a taller figure, a smaller font).

    Parameters
    ----------
    targets : sequence of float, length n
        Wanted positions (any unit, e.g. axes fraction).
    gap : float
        Smallest distance between two labels, in the same unit (> 0).
    low, high : float
        Bounds of the positions.

    Returns
    -------
    numpy.ndarray of shape (n,)
        The positions, in the order of ``targets``.

    Examples
    --------
    >>> spread_labels([0.5, 0.5, 0.51], gap=0.1).round(2).tolist()
    [0.5, 0.6, 0.7]
    >>> spread_labels([0.95, 0.96], gap=0.1).round(2).tolist()
    [0.9, 1.0]
    """
    t = np.asarray(targets, dtype=float)
    if gap <= 0:
        raise ValueError(f"gap must be > 0, got {gap}")
    n = t.size
    if n == 0:
        return t
    order = np.argsort(t, kind="mergesort")
    y = np.clip(t[order], low, high)
    if (n - 1) * gap > high - low:
        y = np.linspace(low, high, n) if n > 1 else np.array([(low + high) / 2])
    else:
        for i in range(1, n):
            y[i] = max(y[i], y[i - 1] + gap)
        if y[-1] > high:
            y[-1] = high
            for i in range(n - 2, -1, -1):
                y[i] = min(y[i], y[i + 1] - gap)
    out = np.empty(n)
    out[order] = y
    return out


def _label_column(ax: Axes, points: list[tuple[float, float, str]], *, fontsize: float = 8.0) -> None:
    """Label ``(x, y, text)`` points in a column right of the axes, without overlaps, each joined to its
    point by a thin leader line. Call after the axes limits are final."""
    fig = ax.figure
    fig.draw_without_rendering()  # lays out the figure so the axes height is known
    height_pt = ax.get_window_extent().height * 72.0 / fig.dpi
    gap = 1.35 * fontsize / max(height_pt, 1.0)
    y0, y1 = ax.get_ylim()
    targets = [(y - y0) / (y1 - y0) for _, y, _ in points]
    for (x, y, text), ty in zip(points, spread_labels(targets, gap, 0.0, 1.0)):
        ax.annotate(_literal(text), xy=(x, y), xycoords="data", xytext=(1.03, ty), textcoords="axes fraction",
                    va="center", ha="left", fontsize=fontsize, annotation_clip=False,
                    arrowprops={"arrowstyle": "-", "color": "0.65", "linewidth": 0.6, "shrinkA": 1, "shrinkB": 3})


def plot_cost_vs_brier(
    summary_df: pd.DataFrame,
    ax: Axes | None = None,
    *,
    cost_col: str = "cost_usd",
    brier_col: str = "brier",
    label_col: str | None = None,
    ci_cols: tuple[str, str] = ("brier_ci_low", "brier_ci_high"),
    x_label: str | None = None,
    references: Mapping[str, float] | None = None,
) -> Figure:
    """Scatter of cost (x) against mean Brier score (y) per method, with bootstrap intervals if present.

    Lower-left is better (cheap and accurate). Labels stand in a column right of the axes, in the order
    of their Brier scores, each joined to its point by a leader line, so they never overlap, even when
    several methods share one cost (every aggregation method costs exactly the ensemble).

    Parameters
    ----------
    summary_df : pandas.DataFrame
        One row per method. Needs ``cost_col`` (USD, tokens, or any cost unit) and ``brier_col``; uses
        ``ci_cols`` for vertical error bars when both are present (NaN bounds draw no bar).
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is created if None.
    cost_col, brier_col : str
        Column names of the x and y values.
    label_col : str or None, default=None
        Column naming each point. None picks ``method`` or else ``label`` if present, else the index.
    ci_cols : (str, str), default=("brier_ci_low", "brier_ci_high")
        Columns with the interval bounds of the Brier score.
    x_label : str, optional
        Axis label of x (default: ``cost_col``).
    references : mapping of str to float, optional
        Brier scores of references that cost nothing (baselines such as the crowd), drawn as labelled
        horizontal dotted lines.

    Returns
    -------
    matplotlib.figure.Figure
        The figure; the points are the first collection of the axes (``ax.collections[0]``); the labels
        are the axes' texts (``ax.texts``), points first, then references.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) if a needed column is missing or the frame is empty.

    Examples
    --------
    >>> df = pd.DataFrame({"method": ["mean", "debate"], "cost_usd": [0.5, 2.0], "brier": [0.2, 0.18]})
    >>> fig = plot_cost_vs_brier(df)
    >>> fig.axes[0].collections[0].get_offsets().tolist()
    [[0.5, 0.2], [2.0, 0.18]]
    """
    for col in (cost_col, brier_col):
        if col not in summary_df.columns:
            raise DataValidationError(f"summary_df lacks column {col!r}; columns are {list(summary_df.columns)}", field=col)
    if summary_df.empty:
        raise DataValidationError("summary_df is empty: nothing to plot", field="summary_df")
    references = dict(references or {})
    n_labels = len(summary_df) + len(references)
    fig, ax = _axes(ax, (7.5, max(4.0, 0.19 * n_labels + 1.6)))
    x = summary_df[cost_col].to_numpy(float)
    y = summary_df[brier_col].to_numpy(float)
    if label_col is None:
        label_col = next((c for c in ("method", "label") if c in summary_df.columns), None)
    elif label_col not in summary_df.columns:
        raise DataValidationError(f"summary_df lacks column {label_col!r}; columns are {list(summary_df.columns)}", field=label_col)
    labels = summary_df[label_col] if label_col is not None else summary_df.index
    ax.scatter(x, y, zorder=3)
    lo_col, hi_col = ci_cols
    if lo_col in summary_df.columns and hi_col in summary_df.columns:
        lo = summary_df[lo_col].to_numpy(float)
        hi = summary_df[hi_col].to_numpy(float)
        yerr = np.vstack([np.clip(y - lo, 0, None), np.clip(hi - y, 0, None)])
        ax.errorbar(x, y, yerr=yerr, fmt="none", ecolor="0.5", capsize=3, zorder=2)
    for value in references.values():
        ax.axhline(value, color="0.55", linestyle=":", linewidth=1, zorder=1)
    ax.margins(x=0.08, y=0.12)
    ax.set_xlabel(x_label or cost_col)
    ax.set_ylabel("mean Brier score (lower is better)")
    ax.set_title("Cost vs Brier score (lower left is better)")
    ax.grid(True, alpha=0.3)
    x_right = ax.get_xlim()[1]
    points = [(float(xi), float(yi), str(label)) for xi, yi, label in zip(x, y, labels)]
    points += [(x_right, float(v), f"{name} (no tokens)") for name, v in references.items()]
    _label_column(ax, points)
    return fig


def plot_reliability_small_multiples(tables: Mapping[str, pd.DataFrame], *, ncols: int = 4,
                                     panel_size: float = 2.3) -> Figure:
    """Reliability diagrams as small multiples: one panel per method, same axes, read at a glance.

    Each panel draws, for the non-empty bins, the observed frequency of Yes against the mean p_yes, with
    marker area proportional to the bin's count and the count written beside the point; the diagonal
    (perfect calibration); the base rate of the panel's questions (horizontal dotted line); and the
    no-skill line halfway between the two: a bin on the shaded side of it adds more resolution than it
    costs in reliability to the Brier score (the attributes diagram of Hsu & Murphy 1986).

    Parameters
    ----------
    tables : mapping of str to pandas.DataFrame
        Method name to its :func:`benchmarks.scoring.reliability_diagram` table (columns ``mean_p_yes``,
        ``observed_frequency``, ``count``); panels follow the mapping's order.
    ncols : int, default=4
        Panels per row.
    panel_size : float, default=2.3
        Panel width and height in inches.

    Returns
    -------
    matplotlib.figure.Figure
        One axes per method (``fig.axes[i]`` for the i-th table; its title starts with the method name);
        the points of a panel are its first collection.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) if ``tables`` is empty or a table lacks a required column.

    References
    ----------
    Hsu, W. & Murphy, A. H. (1986). The attributes diagram: a geometrical framework for assessing the
    quality of probability forecasts. *International Journal of Forecasting*, 2(3), 285-293.
    """
    if not tables:
        raise DataValidationError("tables is empty: nothing to plot", field="tables")
    for name, table in tables.items():
        missing = [c for c in _RELIABILITY_COLUMNS if c not in table.columns]
        if missing:
            raise DataValidationError(f"reliability table for {name!r} lacks columns {missing}", field=str(name), value=missing)
    n = len(tables)
    ncols = max(1, min(ncols, n))
    nrows = -(-n // ncols)
    fig = Figure(figsize=(panel_size * ncols, panel_size * nrows + 0.5), layout="constrained")
    axes = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False).ravel()
    for ax, (name, table) in zip(axes, tables.items()):
        shown = table[table["count"] > 0]
        counts = shown["count"].to_numpy(float)
        px, py = shown["mean_p_yes"].to_numpy(float), shown["observed_frequency"].to_numpy(float)
        total = counts.sum()
        rate = float((counts * py).sum() / total) if total else np.nan
        sizes = 12 + 140 * counts / max(counts.max(), 1) if len(counts) else []
        ax.scatter(px, py, s=sizes, color="tab:blue", alpha=0.85, zorder=3)
        ax.plot([0, 1], [0, 1], linestyle="--", color="0.6", linewidth=0.8)
        if rate == rate:  # skill region: below the no-skill line left of the base rate, above it right of it
            ax.axhline(rate, color="0.6", linestyle=":", linewidth=0.8)
            ax.plot([0, 1], [rate / 2, (1 + rate) / 2], color="tab:green", linewidth=0.8, alpha=0.8)
            ax.fill_between([0, rate], [0, 0], [rate / 2, rate], color="tab:green", alpha=0.08, linewidth=0)
            ax.fill_between([rate, 1], [rate, (1 + rate) / 2], [1, 1], color="tab:green", alpha=0.08, linewidth=0)
        ax.plot(px, py, color="tab:blue", linewidth=0.8, alpha=0.6)
        for xi, yi, c in zip(px, py, counts):
            ax.annotate(f"{int(c)}", (xi, yi), textcoords="offset points", xytext=(4, 4), fontsize=6.5, color="0.25")
        title = str(name) if len(str(name)) <= 22 else str(name)[:21] + "…"
        ax.set_title(_literal(f"{title}  (n={int(total)})"), fontsize=8.5, loc="left")
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.08)
        ax.set_aspect("equal")
        ax.tick_params(labelsize=7)
        ax.set_xticks([0, 0.5, 1])
        ax.set_yticks([0, 0.5, 1])
    for ax in axes[n:]:
        ax.set_visible(False)
    fig.supxlabel("mean p_yes in bin", fontsize=8.5)
    fig.supylabel("observed frequency of Yes", fontsize=8.5)
    fig.suptitle("Reliability: dashed = perfect calibration, dotted = base rate, green = no skill; "
                 "numbers = questions in the bin", fontsize=8.5)
    return fig


def plot_member_spread(spreads: Sequence[float], *, threshold: float | None = None, n_bins: int = 20,
                       ax: Axes | None = None) -> Figure:
    """Histogram of the member spread per question (max - min of the successful members' p_yes).

    Parameters
    ----------
    spreads : sequence of float in [0, 1], length n_questions
        One spread per question; NaN (fewer than two successful members) is left out and counted in the
        title.
    threshold : float, optional
        The run's ``reconcile_min_spread`` (debate and supervisor run only at or above it); drawn as a
        vertical line when > 0.
    n_bins : int, default=20
        Equal-width bins on [0, 1].
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is created if None.

    Returns
    -------
    matplotlib.figure.Figure
        The bars are the axes' patches; their heights sum to the number of finite spreads.
    """
    s = np.asarray(spreads, dtype=float)
    finite = s[np.isfinite(s)]
    fig, ax = _axes(ax, (5.0, 3.2))
    ax.hist(finite, bins=np.linspace(0, 1, n_bins + 1), color="tab:purple", alpha=0.75, edgecolor="white")
    if finite.size:
        med = float(np.median(finite))
        ax.axvline(med, color="0.3", linestyle="--", linewidth=1)
        ax.annotate(f"median {med:.2f}", (med, 1), xycoords=("data", "axes fraction"), xytext=(4, -12),
                    textcoords="offset points", fontsize=8)
    if threshold:
        ax.axvline(threshold, color="tab:red", linewidth=1)
        ax.annotate(f"reconcile at ≥ {threshold:.2f}", (threshold, 0.5), xycoords=("data", "axes fraction"),
                    xytext=(4, 0), textcoords="offset points", fontsize=8, color="tab:red")
    ax.set_xlim(0, 1)
    ax.set_xlabel("member spread: max − min of the members' p_yes")
    ax.set_ylabel("questions")
    dropped = int(s.size - finite.size)
    ax.set_title("How much the members disagree" + (f" ({dropped} with < 2 members left out)" if dropped else ""),
                 fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def plot_paired_differences(df: pd.DataFrame, *, baseline: str, label_col: str = "label",
                            delta_col: str = "delta_brier_vs_baseline",
                            ci_cols: tuple[str, str] = ("delta_brier_ci_low", "delta_brier_ci_high"),
                            ax: Axes | None = None) -> Figure:
    """Paired Brier differences to the baseline with their intervals (a forest plot), one row per method.

    Rows keep the frame's order (top to bottom); rows without a difference (the baseline itself) are
    left out. A row whose interval is not available (too few clusters) is drawn as a hollow point marked
    "interval not available". Left of zero is better than the baseline.

    Parameters
    ----------
    df : pandas.DataFrame
        Needs ``label_col``, ``delta_col`` and ``ci_cols`` (the leaderboard's columns).
    baseline : str
        Name of the baseline, for the axis label.
    label_col, delta_col : str
        Column names.
    ci_cols : (str, str)
        Interval bounds of the difference.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is created if None.

    Returns
    -------
    matplotlib.figure.Figure
        The points are the first collection of the axes, in the frame's order (top row first).

    Raises
    ------
    DataValidationError
        (a ``ValueError``) if a column is missing or no row has a difference.
    """
    _require_columns(df, (label_col, delta_col, *ci_cols), "df")
    rows = df[df[delta_col].notna()]
    if rows.empty:
        raise DataValidationError(f"no row has a {delta_col}: nothing to plot", field=delta_col)
    fig, ax = _axes(ax, (7.0, 0.32 * len(rows) + 1.4))
    d = rows[delta_col].to_numpy(float)
    ypos, has_ci = _forest(ax, d, rows[ci_cols[0]].to_numpy(float), rows[ci_cols[1]].to_numpy(float),
                           [_literal(v) for v in rows[label_col]], fontsize=8)
    ax.axvline(0, color="0.4", linewidth=0.8)
    for yi, di, ok in zip(ypos, d, has_ci):
        if not ok:
            ax.annotate("interval not available", (di, yi), textcoords="offset points", xytext=(7, -3), fontsize=7, color="0.4")
    ax.set_xlabel(_literal(f"Δ Brier vs {baseline} (paired, 95% interval; left of 0 is better)"))
    ax.set_title(_literal(f"Paired differences to {baseline}"), fontsize=10)
    return fig


#: Most members whose error-correlation matrix is drawn cell by cell; above it, the pairs' histogram.
MAX_HEATMAP_MEMBERS = 20
_DIVERSITY_TERMS = (("mean_member_brier", "mean member Brier", "tab:gray"), ("pool_brier", "Brier of the members' mean", "tab:blue"),
                    ("diversity", "diversity (members' spread)", "tab:green"))


def plot_diversity(decomposition: pd.DataFrame, correlations: Mapping[str, pd.DataFrame] | None = None) -> Figure:
    """The ambiguity decomposition of each run, and the correlation of one run's members' errors.

    Left: per run, the mean member Brier, the Brier of the members' mean and the diversity (the first is the sum
    of the other two) as bars with their 95% intervals. Right, when ``correlations`` holds a matrix with two
    members or more: the first run's error-correlation matrix as a heatmap (at most :data:`MAX_HEATMAP_MEMBERS`
    members, labelled; for more, the histogram of the estimated pairs' correlations), titled with its mean pairwise
    correlation and effective number of members.

    Parameters
    ----------
    decomposition : pandas.DataFrame
        :attr:`benchmarks.report.diversity.DiversityReport.decomposition` (``run_id``, the three terms with
        ``*_ci_low`` / ``*_ci_high``, ``mean_error_correlation``, ``n_effective``, ``members_per_question``).
    correlations : mapping of str to pandas.DataFrame, optional
        Each run's error-correlation matrix (members x members, values in [-1, 1], NaN where not estimated).

    Returns
    -------
    matplotlib.figure.Figure
        The bars are the first axes' patches, run by run in the order of the terms above.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) if a column is missing or the frame is empty.
    """
    cols = [c for name, _, _ in _DIVERSITY_TERMS for c in (name, f"{name}_ci_low", f"{name}_ci_high")]
    _require_columns(decomposition, ("run_id", *cols), "decomposition")
    if decomposition.empty:
        raise DataValidationError("no run has members: no decomposition to plot", field="decomposition")
    first = decomposition.iloc[0]
    matrix = (correlations or {}).get(first["run_id"])
    heat = matrix is not None and len(matrix) > 1
    fig = Figure(figsize=(10.0 if heat else 6.0, 3.6), layout="constrained")
    ax = fig.add_subplot(1, 2 if heat else 1, 1)
    n_runs, width = len(decomposition), 0.8 / len(_DIVERSITY_TERMS)
    x = np.arange(n_runs, dtype=float)
    for k, (name, label, color) in enumerate(_DIVERSITY_TERMS):
        v = decomposition[name].to_numpy(float)
        lo, hi = decomposition[f"{name}_ci_low"].to_numpy(float), decomposition[f"{name}_ci_high"].to_numpy(float)
        err = np.vstack([np.where(np.isfinite(lo), v - lo, 0.0), np.where(np.isfinite(hi), hi - v, 0.0)])
        ax.bar(x + (k - 1) * width, v, width, yerr=err, capsize=3, color=color, label=label)
    ax.set_xticks(x)
    ax.set_xticklabels([_literal(r) for r in decomposition["run_id"]], fontsize=8, rotation=20 if n_runs > 1 else 0)
    ax.set_ylabel("Brier score (lower is better)")
    ax.set_title("mean member = members' mean + diversity", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    if heat:
        hx = fig.add_subplot(1, 2, 2)
        values = matrix.to_numpy(float)
        if len(matrix) <= MAX_HEATMAP_MEMBERS:
            # a mesh, not an image: the page's figures stay vector (an image would be an embedded PNG)
            image = hx.pcolormesh(np.ma.masked_invalid(values), vmin=-1, vmax=1, cmap="RdBu_r")
            hx.set_aspect("equal")
            hx.invert_yaxis()
            bar = fig.colorbar(image, ax=hx, shrink=0.8, label="correlation of errors")
            bar.solids.set_rasterized(False)  # matplotlib rasterizes a long colour bar: keep it vector, no PNG in the page
            names = [_literal(m) for m in matrix.columns]
            hx.set_xticks(np.arange(len(names)) + 0.5)
            hx.set_xticklabels(names, fontsize=7, rotation=90)
            hx.set_yticks(np.arange(len(names)) + 0.5)
            hx.set_yticklabels(names, fontsize=7)
        else:  # a panel of 40: 1,600 cells would weigh 400 kB of SVG; the pairs' distribution says the same
            pairs = values[np.triu_indices(len(matrix), 1)]
            pairs = pairs[np.isfinite(pairs)]
            hx.hist(pairs, bins=np.linspace(-1, 1, 41), color="tab:purple", alpha=0.75, edgecolor="white")
            hx.set_xlim(-1, 1)
            hx.set_xlabel(f"correlation of errors, {pairs.size} pairs of {len(matrix)} members "
                          f"(with {MIN_OVERLAP}+ common questions)")
            hx.set_ylabel("pairs")
            hx.grid(True, axis="y", alpha=0.3)
        rho, n_eff = float(first.get("mean_error_correlation", np.nan)), float(first.get("n_effective", np.nan))
        hx.set_title(_literal(f"{first['run_id']}: mean corr {rho:.2f}, n_eff {n_eff:.1f} of "
                              f"{float(first.get('members_per_question', np.nan)):.1f}"), fontsize=10)
    return fig


def _require_columns(df: pd.DataFrame, cols: Sequence[str], name: str) -> None:
    for col in cols:
        if col not in df.columns:
            raise DataValidationError(f"{name} lacks column {col!r}; columns are {list(df.columns)}", field=col)


def _forest(ax: Axes, x: np.ndarray, lo: np.ndarray, hi: np.ndarray, labels: list[str], *,
            fontsize: float) -> tuple[np.ndarray, np.ndarray]:
    """Points ``x`` with their intervals ``[lo, hi]``, one labelled row each, top row first; a row without an
    interval (NaN bounds) is drawn hollow. The points are the axes' first collection. Returns the rows'
    y positions and which rows have an interval."""
    n = len(x)
    ypos = np.arange(n)[::-1].astype(float)
    has_ci = np.isfinite(lo) & np.isfinite(hi)
    ax.scatter(x, ypos, facecolors=np.where(has_ci, "tab:blue", "none").tolist(), edgecolors="tab:blue", zorder=3)
    if has_ci.any():
        ax.hlines(ypos[has_ci], lo[has_ci], hi[has_ci], color="tab:blue", linewidth=1.5)
    ax.set_yticks(ypos)
    ax.set_yticklabels(labels, fontsize=fontsize)
    ax.set_ylim(-0.7, n - 0.3)
    ax.grid(True, axis="x", alpha=0.3)
    return ypos, has_ci


def plot_brier_by_confidence(bands: pd.DataFrame, ax: Axes | None = None) -> Figure:
    """Brier score with its interval per confidence band (:func:`benchmarks.report.confidence_bands.confidence_band_table`),
    one row per (confidence, method, band), grouped as the table is. If the confidence means something, the
    points move left (lower Brier) from "low" to "high" within each group.

    Parameters
    ----------
    bands : pandas.DataFrame
        Needs ``confidence``, ``label``, ``band``, ``n``, ``brier``, ``brier_ci_low`` and ``brier_ci_high``.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is created if None.

    Returns
    -------
    matplotlib.figure.Figure
        The points are the first collection of the axes, in the frame's order (top row first).

    Raises
    ------
    DataValidationError
        (a ``ValueError``) if a column is missing or the frame is empty.
    """
    _require_columns(bands, ("confidence", "label", "band", "n", "brier", "brier_ci_low", "brier_ci_high"), "bands")
    if bands.empty:
        raise DataValidationError("no confidence band to plot", field="bands")
    fig, ax = _axes(ax, (7.0, 0.26 * len(bands) + 1.4))
    group = (bands["confidence"] + " / " + bands["label"]).to_numpy()
    ypos, _ = _forest(ax, bands["brier"].to_numpy(float), bands["brier_ci_low"].to_numpy(float),
                      bands["brier_ci_high"].to_numpy(float),
                      [_literal(f"{g}: {band} (n={int(k)})") for g, band, k in zip(group, bands["band"], bands["n"])], fontsize=7)
    for i in range(1, len(bands)):
        if group[i] != group[i - 1]:
            ax.axhline(ypos[i] + 0.5, color="0.8", linewidth=0.8)
    ax.set_xlabel("Brier score (95% interval; hollow: interval not available)")
    ax.set_title("Brier by confidence band", fontsize=10)
    return fig


def figure_to_svg(fig: Figure, *, salt: str = "fr", rc: Mapping[str, object] | None = None) -> str:
    """Render a figure as an inline ``<svg>`` element (no XML prolog) for an HTML page.

    Text stays text (``svg.fonttype: none``), element ids derive from ``salt`` (give each figure of a
    page its own so ids do not collide) and no creation date is written, so equal figures give equal
    bytes. Text in the figure (method names, run ids) is XML-escaped by matplotlib's SVG writer. ``rc``: further
    matplotlib settings while the figure is drawn (e.g. a shorter font list).

    Examples
    --------
    >>> fig = Figure(); _ = fig.add_subplot().set_title("a < b & c")
    >>> svg = figure_to_svg(fig)
    >>> svg.startswith("<svg") and "a &lt; b &amp; c" in svg
    True
    """
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt, **(rc or {})}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg"):].strip()


def figure_to_base64_png(fig: Figure, dpi: int = 100) -> str:
    """Render a figure as a base64-encoded PNG for embedding in HTML.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure to render (with the Agg renderer, whatever the active backend).
    dpi : int, default=100
        Resolution in dots per inch.

    Returns
    -------
    str
        ASCII base64 of the PNG bytes; embed as ``<img src="data:image/png;base64,{...}">``.

    Examples
    --------
    >>> fig = Figure(); _ = fig.add_subplot().plot([0, 1], [0, 1])
    >>> base64.b64decode(figure_to_base64_png(fig))[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
    True
    """
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return base64.b64encode(buf.getvalue()).decode("ascii")

