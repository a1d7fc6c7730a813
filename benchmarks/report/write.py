"""Leaderboard reports: CSV, Markdown and one self-contained HTML page comparing runs.

Every run is loaded once (:func:`benchmarks.run_folder.load.load_run`) and every table computed from what was
loaded: per-question scores first, then aggregates (:mod:`benchmarks.scoring`), the leaderboard
(:mod:`benchmarks.report.leaderboard`), token and cost tables from the usage ledgers and the cost-effectiveness
of each reconciliation against ``mean`` (:mod:`benchmarks.report.costs`), the fitted methods, the confidence
bands, the leakage audit and the contamination split (:mod:`benchmarks.report.audits`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from agent_schemas import DataValidationError
from agent_schemas.kinds import DEFAULT_KIND, KINDS
from benchmarks import scoring
from benchmarks.protocol.baselines import crowd_timing_note, evidence_cutoff_of
from benchmarks.protocol.fitted import (LEARNED_MEAN, MIN_FIT_PER_CLASS, MIN_FIT_QUESTIONS, UNFITTED_RULE, fallback_equals,
                                        fit_runs, fit_sources, fitted_summary, refuse_other_models,
                                        refuse_other_settings)
from benchmarks.report.audits import contamination_split, leakage_audit_table, simulation_note
from benchmarks.report.confidence_bands import confidence_band_table
from benchmarks.report.costs import cost_effectiveness, cost_tables, reference_note, reference_vs_mean
from benchmarks.report.difficulty import brier_index_columns
from benchmarks.report.kind_report import KindReport, kind_reports, records_of_kind, write_kind_reports
from benchmarks.report.diversity import diversity_report
from benchmarks.report.frame import (QUESTION_COLUMNS, AddedMethods, joined_rows, long_frame, member_rows, methods_of,
                                     planned_questions, run_plans, scorable)
from benchmarks.report.members import MemberBehaviour, member_behaviour
from benchmarks.report.leaderboard import leaderboard_sections, markdown_table, ranking_note, write_leaderboard
from benchmarks.run_folder.durable import write_text_atomic
from benchmarks.run_folder.layout import PAGE_FILE
from benchmarks.run_folder.load import LoadedRun, ShardGroup, load_run, run_folders
from benchmarks.scoring.ranking import MAX_IMPUTED, compare, impute, rank_methods, sensitivity_lines
from benchmarks.viewer import ReportData, render_page
from benchmarks.viewer.page import board_rows

__all__ = ["DATA_ATTRIBUTION", "FITTED_FILE", "Report", "fit_sources_note", "fitted_lines", "write_report"]

DATA_ATTRIBUTION = (
    "Questions: ForecastBench (Forecasting Research Institute), CC BY-SA 4.0; Karger et al., "
    "\"ForecastBench: A Dynamic Benchmark of AI Forecasting Capabilities\", ICLR 2025. Modified: "
    "filtered to resolved binary items, flattened, dates substituted, medians computed."
)



class NothingToScore(DataValidationError):
    """No forecast of the runs can be scored yet: no question has both a resolved outcome and a probability
    (a live round before its resolutions, or every resolved question failed). Raised by
    :func:`write_report` before anything is written; the runs' results are untouched."""


def default_baseline(scored: pd.DataFrame) -> str:
    """The label deltas are measured against when the caller names none: ``mean`` (or, several runs, the
    first run's ``<run id>:mean``) when it is scored, else the first scored method, else the first label."""
    labels = list(dict.fromkeys(scored["label"]))
    methods = list(dict.fromkeys(scored.loc[scored["kind"] == "method", "label"]))
    means = [lab for lab in methods if lab == "mean" or lab.endswith(":mean")]
    return (means or methods or labels)[0]


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
    baseline: str = "mean"
    """The label deltas are measured against."""
    diversity_lines: list[str] = field(default_factory=list)
    """At most two terminal lines on the members' diversity (:meth:`benchmarks.report.diversity.DiversityReport.lines`)."""
    plan_note: str = ""
    """'' or how the runs' planned questions differ (:func:`benchmarks.report.frame.planned_questions`)."""
    shared_questions: int | None = None
    """Several runs: how many questions every run planned (0: they are compared by the Brier Index alone); one run: None."""
    members: MemberBehaviour | None = None
    """What the runs' members answered (:func:`benchmarks.report.members.member_behaviour`)."""
    crowd_note: str = ""
    """'' or what the crowd knew against the members, by the runs' evidence cutoffs
    (:func:`benchmarks.protocol.baselines.crowd_timing_note`)."""


