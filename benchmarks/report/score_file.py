"""Score forecasts made by any system (``forecast-reconcile score``), next to the bundled baselines.

A ForecastBench forecast set (the submission file ``forecast-reconcile export`` writes) is scored against
its question set and resolution set (``--questions``, ``--resolutions``) the way ForecastBench scores it
(:mod:`benchmarks.questions.forecastbench_submission`). Any other forecasts file has the columns ``question_id`` and
``p_yes`` (a probability in [0, 1]), and optionally
``method`` (several systems in one file), ``outcome`` (``1``/``0``, ``yes``/``no``, ``true``/``false``) and
``cluster`` (the bootstrap cluster). It is read like a question file
(:func:`benchmarks.questions.read_table`: ``.csv``, ``.jsonl``, ``.json`` list of objects or ``.parquet``;
UTF-8 with or without a byte-order mark; ids as text). Errors name the row as ``data row N (line M)``,
``M`` being the line of the file as an editor shows it.

* **Ids.** A ``question_id`` may be a full id or a short id (:func:`benchmarks.questions.browse.short_id`,
  e.g. ``3fa9c2d1``) of one of the questions of ``--questions`` or the bundled ones. Partial references
  (accepted interactively by ``forecast --question``) are not matched here: a file's own ids must
  never be mistaken for pieces of other ids.
* **Outcomes and clusters** missing from the file come from those questions by id. A row whose question
  has no known outcome is an error, or, with ``skip_unknown``, left out and counted.
* **Baselines.** By default the bundled baselines (:mod:`benchmarks.protocol.baselines`: ``crowd``,
  ``superforecaster_median``, ``base_rate``, ``always_0.5``) are scored on the same questions: rows for
  each scored question that has a record (bundled, or in ``--questions``; for a question file the base
  rate uses that file's own earlier-resolved questions). A baseline with no value for a question simply
  has no row there, and the leaderboard imputes it (:func:`benchmarks.scoring.ranking.rank_methods`): ranked with
  the others, or, with more than 5% of the questions imputed, listed apart with its own n. A method of the file named like a
  baseline keeps its name and that baseline is left out.
* **Duplicates.** A second row of one method for one question (also when one gives the full id and the other
  the short id) is refused: the forecast would count twice in the means and the bootstrap.
* **Percentages.** A ``p_yes`` above 1 is refused; when every value of the column lies in [0, 100] and most of
  them are above 1 the message says they look like percentages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from agent_schemas import DataValidationError, Question
from benchmarks.protocol.baselines import BASELINES, compute_baselines
from benchmarks.protocol.clusters import sibling_clusters
from benchmarks.questions import id_text, load_questions_file, parse_outcome, read_table
from benchmarks.questions.browse import bundled_questions, short_id
from benchmarks.questions.forecastbench_submission import forecast_set_table, is_forecast_set
from benchmarks.questions.tables import Table
from benchmarks.report.leaderboard import SENSITIVITY_TITLE, board_markdown, ranking_note, score_columns, write_leaderboard
from benchmarks.scoring.ranking import MAX_IMPUTED, rank_methods, sensitivity_lines

__all__ = ["ForecastRows", "ScoreResult", "match_questions", "question_pool", "read_forecast_rows", "score_file", "score_forecasts_file"]


@dataclass
class ScoreResult:
    """What :func:`score_file` found: the leaderboard and what it rests on."""

    table: pd.DataFrame
    """:func:`benchmarks.scoring.ranking.rank_methods` output plus ``kind`` ("yours" or "baseline")."""
    n_rows: int = 0
    """Data rows of the file that were scored."""
    skipped: list[str] = field(default_factory=list)
    """Rows left out by ``skip_unknown`` (``data row N (line M): id``)."""
    notes: list[str] = field(default_factory=list)
    """Plain lines about baselines and ids, for the user."""
    reference: str = ""
    """The method deltas are measured against."""

    def markdown(self) -> str:
        """The leaderboard as Markdown (the columns of :data:`benchmarks.report.leaderboard.SCORE_COLUMNS`) with one
        line on how to read it."""
        cols = score_columns(self.table)
        head = (f"Lower Brier and log loss are better; deltas are against {self.reference} (negative: better than it). "
                + ranking_note(self.table[self.table["ranked"]], MAX_IMPUTED) + " Unranked rows have no rank.")
        lines = sensitivity_lines(self.table, method_col="method")
        return "\n\n".join([head, board_markdown(self.table[cols]), *([SENSITIVITY_TITLE, "\n".join(f"- {x}" for x in lines)] if lines else [])])

    def write(self, out_dir: str | Path) -> tuple[Path, Path]:
        """Write the leaderboard (``leaderboard.csv``) and :meth:`markdown` (``leaderboard.md``) into ``out_dir``
        (:func:`benchmarks.report.leaderboard.write_leaderboard`); returns their paths."""
        return write_leaderboard(out_dir, self.table, self.markdown() + "\n")


def question_pool(questions_path: str | Path | None, resolutions_path: str | Path | None = None) -> list[Question]:
    """The questions a forecasts file's ids are matched against: those of ``questions_path`` (a question file,
    :func:`benchmarks.questions.load_questions_file`, joined with ``resolutions_path`` when it is a ForecastBench
    question set), else the bundled ones.

    Raises
    ------
    DataValidationError
        When ``resolutions_path`` is given without ``questions_path``.
    """
    if questions_path is not None:
        return list(load_questions_file(questions_path, resolutions_path))
    if resolutions_path is not None:
        raise DataValidationError("--resolutions is the resolution set of a ForecastBench question set: give the question set "
                                  "with --questions", field="resolutions", value=str(resolutions_path))
    return bundled_questions()


def _resolver(pool: Sequence[Question]):
    by_id = {q.id: q for q in pool}
    by_short: dict[str, list[Question]] = {}
    for q in pool:
        by_short.setdefault(short_id(q.id), []).append(q)

    def resolve(ref: str) -> Question | None:
        if ref in by_id:
            return by_id[ref]
        hits = by_short.get(ref.lower(), [])
        return hits[0] if len(hits) == 1 else None

    return resolve


def _percent_hint(table: Any) -> str:
    values = []
    for i in range(len(table.rows)):
        try:
            values.append(float(str(table.value(i, "p_yes")).strip()))
        except (TypeError, ValueError):
            continue
    above = sum(v > 1 for v in values)
    if values and 2 * above > len(values) and min(values) >= 0 and max(values) <= 100:  # most of them: one 1.2 is a typo
        return f"; the p_yes values look like percentages (from {min(values):g} to {max(values):g}): divide them by 100"
    return ""


def _probability(table: Any, row: int, value: Any, hint: str) -> float:
    if isinstance(value, (bool, np.bool_)):  # float(True) is 1.0: a yes/no is not a probability
        raise table.error(row, "p_yes", value, "p_yes is a true/false value, not a probability in [0, 1]")
    try:
        p = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        p = float("nan")
    if not 0.0 <= p <= 1.0:  # also rejects NaN and a missing value
        raise table.error(row, "p_yes", value, "p_yes is not a probability in [0, 1]" + hint)
    return p


@dataclass
class ForecastRows:
    """A forecasts file read cell by cell (:func:`read_forecast_rows`) and matched to its questions
    (:func:`match_questions`): what ``score`` and ``aggregate`` (:mod:`benchmarks.panels`) share."""

    table: Table
    """The file (its path, and where each data row starts)."""
    rows: list[dict[str, Any]]
    """One dict per data row: ``row`` (0-based data row), ``ref`` (the id as written), ``p_yes`` (in [0, 1]),
    ``outcome`` (1, 0 or None when the file gives none), ``by`` (the method or forecaster) and the cell of
    each ``extra`` column (None when blank); :func:`match_questions` adds ``question_id`` and fills ``outcome``."""
    questions: dict[str, Question] = field(default_factory=dict)
    """The known questions the kept rows name, by full id."""
    skipped: list[str] = field(default_factory=list)
    """Rows left out by ``skip_unknown`` (``data row N (line M): id``)."""
    notes: list[str] = field(default_factory=list)
    """Plain lines for the user (ids given as short ids)."""


def read_forecast_rows(path: str | Path, *, by: str = "method", by_default: str | None = None,
                       extra: Sequence[str] = (), table: Table | None = None) -> ForecastRows:
    """Read a forecasts file (``question_id``, ``p_yes``, the ``by`` column and the ``extra`` columns) row by row.

    Parameters
    ----------
    path : str or Path
        ``.csv``, ``.jsonl``, ``.json`` or ``.parquet`` (:func:`benchmarks.questions.read_table`).
    by : str
        The column naming who forecast: ``method`` (score files) or ``forecaster`` (panels).
    by_default : str, optional
        Its value where the column or the cell is absent; None makes the column and every cell required.
    extra : sequence of str
        Further optional columns whose cells are kept as written (None when blank).
    table : Table, optional
        The file already read into a table (a ForecastBench forecast set,
        :func:`benchmarks.questions.forecastbench_submission.forecast_set_table`); default :func:`read_table` of ``path``.

    Returns
    -------
    ForecastRows
        ``rows`` in file order; nothing matched to questions yet.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    DataValidationError
        Naming the file, the row (``data row N (line M)``), the column and the value: a missing column, a
        file with no rows, an empty ``question_id`` or ``by`` cell, a p_yes that is not a probability in
        [0, 1] (with a hint when the values look like percentages) or an outcome that is not 0/1.
    """
    table = read_table(path) if table is None else table
    path = table.path
    with table.numbering():
        columns = table.header if table.header is not None else sorted({k for r in table.rows for k in r})
        for col in ("question_id", "p_yes", *([by] if by_default is None else [])):
            if col not in columns:
                raise DataValidationError(f"{path}: missing column {col!r}; columns present: {columns}", field=col, source=str(path))
        if not table.rows:
            raise DataValidationError(f"{path}: no forecast rows (the file has only a header)", source=str(path))
        hint = _percent_hint(table)
        rows: list[dict[str, Any]] = []
        for i in range(len(table.rows)):
            qid, p, who, outcome = (table.value(i, c) for c in ("question_id", "p_yes", by, "outcome"))
            if qid is None:
                raise table.error(i, "question_id", table.rows[i].get("question_id"), "question_id is empty")
            if who is None and by_default is None:
                raise table.error(i, by, table.rows[i].get(by), f"{by} is empty")
            for col, cell in (("question_id", qid), (by, who)):
                if isinstance(cell, (dict, list, tuple, bool, np.bool_)):
                    raise table.error(i, col, cell, f"{col} must be a text or a number, not a {type(cell).__name__}")
            rows.append({"row": i, "ref": id_text(qid), "p_yes": _probability(table, i, p, hint),
                         "by": by_default if who is None else str(who).strip(),
                         "outcome": None if outcome is None else parse_outcome(path, i, outcome),
                         **{c: table.value(i, c) for c in extra}})
    return ForecastRows(table, rows)


def match_questions(found: ForecastRows, pool: Sequence[Question], *, by: str = "method", skip_unknown: bool = False) -> ForecastRows:
    """Match each row's id to a question of ``pool`` (full or short id), fill missing outcomes from it, and
    refuse a second row of one ``by`` for one question.

    Parameters
    ----------
    found : ForecastRows
        From :func:`read_forecast_rows`.
    pool : sequence of Question
        The questions ids may name (:func:`question_pool`); empty: ids are taken as written.
    by : str
        The column named in the duplicate-row error (``method`` or ``forecaster``).
    skip_unknown : bool
        Leave out (and list in ``skipped``) rows whose question has no known outcome instead of refusing.

    Returns
    -------
    ForecastRows
        ``found`` with the kept rows (each with ``question_id`` and an ``outcome``), ``questions``, ``skipped``
        and ``notes``.

    Raises
    ------
    DataValidationError
        Naming the file, the row, the column and the value: a question with no known outcome (unless
        ``skip_unknown``), two rows of one method or forecaster for one question (a forecast counted twice),
        or no row left to score.
    """
    table, path = found.table, found.table.path
    resolve = _resolver(pool)
    kept, skipped, resolved_short = [], [], 0
    first: dict[tuple[str, str], int] = {}
    with table.numbering():
        for r in found.rows:
            q = resolve(r["ref"]) if pool else None
            if q is not None:
                resolved_short += q.id != r["ref"]
                r["question_id"] = q.id
                found.questions[q.id] = q
            else:
                r["question_id"] = r["ref"]
            if r["outcome"] is None:
                if q is None or q.outcome is None:
                    if skip_unknown:
                        skipped.append(f"{table.where(r['row'])}: {r['ref']}")
                        continue
                    raise table.error(r["row"], "question_id", r["ref"], "this question has no known outcome (give an outcome "
                                      "column or --questions with outcomes, or --skip-unknown to leave such rows out)")
                r["outcome"] = q.outcome
            key = (r["by"], r["question_id"])
            if key in first:
                raise table.error(r["row"], "question_id", r["ref"], f"a second forecast of {by} {r['by']!r} for this question "
                                  f"(the first is {table.where(first[key])}): each would count once more")
            first[key] = r["row"]
            kept.append(r)
        if not kept:
            raise DataValidationError(f"{path}: no row left to score ({len(skipped)} rows without a known outcome were skipped)",
                                      source=str(path))
    found.rows, found.skipped = kept, skipped
    if resolved_short:
        found.notes.append(f"{resolved_short} question id(s) given as short ids were matched to full ids")
    return found


def score_file(path: str | Path, *, questions_path: str | Path | None = None, baseline: str | None = None,
               baselines: bool = True, skip_unknown: bool = False, n_resamples: int = 1000, seed: int = 0,
               resolutions_path: str | Path | None = None) -> ScoreResult:
    """Score a forecasts file (module docstring) and rank its methods next to the bundled baselines.

    A ForecastBench forecast set (a submission file) is scored against ``questions_path`` (its question set)
    joined with ``resolutions_path`` (its resolution set) on every resolved question
    (:func:`benchmarks.questions.forecastbench_submission.forecast_set_table`), a missing forecast imputed by the
    leaderboard's rule (:func:`benchmarks.scoring.ranking.impute`); ``brier_forecastbench`` is ForecastBench's figure
    (0.5 imputed).

    Parameters
    ----------
    path : str or Path
        The forecasts file, or a ForecastBench forecast set (``.json`` object with ``forecasts``).
    questions_path : str or Path, optional
        A question file (outcomes, clusters, crowd probabilities), or a ForecastBench question set; default
        the bundled questions.
    resolutions_path : str or Path, optional
        The resolution set of a ForecastBench question set ``questions_path``.
    baseline : str, optional
        Method the deltas refer to (default: the file's first method).
    baselines : bool
        Add the bundled baselines on the same questions.
    skip_unknown : bool
        Leave out rows whose question has no known outcome (counted in ``skipped``) instead of refusing.
    n_resamples, seed : int
        Clustered bootstrap resamples and seed.

    Raises
    ------
    FileNotFoundError
        If a file does not exist.
    DataValidationError
        Naming the file, the row (``data row N (line M)``), the column and the value for a missing column,
        a file with no rows, a p_yes that is not a probability in [0, 1], an outcome that is not 0/1, a
        question id with no outcome (unless ``skip_unknown``), two rows of one method for one question, or no
        row left to score; for a forecast set,
        no ``--questions`` or ``--resolutions``, or what
        :func:`benchmarks.questions.forecastbench_submission.forecast_set_table` finds.
    """
    pool: list[Question] | None = None
    notes: list[str] = []
    table = None
    unanswered: list[str] = []  # a forecast set's resolved questions without a forecast: imputed by rank_methods
    if is_forecast_set(path):
        if questions_path is None or resolutions_path is None:
            raise DataValidationError(f"{path}: a ForecastBench forecast set is scored against its round: give --questions "
                                      "<date>-llm.json --resolutions <date>_resolution_set.json", source=str(path))
        pool = question_pool(questions_path, resolutions_path)
        table, notes, unanswered = forecast_set_table(path, pool, question_pool(questions_path))
    found = read_forecast_rows(path, by="method", by_default=Path(path).stem, extra=("cluster",), table=table)
    if pool is None:
        need_pool = baselines or any(r["outcome"] is None or r["cluster"] is None for r in found.rows)
        pool = question_pool(questions_path, resolutions_path) if need_pool else []
    found = match_questions(found, pool, by="method", skip_unknown=skip_unknown)
    kept, records, notes = found.rows, found.questions, [*notes, *found.notes]
    by_id = {q.id: q for q in pool}
    records.update({qid: by_id[qid] for qid in unanswered})
    siblings = sibling_clusters(list(records.values())).labels
    for r in kept:
        r["method"] = r["by"]
        r["cluster"] = siblings.get(r["question_id"], r["question_id"]) if r["cluster"] is None else str(r["cluster"])
    model = kept[0]["method"] if kept else Path(path).stem
    kept += [{"question_id": qid, "p_yes": np.nan, "method": model, "outcome": int(by_id[qid].outcome), "cluster": siblings.get(qid, qid)}
             for qid in unanswered]
    df = pd.DataFrame({k: [r[k] for r in kept] for k in ("question_id", "p_yes", "method", "outcome", "cluster")})
    yours = list(dict.fromkeys(df["method"]))
    if baselines:
        df, more = _with_baselines(df, records, pool if questions_path is not None else None, yours)
        notes += more
    reference = baseline or yours[0]
    ranked = rank_methods(df, method_col="method", baseline=reference, n_resamples=n_resamples, seed=seed)
    ranked.insert(ranked.columns.get_loc("method") + 1, "kind", ["yours" if m in yours else "baseline" for m in ranked["method"]])
    return ScoreResult(ranked, n_rows=len(kept) - len(unanswered), skipped=found.skipped, notes=notes, reference=reference)


def _with_baselines(df: pd.DataFrame, records: dict[str, Question], reference: list[Question] | None,
                    yours: list[str]) -> tuple[pd.DataFrame, list[str]]:
    """``df`` plus one row per (baseline, scored question with a record and a baseline value)."""
    names = [b for b in BASELINES if b not in yours]
    notes = [f"baseline {b!r} left out: the file has a method of that name" for b in BASELINES if b in yours]
    qs = [records[qid] for qid in dict.fromkeys(df["question_id"]) if qid in records]
    if not qs or not names:
        if not qs:
            notes.append("no baselines: none of the scored questions has a record (bundled, or give --questions)")
        return df, notes
    base = compute_baselines(qs, reference, methods=names)
    base = base[base["available"]]
    first = df.drop_duplicates("question_id").set_index("question_id")
    rows = pd.DataFrame({"question_id": base["question_id"].to_numpy(), "p_yes": base["p_yes"].to_numpy(),
                         "method": base["method"].to_numpy(),
                         "outcome": first.loc[base["question_id"], "outcome"].to_numpy(),
                         "cluster": first.loc[base["question_id"], "cluster"].to_numpy()})
    counts = rows["method"].value_counts()
    n = df["question_id"].nunique()
    notes.append("baselines on the same questions: " + ", ".join(
        f"{b} {int(counts.get(b, 0))} of {n}" for b in names))
    return pd.concat([df, rows], ignore_index=True), notes


def score_forecasts_file(path: str | Path, *, questions_path: str | Path | None = None, baseline: str | None = None,
                         n_resamples: int = 1000, seed: int = 0, baselines: bool = True, skip_unknown: bool = False,
                         resolutions_path: str | Path | None = None) -> pd.DataFrame:
    """The leaderboard table of :func:`score_file` (same parameters and errors)."""
    return score_file(path, questions_path=questions_path, baseline=baseline, baselines=baselines,
                      skip_unknown=skip_unknown, n_resamples=n_resamples, seed=seed, resolutions_path=resolutions_path).table
