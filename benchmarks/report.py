"""Leaderboard reports: CSV, Markdown and one self-contained HTML page comparing runs.

Everything is computed from the runs' ``results.jsonl`` files: per-question scores first, then
aggregates (:mod:`benchmarks.scoring`), token and cost tables from the usage ledgers, the
cost-effectiveness of each reconciliation against ``mean``, the leakage audit and the contamination
split (questions due after each model's training cutoff).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from agent_schemas import DataValidationError, TokenUsage
from benchmarks import scoring
from benchmarks.confidence_bands import confidence_band_table
from benchmarks.fitted import (LEARNED_MEAN, MIN_FIT_PER_CLASS, MIN_FIT_QUESTIONS, UNFITTED_RULE, fallback_equals, fit_runs,
                               fit_sources, fitted_summary, refuse_other_models)
from benchmarks.leaderboard import FALLBACK_RULE, MIN_CLUSTERS_TO_RANK, MIN_COVERAGE, compare, rank_methods
from benchmarks.leakage import AUDIT_KEYS
from benchmarks.model_cutoffs import training_cutoff
from benchmarks.methods import method_of
from benchmarks.runner import MANIFEST_FILE, RESULTS_FILE, read_results, write_text_atomic
from benchmarks.shards import ShardGroup
from benchmarks.viewer import ReportData, render_page
from benchmarks.viewer.launch import PAGE_FILE
from benchmarks.score_file import score_forecasts_file  # noqa: F401  (re-exported: it lives in score_file)

log = logging.getLogger(__name__)
_WARNED_DUPLICATES: set[str] = set()

DATA_ATTRIBUTION = (
    "Questions: ForecastBench (Forecasting Research Institute), CC BY-SA 4.0; Karger et al., "
    "\"ForecastBench: A Dynamic Benchmark of AI Forecasting Capabilities\", ICLR 2025. Modified: "
    "filtered to resolved binary items, flattened, dates substituted, medians computed."
)


# --- loading -------------------------------------------------------------------------------------


def load_run(run_dir: "str | Path | ShardGroup") -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Return ``(manifest, result records)`` of a run folder, one record per question (the shards of one
    run given as a :class:`benchmarks.shards.ShardGroup` are read as one run: :meth:`ShardGroup.load`).

    A folder written by one runner holds one record per question (the run folder's lock allows one
    writer; ``--retry-failed`` sets the failed records aside before re-running them). Should a folder
    hold several records of a question anyway (copied files, folders written before the lock), the
    first is kept and a warning says how many were dropped (once per folder and process).

    Raises
    ------
    FileNotFoundError
        If the folder has no ``manifest.json``.
    """
    if isinstance(run_dir, ShardGroup):
        return run_dir.load()
    run_dir = Path(run_dir)
    mpath = run_dir / MANIFEST_FILE
    if not mpath.exists():
        raise FileNotFoundError(f"{run_dir} is not a run folder: no {MANIFEST_FILE}")
    records, seen = [], set()
    every = read_results(run_dir / RESULTS_FILE)
    for r in every:
        if r.get("question_id") not in seen:
            seen.add(r.get("question_id"))
            records.append(r)
    n_dropped = len(every) - len(records)
    if n_dropped and str(run_dir.resolve()) not in _WARNED_DUPLICATES:
        _WARNED_DUPLICATES.add(str(run_dir.resolve()))
        log.warning("%s: %d duplicated question record(s) in %s; the report keeps the first record of each question",
                    run_dir, n_dropped, RESULTS_FILE)
    return json.loads(mpath.read_text(encoding="utf-8")), records


def run_folders(paths: list[str | Path]) -> list[Path]:
    """The run folders ``paths`` name: a run folder (it has a ``manifest.json``) as given; a folder of run
    folders (``runs/``) as every run folder directly inside it, sorted by name.

    Raises
    ------
    FileNotFoundError
        For a path that does not exist, or a folder that is neither a run folder nor holds one.
    """
    out: list[Path] = []
    for p in map(Path, paths):
        if (p / MANIFEST_FILE).is_file():
            out.append(p)
            continue
        if not p.exists():
            raise FileNotFoundError(f"{p}: no such folder")
        inside = sorted(d for d in p.iterdir() if d.is_dir() and (d / MANIFEST_FILE).is_file()) if p.is_dir() else []
        if not inside:
            raise FileNotFoundError(f"{p} is not a run folder (no {MANIFEST_FILE}) and holds no run folder")
        out.extend(inside)
    return out


