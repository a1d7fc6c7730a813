"""The run viewer's page: one self-contained HTML file per run or comparison, rendered with Jinja2.

The page opens offline from disk: styles, script and figures are inline (figures as SVG from
:mod:`benchmarks.viewer.plots`), nothing is fetched. Jinja2 renders it with autoescaping on, so every text that
came from a user or a model (question text, rationales, arguments, search snippets, run ids) is escaped;
links are only made for ``http``/``https`` URLs. Sections:

* the runs (models, questions, selection, clusters), and the leaderboard as :func:`benchmarks.scoring.ranking.rank_methods`
  returns it: ranked methods on one question set, the not-ranked ones apart; a compact set of columns with
  the rest behind a per-row "details" toggle; sortable columns; intervals "not available" where NaN;
* figures: reliability diagrams as small multiples, cost vs Brier, member spread, paired differences;
* every question: filters (source, outcome, method disagreement, status, text), each row opening its
  whole trace (:mod:`benchmarks.viewer.trace`);
* the other tables of the report (cost, roles, cost-effectiveness, leakage audit, contamination, segments).

Drill-downs are kept in ``<template>`` elements and cloned on first open, so a 1,000-question page lays
out only its rows. Full prompts are embedded while their total stays under
:data:`PROMPT_BUDGET_CHARS`; beyond it only for questions with leakage-audit findings (where a reader must
check them); the rest stay in ``results.jsonl``.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

import jinja2
import numpy as np
import pandas as pd
from markupsafe import Markup

from agent_research.config import EVIDENCE_MODES
from agent_schemas import DataValidationError
from benchmarks import scoring
from benchmarks.protocol.baselines import evidence_cutoff_of
from benchmarks.scoring.ranking import MIN_CLUSTERS_TO_RANK, not_ranked_note, rank_labels
from benchmarks.viewer import formatting as fmt
from benchmarks.viewer import kind_figures, plots
from benchmarks.viewer.headline import headline
from benchmarks.viewer.trace import QuestionView, question_listed, question_view

__all__ = ["PAGE_TRACE_FORECASTS", "PAGE_TRACES", "PROMPT_BUDGET_CHARS", "QUESTION_FIGURE_BUDGET", "ReportData", "board_rows",
           "no_tokens_reason", "render_page", "render_question_page", "render_template"]

#: Largest total of prompt text (characters) embedded for every question; above it, prompts are embedded
#: only for questions with leakage-audit findings.
PROMPT_BUDGET_CHARS = 2_000_000
#: Most questions whose whole trace the page embeds, and most member forecasts over their traces: questions with
#: leakage-audit findings first, then in page order, until either bound is reached. Every question is listed (its
#: row: text, outcome, probabilities, spread, tokens, status) and the trace of any other one is written on request by
#: ``forecast-reconcile view RUN --question ID`` (:func:`render_question_page`). Why: a trace costs about 20 ms to
#: render and 10-60 KB of page (a panel question of 100 forecasters: 60 KB), so a panel of 10,000 questions x 100
#: forecasters took minutes and would make a page of 600 MB; with these bounds a page holds at most about 15 MB of
#: traces, and a run of up to 1,000 questions of a few members each (the bundled superforecaster panel: 578
#: questions, 4,600 forecasts) embeds all of them.
PAGE_TRACES = 1000
PAGE_TRACE_FORECASTS = 20_000

#: Most questions of a kind with its own leaderboard (multiple choice, numeric) whose drill-down embeds its figure
#: (~20 kB of SVG each and ~0.1 s of CPU to draw); the questions after them say so, and their forecasts stay in
#: ``results.jsonl``.
QUESTION_FIGURE_BUDGET = 200


@dataclass
class ReportData:
    """What :func:`benchmarks.report.write_report` computed, handed to the page.

    Attributes
    ----------
    leaderboard : pandas.DataFrame
        :func:`benchmarks.scoring.ranking.rank_methods` rows (``ranked``, ``rank``, ``n``, ``n_answered``,
        ``n_imputed``, ``coverage``, ``too_small_to_rank``, ``interval_note``, scores, intervals) merged with ``attempted``,
        ``failed`` and, when known, ``tokens_per_question``, ``extra_tokens_per_question``, ``cost_usd`` (USD).
    baseline : str
        Label the deltas refer to.
    max_imputed : float
        Largest share of the questions a ranked method could have imputed (fraction).
    ranking_note : str
        One line on what the ranking rests on (:func:`benchmarks.report.leaderboard.ranking_note`).
    sensitivity : list of str
        Where each method with imputed questions would stand (:func:`benchmarks.scoring.ranking.sensitivity_lines`).
    scored : pandas.DataFrame
        Long frame of scorable forecasts (``label``, ``kind``, ``p_yes``, ``outcome``, ...).
    manifests : dict of str to dict
        Manifest of each run, by run id.
    records : dict of str to list of dict
        ``results.jsonl`` lines of each run, by run id.
    tables : dict of str to pandas.DataFrame
        Further tables shown under their titles (cost, roles, cost-effectiveness, audit, ...).
    confidence_bands : pandas.DataFrame, optional
        :func:`benchmarks.report.confidence_bands.confidence_band_table`, drawn as a figure when not empty.
    attribution : str
        Data licence line for the footer.
    notice : str
        A warning shown above everything (e.g. that the results come from the simulator), or "".
    diversity : pandas.DataFrame, optional
        :attr:`benchmarks.report.diversity.DiversityReport.decomposition`, drawn with ``error_correlations`` as a
        figure when not empty.
    error_correlations : dict of str to pandas.DataFrame
        Each run's error-correlation matrix of its members, by run id.
    kinds : sequence of KindReport
        The leaderboard of each kind of question with its own (:func:`benchmarks.report.kind_report.kind_reports`:
        ``kind``, ``table``, ``diagnostics`` per label): each kind's calibration figure is drawn from it
        (:mod:`benchmarks.viewer.kind_figures`).
    """

    leaderboard: pd.DataFrame
    baseline: str
    max_imputed: float
    ranking_note: str
    scored: pd.DataFrame
    manifests: dict[str, dict[str, Any]]
    records: dict[str, list[dict[str, Any]]]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    confidence_bands: pd.DataFrame | None = None
    attribution: str = ""
    notice: str = ""
    sensitivity: list[str] = field(default_factory=list)
    diversity: pd.DataFrame | None = None
    error_correlations: dict[str, pd.DataFrame] = field(default_factory=dict)
    kinds: Sequence[Any] = ()


# --- formatting of generic tables ----------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    """One formatted table cell: the text shown, the value sorted on, and whether it is numeric."""

    text: str
    sort: str
    num: bool


@dataclass(frozen=True)
class FrameView:
    """A data frame ready for the page: column names and formatted cells."""

    columns: list[str]
    numeric: list[bool]
    rows: list[list[Cell]]


def _formatter(col: str, dtype: Any):
    c = col.lower()
    if "usd" in c or c.startswith("cost"):
        return fmt.fmt_usd
    if c.endswith("wall_time_s"):
        return lambda x: "—" if fmt.is_missing(x) else f"{float(x):,.1f} s"
    if c == "coverage":
        return fmt.fmt_pct
    if c.startswith("delta") or "per_1k" in c or "skill" in c:
        return fmt.fmt_delta
    if "tokens" in c or c in ("calls", "n", "questions", "attempted", "failed", "retries", "cache_hits", "provider_calls") \
            or c.startswith("n_") or pd.api.types.is_integer_dtype(dtype):
        return fmt.fmt_count
    if pd.api.types.is_bool_dtype(dtype):
        return lambda x: "yes" if x else "no"
    if pd.api.types.is_float_dtype(dtype):
        return fmt.fmt_prob
    return lambda x: "" if x is None or (isinstance(x, float) and math.isnan(x)) else str(x)


def frame_view(df: pd.DataFrame, *, drop: tuple[str, ...] = ()) -> FrameView:
    """Format ``df`` for reading (see :mod:`benchmarks.viewer.formatting`); columns in ``drop`` are left out."""
    cols = [c for c in df.columns if c not in drop]
    formatters = [_formatter(c, df[c].dtype) for c in cols]
    numeric = [pd.api.types.is_numeric_dtype(df[c].dtype) and not pd.api.types.is_bool_dtype(df[c].dtype) for c in cols]
    rows = []
    for values in df[cols].itertuples(index=False, name=None):
        row = []
        for v, f, num in zip(values, formatters, numeric):
            sort = "" if fmt.is_missing(v) else repr(float(v)) if num else str(v)
            row.append(Cell(f(v), sort, num))
        rows.append(row)
    return FrameView(cols, numeric, rows)


# --- template helpers ------------------------------------------------------------------------------


def safe_url(url: Any) -> str | None:
    """``url`` when it is an http(s) link, else None (no ``javascript:`` or ``data:`` link is ever made)."""
    if not url:
        return None
    try:
        parts = urlsplit(str(url).strip())
    except ValueError:
        return None
    return str(url).strip() if parts.scheme in ("http", "https") and parts.netloc else None


def host(url: Any) -> str:
    """The host of a URL (``www.`` dropped), or ``""``."""
    try:
        h = urlsplit(str(url or "")).hostname or ""
    except ValueError:
        return ""
    return h[4:] if h.startswith("www.") else h


def _sortkey(x: Any) -> str:
    return "" if fmt.is_missing(x) else repr(float(x))


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("benchmarks.viewer", "templates"),
        autoescape=True,  # every {{ value }} is HTML-escaped; only the package's own CSS/JS/SVG is marked safe
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(prob=fmt.fmt_prob, delta=fmt.fmt_delta, count=fmt.fmt_count, compact=fmt.fmt_compact,
                       usd=fmt.fmt_usd, pct=fmt.fmt_pct, sortkey=_sortkey, safe_url=safe_url, host=host)
    env.globals.update(interval=fmt.fmt_interval, missing=fmt.is_missing)
    return env


def _asset(name: str) -> Markup:
    source, _, _ = _environment().loader.get_source(_environment(), name)  # type: ignore[union-attr]
    return Markup(source)  # our own static file, shipped as package data


def render_template(name: str, **context: Any) -> str:
    """Render one of the viewer's templates (autoescaped) with the page's stylesheet as ``css``."""
    return _environment().get_template(name).render(css=_asset("viewer.css"), **context)


# --- sections ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FigureView:
    """One figure of the page: inline SVG, or the reason it is not drawn."""

    id: str
    title: str
    caption: str
    svg: Markup | None
    message: str = ""
    wide: bool = False


def _figure(fid: str, title: str, caption: str, build) -> FigureView:
    try:
        fig = build()
    except DataValidationError as exc:
        return FigureView(fid, title, caption, None, f"not drawn: {exc}")
    if fig is None:
        return FigureView(fid, title, caption, None, "not drawn: no data")
    return FigureView(fid, title, caption, Markup(plots.figure_to_svg(fig, salt=fid)))


def _wide(figure: FigureView) -> FigureView:
    """``figure`` across the page's whole width (small multiples)."""
    return replace(figure, wide=True)


