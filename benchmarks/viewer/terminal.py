"""Tables in a terminal: one compact :mod:`rich` renderer, at most 100 columns, for every command.

:func:`compact_table` and :func:`print_table` are the one renderer: ``run``, ``aggregate``, ``leaderboard`` and
``score`` print the leaderboard with it (:func:`compact_leaderboard`, or :func:`compact_brier_index` when the runs
compared share no planned question), ``run --dry-run`` its estimate, ``questions`` and ``questions list`` the
bundled questions. A table is printed at most :data:`MAX_WIDTH` columns wide, narrower when the terminal (or
``COLUMNS``) is (:func:`terminal_width`); long text wraps within its column; the wide tables are in the written
files only. A missing value reads as a word or a dash, never ``nan`` or ``<NA>``.

The leaderboard's columns: rank, label, n, Brier with its 95% interval, Δ against the baseline with its interval, tokens
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
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import pandas as pd
from rich import box
from rich.console import Console
from rich.text import Text
from rich.table import Table

from benchmarks.protocol.baselines import crowd_timing_note
from benchmarks.scoring.ranking import IMPUTATION_RULE, MIN_CLUSTERS_TO_RANK, rank_labels, sensitivity_lines
from benchmarks.viewer import formatting as fmt

__all__ = ["MAX_WIDTH", "Column", "compact_brier_index", "compact_kind_leaderboard", "compact_leaderboard", "compact_table", "print_compact_leaderboard",
           "print_table", "short_label", "terminal_width"]

#: Widest line the table prints (terminal columns).
MAX_WIDTH = 100


@dataclass(frozen=True)
class Column:
    """A column of :func:`compact_table`."""

    header: str
    justify: str = "left"
    """``"left"`` or ``"right"`` (numbers)."""
    wrap: bool = False
    """Long text wraps within the column (it takes the room the others leave); else the cell is kept on one line."""


def compact_table(columns: Sequence[Column], rows: Sequence[Sequence[str]], *, caption: Sequence[str] = (),
                  sections: Sequence[Sequence[Sequence[str]]] = (), section_titles: Sequence[str] = ()) -> Table:
    """The one compact table of the command line: a header line, one line per row (more where text wraps), a caption.

    Parameters
    ----------
    columns : sequence of Column
    rows : sequence of sequences of str
        The cells, one per column, printed literally (never read as rich markup).
    caption : sequence of str
        Lines under the table; they wrap to its width.
    sections : sequence of row lists, optional
        Further groups of rows, each under a rule and its title from ``section_titles`` (dim; e.g. "not ranked").
    """
    t = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1), collapse_padding=True,
              caption=Text("\n".join(caption)) if caption else None, caption_justify="left")  # Text: no markup
    for c in columns:
        t.add_column(c.header, justify=c.justify, no_wrap=not c.wrap, overflow="fold" if c.wrap else "ellipsis")
    for row in rows:
        t.add_row(*map(Text, row))
    for i, lines in enumerate(sections):
        if not lines:
            continue
        t.add_section()
        title = section_titles[i] if i < len(section_titles) else ""
        if title:
            t.add_row("", Text(title, style="dim"), *[""] * (len(columns) - 2))
        for row in lines:
            t.add_row(*map(Text, row))
    return t


def terminal_width(file: TextIO | None = None) -> int:
    """Columns a table may take on ``file`` (default stdout): :data:`MAX_WIDTH`, or less when ``COLUMNS`` says so
    or the terminal is narrower."""
    out = file or sys.stdout
    width = MAX_WIDTH
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        width = min(width, int(columns))
    elif hasattr(out, "isatty") and out.isatty():
        width = min(width, Console(file=out).width)
    return max(width, 40)


def print_table(table: Table, file: TextIO | None = None) -> None:
    """Print ``table`` to ``file`` (default stdout) at most :func:`terminal_width` columns wide, its caption under it
    wrapped to that width (not to the table's, which may be narrow)."""
    out = file or sys.stdout
    console = Console(file=out, width=terminal_width(out), soft_wrap=False, highlight=False)
    caption, table.caption = table.caption, None
    try:
        console.print(table)
    finally:
        table.caption = caption
    if caption:
        console.print(caption if isinstance(caption, Text) else Text(str(caption)))


def text_lines(text: str, file: TextIO | None = None) -> str:
    """``text`` with each line wrapped at word boundaries to :func:`terminal_width` columns (a word longer than a
    line, such as a long path, is folded), continuation lines indented two spaces more than their line.

    >>> import os; os.environ["COLUMNS"] = "40"
    >>> print(text_lines("  - Background: one two three four five six seven eight"))
      - Background: one two three four five
        six seven eight
    >>> del os.environ["COLUMNS"]
    """
    import textwrap

    width = terminal_width(file)
    out = []
    for line in text.splitlines() or [""]:
        indent = line[: len(line) - len(line.lstrip())]
        out.extend(textwrap.wrap(line, width, initial_indent="", subsequent_indent=indent + "  ", break_on_hyphens=False,
                                 drop_whitespace=True) or [""])
    return "\n".join(out)
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


def compact_leaderboard(board: pd.DataFrame, *, baseline: str, files: str = "", label_col: str = "label",
                        crowd_note: str | None = None) -> Table:
    """The compact leaderboard of :func:`benchmarks.report.write_report`'s table.

    Parameters
    ----------
    board : pandas.DataFrame
        The report's leaderboard (:func:`benchmarks.scoring.ranking.rank_methods` columns plus
        ``tokens_per_question`` and ``cost_usd`` when known). Ranked rows come first; not-ranked rows
        follow in their own section, with rank ``-`` and their own n. A row with ``equals`` (a fitted
        method that fell back everywhere, e.g. ``"mean (not fitted: n < 30)"``) has rank ``=``, ``= mean``
        in place of its Brier score (the rule's) and ``not fitted: n < 30`` in place of its Δ. A row with
        ``no_tokens`` (a panel's method, ``human panel: no tokens``) reads ``none`` for its tokens and ``—`` for its
        cost, and the caption says why.
    baseline : str
        Label the deltas refer to (its own Δ cell reads ``baseline``).
    files : str
        Where the full tables are, for the caption.
    label_col : str
        The column naming the rows (``label``; ``method`` in ``score``'s table). Columns the board does not have
        (``tokens_per_question``, ``cost_usd`` for forecasts scored from a file) are not shown.
    crowd_note : str, optional
        What the crowd knew against the members (the report's ``crowd_note``, by the runs' evidence cutoffs);
        default :func:`benchmarks.protocol.baselines.crowd_timing_note` of the labels.

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
        caption += sensitivity_lines(board, method_col=label_col)
    crowd_note = crowd_timing_note(board[label_col]) if crowd_note is None else crowd_note
    if crowd_note:
        caption.append(crowd_note)
    reasons = sorted({x for x in board.get("no_tokens", pd.Series(dtype=object)) if isinstance(x, str) and x})
    if reasons:
        caption.append(f"tokens/q none: {'; '.join(reasons)} (the forecasts were given, no model was called).")
    if files:
        caption.append(f"Full tables: {files}")
    sections = []
    for rows in (ranked, unranked):
        lines = []
        for r, rank in zip(rows.to_dict("records"), rank_labels(rows) if "rank" in rows.columns else [""] * len(rows)):
            r["label"] = str(r[label_col])
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
            if isinstance(r.get("no_tokens"), str) and r["no_tokens"]:  # a panel's method (NaN: read back from a CSV): its forecasts were given, no model was called
                spent, cost = "none", "—"
            else:
                spent, cost = fmt.fmt_count(tokens), "—" if fmt.is_missing(tokens) else fmt.fmt_usd(r.get("cost_usd"))
            lines.append(("=" if _equals(r) else (rank or "-"), str(r["label"]), n, brier, delta, spent, cost))
        sections.append(lines)
    costs = "tokens_per_question" in board.columns or "cost_usd" in board.columns
    columns = [Column("#", "right"), Column("method"), Column("n", "right"), Column("Brier [95%]", "right"),
               Column(f"Δ vs {short_label(baseline.rpartition(':')[2], 12)}", "right"),
               *([Column("tokens/q", "right"), Column("cost", "right")] if costs else [])]
    keep = len(columns)
    # the label gives way: the widest table of at most MAX_WIDTH columns, labels shortened by short_label
    for width in range(_LABEL_WIDTH, 7, -1):
        ranked_rows, unranked_rows = ([(rank, short_label(label, width), *rest)[:keep] for rank, label, *rest in lines]
                                      for lines in sections)
        t = compact_table(columns, ranked_rows, caption=caption, sections=[unranked_rows], section_titles=["not ranked"])
        if _width(t) <= MAX_WIDTH:
            break
    return t


def compact_brier_index(board: pd.DataFrame, *, why: str, files: str = "", label_col: str = "label") -> Table:
    """The leaderboard of runs that share no planned question: every row by its Brier Index alone.

    Raw Brier scores of different questions say as much about the questions as about the forecasts, so the rows
    are ordered by ForecastBench's Brier Index (:mod:`benchmarks.report.difficulty`; percent, higher is better),
    ranks shared by equal indices (``2=``); a row without an index comes last, with ``-`` and the reason in its
    cell (e.g. more than 5% imputed).

    Parameters
    ----------
    board : pandas.DataFrame
        The report's leaderboard with ``brier_index`` and ``brier_index_note``
        (:func:`benchmarks.report.difficulty.brier_index_columns`), ``n`` (questions of the row's own set) and
        optionally ``tokens_per_question`` and ``cost_usd``.
    why : str
        One line saying why the table is by Brier Index (the first caption line).
    files : str
        Where the full tables are, for the caption.

    Returns
    -------
    rich.table.Table
        Columns ``#``, ``method``, ``n``, ``Brier Index``, ``tokens/q``, ``cost``; at most :data:`MAX_WIDTH` wide.
    """
    index = pd.to_numeric(board.get("brier_index", pd.Series(float("nan"), index=board.index)), errors="coerce")
    order = board.assign(_index=index.to_numpy()).sort_values("_index", ascending=False, na_position="last", kind="stable")
    shown = order["_index"].round(1)
    ranks = shown.rank(method="min", ascending=False)
    shared = shown.duplicated(keep=False) & shown.notna()
    rows = []
    for (_, r), rank, tie in zip(order.iterrows(), ranks, shared):
        if fmt.is_missing(r["_index"]):
            rows.append(("-", str(r[label_col]), fmt.fmt_count(r.get("n")), "no index"))
        else:
            rows.append((f"{int(rank)}{'=' if tie else ''}", str(r[label_col]), fmt.fmt_count(r.get("n")), f"{r['_index']:.1f}"))
    tokens = [(fmt.fmt_count(r.get("tokens_per_question")),
               "—" if fmt.is_missing(r.get("tokens_per_question")) else fmt.fmt_usd(r.get("cost_usd")))
              for _, r in order.iterrows()]
    costs = "tokens_per_question" in board.columns or "cost_usd" in board.columns
    caption = [why, "Brier Index: 100 (1 - sqrt(difficulty-adjusted Brier)), higher is better; n is each row's own questions."]
    if index.isna().any():
        caption.append("no index: why is in the brier_index_note column of leaderboard.csv (e.g. more than 5% imputed).")
    if files:
        caption.append(f"Full tables: {files}")
    columns = [Column("#", "right"), Column("method"), Column("n", "right"), Column("Brier Index", "right"),
               *([Column("tokens/q", "right"), Column("cost", "right")] if costs else [])]
    for width in range(_LABEL_WIDTH, 7, -1):
        lines = [(rank, short_label(label, width), n, value, *(extra if costs else ())) for (rank, label, n, value), extra in zip(rows, tokens)]
        t = compact_table(columns, lines, caption=caption)
        if _width(t) <= MAX_WIDTH:
            break
    return t


def _width(table: Table) -> int:
    """Columns the table's widest line takes (the caption wraps to the table, so it never decides)."""
    console = Console(file=io.StringIO(), width=10_000)
    return console.measure(table).maximum


def compact_kind_leaderboard(board: pd.DataFrame, *, primary: str, files: str = "", reference: str = "mean") -> Table:
    """The compact leaderboard of one question kind's table (:func:`benchmarks.scoring.kind_table.kind_table`).

    Parameters
    ----------
    board : pandas.DataFrame
        The kind's table: ``label``, ``rank``, ``n``, ``n_imputed``, ``<primary>`` with ``<primary>_low`` /
        ``<primary>_high``, ``delta_vs_<reference>`` with ``delta_low`` / ``delta_high``, optionally
        ``tokens_per_question`` and ``too_small_to_rank``; rows in its order (best first).
    primary : str
        The kind's primary score (``crps``, ``brier``), printed at 4 decimals with its 95% interval.
    files : str
        Where the full tables are, for the caption.
    reference : str
        The label the deltas refer to.

    Returns
    -------
    rich.table.Table
        One line per label, at most :data:`MAX_WIDTH` columns wide.
    """
    def num(x: Any, signed: bool = False) -> str:
        return "n/a" if fmt.is_missing(x) else (f"{float(x):+.4f}" if signed else f"{float(x):.4f}").replace("-", fmt.MINUS)

    delta = f"delta_vs_{reference}"
    rows = []
    for r in board.to_dict("records"):
        n = f"{int(r['n'])}" + (f"+{int(r['n_imputed'])}" if r.get("n_imputed") else "")
        d = ("reference" if r["label"] == reference else
             "" if fmt.is_missing(r.get(delta)) else f"{num(r[delta], True)} [{num(r['delta_low'], True)}, {num(r['delta_high'], True)}]")
        tokens = r.get("tokens_per_question")
        rows.append(("" if fmt.is_missing(r.get("rank")) else str(int(r["rank"])), short_label(str(r["label"])), n,
                     f"{num(r[primary])} [{num(r[f'{primary}_low'])}, {num(r[f'{primary}_high'])}]", d,
                     "" if fmt.is_missing(tokens) else f"{float(tokens):,.0f}"))
    caption = [f"{primary}: lower is better" if primary != "baseline_score" else f"{primary}: higher is better",
               f"Δ: paired against {reference}, 95% clustered intervals; n+k: k failures scored as the worst case."]
    if "too_small_to_rank" in board.columns and bool(board["too_small_to_rank"].any()):
        caption.append(f"Too few clusters to rank (fewer than {MIN_CLUSTERS_TO_RANK}): rows listed by {primary}.")
    if files:
        caption.append(f"Full tables: {files}")
    return compact_table([Column("rank", "right"), Column("method"), Column("n", "right"), Column(f"{primary} [95%]"),
                          Column(f"Δ vs {reference}"), Column("tokens/q", "right")], rows, caption=caption)


def print_compact_leaderboard(board: pd.DataFrame, *, baseline: str, files: str = "", file: TextIO | None = None,
                              label_col: str = "label", crowd_note: str | None = None) -> None:
    """Print :func:`compact_leaderboard` to ``file`` (default stdout) with :func:`print_table`."""
    print_table(compact_leaderboard(board, baseline=baseline, files=files, label_col=label_col, crowd_note=crowd_note), file)