def write_report(run_dirs: Sequence[str | Path | ShardGroup | LoadedRun], out_dir: str | Path, *, baseline: str | None = "mean",
                 n_resamples: int = 1000, seed: int = 0, max_imputed: float = MAX_IMPUTED,
                 fit_from: Sequence[str | Path] = (), fit_from_any_model: bool = False,
                 added: AddedMethods | None = None, extra_tables: Mapping[str, pd.DataFrame] | None = None) -> Report:
    """Score the runs and write ``leaderboard.csv``, ``leaderboard.md``, ``report.html`` (the run viewer's
    page, :func:`benchmarks.viewer.render_page`) and ``fitted.jsonl`` into ``out_dir``.

    Methods are ranked on one question set (:func:`benchmarks.scoring.ranking.rank_methods`): every question
    of one run, or the questions every run planned (:func:`benchmarks.report.frame.planned_questions`), a missing
    answer imputed as the method's worst case (:func:`benchmarks.scoring.ranking.impute`); a method with more than
    ``max_imputed`` of them imputed is listed apart with its own n, and the report says where each method with
    imputed questions would stand (:func:`benchmarks.scoring.ranking.sensitivity_lines`). The cost-effectiveness,
    segment and contamination tables use the same rows. The Brier Index scores each method on every question
    its run planned, imputed the same way (:mod:`benchmarks.report.difficulty`).

    The fitted methods (:mod:`benchmarks.protocol.fitted`) are computed here, walk-forward: each run's questions
    are fitted on the questions of the run, and of the earlier runs ``fit_from`` (run folders or folders
    of runs), that resolved before each question's forecast date. ``fitted.jsonl`` holds one line per
    (run, question) with every fitted method's p_yes, parameters, ``n_fit`` and fallback flag. A ``fit_from``
    run of other models than a scored run is refused unless ``fit_from_any_model``
    (:func:`benchmarks.protocol.fitted.refuse_other_models`); the report names the runs and models the fits learned
    from (:func:`benchmarks.protocol.fitted.fit_sources`). A fitted method that fell back on every question takes no
    rank (:func:`benchmarks.protocol.fitted.fallback_equals`).

    ``added`` holds method rows the caller computed after the runs, ``{run_id: {question_id: {method: row}}}``
    (rows as :func:`benchmarks.protocol.methods.method_rows` writes them: ``p_yes``, ``status``, ``note``,
    ``extra_usage``), e.g. a panel's best, median and worst single forecaster
    (:func:`benchmarks.panels.forecasters.pick_methods`): they are ranked, costed and shown on the page like the
    records' own rows and the fitted methods, and not written to ``fitted.jsonl``. ``extra_tables`` (title ->
    table) are written after the leaderboard, in the Markdown and on the page: a caller's own tables of the same
    runs (a panel's, :func:`benchmarks.panels.report.panel_tables`).

    Deltas are measured against ``baseline``; ``None`` takes :func:`default_baseline` (``mean`` when the
    runs have it, else their first method), so a run of any methods gets its report.

    Each run is read once (:func:`benchmarks.run_folder.load.load_run`); the shards of one run are given as a
    :class:`benchmarks.run_folder.load.ShardGroup`, and a run the caller has read already as its
    :class:`~benchmarks.run_folder.load.LoadedRun` (not read again). Nothing is written until everything is computed; each file is
    written atomically, the leaderboard's by :func:`benchmarks.report.leaderboard.write_leaderboard`.

    Raises
    ------
    NothingToScore
        (a :class:`DataValidationError`) When the runs hold no scorable forecasts (no resolved outcome with
        a probability: a live round before its resolutions); the message counts the resolved questions.
    DataValidationError
        When a ``fit_from`` run has other models than a scored run (without ``fit_from_any_model``) or another
        setting of :data:`benchmarks.protocol.fitted.FIT_SETTINGS` (``--show-crowd``, members, ...), or the
        named ``baseline`` is not scored; nothing is written.
    OSError
        When ``out_dir`` cannot be created or a file cannot be written (``filename`` names it); files
        already there are left as they were.
    """
    out_dir = Path(out_dir)
    loaded = [load_run(d) for d in run_dirs]
    # every other kind of question on its own leaderboard (leaderboard_<kind>.csv/md), never in the binary one
    kinds = kind_reports(loaded, added=added, n_resamples=n_resamples, seed=seed)
    runs = [records_of_kind(run, KINDS[DEFAULT_KIND]) for run in loaded]
    if kinds and not any(run.records for run in runs):
        return _write_kind_only(loaded, kinds, out_dir)
    records = {run.run_id: run.records for run in runs}
    earlier = [load_run(d) for d in run_folders(list(fit_from))]
    sources = fit_sources({run.name: run.manifest for run in runs}, {run.name: run.manifest for run in earlier})
    if not fit_from_any_model:
        refuse_other_models(sources)
    refuse_other_settings({run.name: run.manifest for run in runs}, {run.name: run.manifest for run in earlier})
    fitted = fit_runs(records, [run.records for run in earlier])
    after_runs = joined_rows(fitted, added)  # every method row computed after the runs
    df, manifests = long_frame(runs, added=after_runs)
    if df.empty:
        raise DataValidationError(f"no results in {', '.join(run.name for run in runs)}", field="results.jsonl", value=0)
    planned, plan_note = planned_questions(manifests, records)
    the_set = planned if len(manifests) > 1 else None  # several runs: the questions every run planned
    scored = scorable(df)
    if scored.empty:
        questions = df.drop_duplicates(["run_id", "question_id"])
        n_resolved = int(questions["outcome"].notna().sum())
        why = ("none of them has a probability (every resolved question failed)" if n_resolved else
               "nothing to score until they resolve")
        raise NothingToScore(f"no scorable forecasts: {n_resolved} of {len(questions)} questions have a resolved outcome; {why}",
                             field="outcome", value=n_resolved)
    labels = sorted(set(scored["label"]))
    if baseline is None:
        baseline = default_baseline(scored)
    if baseline in labels:
        base_label = baseline
    else:  # several runs: labels are "<run id>:<method>"; take the first run's method
        prefixed = [lab for lab in dict.fromkeys(scored["label"]) if lab.endswith(":" + baseline)]  # in the runs' order
        if not prefixed:
            raise DataValidationError(f"baseline {baseline!r} is not among the scored methods: {', '.join(labels)}",
                                      field="baseline", value=baseline)
        base_label = prefixed[0]
    # a fitted method that fell back on every question is its unfitted rule: shown as "= mean (not fitted: one forecast date)", no rank
    table = rank_methods(scored, method_col="label", baseline=base_label, max_imputed=max_imputed,
                         n_resamples=n_resamples, seed=seed, question_cols=QUESTION_COLUMNS,
                         questions=the_set, equals=fallback_equals(fitted, prefix_run=len(records) > 1))
    # every other comparison uses the same rows: the compared methods on every question (missing answers imputed);
    # a paired comparison (cost-effectiveness, betting) only those, as the leaderboard pairs only them: a method listed
    # apart would be paired on the questions its failures chose; the descriptive tables (segments, contamination) also
    # the methods listed apart, on their own questions
    comparison = compare(scored, method_col="label", max_imputed=max_imputed, question_cols=QUESTION_COLUMNS, questions=the_set)
    paired = comparison.frame
    compared = pd.concat([paired, scored[scored["label"].isin(comparison.apart)].assign(imputed=False)], ignore_index=True)
    # the Brier Index: every label on every question its run planned, imputed the same way (ForecastBench imputes first)
    plans = run_plans(manifests, records)
    own = impute(scored, {lab: plans[rid] for lab, rid in zip(scored["label"], scored["run_id"])}, method_col="label",
                 question_cols=QUESTION_COLUMNS)
    if len(records) > 1:  # a comparison: each row's method and run apart, next to its "<run id>:<method>" label
        first = scored.drop_duplicates("label").set_index("label")
        at = list(table.columns).index("label") + 1
        table.insert(at, "run", table["label"].map(first["run_id"]))
        table.insert(at, "method", table["label"].map(first["method"]))
    table = table.merge(brier_index_columns(own, member_rows(runs), max_imputed=max_imputed), on="label", how="left")
    attempts = df.groupby("label").agg(attempted=("question_id", "size"), failed=("status", lambda s: int((s == "failed").sum())))
    table = table.merge(attempts, left_on="label", right_index=True, how="left")
    costs, roles = cost_tables(runs, added=after_runs)  # never empty: every question has its fitted methods' rows
    table = table.merge(costs[["label", "tokens_per_question", "extra_tokens_per_question", "cost_usd"]], on="label", how="left")
    # why a panel's methods spend no tokens ("human panel: no tokens"), read by the Markdown, the terminal and the page
    table["no_tokens"] = board_rows(table, scored, manifests)["no_tokens"].to_numpy()
    effect = cost_effectiveness(paired, costs, reference="mean", n_resamples=n_resamples, seed=seed)
    learned = cost_effectiveness(paired, costs, reference=LEARNED_MEAN, n_resamples=n_resamples, seed=seed)
    learned_vs_mean = reference_vs_mean(paired, n_resamples=n_resamples, seed=seed)
    fit_table = fitted_summary(fitted, prefix_run=len(records) > 1)
    bands = confidence_band_table(scored, records, n_resamples=n_resamples, seed=seed)
    audit = leakage_audit_table(runs)
    contamination = contamination_split(compared, manifests)
    compared = compared.assign(horizon_bucket=compared["horizon_days"].map(lambda d: scoring.horizon_bucket(d) if d == d and d is not None else "unknown"))
    segments = {col: scoring.segment_table(compared, col, method_col="label") for col in ("source", "question_type", "horizon_bucket")}
    betting = betting_against_market(paired, scored, n_resamples=n_resamples, seed=seed)
    diversity = diversity_report(runs, n_resamples=n_resamples, seed=seed)

    simulated = simulation_note(manifests)
    crowd_note = crowd_timing_note(table["label"], {rid: evidence_cutoff_of(m) for rid, m in manifests.items()})
    md = "\n\n".join([
        *([f"**{simulated}**"] if simulated else []),
        *leaderboard_sections(table, baseline=base_label, max_imputed=max_imputed, plan_note=plan_note, crowd_note=crowd_note),
        *[rep.markdown() for rep in kinds],
        *[part for title, extra in (extra_tables or {}).items() for part in (f"## {title}", markdown_table(extra))],
        *diversity.markdown_sections(),
        "## Cost per method", markdown_table(costs.drop(columns=["run_id", "method"])),
        f"## {ROLES_TITLE}", markdown_table(roles if len(records) > 1 else roles.drop(columns=["run_id"], errors="ignore")),
        "## Cost-effectiveness against mean (Brier change per 1,000 extra tokens; negative is better)", markdown_table(effect),
        f"## {LEARNED_TITLE}", reference_note(learned_vs_mean), markdown_table(learned),
        f"## {FITTED_TITLE}", FITTED_NOTE, markdown_table(fit_table.drop(columns=["run_id", "method"])),
        fit_sources_note(sources), markdown_table(sources),
        f"## {BANDS_TITLE}", markdown_table(bands),
        f"## {BETTING_TITLE}", BETTING_NOTE, markdown_table(betting),
        "## Leakage audit over the prompts actually sent (findings must be 0)", markdown_table(audit),
    ])
    html_path = out_dir / PAGE_FILE
    shown = {rid: [{**r, "methods": methods_of(r, rid, after_runs)} for r in recs] for rid, recs in records.items()}
    tables = {**{rep.title: rep.table for rep in kinds}, **(extra_tables or {}), **diversity.tables(), "Cost per method": costs, "Cost-effectiveness against mean (Brier change per 1,000 extra tokens; negative is better)": effect,
              LEARNED_TITLE: learned, REFERENCE_TITLE: learned_vs_mean, FITTED_TITLE: fit_table, SOURCES_TITLE: sources, BANDS_TITLE: bands,
              BETTING_TITLE: betting,
              ROLES_TITLE: roles, "Leakage audit over the prompts actually sent (findings must be 0)": audit,
              "Contamination split: questions due after the models' training cutoff": contamination,
              **{f"By {col.replace('_', ' ')}": seg for col, seg in segments.items()}}
    page = render_page(ReportData(leaderboard=table, baseline=base_label, max_imputed=max_imputed,
                                  ranking_note=" ".join(filter(None, [ranking_note(table[table["ranked"]], max_imputed, plan_note=plan_note),
                                                                      crowd_note])),
                                  sensitivity=sensitivity_lines(table), scored=scored,
                                  manifests=manifests,
                                  records=shown, tables=tables, confidence_bands=bands, attribution=DATA_ATTRIBUTION,
                                  notice=simulated, diversity=diversity.decomposition, error_correlations=diversity.correlations,
                                  kinds=kinds))
    # every file is complete or untouched (temp file + os.replace); an OSError names the file
    csv_path, md_path = write_leaderboard(out_dir, table, md + "\n\n" + DATA_ATTRIBUTION + "\n")
    write_text_atomic(html_path, page)
    write_text_atomic(out_dir / FITTED_FILE, fitted_lines(fitted, records, fit_from))
    write_kind_reports(out_dir, kinds)
    return Report(table, md, csv_path, md_path, html_path, notice=simulated, baseline=base_label, diversity_lines=diversity.lines(),
                  plan_note=plan_note, shared_questions=len(planned) if len(manifests) > 1 else None,
                  members=member_behaviour(r for run in runs for r in run.records), crowd_note=crowd_note)


