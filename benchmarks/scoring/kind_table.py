"""The leaderboard of one kind of question (multiple choice, numeric, ...): every method and baseline scored by
the kind's own rules, never mixed with another kind's in one number.

Input is a long frame of forecasts of ONE kind (:func:`kind_forecasts`: one row per (label, question) with the
forecast vector, the question's spec, its outcome and its bootstrap cluster). The table (:func:`kind_table`):

* **scores**: every per-question score of the kind (:meth:`~agent_schemas.kinds.base.QuestionKind.score`: for
  numeric CRPS, the log loss of the outcome's bin and Metaculus's baseline score; for multiple choice the
  multi-category Brier score, the log loss, the RPS of ordered options and the baseline score), averaged over
  the questions where it is defined (RPS only over ordered questions; its ``n`` is in ``n_rps``);
* **calibration**: the kind's diagnostics (:meth:`~agent_schemas.kinds.base.QuestionKind.diagnostics`) averaged:
  for numeric the mean PIT and the central 50% and 90% interval coverage (compare with 0.5 and 0.9), for multiple
  choice the mean top-label probability and how often the top label happened;
* **intervals**: the primary score's mean with a clustered bootstrap interval, and the paired difference to the
  reference label with its paired clustered interval (:mod:`benchmarks.scoring.bootstrap`, as for binary);
* **failures**: a method is scored on every question of the set; where it failed (or gave nothing) its forecast is
  the kind's worst case (:meth:`~agent_schemas.kinds.base.QuestionKind.worst_case`, counted in ``n_imputed``), so a
  failure never improves a method's standing. A baseline is scored where it exists (the crowd only on questions
  with a crowd forecast; ``n`` says how many) and takes no rank against the methods' common set.

Rows are ordered by the primary score (best first); ``rank`` counts the methods and the baselines available on
every question, and only when the set has at least :data:`~benchmarks.scoring.ranking.MIN_CLUSTERS_TO_RANK`
clusters, as for binary (below it the rows are listed without ranks and ``too_small_to_rank`` is true).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from pydantic import TypeAdapter

from agent_schemas import DataValidationError
from agent_schemas.kinds import AnySpec, KindSpec, QuestionKind
from benchmarks.scoring.bootstrap import clustered_bootstrap_ci, paired_difference_ci
from benchmarks.scoring.ranking import MIN_CLUSTERS_TO_RANK

__all__ = ["DIAGNOSTIC_TITLES", "kind_forecasts", "kind_table", "label_scores", "score_forecasts", "spec_of_record"]

_SPEC = TypeAdapter(AnySpec)

#: How the table names the mean of each diagnostic of :meth:`QuestionKind.diagnostics`.
DIAGNOSTIC_TITLES: dict[str, str] = {
    "pit": "mean_pit", "in_50": "coverage_50", "in_90": "coverage_90", "top_p": "mean_top_p", "top_hit": "top_hit_rate",
}


def spec_of_record(record: Mapping[str, Any]) -> KindSpec:
    """The question's spec a ``results.jsonl`` record holds (its trace's question), binary when it holds none."""
    spec = ((record.get("trace") or {}).get("question") or {}).get("spec") or {"kind": "binary"}
    return _SPEC.validate_python(spec)


def kind_forecasts(records: Sequence[Mapping[str, Any]], kind: QuestionKind, *, run_id: str = "",
                   added: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None) -> pd.DataFrame:
    """One row per (label, resolved question of ``kind``) of ``records``: ``label``, ``type`` (``method`` or
    ``baseline``), ``question_id``, ``cluster``, ``outcome``, ``spec``, ``forecast`` (the vector, or None where the
    row failed or gave none), ``status``, ``note`` and ``run_id``.

    Records of other kinds and unresolved questions are left out. ``added`` holds method rows computed after the
    run, by question id then label (a panel's, ...), scored like the record's own.
    """
    rows = []
    for r in records:
        if r.get("outcome") is None:
            continue
        spec = spec_of_record(r)
        if spec.kind != kind.name:
            continue
        qid = r["question_id"]
        methods = {**r.get("methods", {}), **((added or {}).get(qid, {}))}
        for type_, table in (("method", methods), ("baseline", r.get("baselines", {}))):
            for label, row in table.items():
                ok = row.get("status") == "ok"
                rows.append({"run_id": run_id, "label": label, "type": type_, "question_id": qid,
                             "cluster": r.get("cluster") or qid, "outcome": r["outcome"], "spec": spec,
                             "forecast": kind.forecast_of(row) if ok else None, "status": row.get("status"),
                             "note": row.get("note", "")})
    return pd.DataFrame(rows, columns=["run_id", "label", "type", "question_id", "cluster", "outcome", "spec", "forecast",
                                       "status", "note"])


def _label_scores(kind: QuestionKind, rows: pd.DataFrame, impute: bool) -> tuple[pd.DataFrame, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The rows scored (a failed row imputed as the worst case when ``impute``, else dropped), and the per-question
    scores and diagnostics of the kept rows."""
    given = rows["forecast"].map(lambda f: f is not None)
    if impute:
        rows = rows.assign(imputed=~given)
        forecasts = [f if f is not None else kind.worst_case(s, o)
                     for f, s, o in zip(rows["forecast"], rows["spec"], rows["outcome"])]
    else:
        rows = rows[given].assign(imputed=False)
        forecasts = list(rows["forecast"])
    if rows.empty:
        return rows, {}, {}
    return rows, *score_forecasts(kind, list(rows["spec"]), forecasts, rows["outcome"].to_numpy(dtype=np.float64))


def score_forecasts(kind: QuestionKind, specs: Sequence[KindSpec], forecasts: Sequence[np.ndarray],
                    outcomes: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Per-question scores and diagnostics of ``forecasts`` (one vector per question; their lengths may differ, as
    multiple-choice questions' numbers of options do), each ``(n_questions,)`` in the order given: the kind scores
    the questions of one forecast length at a time."""
    sizes = np.array([len(f) for f in forecasts])
    scores: dict[str, np.ndarray] = {}
    diags: dict[str, np.ndarray] = {}
    for size in np.unique(sizes):
        idx = np.flatnonzero(sizes == size)
        group_specs = [specs[i] for i in idx]
        stack = np.vstack([forecasts[i] for i in idx])
        for out, part in ((scores, kind.score(group_specs, stack, outcomes[idx])),
                          (diags, kind.diagnostics(group_specs, stack, outcomes[idx]))):
            for name, values in part.items():
                out.setdefault(name, np.full(len(forecasts), np.nan))[idx] = values
    return scores, diags


def label_scores(frame: pd.DataFrame, kind: QuestionKind) -> dict[str, tuple[pd.DataFrame, dict[str, np.ndarray], dict[str, np.ndarray]]]:
    """Every label of ``frame`` (:func:`kind_forecasts`, one kind) scored as :func:`kind_table` scores it, in the
    frame's order: ``{label: (rows, scores, diagnostics)}``, ``rows`` the label's rows with an ``imputed`` column, a
    method on every question of the frame (a failure or a missing row imputed as the kind's worst case), a baseline
    on the questions it has a forecast for; ``scores`` and ``diagnostics`` per question of ``rows``, each
    ``(len(rows),)`` (:func:`score_forecasts`). A label with no row to score is left out."""
    all_questions = list(dict.fromkeys(frame["question_id"]))
    out = {}
    for label, rows in frame.groupby("label", sort=False):
        type_ = rows["type"].iloc[0]
        rows = rows.drop_duplicates("question_id")
        if type_ == "method":  # every question of the set: a failure or a missing row is the worst case
            missing = [q for q in all_questions if q not in set(rows["question_id"])]
            if missing:
                facts = frame.drop_duplicates("question_id").set_index("question_id").loc[missing]
                fill = facts.reset_index()[["question_id", "cluster", "outcome", "spec"]].assign(
                    run_id=rows["run_id"].iloc[0], label=label, type=type_, forecast=None, status="missing", note="no row")
                rows = pd.concat([rows, fill], ignore_index=True)
        kept, scores, diags = _label_scores(kind, rows.reset_index(drop=True), impute=type_ == "method")
        if not kept.empty:
            out[str(label)] = (kept, scores, diags)
    return out


def kind_table(frame: pd.DataFrame, kind: QuestionKind, *, reference: str = "mean", n_resamples: int = 1000,
               seed: int = 0, min_clusters_to_rank: int = MIN_CLUSTERS_TO_RANK,
               scored: Mapping[str, tuple[pd.DataFrame, dict[str, np.ndarray], dict[str, np.ndarray]]] | None = None) -> pd.DataFrame:
    """The leaderboard of ``kind`` from ``frame`` (:func:`kind_forecasts`), one row per label (module docstring).

    Parameters
    ----------
    frame : pandas.DataFrame
        Forecasts of questions of ``kind`` only.
    kind : QuestionKind
    reference : str, default "mean"
        The label paired differences are measured against (none when it is not in ``frame``).
    n_resamples : int
        Bootstrap resamples of each interval.
    seed : int
        Seed of the resampling.
    min_clusters_to_rank : int
        Fewest clusters of the questions for ranks (:data:`~benchmarks.scoring.ranking.MIN_CLUSTERS_TO_RANK`).
    scored : mapping, optional
        :func:`label_scores` of ``frame`` when the caller has it already (it is not computed again).

    Returns
    -------
    pandas.DataFrame
        Columns ``kind``, ``label``, ``type``, ``rank`` (NaN for a label not on the common set, and for every
        label when the questions have fewer than ``min_clusters_to_rank`` clusters: ``too_small_to_rank``), ``n``,
        ``n_imputed``, one mean per score of ``kind.scores`` (``n_<score>`` where a score is defined on fewer
        questions), the diagnostics' means (:data:`DIAGNOSTIC_TITLES`), ``<primary>_low`` / ``<primary>_high``
        (clustered bootstrap), ``delta_vs_<reference>`` with ``delta_low`` / ``delta_high`` (paired, the primary
        score; negative is better for a loss), sorted best first.

    Raises
    ------
    DataValidationError
        When ``frame`` holds a question of another kind.
    """
    if frame.empty:
        return pd.DataFrame(columns=["kind", "label", "type", "rank", "n", "n_imputed"])
    others = {s.kind for s in frame["spec"]} - {kind.name}
    if others:
        raise DataValidationError(f"a {kind.name} leaderboard got questions of {', '.join(sorted(others))}: kinds are never "
                                  "scored together", field="kind", value=sorted(others))
    primary = kind.primary_score
    sign = -1.0 if primary in kind.higher_is_better else 1.0
    all_questions = list(dict.fromkeys(frame["question_id"]))
    per_label: dict[str, tuple[pd.DataFrame, dict[str, np.ndarray]]] = {}
    out = []
    for label, (kept, scores, diags) in (label_scores(frame, kind) if scored is None else scored).items():
        type_ = kept["type"].iloc[0]
        entry: dict[str, Any] = {"kind": kind.name, "label": label, "type": type_, "n": len(kept),
                                 "n_imputed": int(kept["imputed"].sum())}
        for name, values in scores.items():
            defined = ~np.isnan(values)
            entry[name] = float(values[defined].mean()) if defined.any() else np.nan
            if not defined.all():
                entry[f"n_{name}"] = int(defined.sum())
        for name, values in diags.items():
            defined = ~np.isnan(values)
            entry[DIAGNOSTIC_TITLES.get(name, f"mean_{name}")] = float(values[defined].mean()) if defined.any() else np.nan
        ci = clustered_bootstrap_ci(scores[primary], kept["cluster"].to_numpy(), n_resamples=n_resamples, seed=seed)
        entry[f"{primary}_low"], entry[f"{primary}_high"] = ci.low, ci.high
        entry["_full"] = len(kept) == len(all_questions)
        per_label[label] = (kept, scores)
        out.append(entry)
    table = pd.DataFrame(out)
    if reference in per_label:
        ref_rows, ref_scores = per_label[reference]
        ref = dict(zip(ref_rows["question_id"], ref_scores[primary]))
        deltas = []
        for label in table["label"]:
            rows, scores = per_label[label]
            pairs = [(s, ref[q], c) for q, s, c in zip(rows["question_id"], scores[primary], rows["cluster"]) if q in ref]
            if label == reference or not pairs:
                deltas.append((np.nan, np.nan, np.nan))
                continue
            a, b, c = (np.array(x) for x in zip(*pairs))
            d = paired_difference_ci(a, b, c, n_resamples=n_resamples, seed=seed)
            deltas.append((d.mean, d.low, d.high))
        table[f"delta_vs_{reference}"], table["delta_low"], table["delta_high"] = zip(*deltas)
    table = table.sort_values(primary, key=lambda s: sign * s, kind="stable").reset_index(drop=True)
    ranked = table["_full"].to_numpy()
    too_small = frame.drop_duplicates("question_id")["cluster"].nunique() < min_clusters_to_rank
    rank = np.full(len(table), np.nan)
    if not too_small:
        rank[ranked] = np.arange(1, int(ranked.sum()) + 1)
    table.insert(3, "rank", pd.array([int(x) if x == x else None for x in rank], dtype="Int64"))
    table["too_small_to_rank"] = ranked & too_small
    return table.drop(columns="_full")