def _kind_figures(kinds: Sequence[Any]) -> list[FigureView]:
    """Each kind's calibration figure (:func:`benchmarks.viewer.kind_figures.calibration_figure`), one panel per
    label in its leaderboard's order, captioned by the kind (:attr:`~agent_schemas.kinds.base.QuestionKind.calibration_caption`)."""
    return [_wide(_figure(f"fig-{rep.kind.name}-calibration", f"Calibration: {rep.kind.label} questions",
                          f"{rep.kind.calibration_caption} One panel per method and baseline, in the order of the "
                          f"{rep.kind.label} leaderboard, over the questions each is scored on there (a method's "
                          "failure as the kind's worst case).",
                          lambda rep=rep: kind_figures.calibration_figure(rep.kind, rep.diagnostics)))
            for rep in kinds]


def _figures(data: ReportData, board: pd.DataFrame, questions: list[QuestionView]) -> list[FigureView]:
    ranked = board[board["ranked"]]
    order = list(board["label"])
    by_label = {lab: g for lab, g in data.scored.groupby("label")}

    def reliability():
        tables = {lab: scoring.reliability_diagram(by_label[lab]["p_yes"].to_numpy(), by_label[lab]["outcome"].to_numpy())
                  for lab in order if lab in by_label}
        return plots.plot_reliability_small_multiples(tables) if tables else None

    def cost():
        if "tokens_per_question" not in ranked.columns:
            return None
        spent = ranked[ranked["tokens_per_question"].fillna(0) > 0]
        if spent.empty:
            return None
        refs = {r.label: float(r.brier) for r in ranked[ranked["kind"] == "baseline"].itertuples()}
        return plots.plot_cost_vs_brier(spent, cost_col="tokens_per_question", label_col="label",
                                        x_label="tokens per question (input + output)", references=refs)

    def spread():
        values = [q.member_spread for q in questions if q.record is not None or not q.embedded]
        if not values:
            return None
        thresholds = {float(((m.get("config") or {}).get("pipeline") or m.get("config") or {}).get("reconcile_min_spread") or 0)
                      for m in data.manifests.values()}  # nested in the pipeline's config; flat in older manifests
        return plots.plot_member_spread([np.nan if v is None else v for v in values],
                                        threshold=thresholds.pop() if len(thresholds) == 1 else None)

    def paired():
        rows = board[board["label"] != data.baseline].copy()
        rows["label"] = [lab if r else f"{lab} (not ranked)" for lab, r in zip(rows["label"], rows["ranked"])]
        return plots.plot_paired_differences(rows, baseline=data.baseline)

    def diversity():
        if data.diversity is None or data.diversity.empty:
            return None
        return plots.plot_diversity(data.diversity, data.error_correlations)

    def bands():
        if data.confidence_bands is None or data.confidence_bands.empty:
            return None
        return plots.plot_brier_by_confidence(data.confidence_bands)

    if data.scored.empty:  # no binary question: only the other kinds' figures
        return _kind_figures(data.kinds)
    return [
        _wide(_figure("fig-reliability", "Reliability", "One panel per method, in leaderboard order. A point is a bin of "
                "forecasts: its mean p_yes against how often those questions resolved Yes; the number is how many "
                "questions the bin holds. On the dashed diagonal a method is calibrated; in the green region a bin "
                "adds skill over always forecasting the base rate.", reliability)),
        _figure("fig-cost", "Cost vs Brier", "Ranked methods: tokens per question against Brier score on the common "
                "question set, with 95% intervals where available. Baselines cost no tokens and are drawn as "
                "dotted lines.", cost),
        _figure("fig-spread", "Member spread", "Per question, the largest minus the smallest member p_yes: how much "
                "there was to reconcile.", spread),
        _figure("fig-diversity", "Diversity of the members", "Left: per run, the mean of the members' Brier scores equals "
                "the Brier score of their mean plus the members' spread around it (the ambiguity decomposition, exact; "
                "Krogh & Vedelsby 1995), with 95% clustered intervals: the pool's gain over the average member is "
                "the members' disagreement. Right: the correlation of the members' errors (p_yes - outcome) over the "
                "questions both answered; n_eff = m / (1 + (m - 1) * mean correlation) independent members "
                "(Clemen & Winkler 1985).", diversity),
        _figure("fig-paired", f"Paired differences to {data.baseline}", "Brier of each method minus the baseline's on "
                "the questions both answered, with a clustered bootstrap interval (hollow: not available, too few "
                "clusters).", paired),
        _figure("fig-confidence", "Brier by confidence band", "Does the toolkit's confidence mean anything? Per "
                "confidence (overall weakest link, the supervisor as stated and as grounded in its evidence, the "
                "unresolved-disagreement flag) and method, the Brier score of the questions in each band: if it means "
                "something, Brier falls from low to high.", bands),
        *_kind_figures(data.kinds),
    ]