#: Method rows computed after a run, by run id, question id and method (the walk-forward fitted methods).
AddedMethods = Mapping[str, Mapping[str, Mapping[str, Mapping[str, Any]]]]


def methods_of(record: Mapping[str, Any], run_id: str, added: AddedMethods | None = None) -> dict[str, Any]:
    """The record's method rows with the rows ``added`` for its question (fitted methods) after them."""
    extra = (added or {}).get(run_id, {}).get(record.get("question_id"), {})
    return {**record.get("methods", {}), **extra}


def long_frame(run_dirs: list[str | Path], added: AddedMethods | None = None) -> tuple[pd.DataFrame, dict[str, dict[str, Any]]]:
    """One row per (run, question, method or baseline) with p_yes, status and question fields.

    Returns the frame and the manifests by run id. Column ``label`` is the method name, prefixed by
    ``<run_id>:`` when several runs are compared. ``added`` holds method rows computed after the run
    (:func:`benchmarks.fitted.fit_runs`), scored like the record's own.
    """
    rows, manifests = [], {}
    for d in run_dirs:
        manifest, records = load_run(d)
        run_id = manifest["run_id"]
        manifests[run_id] = manifest
        for r in records:
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


def scorable(df: pd.DataFrame) -> pd.DataFrame:
    """Rows with a probability and a resolved outcome."""
    ok = df["p_yes"].notna() & df["outcome"].notna() & (df["status"] == "ok")
    out = df[ok].copy()
    out["outcome"] = out["outcome"].astype(int)
    return out


#: Columns of :func:`long_frame` that describe the question (the same in every method's row).
QUESTION_COLUMNS = ("outcome", "source", "question_type", "cluster", "horizon_days", "forecast_date")


def planned_questions(manifests: Mapping[str, Mapping[str, Any]], records: Mapping[str, Sequence[Mapping[str, Any]]]
                      ) -> tuple[set[str], str]:
    """The questions every run planned, and a note when the runs planned different ones ('' otherwise).

    A run's plan is its manifest's ``question_ids`` (what it was set to answer, finished or not), or the
    questions of its records for a manifest without them. Runs are compared on the questions all of them
    planned, never on those all of them *answered*: a failure or an unfinished question is scored as the
    method's fallback instead (:func:`benchmarks.leaderboard.compare`).
    """
    plans = {rid: set(m.get("question_ids") or []) or {r.get("question_id") for r in records.get(rid, [])}
             for rid, m in manifests.items()}
    common = set.intersection(*plans.values()) if plans else set()
    if len({frozenset(p) for p in plans.values()}) <= 1:
        return common, ""
    sizes = ", ".join(f"{rid} {len(p)}" for rid, p in plans.items())
    if not common:
        return common, (f"The runs planned no question in common ({sizes}): nothing is compared, and every method is "
                        "listed apart on its own questions.")
    return common, f"The runs planned different questions ({sizes}): compared on the {len(common)} every run planned."


def method_fallbacks(df: pd.DataFrame) -> dict[tuple[str, str], float]:
    """What each LLM method's missing answer is scored as (:data:`benchmarks.leaderboard.FALLBACK_RULE`):
    ``{(label, question_id): p_yes}`` of the same run's ``mean`` on that question, for every method row
    (``kind == "method"``) of a run on every question where the run's mean answered. Baselines and
    questions whose ensemble failed are not in it (they fall back to 0.5)."""
    ok = df[(df["method"] == "mean") & (df["status"] == "ok") & df["p_yes"].notna()]
    means = {(r, q): float(p) for r, q, p in zip(ok["run_id"], ok["question_id"], ok["p_yes"])}
    methods = df.loc[df["kind"] == "method", ["run_id", "label"]].drop_duplicates()
    out: dict[tuple[str, str], float] = {}
    for run_id, label in zip(methods["run_id"], methods["label"]):
        out.update({(label, q): p for (r, q), p in means.items() if r == run_id})
    return out


