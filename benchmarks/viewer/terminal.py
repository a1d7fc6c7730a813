"""The leaderboard in a terminal: a compact :mod:`rich` table that fits 100 columns.

Columns: rank, label, n, Brier with its 95% interval, Δ against the baseline with its interval, tokens
per question and cost. Everything else stays in ``leaderboard.csv`` / ``.md`` and ``report.html``.

``n`` of a compared method that gave no probability for some questions reads ``answered+imputed``
(``57+3``), and the caption says how an imputed question is scored and where each method with imputed
questions would stand (:func:`benchmarks.scoring.ranking.sensitivity_lines`); a method listed apart reads
``answered/questions`` (``51/60``). A rank shared by tied methods reads ``2=``. When the question set has too few clusters to
rank (:data:`benchmarks.scoring.ranking.MIN_CLUSTERS_TO_RANK`), the rows keep their order by Brier, the rank
column reads ``-`` and the caption says "too few clusters to rank". Intervals are shown with as many
decimals as they need to read as what they are (:func:`benchmarks.viewer.formatting.readable_digits`).
"""

from __future__ import annotations

import io
import sys

import pandas as pd
from typing import Any, TextIO

from rich import box
from rich.console import Console
from rich.text import Text
from rich.table import Table

from benchmarks.protocol.baselines import crowd_timing_note
from benchmarks.scoring.ranking import IMPUTATION_RULE, MIN_CLUSTERS_TO_RANK, rank_labels, sensitivity_lines
from benchmarks.viewer import formatting as fmt

__all__ = ["MAX_WIDTH", "compact_leaderboard", "print_compact_leaderboard", "short_label"]

#: Widest line the table prints (terminal columns).
MAX_WIDTH = 100
_LABEL_WIDTH = 28  # keeps the longest method name (fitted_member_weights, 21) whole after a shortened run id


def short_label(label: str, width: int = _LABEL_WIDTH) -> str:
    """``label`` in at most ``width`` characters, keeping the method of a ``<run id>:<method>`` label whole.

    >>> short_label("20261201-014230-ab12:geomean_odds")
    '20261201-01423…:geomean_odds'
    >>> short_label("a_very_long_method_name_indeed", 12)
    'a_very_long…'
    """
    if len(label) <= width:
        return label
    run, sep, method = label.rpartition(":")
    if sep and len(method) <= width - 3:
        return run[: width - len(method) - 2] + "…:" + method
    return label[: width - 1] + "…"


def _equals(row: dict) -> str:
    """The row's ``equals`` text ('' when absent, empty or NaN, as a CSV read back gives it)."""
    value = row.get("equals")
    return value if isinstance(value, str) else ""


def _ci(low, high, signed: bool = False) -> str:
    """An interval at a fixed 2 decimals, so the columns keep their width whatever the interval's method; more
    (:func:`benchmarks.viewer.formatting.fmt_interval`) only when two different bounds would read alike or both
    as zero ([0.00, 0.00], [−0.00, +0.00]). The page and leaderboard.md give every bound the digits it needs."""
    if fmt.is_missing(low) or fmt.is_missing(high):
        return "[n/a]"
    def f(x: Any) -> str:  # a signed bound keeps its sign when it rounds to zero: +0.00 is above zero
        return (f"{float(x):+.2f}".replace("-", fmt.MINUS) if float(x) else fmt.fmt_delta(0.0, 2)) if signed else fmt.fmt_prob(x, 2)

    both_zero = all(f(x).lstrip("+" + fmt.MINUS) == "0.00" for x in (low, high))
    if float(low) != float(high) and (f(low) == f(high) or both_zero):
        return fmt.fmt_interval(low, high, 2, signed=signed)
    return f"[{f(low)}, {f(high)}]"


