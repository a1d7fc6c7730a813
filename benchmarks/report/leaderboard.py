"""The leaderboard's one writer: which columns it shows, its Markdown, and its files.

The table itself is computed in one place, :func:`benchmarks.scoring.ranking.rank_methods` (one question set,
imputed answers, ranks, sensitivity). Every command shows and writes it through this module: ``run`` and ``leaderboard``
(:func:`benchmarks.report.write_report`, :data:`RUN_COLUMNS`) and ``score`` (:mod:`benchmarks.report.score_file`,
:data:`SCORE_COLUMNS`) write ``leaderboard.csv`` and ``leaderboard.md`` with :func:`write_leaderboard`; the
terminal renders the same table (:mod:`benchmarks.viewer.terminal`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from benchmarks.questions.tables import csv_text
from benchmarks.run_folder.durable import write_text_atomic
from benchmarks.protocol.baselines import crowd_timing_note
from benchmarks.scoring.ranking import IMPUTATION_RULE, MIN_CLUSTERS_TO_RANK, not_ranked_note, rank_labels, sensitivity_lines

__all__ = ["CSV_FILE", "MARKDOWN_FILE", "RUN_COLUMNS", "SCORE_COLUMNS", "SENSITIVITY_TITLE", "board_markdown", "leaderboard_sections",
           "markdown_table", "ranking_note", "run_columns", "write_leaderboard"]

#: The leaderboard's files in an output folder.
CSV_FILE = "leaderboard.csv"
MARKDOWN_FILE = "leaderboard.md"
#: Columns of a report's Markdown leaderboard, in order (those present; ``equals`` and ``no_tokens`` only when a row
#: has one).
RUN_COLUMNS = ("rank", "label", "equals", "n", "n_answered", "n_imputed", "brier", "brier_ci_low", "brier_ci_high",
               "brier_index", "log_loss", "ece", "delta_brier_vs_baseline", "delta_brier_ci_low", "delta_brier_ci_high",
               "tokens_per_question", "no_tokens", "failed")
#: The heading of the lines on where each method with imputed questions would stand.
SENSITIVITY_TITLE = "## Sensitivity: methods with imputed questions"
#: Columns printed and written as the score leaderboard, in order (those present).
SCORE_COLUMNS = ("rank", "method", "kind", "n", "n_answered", "n_imputed", "brier", "brier_ci_low", "brier_ci_high", "log_loss",
                 "ece", "delta_brier_vs_baseline", "delta_brier_ci_low", "delta_brier_ci_high", "brier_forecastbench")


def ranking_note(ranked: pd.DataFrame, max_imputed: float, *, plan_note: str = "") -> str:
    """What the ranking rests on, in a few sentences: the question set, its clusters, how missing answers
    are scored, and whether there are too few clusters to rank."""
    if ranked.empty:
        return plan_note or f"Nothing is ranked: every method has more than {max_imputed:.0%} of the questions imputed."
    n, k = int(ranked["n"].max()), int(ranked["n_clusters"].max())
    line = (f"Compared on the same {n} questions ({k} clusters of related questions); {IMPUTATION_RULE}. The number of "
            "imputed questions is the row's n_imputed; tied Brier scores share a rank (2=).")
    if plan_note:
        line += " " + plan_note
    if bool(ranked["too_small_to_rank"].iloc[0]):
        line += (f" **Too few clusters to rank**: {k} < {MIN_CLUSTERS_TO_RANK}; the rows are listed by Brier without "
                 "ranks, and the order is not evidence.")
    return line


def markdown_table(df: pd.DataFrame) -> str:
    """``df`` as a Markdown table (4 decimals), or ``(none)`` when it is empty."""
    return df.to_markdown(index=False, floatfmt=".4f") if not df.empty else "(none)"


def board_markdown(rows: pd.DataFrame) -> str:
    """Leaderboard rows in Markdown, the rank as :func:`benchmarks.scoring.ranking.rank_labels` writes it (``2=`` for a
    shared rank, ``=`` for a method that equals another, none for the unranked)."""
    return markdown_table(rows.assign(rank=rank_labels(rows)))


def run_columns(table: pd.DataFrame) -> list[str]:
    """The :data:`RUN_COLUMNS` of ``table`` (``equals`` only when some row equals another method, ``no_tokens`` only
    when some row has a reason: ``human panel: no tokens``); a comparison of runs, whose table has ``method`` and
    ``run`` columns, shows those two in place of ``label`` (``<run id>:<method>``)."""
    cols = [c for c in RUN_COLUMNS if c in table.columns and (c not in ("equals", "no_tokens") or table[c].astype(bool).any())]
    if {"method", "run"} <= set(table.columns) and "label" in cols:
        at = cols.index("label")
        cols[at:at + 1] = ["method", "run"]
    return cols


def leaderboard_sections(table: pd.DataFrame, *, baseline: str, max_imputed: float, plan_note: str = "",
                         crowd_note: str | None = None) -> list[str]:
    """The Markdown sections of a report's leaderboard: its title, the ranking note with what the crowd knew
    (``crowd_note``, default :func:`benchmarks.protocol.baselines.crowd_timing_note` of the labels), the ranked rows,
    the rows listed apart (more than ``max_imputed`` of the questions imputed) and, when some method has imputed
    questions, where each would stand (:func:`benchmarks.scoring.ranking.sensitivity_lines`)."""
    cols = run_columns(table)
    ranked, unranked = table[table["ranked"]], table[~table["ranked"]]
    lines = sensitivity_lines(table)
    return [
        f"## Leaderboard (lower Brier is better; 95% clustered bootstrap intervals; baseline for deltas: {baseline})",
        " ".join(filter(None, [ranking_note(ranked, max_imputed, plan_note=plan_note), crowd_timing_note(table["label"]) if crowd_note is None else crowd_note])),
        board_markdown(ranked[cols]),
        *([f"## Not ranked ({not_ranked_note(max_imputed)})",
           board_markdown(unranked[cols])] if len(unranked) else []),
        *([SENSITIVITY_TITLE, "\n".join(f"- {line}" for line in lines)] if lines else []),
    ]


def write_leaderboard(out_dir: str | Path, table: pd.DataFrame, markdown: str) -> tuple[Path, Path]:
    """Write ``table`` as ``leaderboard.csv`` and ``markdown`` as ``leaderboard.md`` into ``out_dir`` (created
    if needed), each atomically; returns their paths.

    Raises
    ------
    OSError
        When the folder cannot be created or a file written (``filename`` names it); a file not yet written
        is left as it was.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = out_dir / CSV_FILE, out_dir / MARKDOWN_FILE
    write_text_atomic(csv_path, csv_text(table))  # no cell a spreadsheet would run as a formula
    write_text_atomic(md_path, markdown)
    return csv_path, md_path


def score_columns(table: pd.DataFrame) -> Sequence[str]:
    """The :data:`SCORE_COLUMNS` of ``table``."""
    return [c for c in SCORE_COLUMNS if c in table.columns]