# --- cost ----------------------------------------------------------------------------------------


def _usage_dict(u: TokenUsage) -> dict[str, Any]:
    return {"input_tokens": u.input_tokens or 0, "output_tokens": u.output_tokens or 0,
            "cached_tokens": u.cache_read_tokens or 0, "reasoning_tokens": u.reasoning_tokens or 0,
            "calls": u.calls, "cost_usd": u.cost_usd}


def cost_tables(run_dirs: list[str | Path], added: AddedMethods | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tokens, calls, USD and wall time per method, and usage per role.

    A method's usage is the shared ensemble usage plus its own extra usage (debate, supervisor,
    pipeline, and ``fitted_blend`` of the ``added`` rows, which reads both); aggregation methods cost exactly
    the ensemble. Wall time per question: ensemble = the slowest member (members run concurrently); debate /
    supervisor add their own wall time; the pipeline (and ``fitted_blend``) adds the longer of the two (they
    run concurrently).
    """
    method_rows, role_rows = [], []
    multi = len(run_dirs) > 1
    for d in run_dirs:
        manifest, records = load_run(d)
        run_id = manifest["run_id"]
        per_method: dict[str, dict[str, Any]] = {}
        roles: dict[str, TokenUsage] = {}
        for r in records:
            ledger = r.get("ledger", [])
            ens = TokenUsage.sum(TokenUsage(**{k: e[k] for k in TokenUsage.model_fields}) for e in ledger if e["method"] == "ensemble")
            for e in ledger:
                roles[e["role"]] = roles.get(e["role"], TokenUsage()) + TokenUsage(**{k: e[k] for k in TokenUsage.model_fields})
            trace = r.get("trace", {})
            ens_wall = max([f.get("latency_s", 0.0) for f in trace.get("forecasts", [])] or [0.0])
            deb_wall = (trace.get("debate") or {}).get("wall_time_s", 0.0)
            sup_wall = (trace.get("supervisor") or {}).get("wall_time_s", 0.0)
            walls = {"debate": deb_wall, "supervisor": sup_wall, "pipeline": max(deb_wall, sup_wall),
                     "fitted_blend": max(deb_wall, sup_wall)}
            for name, m in methods_of(r, run_id, added).items():
                extra = TokenUsage(**m.get("extra_usage", {}))
                acc = per_method.setdefault(name, {"usage": TokenUsage(), "extra": TokenUsage(), "wall": 0.0, "n": 0})
                acc["usage"] = acc["usage"] + ens + extra
                acc["extra"] = acc["extra"] + extra
                acc["wall"] += ens_wall + walls.get(method_of(name), 0.0)
                acc["n"] += 1
        for name, acc in per_method.items():
            n = acc["n"]  # at least 1: a method is listed once a record has its row
            extra_tokens = (acc["extra"].input_tokens or 0) + (acc["extra"].output_tokens or 0)
            method_rows.append({"label": f"{run_id}:{name}" if multi else name, "run_id": run_id, "method": name,
                                **_usage_dict(acc["usage"]),
                                "tokens_per_question": ((acc["usage"].input_tokens or 0) + (acc["usage"].output_tokens or 0)) / n,
                                "extra_tokens_per_question": extra_tokens / n,
                                "wall_time_s": acc["wall"]})
        for role, u in roles.items():
            role_rows.append({"run_id": run_id, "role": role, **_usage_dict(u)})
    return pd.DataFrame(method_rows), pd.DataFrame(role_rows)


def cost_effectiveness(scored: pd.DataFrame, costs: pd.DataFrame, *, reference: str = "mean",
                       n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Brier change against ``reference`` per 1,000 extra tokens, with its clustered bootstrap interval.

    For each method with extra tokens, the paired Brier difference (method - reference) on the
    questions both have a row for, divided by the mean extra tokens per question / 1,000. Negative is
    better (Brier falls). The interval scales the paired-difference interval by the same factor.
    :func:`write_report` passes the compared methods' rows with their fallbacks filled in
    (:func:`benchmarks.leaderboard.compare`), so a compared method is paired on every question.
    """
    out = []
    for run_id, g in scored.groupby("run_id"):
        ref = g[g["method"] == reference].set_index("question_id")
        if ref.empty:
            continue
        for _, c in costs[costs["run_id"] == run_id].iterrows():
            if c["method"] == reference or c["extra_tokens_per_question"] <= 0:
                continue
            m = g[g["method"] == c["method"]].set_index("question_id")
            common = m.index.intersection(ref.index)
            if len(common) == 0:
                continue
            o = m.loc[common, "outcome"].to_numpy()
            bs_m = scoring.brier_score(m.loc[common, "p_yes"].to_numpy(), o)
            bs_r = scoring.brier_score(ref.loc[common, "p_yes"].to_numpy(), o)
            mean, lo, hi = scoring.paired_difference_ci(bs_m, bs_r, m.loc[common, "cluster"].to_numpy(),
                                                        n_resamples=n_resamples, seed=seed)
            per_k = c["extra_tokens_per_question"] / 1000.0
            out.append({"label": c["label"], "n": len(common), "delta_brier_vs_" + reference: mean,
                        "delta_ci_low": lo, "delta_ci_high": hi,
                        "extra_tokens_per_question": c["extra_tokens_per_question"],
                        "delta_brier_per_1k_extra_tokens": mean / per_k,
                        "per_1k_ci_low": lo / per_k, "per_1k_ci_high": hi / per_k})
    return pd.DataFrame(out)


