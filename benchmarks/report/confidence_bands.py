"""Does the toolkit's confidence mean anything? Brier and calibration by confidence band.

Each question's trace records a confidence (:mod:`agent_research.confidence`): the overall one (the
weakest link of the members' stated confidences and the supervisor's grounded one), the supervisor's
stated and grounded (effective) ones, and QA flags. This module splits the scored forecasts by those
bands and scores each band as :func:`benchmarks.scoring.segment_table` does (Brier with its clustered
bootstrap interval, log loss, ECE), plus the mean p_yes and the yes-rate of the band (calibration in the
large). If confidence means something, Brier falls from low to high; if the supervisor's grounding
helps, its grounded "high" band scores better than its stated "high" band.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from benchmarks import scoring
from benchmarks.protocol.methods import method_of

__all__ = ["BANDS", "CONFIDENCE_KINDS", "confidence_band_table", "confidence_columns"]

#: Band labels in display order ("none stated": no confidence recorded for the question).
BANDS: tuple[str, ...] = ("high", "medium", "low", "none stated")
#: Which confidence splits which methods: column of :func:`confidence_columns` -> (title, methods).
CONFIDENCE_KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "overall_confidence": ("overall (weakest link)", ("mean", "pipeline", "fitted_blend")),
    "supervisor_stated": ("supervisor, as stated", ("supervisor",)),
    "supervisor_grounded": ("supervisor, grounded in its evidence", ("supervisor", "pipeline")),
    "unresolved_disagreement": ("QA flag: disagreement left unresolved", ("pipeline",)),
}


def confidence_columns(records: Mapping[str, Sequence[Mapping[str, Any]]]) -> pd.DataFrame:
    """One row per (run, question) with its confidence bands, read from the records' traces.

    Returns columns ``run_id``, ``question_id``, ``overall_confidence``, ``supervisor_stated``,
    ``supervisor_grounded`` (a band of :data:`BANDS`) and ``unresolved_disagreement`` ("flagged" or
    "not flagged"). Records written before confidences were recorded are "none stated".
    """
    rows = []
    for run_id, recs in records.items():
        for r in recs:
            trace = r.get("trace") or {}
            qc = trace.get("confidence") or {}
            sup = trace.get("supervisor") or {}
            ok = sup.get("status") == "ok"
            rows.append({
                "run_id": run_id, "question_id": r.get("question_id"),
                "overall_confidence": qc.get("overall") or "none stated",
                "supervisor_stated": (sup.get("confidence") if ok else None) or "none stated",
                "supervisor_grounded": ((sup.get("grounding") or {}).get("effective") if ok else None) or "none stated",
                "unresolved_disagreement": "flagged" if "unresolved_disagreement" in (qc.get("flags") or []) else "not flagged",
            })
    return pd.DataFrame(rows, columns=["run_id", "question_id", *CONFIDENCE_KINDS])


def confidence_band_table(scored: pd.DataFrame, records: Mapping[str, Sequence[Mapping[str, Any]]], *,
                          n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Brier, interval, log loss, ECE, mean p_yes and yes-rate per confidence band (see the module docstring).

    Parameters
    ----------
    scored : pandas.DataFrame
        Scorable long frame (:func:`benchmarks.report.frame.scorable`): ``run_id``, ``question_id``, ``method``,
        ``label``, ``p_yes``, ``outcome``, ``cluster``.
    records : mapping of run id to records
        The runs' ``results.jsonl`` records (for the traces' confidences).
    n_resamples, seed
        Of the clustered bootstrap (:func:`benchmarks.scoring.clustered_bootstrap_ci`).

    Returns
    -------
    pandas.DataFrame
        Columns ``confidence`` (what was split on), ``band``, ``label``, ``n``, ``brier``, ``brier_ci_low``,
        ``brier_ci_high`` (NaN with too few clusters), ``log_loss``, ``ece``, ``mean_p_yes`` and ``yes_rate``;
        empty when no question recorded a confidence.
    """
    columns = ["confidence", "band", "label", "n", "brier", "brier_ci_low", "brier_ci_high", "log_loss", "ece",
               "mean_p_yes", "yes_rate"]
    conf = confidence_columns(records)
    if scored.empty or conf.empty or (conf[["overall_confidence", "supervisor_stated"]] == "none stated").all(axis=None):
        return pd.DataFrame(columns=columns)
    df = scored.merge(conf, on=["run_id", "question_id"], how="left")
    parts = []
    for col, (title, methods) in CONFIDENCE_KINDS.items():
        part = df[df["method"].map(method_of).isin(methods)].dropna(subset=[col])  # gated labels too
        if part.empty:
            continue
        table = scoring.segment_table(part, col, method_col="label", baseline=None, n_resamples=n_resamples, seed=seed)
        stats = part.groupby([col, "label"]).agg(mean_p_yes=("p_yes", "mean"), yes_rate=("outcome", "mean")).reset_index()
        table = table.merge(stats, on=[col, "label"], how="left").rename(columns={col: "band"})
        table.insert(0, "confidence", title)
        table["_band"] = table["band"].map(_BAND_ORDER)
        parts.append(table.sort_values(["label", "_band"], kind="mergesort"))
    if not parts:
        return pd.DataFrame(columns=columns)
    out = pd.concat(parts, ignore_index=True)
    return out[[c for c in columns if c in out.columns]]


_BAND_ORDER = {b: i for i, b in enumerate([*BANDS, "flagged", "not flagged"])}