def _questions(data: ReportData) -> list[QuestionView]:
    """Every question of the runs, in page order: those within :data:`PAGE_TRACES` and :data:`PAGE_TRACE_FORECASTS`
    (leakage-audit findings first) with their whole trace, the others listed by their row only
    (:func:`benchmarks.viewer.trace.question_listed`)."""
    listed = [(run_id, r) for run_id, recs in data.records.items() for r in recs]
    findings = [int((r.get("audit") or {}).get("findings", 0)) for _, r in listed]
    embedded: set[int] = set()
    forecasts = 0
    for i in sorted(range(len(listed)), key=lambda i: (findings[i] == 0, i)):
        forecasts += len((listed[i][1].get("trace") or {}).get("forecasts") or [])
        if len(embedded) == PAGE_TRACES or (embedded and forecasts > PAGE_TRACE_FORECASTS):
            break
        embedded.add(i)
    prompt_chars = sum(len(m.get("content", "")) for i in embedded for c in (listed[i][1].get("trace") or {}).get("recorded_calls", [])
                       for m in c.get("messages", []))
    embed_all = prompt_chars <= PROMPT_BUDGET_CHARS
    note = (f"figure not drawn: the page draws the first {QUESTION_FIGURE_BUDGET:,} questions' figures; this question's "
            "forecasts are in results.jsonl")
    out: list[QuestionView] = []
    figures = 0
    for i, (run_id, r) in enumerate(listed):
        if i not in embedded:
            out.append(question_listed(r, index=i, run_id=run_id))
            continue
        view = question_view(r, index=i, run_id=run_id, with_prompts=embed_all or findings[i] > 0,
                             with_figure=figures < QUESTION_FIGURE_BUDGET, figure_note=note)
        figures += view.kind_view is not None
        out.append(view)
    return out


