"""Figures for the benchmark report: reliability diagrams and cost versus Brier score.

Figures are built on :class:`matplotlib.figure.Figure` directly, never through ``pyplot``'s global state,
so they work under any backend (including Agg on a headless machine), in threads and in notebooks, and
are freed when no longer referenced. :func:`figure_to_base64_png` turns one into text for the HTML report.
"""

from __future__ import annotations

import base64
import io
from typing import Mapping

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from agent_schemas.errors import DataValidationError

__all__ = ["figure_to_base64_png", "plot_cost_vs_brier", "plot_reliability_diagram"]

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


def plot_cost_vs_brier(
    summary_df: pd.DataFrame,
    ax: Axes | None = None,
    *,
    cost_col: str = "cost_usd",
    brier_col: str = "brier",
    label_col: str | None = None,
    ci_cols: tuple[str, str] = ("brier_ci_low", "brier_ci_high"),
) -> Figure:
    """Scatter of cost (x) against mean Brier score (y) per method, with bootstrap intervals if present.

    Lower-left is better (cheap and accurate).

    Parameters
    ----------
    summary_df : pandas.DataFrame
        One row per method. Needs ``cost_col`` (USD, or any cost unit; the axis label names the column)
        and ``brier_col``; uses ``ci_cols`` for vertical error bars when both are present.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is created if None.
    cost_col, brier_col : str
        Column names of the x and y values.
    label_col : str or None, default=None
        Column naming each point. None picks ``method`` or else ``label`` if present, else the index.
    ci_cols : (str, str), default=("brier_ci_low", "brier_ci_high")
        Columns with the interval bounds of the Brier score.

    Returns
    -------
    matplotlib.figure.Figure
        The figure; the points are the first collection of the axes (``ax.collections[0]``).

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
    fig, ax = _axes(ax, (6.0, 4.5))
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
    for xi, yi, label in zip(x, y, labels):
        ax.annotate(_literal(label), (xi, yi), textcoords="offset points", xytext=(5, 4), fontsize="small")
    ax.set_xlabel(f"{cost_col}")
    ax.set_ylabel("mean Brier score (lower is better)")
    ax.set_title("Cost vs Brier score")
    ax.grid(True, alpha=0.3)
    return fig


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

