"""Rank methods on one question set: a leaderboard that neither coverage nor failures can game.

A method that answered only the easy questions must not outrank one that answered all of them, no
method's failures may choose the questions the others are compared on, and **a failure never improves a
method's standing** (its rank, its paired difference to the baseline, its Brier Index). So:

1. The **comparison set** is every question of the comparison with a resolved outcome (the caller gives
   one row per answered (method, question); a question is in the set when any method answered it). For
   several runs the caller restricts it to the questions every run planned (``questions``, see
   :func:`benchmarks.report.frame.planned_questions`), never to those every run *answered*.
2. A question of the set a method gave no probability for (a failed specialist, a failed or unfinished
   question, a baseline with no value) is **imputed** (:func:`impute`, the one place that fills a missing
   answer) and counted in ``n_imputed``; ``n`` is the size of the set. The imputed forecast is the
   method's **worst case**, the forecast opposite to the outcome (``p_yes = 1 - outcome``: Brier 1), so a
   missing answer always costs at least what any answer would have.

   ForecastBench imputes 0.5 instead (:data:`IMPUTED_P_YES`; ``impute_missing_forecasts`` in its
   ``src/resolve/_impute.py``). 0.5 does not make a failure cost: it beats every answer that was more than
   0.5 away from the outcome, and failures fall on such questions (timeouts on hard questions). On
   ``run -p sim --n 60``, a supervisor failing on its single worst question moves from 4th to 2nd with
   0.5 imputed (paired difference to ``mean`` -0.0082 -> -0.0161), and failing on its 2 worst makes it
   1st (-0.0226); a fixed imputed probability lets some failure gain whatever its value, and only the
   worst case never does. Every row still gives ForecastBench's figures (``brier_forecastbench``,
   ``rank_forecastbench``), and :func:`sensitivity_lines` prints them.
3. A method with more than :data:`MAX_IMPUTED` of the set imputed is listed **apart**, not ranked:
   ForecastBench leaves an entry with more than 5% imputed forecasts off its leaderboard
   (``IMPUTED_CUTOFF_PCT = 5`` and ``get_df_info`` in its ``src/leaderboard/main.py``). Its row gives its
   Brier on its own questions (``n`` of them; not comparable) and no paired difference (its failures
   would choose the questions it is paired on); ``brier_worst_case`` and ``rank_worst_case`` say where it
   would stand with its imputed questions scored as its worst case.
4. **Ties.** Methods whose Brier scores are equal (to :data:`TIE_DECIMALS` decimals: sums of the same
   scores in another order differ by 1e-17) share a rank, the competition way (1, 2, 2, 4): with two
   members ``mean`` and ``median`` are the same forecasts and take one rank; text outputs show a shared
   rank as ``2=`` (:func:`rank_labels`).
5. ``too_small_to_rank`` is true when the set has fewer than :data:`MIN_CLUSTERS_TO_RANK` clusters: the
   compared rows are still listed by Brier, but get no rank (the terminal and the page say "too few clusters
   to rank").
6. A method that is another under a second name (``equals``: a fitted method that fell back to its
   unfitted rule on every question, :func:`benchmarks.protocol.fitted.fallback_equals`) is scored with the compared
   methods but takes no rank: its row says what it equals and why.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from benchmarks import scoring

__all__ = ["Comparison", "IMPUTATION_RULE", "IMPUTED_P_YES", "MAX_IMPUTED", "MIN_CLUSTERS_TO_RANK", "TIE_DECIMALS", "compare",
           "impute", "not_ranked_note", "rank_labels", "rank_methods", "sensitivity_lines"]

#: Largest share of the comparison set a ranked method may have imputed (fraction): ForecastBench's
#: ``IMPUTED_CUTOFF_PCT = 5`` (``src/leaderboard/main.py``). 3 of 60 questions (5%) stay ranked; 4 are listed apart.
MAX_IMPUTED = 0.05

#: The probability ForecastBench imputes for a missing forecast (``src/resolve/_impute.py``): Brier 0.25 whatever
#: the outcome. Given beside every row (``brier_forecastbench``); the leaderboard scores the worst case (point 2 above).
IMPUTED_P_YES = 0.5

#: Decimals to which two Brier scores must agree to share a rank.
TIE_DECIMALS = 12

#: How a missing answer is scored, in words (the report, the terminal and the page print it).
IMPUTATION_RULE = (
    "a question a method gave no probability for (a failure, an unfinished question, a baseline without a value) is imputed "
    "as its worst case, the forecast opposite to the outcome (Brier 1), so that a failure never improves a standing; "
    f"ForecastBench imputes {IMPUTED_P_YES}, and each row gives that figure too (brier_forecastbench). A method with more "
    f"than {MAX_IMPUTED:.0%} of the questions imputed is listed apart, not ranked, as ForecastBench leaves it off its leaderboard")

MIN_CLUSTERS_TO_RANK: int = 50
"""Fewest clusters of the comparison set for ranks to be shown. At 50 clusters the 95% interval (the hybrid
of :mod:`benchmarks.scoring.bootstrap`) of every Brier mean and paired difference measured covered at least
0.92 in both worlds of ``python benchmarks/perf/interval_coverage.py``: 0.939-0.958 in a skewed, clustered
world like the market pool (``--world skewed``) and 0.948-0.964 on the simulator's own (``--world sim``). At 30
clusters the skewed world's ``extremized - mean`` covered 0.907 with the hybrid (the expanded percentile
interval alone, the default while the floor was 30: 0.888 at 30, 0.910 at 50), so the floor is 50: Cameron &
Miller (2015, *J. Human Resources* 50(2)) note that "few" clusters may range from fewer than 20 to fewer
than 50 in the balanced case, and more when clusters are unbalanced, as here. Below it, rows are listed by Brier without ranks; intervals still show from
:data:`benchmarks.scoring.MIN_CLUSTERS_FOR_INTERVAL` clusters."""

#: The columns :func:`rank_methods` gives a row that are not :func:`benchmarks.scoring.score_table`'s.
_PAIRED_COLUMNS = ("delta_brier_vs_baseline", "delta_brier_ci_low", "delta_brier_ci_high", "brier_skill_vs_baseline")


@dataclass(frozen=True)
class Comparison:
    """The question set methods are compared on, and every compared method's row on each of its questions.

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per (compared method, question of the set) (:func:`impute`): the input's columns, with
        ``p_yes`` the method's probability or its worst case, and a bool column ``imputed`` marking the latter.
    compared : list
        Methods with at most ``max_imputed`` of the set imputed, in order of first appearance.
    apart : list
        The other methods.
    answered : pandas.Series
        Questions of the set each method answered (int, indexed by method).
    n_imputed : pandas.Series
        Questions of the set each method did not answer (int, indexed by method).
    coverage : pandas.Series
        ``answered`` / questions of the set (float in [0, 1], indexed by method; 0 for an empty set).
    questions : list
        The comparison set, in order of first appearance.
    """

    frame: pd.DataFrame
    compared: list
    apart: list
    answered: pd.Series
    n_imputed: pd.Series
    coverage: pd.Series
    questions: list


def impute(
    scored: pd.DataFrame,
    sets: Collection[Any] | Mapping[Any, Collection[Any]],
    *,
    method_col: str = "label",
    question_col: str = "question_id",
    question_cols: tuple[str, ...] = ("outcome", "cluster"),
) -> pd.DataFrame:
    """Every method of ``scored`` on every question of its set, a question it has no row for imputed as its
    worst case: ``p_yes = 1 - outcome`` (module docstring, point 2).

    Parameters
    ----------
    scored : pandas.DataFrame
        One row per answered (method, question): ``p_yes`` in [0, 1], a resolved 0/1 ``outcome`` and any
        other columns. A row with NaN ``p_yes`` (the method gave no probability) is not an answer: it only
        makes its question known.
    sets : collection, or mapping of method to collection
        The questions each method is scored on (one collection: the same for every method). A question no
        row of ``scored`` has is left out (nobody answered it: its outcome and cluster are unknown here).
    method_col, question_col : str
        Column names.
    question_cols : tuple of str
        Columns an imputed row takes from the question's first row (facts of the question: outcome, cluster,
        source...); it takes every other column from the method's own first row (run, kind...).

    Returns
    -------
    pandas.DataFrame
        The method's rows on its set (rows outside it dropped), then its imputed rows, method by method in
        order of first appearance; a bool column ``imputed``. A method with no row on its set is left out.
    """
    methods = list(pd.unique(scored[method_col]))
    wanted = {m: set(sets.get(m, ())) for m in methods} if isinstance(sets, Mapping) else dict.fromkeys(methods, set(sets))
    shared = [c for c in dict.fromkeys((question_col, "outcome", *question_cols)) if c in scored.columns]
    facts = scored.drop_duplicates(question_col).set_index(question_col)[[c for c in shared if c != question_col]]
    order = list(facts.index)
    given = scored[scored["p_yes"].notna()]
    mine = np.array([q in wanted[m] for m, q in zip(given[method_col], given[question_col])], dtype=bool)
    keep = given[mine].assign(imputed=False)
    parts = []
    for m, own in keep.groupby(method_col, sort=False):
        parts.append(own)
        done = set(own[question_col])
        missing = [q for q in order if q in wanted[m] and q not in done]
        if missing:
            f = pd.DataFrame([own.iloc[0]] * len(missing)).reset_index(drop=True)
            f[question_col] = missing
            f[facts.columns] = facts.loc[missing].to_numpy()
            f["p_yes"] = 1.0 - pd.to_numeric(f["outcome"]).astype(float)
            f["imputed"] = True
            parts.append(f[keep.columns].astype(keep.dtypes.to_dict()))
    return pd.concat(parts, ignore_index=True) if parts else keep.reset_index(drop=True)


def compare(
    scored: pd.DataFrame,
    *,
    method_col: str = "label",
    question_col: str = "question_id",
    max_imputed: float = MAX_IMPUTED,
    question_cols: tuple[str, ...] = ("outcome", "cluster"),
    questions: Collection[Any] | None = None,
) -> Comparison:
    """Decide who is compared on the whole question set and impute each compared method's missing answers.

    Parameters
    ----------
    scored : pandas.DataFrame
        One row per answered (method, question): ``p_yes`` in [0, 1], a resolved 0/1 ``outcome``,
        ``cluster`` and any other columns; a row with NaN ``p_yes`` is a question the method did not answer
        (it puts the question in the set).
    method_col, question_col : str
        Column names.
    max_imputed : float in [0, 1)
        Largest share of the set a compared method may have imputed (:data:`MAX_IMPUTED`).
    question_cols : tuple of str
        The question's columns an imputed row takes (:func:`impute`).
    questions : collection, optional
        The comparison set, when the caller fixes it (the questions every compared run planned): only
        those of them someone answered count, and a method's imputed share is measured on them. Default:
        every question of ``scored``. An empty set compares no method (all are listed apart).

    Returns
    -------
    Comparison

    Raises
    ------
    ValueError
        If ``max_imputed`` is not in [0, 1).
    """
    if not 0 <= max_imputed < 1:
        raise ValueError(f"max_imputed must be in [0, 1), got {max_imputed!r}")
    in_set = scored if questions is None else scored[scored[question_col].isin(set(questions))]
    the_set = list(pd.unique(in_set[question_col]))
    answered = in_set[in_set["p_yes"].notna()].groupby(method_col, sort=False)[question_col].nunique().reindex(
        pd.unique(scored[method_col]), fill_value=0).astype("int64")
    n_imputed = (len(the_set) - answered).astype("int64")
    coverage = answered / len(the_set) if the_set else answered * 0.0
    compared = [m for m in answered.index if the_set and n_imputed[m] <= max_imputed * len(the_set) + 1e-9]
    apart = [m for m in answered.index if m not in compared]
    frame = impute(in_set[in_set[method_col].isin(compared)], the_set, method_col=method_col, question_col=question_col,
                   question_cols=question_cols)
    return Comparison(frame, compared, apart, answered, n_imputed, coverage, the_set)


def _positions(values: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Competition rank of each value among ``others`` (Brier scores, lower is better): 1 + how many are lower."""
    v, o = np.round(values, TIE_DECIMALS), np.round(others, TIE_DECIMALS)
    return 1 + (o[None, :] < v[:, None]).sum(axis=1)