#: The settings the page's list of runs shows for each run: label -> (path in ``config.pipeline``, the flat key of a
#: manifest written before the pipeline was embedded in the config).
_PIPELINE_SETTINGS: dict[str, tuple[tuple[str, ...], str]] = {
    "n_members": (("n_members",), "n_members"),
    "debate_rounds": (("debate", "max_rounds"), "debate_rounds"),
    "supervisor_queries": (("supervisor", "max_queries"), "supervisor_queries"),
    "reconcile_min_spread": (("reconcile_min_spread",), "reconcile_min_spread"),
    "max_tokens": (("max_tokens",), "max_tokens"),
}


def run_settings(manifest: dict[str, Any]) -> dict[str, Any]:
    """The settings that make a run's forecasts what they are, as the page's list of runs shows them (label -> value):
    members, search, who saw which results (``evidence``, ``shared`` when the manifest leaves it out), the date searches
    were capped at (``evidence_cutoff``, :func:`benchmarks.protocol.baselines.evidence_cutoff_of`), whether the crowd
    was shown, debate rounds, clarifying searches, the reconciliation gate and the token limit. Pipeline settings are
    read from ``config.pipeline`` (or the flat keys of a manifest written before it); a setting the manifest does not
    record is left out (a stage left out of the pipeline, or an old manifest), and so is ``n_members`` of a run whose
    members are given (a panel: ``config.ensemble == "given"``).

    Examples
    --------
    >>> run_settings({"config": {"search": "local", "show_crowd": False, "evidence_cutoff": "freeze",
    ...                          "pipeline": {"n_members": 3, "evidence": "split", "debate": None}}})
    {'n_members': 3, 'search': 'local', 'evidence': 'split', 'evidence_cutoff': 'freeze', 'show_crowd': False}
    >>> run_settings({"config": {"n_members": 5, "search": "none", "debate_rounds": 3}})  # written before the pipeline
    {'n_members': 5, 'search': 'none', 'evidence': 'shared', 'evidence_cutoff': 'forecast', 'debate_rounds': 3}
    >>> run_settings({"config": {"ensemble": "given", "pipeline": {"n_members": 3, "debate": {"max_rounds": 2}}}})
    {'evidence': 'shared', 'evidence_cutoff': 'forecast', 'debate_rounds': 2}
    """
    cfg = manifest.get("config") or {}
    pipeline = cfg.get("pipeline")

    def pipeline_value(path: tuple[str, ...], flat: str) -> Any:
        if pipeline is None:
            return cfg.get(flat)
        value: Any = pipeline
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        return value

    given = cfg.get("ensemble") == "given"  # a panel's members are its forecasters, not the pipeline's n_members
    out: dict[str, Any] = {"n_members": None if given else pipeline_value(*_PIPELINE_SETTINGS["n_members"]), "search": cfg.get("search")}
    if cfg:
        out["evidence"] = (pipeline or {}).get("evidence", EVIDENCE_MODES[0])
        out["evidence_cutoff"] = evidence_cutoff_of(manifest)
    out["show_crowd"] = cfg.get("show_crowd")
    out.update({label: pipeline_value(*where) for label, where in _PIPELINE_SETTINGS.items() if label != "n_members"})
    return {k: v for k, v in out.items() if v is not None}