def _write_kind_only(runs: Sequence[LoadedRun], kinds: Sequence[KindReport], out_dir: Path) -> Report:
    """The report of runs with no binary question: each kind's leaderboard (``leaderboard_<kind>.csv/md``), the
    Markdown of all of them as ``leaderboard.md``, the first kind's table as ``leaderboard.csv``, and the page with
    the kinds' tables, the runs and their questions."""
    manifests = {run.run_id: run.manifest for run in runs}
    simulated = simulation_note(manifests)
    md = "\n\n".join([*([f"**{simulated}**"] if simulated else []), *(rep.markdown() for rep in kinds)])
    board = pd.DataFrame({"label": pd.Series(dtype=str), "ranked": pd.Series(dtype=bool),
                          "too_small_to_rank": pd.Series(dtype=bool), "rank": pd.Series(dtype=float)})
    # no binary row: an empty long frame with the columns of scorable(long_frame(...)) (the page reads them)
    scored = pd.DataFrame({c: pd.Series(dtype=float if c in ("p_yes", "outcome") else str)
                           for c in ("run_id", "method", "label", "kind", "p_yes", "outcome", "status", "question_id")})
    page = render_page(ReportData(leaderboard=board, baseline="mean", max_imputed=MAX_IMPUTED, ranking_note="",
                                  sensitivity=[], scored=scored, manifests=manifests,
                                  records={run.run_id: run.records for run in runs},
                                  tables={rep.title: rep.table for rep in kinds}, attribution="", notice=simulated,
                                  kinds=kinds))
    csv_path, md_path = write_leaderboard(out_dir, kinds[0].table, md + "\n")
    html_path = out_dir / PAGE_FILE
    write_text_atomic(html_path, page)
    write_kind_reports(out_dir, kinds)
    return Report(kinds[0].table, md, csv_path, md_path, html_path, notice=simulated, baseline="mean")


