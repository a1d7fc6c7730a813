"""ForecastBench's difficulty-adjusted Brier score and Brier Index of each leaderboard row.

The compared methods of a run answer the same questions, so their Brier scores compare directly. Methods
listed apart, and the runs of a comparison that planned different questions, answered other questions:
their raw Brier scores say as much about those questions' difficulty as about the forecasts. ForecastBench
adjusts for that with a two-way fixed-effects fit of the per-question Brier scores
(:func:`benchmarks.scoring.brier_index_table`) and reports a Brier Index, 100 (1 - sqrt(score)), higher is
better.

How the leaderboard's rows enter the fit (:func:`brier_index_columns`):

* the rows are the report's compared rows (the compared methods on every question of the set, a missing
  answer as its fallback; the methods listed apart on their own questions), of market and dataset
  questions (a question file's ``other`` questions have no index);
* the baselines that give a question the same probability in every run (:data:`SAME_IN_EVERY_RUN`:
  ``crowd``, ``superforecaster_median``, ``always_0.5``) enter the fit once, under their own names: they
  link runs that share no question, which is what makes their methods comparable (``base_rate`` depends on
  a run's question history, so each run's is its own entry);
* ``always_0.5`` is scored but not fitted on (ForecastBench leaves constant forecasters out of the fit,
  :mod:`benchmarks.scoring.brier_index`); a question only it answered (every method failed there and was
  listed apart) has no difficulty to estimate and is left out of the index.
"""

from __future__ import annotations

import pandas as pd

from benchmarks.scoring.brier_index import QUESTION_TYPES, brier_index_table

__all__ = ["BRIER_INDEX_COLUMNS", "NOT_FITTED", "SAME_IN_EVERY_RUN", "brier_index_columns"]

#: The columns :func:`brier_index_columns` adds to the leaderboard.
BRIER_INDEX_COLUMNS = ("brier_index", "brier_index_dataset", "brier_index_market", "adjusted_brier", "brier_index_note")
#: Entries scored with the fitted difficulties but not fitted on (constant forecasters).
NOT_FITTED = ("always_0.5",)
#: Baselines whose probability for a question is the same in every run (the question's own data).
SAME_IN_EVERY_RUN = ("crowd", "superforecaster_median", "always_0.5")


def brier_index_columns(compared: pd.DataFrame) -> pd.DataFrame:
    """The Brier Index of each label of the report's compared rows (module docstring).

    Parameters
    ----------
    compared : pandas.DataFrame
        One row per (label, question): ``label``, ``method``, ``kind`` ("method" or "baseline"),
        ``question_id``, ``question_type``, ``p_yes`` in [0, 1] and a resolved 0/1 ``outcome``.

    Returns
    -------
    pandas.DataFrame
        One row per label with a market or dataset question: ``label``, ``brier_index`` (overall: of the mean
        of the dataset and market adjusted scores; percent, higher is better), ``brier_index_dataset``,
        ``brier_index_market``, ``adjusted_brier`` (the overall difficulty-adjusted Brier, lower is better)
        and ``brier_index_note`` ("" or why a value is missing or not comparable). Empty when no row is of
        those types.
    """
    rows = compared[compared["question_type"].isin(QUESTION_TYPES)]
    if rows.empty:
        return pd.DataFrame(columns=["label", *BRIER_INDEX_COLUMNS])
    entry = rows["label"].where(~((rows["kind"] == "baseline") & rows["method"].isin(SAME_IN_EVERY_RUN)), rows["method"])
    fit = rows.assign(entry=entry).drop_duplicates(["entry", "question_id"])
    fit = fit[fit["question_id"].isin(set(fit.loc[~fit["entry"].isin(NOT_FITTED), "question_id"]))]
    if fit.empty:
        return pd.DataFrame(columns=["label", *BRIER_INDEX_COLUMNS])
    table = brier_index_table(fit, entry_col="entry", exclude_from_fit=[e for e in NOT_FITTED if e in set(fit["entry"])])
    by_entry = table.set_index("entry")
    out = pd.DataFrame({"label": list(dict.fromkeys(rows["label"]))})
    entries = out["label"].map(dict(zip(rows["label"], entry)))
    out["brier_index"] = entries.map(by_entry["brier_index_overall"]).astype(float)
    out["brier_index_dataset"] = entries.map(by_entry["brier_index_dataset"]).astype(float)
    out["brier_index_market"] = entries.map(by_entry["brier_index_market"]).astype(float)
    out["adjusted_brier"] = entries.map(by_entry["adjusted_brier_overall"]).astype(float)
    out["brier_index_note"] = entries.map(by_entry["note"]).fillna("")
    return out
