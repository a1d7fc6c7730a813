"""ForecastBench's difficulty-adjusted Brier score and Brier Index of each leaderboard row.

The compared methods of a run answer the same questions, so their Brier scores compare directly. The runs
of a comparison that planned different questions answered other questions: their raw Brier scores say as
much about those questions' difficulty as about the forecasts. ForecastBench adjusts for that with a two-way
fixed-effects fit of the per-question Brier scores (:func:`benchmarks.scoring.brier_index_table`) and reports
a Brier Index, 100 (1 - sqrt(score)), higher is better.

How the leaderboard's rows enter (:func:`brier_index_columns`), following ForecastBench's leaderboard code
(``get_df_info`` and ``two_way_fixed_effects`` in its ``src/leaderboard/main.py``, commit 05f612e):

* **Every question of its set, imputed first.** Each label is scored on every question its run planned
  (:func:`benchmarks.report.frame.run_plans`) that has an outcome, a missing answer imputed as the worst case
  (:func:`benchmarks.scoring.ranking.impute`), as ForecastBench imputes before it scores. An entry that
  answered every question of a type keeps its raw Brier (:mod:`benchmarks.scoring.brier_index`, step 5), so
  failing on a hard question costs the Brier of a certain wrong forecast and never raises the index.
* **More than 5% imputed: no index.** ForecastBench leaves such an entry off its leaderboard
  (``IMPUTED_CUTOFF_PCT``, checked overall and within the dataset and the market questions); its row's note
  says so. An entry over the cutoff on one type only (the crowd, which has no price for a dataset question)
  keeps the other type's index, and has no overall index.
* **Who the difficulties are fitted on** (:data:`FIT_BASELINES`, :func:`fit_rows`). ForecastBench fits on
  individual forecasters: its LLM runs, the human medians and the Naive Forecaster. It leaves out its dummy
  forecasters (``Always 0.5`` among them), its ensembles of LLMs already in the fit
  (``ENSEMBLE_COMPARISON_MODELS``) and external submissions. Here the individual forecasters are the
  **members** of each run (:func:`benchmarks.report.frame.member_rows`: the ensemble's LLMs, a panel's
  forecasters) and the baselines that are forecasters of their own (``crowd``, the market price, as
  ForecastBench's Naive Forecaster; ``superforecaster_median``; ``base_rate``). Every method of a run is left
  out: a pool, a reconciler or a fitted method aggregates the members (an ensemble), a single forecaster
  picked from a panel is a member again, and a method that equals another (``equals``) would count that one
  twice; ``always_0.5`` is a dummy. Only answered rows are fitted on, never an imputed one. A question no such
  row answered (every member failed there) is fitted on the other answered rows of it, and failing that on
  every row of it: each question keeps a difficulty, so no failure drops it.
* The baselines that give a question the same probability in every run (:data:`SAME_IN_EVERY_RUN`) enter
  once, under their own names: they link runs that share no question (``base_rate`` depends on a run's
  question history, so each run's is its own entry).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchmarks.scoring.brier_index import QUESTION_TYPES, brier_index_table
from benchmarks.scoring.ranking import MAX_IMPUTED

__all__ = ["BRIER_INDEX_COLUMNS", "CONSTANT", "FIT_BASELINES", "SAME_IN_EVERY_RUN", "brier_index_columns", "fit_rows"]

#: The columns :func:`brier_index_columns` adds to the leaderboard.
BRIER_INDEX_COLUMNS = ("brier_index", "brier_index_dataset", "brier_index_market", "adjusted_brier", "brier_index_note")
#: Baselines that are forecasters of their own, fitted on with the members (module docstring).
FIT_BASELINES = ("crowd", "superforecaster_median", "base_rate")
#: Constant forecasters: scored, fitted on only when a question has no other row.
CONSTANT = ("always_0.5",)
#: Baselines whose probability for a question is the same in every run (the question's own data).
SAME_IN_EVERY_RUN = ("crowd", "superforecaster_median", "always_0.5")


def fit_rows(frame: pd.DataFrame) -> np.ndarray:
    """Which rows the difficulties are fitted on (module docstring), bool of shape (n_rows,).

    ``frame`` has ``question_id``, ``imputed`` (bool) and ``fitted`` (bool: an entry ForecastBench would fit
    on). Per question: its answered rows of fitted entries; without any, its answered rows of entries that
    are not :data:`CONSTANT`; without any, its answered rows; without any, all its rows.
    """
    answered = ~frame["imputed"].to_numpy(bool)
    tiers = np.select([answered & frame["fitted"].to_numpy(bool), answered & ~frame["entry"].isin(CONSTANT).to_numpy(), answered],
                      [0, 1, 2], default=3)
    best = pd.Series(tiers).groupby(frame["question_id"].to_numpy()).transform("min").to_numpy()
    return tiers == best


def brier_index_columns(rows: pd.DataFrame, members: pd.DataFrame | None = None, *, max_imputed: float = MAX_IMPUTED) -> pd.DataFrame:
    """The Brier Index of each label of ``rows`` (module docstring).

    Parameters
    ----------
    rows : pandas.DataFrame
        One row per (label, question of its set) (:func:`benchmarks.scoring.ranking.impute`): ``label``,
        ``method``, ``kind`` ("method" or "baseline"), ``question_id``, ``question_type``, ``p_yes`` in
        [0, 1], a resolved 0/1 ``outcome`` and ``imputed`` (bool).
    members : pandas.DataFrame, optional
        The individual forecasters' answers (:func:`benchmarks.report.frame.member_rows`): ``entry``,
        ``question_id``, ``question_type``, ``p_yes``, ``outcome``; fitted on, not listed.
    max_imputed : float
        Largest share of its questions of a type a label may have imputed and still get that type's index
        (and an overall index only when within it on every type it has).

    Returns
    -------
    pandas.DataFrame
        One row per label of ``rows``: ``label``, ``brier_index`` (overall: of the mean of the dataset and
        market adjusted scores; percent, higher is better), ``brier_index_dataset``, ``brier_index_market``,
        ``adjusted_brier`` (the overall difficulty-adjusted Brier, lower is better) and ``brier_index_note``
        ("" or why a value is missing or not comparable: every missing index has its reason).
    """
    labels = list(dict.fromkeys(rows["label"]))
    out = pd.DataFrame({"label": labels, **{c: np.nan for c in BRIER_INDEX_COLUMNS[:-1]}, "brier_index_note": ""})
    typed = rows[rows["question_type"].isin(QUESTION_TYPES)]
    note = {lab: "no Brier Index: none of its questions is a market or dataset question" for lab in labels
            if lab not in set(typed["label"])}
    # ForecastBench's cutoff, overall and within each type (get_df_info): a type over it has no index, and so has overall
    share = typed.groupby(["label", "question_type"], sort=False)["imputed"].agg(["sum", "size"])
    over = share[share["sum"] > max_imputed * share["size"] + 1e-9]
    masked: dict[str, list[str]] = {}
    for lab, g in over.groupby(level=0, sort=False):
        types = list(g.index.get_level_values(1))
        if len(types) == len(share.loc[lab]):  # every type it has: no index at all
            k, n = int(share.loc[lab, "sum"].sum()), int(share.loc[lab, "size"].sum())
            note[lab] = (f"no Brier Index: {k} of {n} questions imputed ({k / n:.0%}, more than {max_imputed:.0%}): "
                         "ForecastBench leaves such an entry off its leaderboard")
        else:
            masked[lab] = types
    typed = typed[~typed["label"].isin(list(note))]
    if not typed.empty:
        same = (typed["kind"] == "baseline") & typed["method"].isin(SAME_IN_EVERY_RUN)
        scored = typed.assign(entry=typed["label"].where(~same, typed["method"]),
                              fitted=(typed["kind"] == "baseline") & typed["method"].isin(FIT_BASELINES))
        # every label's entry before the duplicates go: two runs on the same questions give one entry "crowd", and
        # each run's row (a:crowd, b:crowd) reads that entry's index
        entry = dict(zip(scored["label"], scored["entry"]))
        scored = scored.drop_duplicates(["entry", "question_id"])
        fit = scored[["entry", "question_id", "question_type", "p_yes", "outcome", "imputed", "fitted"]]
        if members is not None and not members.empty:
            mine = members[members["question_id"].isin(set(scored["question_id"]))]
            fit = pd.concat([fit, mine[["entry", "question_id", "question_type", "p_yes", "outcome"]].assign(imputed=False, fitted=True)],
                            ignore_index=True)
        fit = fit.assign(fit=fit_rows(fit))
        table = brier_index_table(fit, entry_col="entry", fit_col="fit").set_index("entry")
        done = out["label"].isin(set(entry))
        e = out.loc[done, "label"].map(entry)
        out.loc[done, "brier_index"] = e.map(table["brier_index_overall"]).to_numpy(float)
        out.loc[done, "brier_index_dataset"] = e.map(table["brier_index_dataset"]).to_numpy(float)
        out.loc[done, "brier_index_market"] = e.map(table["brier_index_market"]).to_numpy(float)
        out.loc[done, "adjusted_brier"] = e.map(table["adjusted_brier_overall"]).to_numpy(float)
        out.loc[done, "brier_index_note"] = e.map(table["note"]).fillna("").to_numpy(object)
    for lab, types in masked.items():
        i = out.index[out["label"] == lab][0]
        out.loc[i, ["brier_index", "adjusted_brier", *[f"brier_index_{t}" for t in types]]] = np.nan
        why = [f"{t}: {int(share.loc[(lab, t), 'sum'])} of {int(share.loc[(lab, t), 'size'])} {t} questions imputed (more than "
               f"{max_imputed:.0%}), no {t} index" for t in types]
        out.loc[i, "brier_index_note"] = "; ".join([*why, "overall: no index (ForecastBench leaves an entry with more than "
                                                    f"{max_imputed:.0%} of a type's questions imputed off its leaderboard)"])
    out.loc[out["label"].isin(list(note)), "brier_index_note"] = out["label"].map(note)
    return out