def reference_vs_mean(scored: pd.DataFrame, reference: str = LEARNED_MEAN, *, n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Per run, the paired Brier difference ``reference - mean`` on the questions both answered, with its
    clustered bootstrap interval: how far the learned mean, the reference of the second cost-effectiveness
    table, is from the mean. Where it is positive (the learned mean is worse), every gain measured against it
    overstates the gain against the mean by as much.

    Columns: ``label`` (the reference's), ``n`` (questions), ``delta_brier_vs_mean``, ``delta_ci_low``,
    ``delta_ci_high`` (Brier, negative: the reference is better).
    """
    out = []
    for _, g in scored.groupby("run_id"):
        ref = g[g["method"] == reference].set_index("question_id")
        mean = g[g["method"] == "mean"].set_index("question_id")
        common = ref.index.intersection(mean.index)
        if len(common) == 0:
            continue
        o = ref.loc[common, "outcome"].to_numpy()
        diff, lo, hi = scoring.paired_difference_ci(scoring.brier_score(ref.loc[common, "p_yes"].to_numpy(), o),
                                                    scoring.brier_score(mean.loc[common, "p_yes"].to_numpy(), o),
                                                    ref.loc[common, "cluster"].to_numpy(), n_resamples=n_resamples, seed=seed)
        out.append({"label": ref["label"].iloc[0], "n": len(common), "delta_brier_vs_mean": diff, "delta_ci_low": lo, "delta_ci_high": hi})
    return pd.DataFrame(out, columns=["label", "n", "delta_brier_vs_mean", "delta_ci_low", "delta_ci_high"])


def reference_note(vs_mean: pd.DataFrame) -> str:
    """One line under the learned-mean table: the learned mean against the mean (:func:`reference_vs_mean`)."""
    if vs_mean.empty:
        return f"{LEARNED_MEAN} has no question in common with mean."
    def signed(x: float) -> str:
        return f"{round(x, 4) + 0.0:+.4f}"  # + 0.0: a rounded -0.00001 reads +0.0000, not -0.0000

    shown = "; ".join(f"{r.label} {signed(r.delta_brier_vs_mean)} "
                      + (f"[{signed(r.delta_ci_low)}, {signed(r.delta_ci_high)}]" if r.delta_ci_low == r.delta_ci_low else "[no interval: too few clusters]")
                      + f" on {r.n} questions" for r in vs_mean.itertuples())
    return (f"The reference against mean (Brier difference, 95% interval): {shown}. Where it is positive the learned mean "
            "is worse than the mean, and each gain in this table overstates the gain against mean by as much: read the table against mean too.")


# --- audits --------------------------------------------------------------------------------------


def leakage_audit(run_dirs: list[str | Path]) -> pd.DataFrame:
    """Per run: the leakage audit summed over questions (:data:`benchmarks.leakage.AUDIT_KEYS`; ``findings``
    must be 0), with failed questions and provider call counts."""
    rows = []
    for d in run_dirs:
        manifest, records = load_run(d)
        tot = dict.fromkeys(AUDIT_KEYS, 0)
        for r in records:
            for k in tot:
                tot[k] += int(r.get("audit", {}).get(k, 0))
        stats = manifest.get("provider_stats", {})
        rows.append({"run_id": manifest["run_id"], "questions": len(records),
                     "failed_questions": sum(r["status"] != "ok" for r in records), **tot,
                     "provider_calls": stats.get("calls"), "retries": stats.get("retries"),
                     "cache_hits": stats.get("cache_hits")})
    return pd.DataFrame(rows)


def contamination_split(scored: pd.DataFrame, manifests: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """Brier per method on all questions and on those due after every model's training cutoff."""
    rows = []
    for run_id, g in scored.groupby("run_id"):
        specs = [p["spec"] for p in manifests[run_id].get("providers", [])]
        cutoffs = [training_cutoff(s) for s in specs]
        known = [c for c in cutoffs if c is not None]
        cutoff = max(known) if known else None
        dates = pd.to_datetime(g["forecast_date"]).dt.date
        after = dates > cutoff if cutoff is not None else pd.Series(False, index=g.index)
        for label, h in g.groupby("label"):
            a = h[after.loc[h.index]]
            rows.append({"label": label, "models": ", ".join(specs),
                         "training_cutoff": cutoff.isoformat() if cutoff else "unknown",
                         "n_all": len(h), "brier_all": float(scoring.brier_score(h["p_yes"].to_numpy(), h["outcome"].to_numpy()).mean()),
                         "n_after_cutoff": len(a),
                         "brier_after_cutoff": float(scoring.brier_score(a["p_yes"].to_numpy(), a["outcome"].to_numpy()).mean()) if len(a) else np.nan})
    return pd.DataFrame(rows)


# --- the report ----------------------------------------------------------------------------------


@dataclass
class Report:
    """Paths written, the Markdown printed, and the notice that must travel with the results."""

    leaderboard: pd.DataFrame
    markdown: str
    csv_path: Path
    markdown_path: Path
    html_path: Path
    notice: str = ""
    """'' or why the numbers are not a model's (:func:`simulation_note`)."""


def ranking_note(ranked: pd.DataFrame, min_coverage: float, *, plan_note: str = "") -> str:
    """What the ranking rests on, in a few sentences: the question set, its clusters, how missing answers
    are scored, and whether there are too few clusters to rank."""
    if ranked.empty:
        return plan_note or f"Nothing is ranked: no method answered {min_coverage:.0%} of the questions."
    n, k = int(ranked["n"].max()), int(ranked["n_clusters"].max())
    line = (f"Compared on the same {n} questions ({k} clusters of related questions); {FALLBACK_RULE}; the number of "
            f"such questions is the row's n_fallback. Methods that answered fewer than {min_coverage:.0%} of the "
            "questions are listed apart.")
    if plan_note:
        line += " " + plan_note
    if bool(ranked["too_small_to_rank"].iloc[0]):
        line += (f" **Too few clusters to rank**: {k} < {MIN_CLUSTERS_TO_RANK}; the rows are listed by Brier without "
                 "ranks, and the order is not evidence.")
    return line


def _md(df: pd.DataFrame) -> str:
    return df.to_markdown(index=False, floatfmt=".4f") if not df.empty else "(none)"


def _board_md(rows: pd.DataFrame) -> str:
    """Leaderboard rows in Markdown: rank ``=`` for a method that equals another (``equals``), none for the unranked."""
    rows = rows.assign(rank=["=" if e else ("" if pd.isna(k) else str(k)) for k, e in zip(rows["rank"], rows.get("equals", [""] * len(rows)))])
    return _md(rows)


def write_report(run_dirs: list[str | Path], out_dir: str | Path, *, baseline: str = "mean",
                 n_resamples: int = 1000, seed: int = 0, min_coverage: float = MIN_COVERAGE,
                 fit_from: Sequence[str | Path] = (), fit_from_any_model: bool = False,
                 extra_tables: Mapping[str, pd.DataFrame] | None = None) -> Report:
    """Score the runs and write ``leaderboard.csv``, ``leaderboard.md``, ``report.html`` (the run viewer's
    page, :func:`benchmarks.viewer.render_page`) and ``fitted.jsonl`` into ``out_dir``.

    Methods are ranked on one question set (:func:`benchmarks.leaderboard.rank_methods`): those that
    answered at least ``min_coverage`` of the questions, on the questions all of them answered; the
    others are listed apart with their own n.

    The fitted methods (:mod:`benchmarks.fitted`) are computed here, walk-forward: each run's questions
    are fitted on the questions of the run, and of the earlier runs ``fit_from`` (run folders or folders
    of runs), that resolved before each question's forecast date. ``fitted.jsonl`` holds one line per
    (run, question) with every fitted method's p_yes, parameters, ``n_fit`` and fallback flag. A ``fit_from``
    run of other models than a scored run is refused unless ``fit_from_any_model``
    (:func:`benchmarks.fitted.refuse_other_models`); the report names the runs and models the fits learned
    from (:func:`benchmarks.fitted.fit_sources`). A fitted method that fell back on every question takes no
    rank (:func:`benchmarks.fitted.fallback_equals`).

    ``extra_tables`` (title -> table) are written after the leaderboard, in the Markdown and on the page: a
    caller's own tables of the same runs (a panel's, :func:`benchmarks.panels.panel_tables`).

    Nothing is written until everything is computed; each file is written atomically.

    Raises
    ------
    DataValidationError
        When the runs hold no scorable forecasts (no resolved outcomes or no probabilities), or a ``fit_from``
        run has other models than a scored run (without ``fit_from_any_model``); nothing is written.
    OSError
        When ``out_dir`` cannot be created or a file cannot be written (``filename`` names it); files
        already there are left as they were.
    """
    run_dirs = [d if isinstance(d, ShardGroup) else Path(d) for d in run_dirs]
    out_dir = Path(out_dir)
    loaded = [load_run(d) for d in run_dirs]
    records = {m["run_id"]: recs for m, recs in loaded}
    earlier = {str(d): load_run(d) for d in run_folders(list(fit_from))}
    sources = fit_sources({_run_name(d, m): m for d, (m, _) in zip(run_dirs, loaded)}, {d: m for d, (m, _) in earlier.items()})
    if not fit_from_any_model:
        refuse_other_models(sources)
    fitted = fit_runs(records, [recs for _, recs in earlier.values()])
    df, manifests = long_frame(run_dirs, added=fitted)
    if df.empty:
        raise DataValidationError(f"no results in {', '.join(map(str, run_dirs))}", field="results.jsonl", value=0)
    planned, plan_note = planned_questions(manifests, records)
    the_set = planned if len(manifests) > 1 else None  # several runs: the questions every run planned
    scored = scorable(df)
    if scored.empty:
        raise DataValidationError("no scorable forecasts (need p_yes and a resolved outcome)", field="outcome", value=None)
    labels = sorted(set(scored["label"]))
    if baseline in labels:
        base_label = baseline
    else:  # several runs: labels are "<run id>:<method>"; take the first run's method
        prefixed = [lab for lab in labels if lab.endswith(":" + baseline)]
        if not prefixed:
            raise DataValidationError(f"baseline {baseline!r} is not among the scored methods: {', '.join(labels)}",
                                      field="baseline", value=baseline)
        base_label = prefixed[0]
    fallbacks = method_fallbacks(df)
    # a fitted method that fell back on every question is its unfitted rule: shown as "= mean (not fitted: n < 30)", no rank
    table = rank_methods(scored, method_col="label", baseline=base_label, min_coverage=min_coverage,
                         n_resamples=n_resamples, seed=seed, fallbacks=fallbacks, question_cols=QUESTION_COLUMNS,
                         questions=the_set, equals=fallback_equals(fitted, prefix_run=len(records) > 1))
    # every other comparison uses the same rows: compared methods on every question (fallbacks filled in),
    # the methods listed apart on their own questions
    comparison = compare(scored, method_col="label", min_coverage=min_coverage, fallbacks=fallbacks,
                         question_cols=QUESTION_COLUMNS, questions=the_set)
    compared = pd.concat([comparison.frame, scored[scored["label"].isin(comparison.apart)].assign(fallback=False)],
                         ignore_index=True)
    attempts = df.groupby("label").agg(attempted=("question_id", "size"), failed=("status", lambda s: int((s == "failed").sum())))
    table = table.merge(attempts, left_on="label", right_index=True, how="left")
    costs, roles = cost_tables(run_dirs, added=fitted)  # never empty: every question has its fitted methods' rows
    table = table.merge(costs[["label", "tokens_per_question", "extra_tokens_per_question", "cost_usd"]], on="label", how="left")
    effect = cost_effectiveness(compared, costs, reference="mean", n_resamples=n_resamples, seed=seed)
    learned = cost_effectiveness(compared, costs, reference=LEARNED_MEAN, n_resamples=n_resamples, seed=seed)
    learned_vs_mean = reference_vs_mean(compared, n_resamples=n_resamples, seed=seed)
    fit_table = fitted_summary(fitted, prefix_run=len(records) > 1)
    bands = confidence_band_table(scored, records, n_resamples=n_resamples, seed=seed)
    audit = leakage_audit(run_dirs)
    contamination = contamination_split(compared, manifests)
    compared = compared.assign(horizon_bucket=compared["horizon_days"].map(lambda d: scoring.horizon_bucket(d) if d == d and d is not None else "unknown"))
    segments = {col: scoring.segment_table(compared, col, method_col="label") for col in ("source", "question_type", "horizon_bucket")}

    csv_path = out_dir / "leaderboard.csv"
    main_cols = [c for c in ("rank", "label", "equals", "n", "n_answered", "n_fallback", "brier", "brier_ci_low", "brier_ci_high",
                             "log_loss", "ece", "delta_brier_vs_baseline", "delta_brier_ci_low", "delta_brier_ci_high",
                             "tokens_per_question", "failed") if c in table.columns and (c != "equals" or table[c].astype(bool).any())]
    ranked, unranked = table[table["ranked"]], table[~table["ranked"]]
    simulated = simulation_note(manifests)
    md = "\n\n".join([
        *([f"**{simulated}**"] if simulated else []),
        f"## Leaderboard (lower Brier is better; 95% clustered bootstrap intervals; baseline for deltas: {base_label})",
        ranking_note(ranked, min_coverage, plan_note=plan_note),
        _board_md(ranked[main_cols]),
        *([f"## Not ranked (answered fewer than {min_coverage:.0%} of the questions; Brier on their own questions)",
           _board_md(unranked[main_cols])] if len(unranked) else []),
        *[part for title, extra in (extra_tables or {}).items() for part in (f"## {title}", _md(extra))],
        "## Cost per method", _md(costs.drop(columns=["run_id", "method"])),
        "## Cost-effectiveness against mean (Brier change per 1,000 extra tokens; negative is better)", _md(effect),
        f"## {LEARNED_TITLE}", reference_note(learned_vs_mean), _md(learned),
        f"## {FITTED_TITLE}", FITTED_NOTE, _md(fit_table.drop(columns=["run_id", "method"])),
        fit_sources_note(sources), _md(sources),
        f"## {BANDS_TITLE}", _md(bands),
        "## Leakage audit over the prompts actually sent (findings must be 0)", _md(audit),
    ])
    md_path = out_dir / "leaderboard.md"
    html_path = out_dir / PAGE_FILE
    shown = {rid: [{**r, "methods": methods_of(r, rid, fitted)} for r in recs] for rid, recs in records.items()}
    tables = {**(extra_tables or {}), "Cost per method": costs, "Cost-effectiveness against mean (Brier change per 1,000 extra tokens; negative is better)": effect,
              LEARNED_TITLE: learned, REFERENCE_TITLE: learned_vs_mean, FITTED_TITLE: fit_table, SOURCES_TITLE: sources, BANDS_TITLE: bands,
              "Tokens per role": roles, "Leakage audit over the prompts actually sent (findings must be 0)": audit,
              "Contamination split: questions due after the models' training cutoff": contamination,
              **{f"By {col.replace('_', ' ')}": seg for col, seg in segments.items()}}
    page = render_page(ReportData(leaderboard=table, baseline=base_label, min_coverage=min_coverage,
                                  ranking_note=ranking_note(ranked, min_coverage, plan_note=plan_note), scored=scored, manifests=manifests,
                                  records=shown, tables=tables, confidence_bands=bands, attribution=DATA_ATTRIBUTION,
                                  notice=simulated))
    # every file is complete or untouched (temp file + os.replace); an OSError names the file
    out_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(csv_path, table.to_csv(index=False))
    write_text_atomic(md_path, md + "\n\n" + DATA_ATTRIBUTION + "\n")
    write_text_atomic(html_path, page)
    write_text_atomic(out_dir / FITTED_FILE, fitted_lines(fitted, records, fit_from))
    return Report(table, md, csv_path, md_path, html_path, notice=simulated)


#: Per (run, question): every fitted method's row (p_yes, parameters, n_fit, fallback), written by :func:`write_report`.
FITTED_FILE = "fitted.jsonl"
LEARNED_TITLE = f"Cost-effectiveness against the learned mean ({LEARNED_MEAN}: the mean recalibrated walk-forward; Brier change per 1,000 extra tokens)"
FITTED_TITLE = "Fitted methods (walk-forward: each question fitted only on questions resolved before its forecast date)"
FITTED_NOTE = (f"`fitted` questions used parameters fitted on at least {MIN_FIT_QUESTIONS} resolved questions ({MIN_FIT_PER_CLASS} "
               "of each outcome); `fallback` questions had fewer and used the unfitted rule ("
               + ", ".join(f"{m}: {rule}" for m, rule in UNFITTED_RULE.items()) + f"). Per-question parameters and n are in {FITTED_FILE}.")
BANDS_TITLE = "Brier and calibration by confidence band (does the confidence mean anything?)"
SOURCES_TITLE = "Fitted methods: the runs they learned from, and their models"
REFERENCE_TITLE = f"The learned mean ({LEARNED_MEAN}) against mean: the reference of the cost-effectiveness table above"


def _run_name(run_dir: "Path | ShardGroup", manifest: Mapping[str, Any]) -> str:
    return str(run_dir) if isinstance(run_dir, Path) else str(manifest.get("run_id", run_dir))


def fit_sources_note(sources: pd.DataFrame) -> str:
    """One line on what the fitted methods learned from (:func:`benchmarks.fitted.fit_sources`), saying so
    when a ``--fit-from`` run is of another model (accepted with ``--fit-from-any-model``)."""
    earlier = sources[sources["learned_as"] == "--fit-from"]
    line = "Learned from each scored run's own questions" + (
        f" and {len(earlier)} --fit-from run(s): {', '.join(f'{r.run} ({r.models})' for r in earlier.itertuples())}." if len(earlier) else ".")
    other = earlier[earlier["other_model"]]
    if len(other):
        line += (f" **Another model**: {', '.join(other['run'])} (accepted with --fit-from-any-model); the fits learned "
                 "those models' forecasts, not only the scored run's.")
    return line


def fitted_lines(fitted: AddedMethods, records: Mapping[str, Sequence[Mapping[str, Any]]], fit_from: Sequence[str | Path]) -> str:
    """The text of ``fitted.jsonl``: one JSON line per (run, question) with its fitted methods' rows."""
    lines = []
    for run_id, recs in records.items():
        for r in recs:
            rows = fitted.get(run_id, {}).get(r.get("question_id"))
            if rows is not None:
                lines.append(json.dumps({"run_id": run_id, "question_id": r.get("question_id"), "forecast_date": r.get("forecast_date"),
                                         "fit_from": [str(p) for p in fit_from], "methods": rows}, ensure_ascii=False))
    return "\n".join(lines) + ("\n" if lines else "")


def simulation_note(manifests: dict[str, dict[str, Any]]) -> str:
    """The label of results that come from the simulator (:data:`agent_providers.simulator.SIMULATION_NOTE`
    naming the runs' simulator specs), or '' when no run used it."""
    from agent_providers.simulator import SIMULATION_NOTE, is_simulated

    specs = sorted({p["spec"] for m in manifests.values() for p in m.get("providers", []) if is_simulated(p["spec"])})
    return f"{SIMULATION_NOTE} Providers: {', '.join(specs)}." if specs else ""