def rank_methods(
    scored: pd.DataFrame,
    *,
    method_col: str = "label",
    question_col: str = "question_id",
    baseline: str | None = "mean",
    max_imputed: float = MAX_IMPUTED,
    min_clusters: int = scoring.MIN_CLUSTERS_FOR_INTERVAL,
    min_clusters_to_rank: int = MIN_CLUSTERS_TO_RANK,
    question_cols: tuple[str, ...] = ("outcome", "cluster"),
    questions: Collection[Any] | None = None,
    equals: Mapping[str, str] | None = None,
    **score_kwargs: Any,
) -> pd.DataFrame:
    """The leaderboard of ``scored`` (one row per method): compared methods first, by Brier on the whole set.

    Parameters
    ----------
    scored : pandas.DataFrame
        Long format as for :func:`benchmarks.scoring.score_table`: one row per answered (method, question)
        with ``p_yes`` and a resolved 0/1 ``outcome``, and ``cluster``; a row with NaN ``p_yes`` is a question
        the method did not answer (:func:`compare`).
    method_col, question_col : str
        Column names.
    baseline : str or None
        Method the deltas refer to (see :func:`benchmarks.scoring.score_table`); only a compared method has
        a paired difference to it.
    max_imputed : float in [0, 1)
        Largest share of the set a compared method may have imputed (:func:`compare`).
    min_clusters : int
        Fewest clusters for an interval.
    min_clusters_to_rank : int
        Fewest clusters of the set for ranks (:data:`MIN_CLUSTERS_TO_RANK`).
    question_cols : tuple of str
        The question's columns an imputed row takes (:func:`impute`).
    questions : collection, optional
        The comparison set when the caller fixes it (:func:`compare`); methods listed apart are scored on
        all their own questions.
    equals : mapping of str to str, optional
        Methods that are another method under a second name, with what they equal and why (e.g.
        ``{"fitted_platt": "mean (not fitted: n < 30)"}``): no rank of their own (point 6 above).
    **score_kwargs
        Passed to :func:`benchmarks.scoring.score_table` (``n_resamples``, ``seed``, ``n_bins``...).

    Returns
    -------
    pandas.DataFrame
        The :func:`~benchmarks.scoring.score_table` columns plus ``ranked`` (bool: compared on the whole
        set), ``rank`` (competition rank, ties shared, for compared methods when the set has at least
        ``min_clusters_to_rank`` clusters; missing otherwise and for ``equals`` methods; nullable integer),
        ``n_answered`` (questions of the set the method answered; with an empty set, the questions it answered
        of its own, its ``n``, so that no row of a comparison of runs with no common question reads 0), ``n_imputed`` (questions of the set it
        did not: imputed as its worst case for a compared method), ``coverage`` (fraction),
        ``too_small_to_rank`` (bool, the same for every compared row), ``equals`` (text, '' unless given),
        ``brier_worst_case`` and ``rank_worst_case`` (the Brier on the whole set with the imputed questions
        as the worst case, and the rank it gives among the compared methods: a compared method's own; for a
        method listed apart, where it would stand), ``brier_forecastbench`` and ``rank_forecastbench`` (the
        same with the imputed questions at :data:`IMPUTED_P_YES`, ForecastBench's rule; no rank for a method
        listed apart, which ForecastBench would not rank). The four are NaN / missing with an empty set,
        and the ranks as ``rank`` is. Compared rows come first, sorted by Brier; the others follow, sorted
        by Brier on their own questions (``n``), without paired differences.

    Raises
    ------
    ValueError
        If ``max_imputed`` is not in [0, 1).
    DataValidationError
        As :func:`benchmarks.scoring.score_table`.
    """
    c = compare(scored, method_col=method_col, question_col=question_col, max_imputed=max_imputed,
                question_cols=question_cols, questions=questions)
    parts = []
    too_small = False
    if c.compared:
        t = scoring.score_table(c.frame, method_col=method_col, question_col=question_col,
                                baseline=baseline if baseline in c.compared else None, min_clusters=min_clusters,
                                **score_kwargs)
        t = t.sort_values("brier", kind="mergesort").reset_index(drop=True)
        too_small = bool(t["n_clusters"].max() < min_clusters_to_rank)
        t["ranked"] = True
        parts.append(t)
    if c.apart:
        own = scored[scored[method_col].isin(c.apart)]
        t = scoring.score_table(own, method_col=method_col, question_col=question_col, baseline=None,
                                min_clusters=min_clusters, **score_kwargs)
        t = t.sort_values("brier", kind="mergesort").reset_index(drop=True)
        t["ranked"] = False
        parts.append(t)
    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if table.empty:
        return table
    labels = table[method_col]
    table["too_small_to_rank"] = table["ranked"] & too_small
    table["n_answered"] = labels.map(c.answered).astype("int64")
    if not c.questions:  # no common set (runs that planned no question in common): each row's own questions answered
        table["n_answered"] = table["n"].astype("int64")
    table["n_imputed"] = labels.map(c.n_imputed).astype("int64")
    table["coverage"] = labels.map(c.coverage).astype(float)
    table["equals"] = [str((equals or {}).get(m, "")) for m in labels]

    # the whole set's Brier with the imputed questions at the worst case and at ForecastBench's 0.5, in closed form
    in_set = scored[scored[question_col].isin(set(c.questions)) & scored["p_yes"].notna()]
    p = in_set["p_yes"].astype(float).to_numpy()
    answered_sum = pd.Series((p - in_set["outcome"].astype(float).to_numpy()) ** 2).groupby(in_set[method_col].to_numpy()).sum()
    n_set = len(c.questions)
    own_sum = labels.map(answered_sum).fillna(0.0).to_numpy()
    k = table["n_imputed"].to_numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        table["brier_worst_case"] = (own_sum + k * 1.0) / n_set if n_set else np.nan
        table["brier_forecastbench"] = (own_sum + k * (1 - IMPUTED_P_YES) ** 2) / n_set if n_set else np.nan

    holder = (table["ranked"] & (table["equals"] == "")).to_numpy()  # rows that hold a place
    places = table.loc[holder, "brier"].to_numpy(float)
    rank = np.full(len(table), -1)
    worst = np.full(len(table), -1)
    fb = np.full(len(table), -1)
    if not too_small and holder.any():
        idx = np.flatnonzero(holder)
        rank[idx] = _positions(places, places)
        worst[idx] = rank[idx]
        for j, i in enumerate(idx):  # with its own imputed questions at 0.5, against the others as they are
            fb[i] = _positions(np.array([table["brier_forecastbench"].iat[i]]), np.delete(places, j))[0]
        apart = np.flatnonzero(~table["ranked"].to_numpy() & ~np.isnan(table["brier_worst_case"].to_numpy(float)))
        worst[apart] = _positions(table["brier_worst_case"].to_numpy(float)[apart], places)
    for col, values in (("rank", rank), ("rank_worst_case", worst), ("rank_forecastbench", fb)):
        table[col] = pd.array([pd.NA if v < 0 else int(v) for v in values], dtype="Int64")
    return table