def _runs(manifests: dict[str, dict[str, Any]], records: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    out = []
    for run_id, m in manifests.items():
        cfg = m.get("config") or {}
        statuses = pd.Series([r.get("status") for r in records.get(run_id, [])], dtype=object).value_counts()
        out.append({
            "run_id": run_id, "created_at": str(m.get("created_at", ""))[:19].replace("T", " "),
            "models": ", ".join(f"{p.get('spec')}" for p in m.get("providers", [])) or "—",
            "n_questions": len(m.get("question_ids", [])), "statuses": dict(statuses),
            "version": m.get("package_version", "?"), "seed": m.get("seed"),
            "settings": run_settings(m),
            "methods": ", ".join(cfg.get("methods") or []), "baselines": ", ".join(cfg.get("baselines") or []),
            "selection": m.get("question_selection") or {}, "clusters": m.get("clusters") or {},
            "prices": m.get("prices"), "provider_stats": m.get("provider_stats") or {},
        })
    return out


def no_tokens_reason(manifest: dict[str, Any]) -> str:
    """Why a run's methods spend no tokens, in the leaderboard's tokens and cost cells: ``human panel: no tokens``
    for the bundled superforecaster panel, ``given forecasts: no tokens`` for another panel file's run
    (``aggregate``: its members are given, not called); '' for a run whose members are a model's."""
    cfg = manifest.get("config") or {}
    if cfg.get("ensemble") != "given":
        return ""
    pool = (manifest.get("question_selection") or {}).get("pool") or {}
    return "human panel: no tokens" if pool.get("name") == "superforecasters" else "given forecasts: no tokens"


def short_run_ids(run_ids: list[str], *, keep: int = 8) -> dict[str, str]:
    """Each run id as the leaderboard's narrow run column shows it: without the prefix every id shares (a common
    timestamp and model), as ``…<rest>``, when that prefix is at least ``keep`` characters; else the id itself.

    >>> short_run_ids(["20261205T2359-sim-first", "20261205T2359-sim-second"])
    {'20261205T2359-sim-first': '…first', '20261205T2359-sim-second': '…second'}
    >>> short_run_ids(["a", "b"])
    {'a': 'a', 'b': 'b'}
    """
    if len(run_ids) < 2:
        return {r: r for r in run_ids}
    prefix = os.path.commonprefix(run_ids)
    cut = max(prefix.rfind(c) for c in "-_:.T") + 1 if prefix else 0  # at a word boundary
    if cut < keep or any(len(r) == cut for r in run_ids):
        return {r: r for r in run_ids}
    return {r: "…" + r[cut:] for r in run_ids}


def board_rows(board: pd.DataFrame, scored: pd.DataFrame, manifests: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """The leaderboard with what the page shows apart: ``run`` (the row's run id) and ``method`` (its name without
    the ``<run id>:`` prefix a comparison's labels carry), ``run_short`` (:func:`short_run_ids`), ``kind`` (method or
    baseline) and ``no_tokens`` (why a
    method of a panel's run has no token count, :func:`no_tokens_reason`; '' otherwise)."""
    out = board.copy()
    first = scored.drop_duplicates("label").set_index("label")
    out["kind"] = out["label"].map(first["kind"]).fillna("method")
    out["run"] = out["label"].map(first["run_id"]).fillna("")
    out["method"] = out["label"].map(first["method"]).fillna(out["label"])
    out["run_short"] = out["run"].map(short_run_ids(list(manifests)))
    reasons = {rid: no_tokens_reason(m) for rid, m in manifests.items()}
    spent = out["tokens_per_question"].fillna(0) if "tokens_per_question" in out.columns else pd.Series(0, index=out.index)
    out["no_tokens"] = [reasons.get(run, "") if kind == "method" and float(t) == 0 else ""
                        for run, kind, t in zip(out["run"], out["kind"], spent)]
    return out


def render_page(data: ReportData, *, title: str | None = None) -> str:
    """Render the self-contained HTML page of one run or a comparison of runs.

    Parameters
    ----------
    data : ReportData
        Computed by :func:`benchmarks.report.write_report`.
    title : str, optional
        Page title (default: the run id, or "comparison of N runs").

    Returns
    -------
    str
        The whole page (UTF-8 text), with no reference to any other file or network resource.
    """
    board = board_rows(data.leaderboard, data.scored, data.manifests)
    board["rank_text"] = rank_labels(board)  # "2=" for a shared rank
    questions = _questions(data)
    run_ids = list(data.manifests)
    multi = len(run_ids) > 1
    tables = {name: frame_view(df, drop=("run_id", "method") if not multi else ()) for name, df in data.tables.items()}
    sources = sorted({q.row.source if q.row else str(q.raw.get("source")) for q in questions})
    too_small = bool(board.loc[board["ranked"], "too_small_to_rank"].any()) if board["ranked"].any() else False
    page = _environment().get_template("report.html.j2").render(
        title=title or (f"Run {run_ids[0]}" if not multi else f"Comparison of {len(run_ids)} runs"),
        css=_asset("viewer.css"), js=_asset("viewer.js"),
        runs=_runs(data.manifests, data.records), multi=multi, run_short=short_run_ids(run_ids),
        ranked=board[board["ranked"]].to_dict("records"), unranked=board[~board["ranked"]].to_dict("records"),
        has_cost="cost_usd" in board.columns, baseline=data.baseline, base_method=data.baseline.rpartition(":")[2] if multi else data.baseline,
        base_run=data.baseline.rpartition(":")[0] if multi else "", not_ranked=not_ranked_note(data.max_imputed),
        ranking_note=data.ranking_note.replace("**", ""), sensitivity=data.sensitivity, too_small=too_small,
        min_clusters_to_rank=MIN_CLUSTERS_TO_RANK,
        figures=_figures(data, board, questions), questions=questions, sources=sources,
        embedded=sum(q.embedded for q in questions), page_traces=PAGE_TRACES, page_forecasts=PAGE_TRACE_FORECASTS,
        tables=tables, attribution=data.attribution, notice=data.notice,
        headline=headline(board, baseline=data.baseline, records=data.records, notice=data.notice,
                          min_clusters_to_rank=MIN_CLUSTERS_TO_RANK),
    )
    return page


def render_question_page(record: dict[str, Any], *, run_id: str, index: int = 0) -> str:
    """Render the self-contained HTML page of one question's whole trace (prompts included), as the run's page
    shows it in a question's drill-down: for a question whose trace the run's page does not embed (:data:`PAGE_TRACES`).

    Parameters
    ----------
    record : dict
        The question's parsed ``results.jsonl`` line.
    run_id : str
        The run it belongs to.
    index : int
        Its position in the run (0-based; its anchor on the run's page).

    Returns
    -------
    str
        The page (UTF-8 text), with no reference to any other file or network resource.
    """
    q = question_view(record, index=index, run_id=run_id, with_prompts=True)
    return _environment().get_template("question.html.j2").render(
        title=f"Question {q.question_id}", q=q, css=_asset("viewer.css"), js=_asset("viewer.js"))
