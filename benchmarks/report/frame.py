"""The long frame of runs: one row per (run, question, method or baseline), what every report table is
computed from, and the question set runs are compared on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from benchmarks.run_folder.load import LoadedRun

__all__ = ["QUESTION_COLUMNS", "AddedMethods", "joined_rows", "long_frame", "member_rows", "methods_of", "planned_questions", "run_plans",
           "scorable"]


#: Method rows computed after a run, by run id, question id and method (the walk-forward fitted methods).
AddedMethods = Mapping[str, Mapping[str, Mapping[str, Mapping[str, Any]]]]


def joined_rows(*parts: AddedMethods | None) -> dict[str, dict[str, dict[str, Mapping[str, Any]]]]:
    """Method rows computed after a run by several owners (the fitted methods, a caller's), as one
    :data:`AddedMethods`, each question's rows in the order of ``parts``.

    Raises
    ------
    ValueError
        When two parts give a row of one method for one question (it would be scored once, silently).
    """
    out: dict[str, dict[str, dict[str, Mapping[str, Any]]]] = {}
    for part in parts:
        for run_id, questions in (part or {}).items():
            for qid, rows in questions.items():
                mine = out.setdefault(run_id, {}).setdefault(qid, {})
                twice = sorted(set(mine) & set(rows))
                if twice:
                    raise ValueError(f"run {run_id}, question {qid}: rows of {', '.join(twice)} added twice")
                mine.update(rows)
    return out


def methods_of(record: Mapping[str, Any], run_id: str, added: AddedMethods | None = None) -> dict[str, Any]:
    """The record's method rows with the rows ``added`` for its question (fitted methods) after them."""
    extra = (added or {}).get(run_id, {}).get(record.get("question_id"), {})
    return {**record.get("methods", {}), **extra}


def long_frame(runs: Sequence[LoadedRun], added: AddedMethods | None = None) -> tuple[pd.DataFrame, dict[str, dict[str, Any]]]:
    """One row per (run, question, method or baseline) of the loaded ``runs``
    (:func:`benchmarks.run_folder.load.load_run`) with p_yes, status and question fields.

    Returns the frame and the manifests by run id. Column ``label`` is the method name, prefixed by
    ``<run_id>:`` when several runs are compared. ``added`` holds method rows computed after the run
    (:func:`benchmarks.protocol.fitted.fit_runs`), scored like the record's own.
    """
    rows, manifests = [], {}
    for run in runs:
        run_id = run.run_id
        manifests[run_id] = run.manifest
        for r in run.records:
            base = {k: r.get(k) for k in ("question_id", "outcome", "source", "question_type", "cluster", "horizon_days", "forecast_date")}
            for kind, table in (("method", methods_of(r, run_id, added)), ("baseline", r.get("baselines", {}))):
                for name, m in table.items():
                    rows.append({"run_id": run_id, "method": name, "kind": kind, "p_yes": m.get("p_yes"),
                                 "status": m.get("status"), "note": m.get("note", ""), **base})
    df = pd.DataFrame(rows)
    if df.empty:
        return df, manifests
    # by question, not by finishing order: the bootstrap's draws, and so every interval, do not depend on
    # which question finished first (concurrency, Ray workers, shards)
    df = df.sort_values(["question_id"], kind="stable").reset_index(drop=True)
    multi = df["run_id"].nunique() > 1
    df["label"] = (df["run_id"] + ":" + df["method"]) if multi else df["method"]
    df["p_yes"] = pd.to_numeric(df["p_yes"], errors="coerce")
    return df, manifests


def members_of(record: Mapping[str, Any]) -> list[tuple[str, str, float]]:
    """The successful members of a ``results.jsonl`` record: ``(agent_id, model, p_yes)``, each p_yes clipped to
    the record's combination bounds, as its methods are scored (:mod:`benchmarks.protocol.methods`)."""
    trace = record.get("trace") or {}
    rule = trace.get("combination_rule") or {}
    lo, hi = float(rule.get("clip_low", 0.0)), float(rule.get("clip_high", 1.0))
    return [(str(f["agent_id"]), str(f.get("model") or ""), min(max(float(f["p_yes"]), lo), hi))
            for f in trace.get("forecasts", []) if f.get("status") == "ok" and f.get("p_yes") is not None]


def member_rows(runs: Sequence[LoadedRun]) -> pd.DataFrame:
    """One row per successful member forecast (:func:`members_of`) of each ok, resolved question of ``runs``:
    ``run_id``, ``question_id``, ``question_type``, ``entry`` (``member:<agent_id>@<model>``, prefixed by
    ``<run_id>:`` when several runs: two runs' members are different forecasters), ``p_yes`` in [0, 1] and
    ``outcome`` (0/1). The individual forecasters of an ensemble or a panel, which ForecastBench's difficulty
    fit learns from (:mod:`benchmarks.report.difficulty`)."""
    multi = len(runs) > 1
    rows = [(run.run_id, r["question_id"], r.get("question_type"), f"{run.run_id + ':' if multi else ''}member:{agent}@{model}", p,
             int(r["outcome"]))
            for run in runs for r in run.records if r.get("status") == "ok" and r.get("outcome") is not None
            for agent, model, p in members_of(r)]
    return pd.DataFrame(rows, columns=["run_id", "question_id", "question_type", "entry", "p_yes", "outcome"])


def scorable(df: pd.DataFrame) -> pd.DataFrame:
    """Rows with a probability and a resolved outcome."""
    ok = df["p_yes"].notna() & df["outcome"].notna() & (df["status"] == "ok")
    out = df[ok].copy()
    out["outcome"] = out["outcome"].astype(int)
    return out


#: Columns of :func:`long_frame` that describe the question (the same in every method's row).
QUESTION_COLUMNS = ("outcome", "source", "question_type", "cluster", "horizon_days", "forecast_date")


def run_plans(manifests: Mapping[str, Mapping[str, Any]], records: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, set[str]]:
    """The questions each run planned, by run id: its manifest's ``question_ids`` (what it was set to answer,
    finished or not), or the questions of its records for a manifest without them."""
    return {rid: set(m.get("question_ids") or []) or {r.get("question_id") for r in records.get(rid, [])}
            for rid, m in manifests.items()}


def planned_questions(manifests: Mapping[str, Mapping[str, Any]], records: Mapping[str, Sequence[Mapping[str, Any]]]
                      ) -> tuple[set[str], str]:
    """The questions every run planned (:func:`run_plans`), and a note when the runs planned different ones ('' otherwise).

    Runs are compared on the questions all of them planned, never on those all of them *answered*: a failure
    or an unfinished question is imputed instead (:func:`benchmarks.scoring.ranking.impute`).
    """
    plans = run_plans(manifests, records)
    common = set.intersection(*plans.values()) if plans else set()
    if len({frozenset(p) for p in plans.values()}) <= 1:
        return common, ""
    sizes = ", ".join(f"{rid} {len(p)}" for rid, p in plans.items())
    if not common:
        return common, (f"The runs planned no question in common ({sizes}): nothing is compared, and every method is "
                        "listed apart on its own questions.")
    return common, f"The runs planned different questions ({sizes}): compared on the {len(common)} every run planned."