def not_ranked_note(max_imputed: float = MAX_IMPUTED) -> str:
    """Why a row is listed apart and what its figures are, for the heading of the rows listed apart."""
    return (f"more than {max_imputed:.0%} of the questions imputed, or no question every run planned; Brier on their own "
            "questions, not comparable; no paired difference, and a Brier Index only on their own runs' questions")


def rank_labels(table: pd.DataFrame) -> list[str]:
    """The rank of each row as text: ``"2"``, ``"2="`` when another row shares it, ``"="`` for a method that
    equals another (``equals``), ``""`` without a rank.

    >>> rank_labels(pd.DataFrame({"rank": pd.array([1, 2, 2, 4, None], dtype="Int64"), "equals": ["", "", "", "", "mean"]}))
    ['1', '2=', '2=', '4', '=']
    """
    ranks = table["rank"] if "rank" in table.columns else pd.Series([pd.NA] * len(table), index=table.index, dtype="Int64")
    equals = table["equals"] if "equals" in table.columns else pd.Series([""] * len(table), index=table.index)
    counts = ranks.dropna().value_counts()
    out = []
    for k, e in zip(ranks, equals):
        if isinstance(e, str) and e:
            out.append("=")
        elif pd.isna(k):
            out.append("")
        else:
            out.append(f"{int(k)}=" if counts.get(k, 0) > 1 else str(int(k)))
    return out