def compact_leaderboard(board: pd.DataFrame, *, baseline: str, files: str = "") -> Table:
    """The compact leaderboard of :func:`benchmarks.report.write_report`'s table.

    Parameters
    ----------
    board : pandas.DataFrame
        The report's leaderboard (:func:`benchmarks.scoring.ranking.rank_methods` columns plus
        ``tokens_per_question`` and ``cost_usd`` when known). Ranked rows come first; not-ranked rows
        follow in their own section, with rank ``-`` and their own n. A row with ``equals`` (a fitted
        method that fell back everywhere, e.g. ``"mean (not fitted: n < 30)"``) has rank ``=``, ``= mean``
        in place of its Brier score (the rule's) and ``not fitted: n < 30`` in place of its Δ.
    baseline : str
        Label the deltas refer to (its own Δ cell reads ``baseline``).
    files : str
        Where the full tables are, for the caption.

    Returns
    -------
    rich.table.Table
        Rendered at most :data:`MAX_WIDTH` columns wide, one line per method (long labels shortened by
        :func:`short_label`).
        An interval that is not available (too few clusters) reads ``[n/a]``.
    """
    ranked = board[board["ranked"]] if "ranked" in board.columns else board
    unranked = board[~board["ranked"]] if "ranked" in board.columns else board.iloc[0:0]
    caption = []
    if len(ranked) and bool(ranked.get("too_small_to_rank", pd.Series([False])).iloc[0]):
        caption.append(f"Too few clusters to rank: {int(ranked['n_clusters'].max())} < {MIN_CLUSTERS_TO_RANK}; listed by "
                       "Brier without ranks (the order is not evidence).")
    if "n_imputed" in ranked.columns and (ranked["n_imputed"] > 0).any():
        caption.append(f"n = answered+imputed: {IMPUTATION_RULE}.")
    if "n_imputed" in board.columns:
        caption += sensitivity_lines(board)
    if crowd_timing_note(board["label"]):
        caption.append(crowd_timing_note(board["label"]))
    if files:
        caption.append(f"Full tables: {files}")
    sections = []
    for rows in (ranked, unranked):
        lines = []
        for r, rank in zip(rows.to_dict("records"), rank_labels(rows) if "rank" in rows.columns else [""] * len(rows)):
            if r["label"] == baseline:
                delta = "baseline"
            elif _equals(r):  # a fitted method that fell back everywhere: no rank; "= mean", "not fitted: n < 30"
                delta = _equals(r).partition(" (")[2].rstrip(")")
            elif fmt.is_missing(r.get("delta_brier_vs_baseline")):
                delta = "—"
            else:
                delta = f"{fmt.fmt_delta(r['delta_brier_vs_baseline'])} {_ci(r['delta_brier_ci_low'], r['delta_brier_ci_high'], True)}"
            tokens = r.get("tokens_per_question")
            imputed = r.get("n_imputed") or 0
            if imputed and r.get("ranked", True):
                n = f"{fmt.fmt_count(r['n'] - imputed)}+{fmt.fmt_count(imputed)}"
            elif imputed:  # listed apart: scored on the questions it answered, of the set's
                n = f"{fmt.fmt_count(r['n_answered'])}/{fmt.fmt_count(r['n_answered'] + imputed)}"
            else:
                n = fmt.fmt_count(r.get("n"))
            brier = f"{fmt.fmt_prob(r.get('brier'))} {_ci(r.get('brier_ci_low'), r.get('brier_ci_high'))}"
            if _equals(r):  # its Brier is the rule's
                brier = "= " + _equals(r).partition(" (")[0]
            lines.append(("=" if _equals(r) else (rank or "-"), str(r["label"]), n,
                          brier, delta, fmt.fmt_count(tokens), "—" if fmt.is_missing(tokens) else fmt.fmt_usd(r.get("cost_usd"))))
        sections.append(lines)
    # the label gives way: the widest table of at most MAX_WIDTH columns, labels shortened by short_label
    for width in range(_LABEL_WIDTH, 7, -1):
        t = _table(sections, baseline, caption, width)
        if _width(t) <= MAX_WIDTH:
            break
    return t


def _table(sections: list[list[tuple[str, ...]]], baseline: str, caption: list[str], label_width: int) -> Table:
    t = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1), collapse_padding=True,
              caption=Text("\n".join(caption)) if caption else None, caption_justify="left")  # Text: no markup
    t.add_column("#", justify="right", no_wrap=True)
    t.add_column("method", no_wrap=True, overflow="ellipsis")
    t.add_column("n", justify="right", no_wrap=True)
    t.add_column("Brier [95%]", justify="right", no_wrap=True)
    t.add_column(f"Δ vs {short_label(baseline.rpartition(':')[2], 12)}", justify="right", no_wrap=True)
    t.add_column("tokens/q", justify="right", no_wrap=True)
    t.add_column("cost", justify="right", no_wrap=True)
    for section, lines in enumerate(sections):
        if section and lines:
            t.add_section()
            t.add_row("", "[dim]not ranked[/dim]", "", "", "", "", "")
        for cells in lines:
            rank, label, *rest = cells
            t.add_row(*map(Text, (rank, short_label(label, label_width), *rest)))  # Text: never read as rich markup
    return t


def _width(table: Table) -> int:
    """Columns the table's widest line takes (the caption wraps to the table, so it never decides)."""
    console = Console(file=io.StringIO(), width=10_000)
    return console.measure(table).maximum


def print_compact_leaderboard(board: pd.DataFrame, *, baseline: str, files: str = "", file: TextIO | None = None) -> None:
    """Print :func:`compact_leaderboard` to ``file`` (default stdout): at the terminal's width when it is
    narrower than :data:`MAX_WIDTH`, else at most :data:`MAX_WIDTH` columns (also when piped)."""
    out = file or sys.stdout
    width = Console(file=out).width if out.isatty() else MAX_WIDTH
    Console(file=out, width=min(width, MAX_WIDTH)).print(compact_leaderboard(board, baseline=baseline, files=files))