#: Per (run, question): every fitted method's row (p_yes, parameters, n_fit, fallback), written by :func:`write_report`.
FITTED_FILE = "fitted.jsonl"
LEARNED_TITLE = f"Cost-effectiveness against the learned mean ({LEARNED_MEAN}: the mean recalibrated walk-forward; Brier change per 1,000 extra tokens)"
FITTED_TITLE = "Fitted methods (walk-forward: each question fitted only on questions resolved before its forecast date)"
FITTED_NOTE = (f"`fitted` questions used parameters fitted on at least {MIN_FIT_QUESTIONS} resolved questions ({MIN_FIT_PER_CLASS} "
               "of each outcome); `fallback` questions had fewer and used the unfitted rule ("
               + ", ".join(f"{m}: {rule}" for m, rule in UNFITTED_RULE.items()) + f"). Per-question parameters and n are in {FITTED_FILE}.")
#: The usage per role and model (a mixed ensemble's members cost per model: ``run --ensemble``).
ROLES_TITLE = "Tokens per role"
BANDS_TITLE = "Brier and calibration by confidence band (does the confidence mean anything?)"
BETTING_TITLE = "Betting return against the market price (Prophet Arena's average return; higher is better)"
BETTING_NOTE = ("A bettor who takes the method's p_yes as true bets 1 dollar on each market question at the crowd's price at "
                "ForecastBench's freeze: all on YES when p_yes is above the price, all on NO when below, no bet when equal "
                "(risk neutral). mean_return is the payoff minus the dollar, averaged (0: no edge over the market); "
                "benchmarks/scoring/betting.py has the definition and its source.")
SOURCES_TITLE = "Fitted methods: the runs they learned from, and their models"
REFERENCE_TITLE = f"The learned mean ({LEARNED_MEAN}) against mean: the reference of the cost-effectiveness table above"


def fit_sources_note(sources: pd.DataFrame) -> str:
    """One line on what the fitted methods learned from (:func:`benchmarks.protocol.fitted.fit_sources`), saying so
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


def betting_against_market(compared: pd.DataFrame, scored: pd.DataFrame, *, n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """:func:`benchmarks.scoring.betting_table` of the compared rows (``compared``: each compared method on every
    question, a missing answer imputed) against the crowd baseline's price (every run's ``crowd`` row of ``scored``,
    the prices it gave, gives its question's price; the crowd itself is not listed)."""
    def is_crowd(labels: pd.Series) -> pd.Series:
        return (labels == "crowd") | labels.astype(str).str.endswith(":crowd")

    prices = scored[is_crowd(scored["label"])].assign(label="crowd")
    rows = pd.concat([compared[~is_crowd(compared["label"])], prices], ignore_index=True)
    return scoring.betting_table(rows, method_col="label", market="crowd", n_resamples=n_resamples, seed=seed)