def sensitivity_lines(table: pd.DataFrame, *, method_col: str = "label") -> list[str]:
    """One line per method of :func:`rank_methods`'s table with imputed questions: where it stands with them
    as its worst case, and (compared methods) with them at ForecastBench's 0.5.

    Returns
    -------
    list of str
        E.g. ``"supervisor: 9 of 60 questions imputed (15%, more than 5%): not ranked; with them scored as its
        worst case it would rank 9 (Brier 0.2177)."`` Empty when no method has an imputed question.
    """
    lines = []
    for r in table.to_dict("records"):
        k = int(r.get("n_imputed") or 0)
        wc = r.get("brier_worst_case")
        if k == 0 or wc is None or np.isnan(wc):
            continue
        n = k + int(r["n_answered"])
        head = f"{r[method_col]}: {k} of {n} questions imputed"
        if r["ranked"]:
            if pd.isna(r.get("rank")):
                lines.append(f"{head}, scored as its worst case (Brier {wc:.4f}); at {IMPUTED_P_YES} (ForecastBench's rule) "
                             f"its Brier would be {r['brier_forecastbench']:.4f}.")
            else:
                lines.append(f"{head}, scored as its worst case: rank {int(r['rank'])} (Brier {wc:.4f}); at {IMPUTED_P_YES} "
                             f"(ForecastBench's rule) it would rank {int(r['rank_forecastbench'])} (Brier "
                             f"{r['brier_forecastbench']:.4f}).")
        else:
            where = (f"it would rank {int(r['rank_worst_case'])} (Brier {wc:.4f})" if not pd.isna(r.get("rank_worst_case"))
                     else f"its Brier would be {wc:.4f}")
            lines.append(f"{head} ({k / n:.0%}, more than {MAX_IMPUTED:.0%}): not ranked; with them scored as its worst case "
                         f"{where}.")
    return lines
