"""Diversity diagnostics of every report: how different a run's members are and what it is worth.

``forecast-reconcile diversity RUN_FOLDER...`` prints each run's decomposition with every interval and the identity's
error (:func:`decomposition_text`), e.g. of the run folder ``forecast-reconcile aggregate --panel superforecasters`` wrote.

For each run of a report (a run of forecasters, a panel's run, each run of a leaderboard comparison), from its
records' successful members as scored (clipped to the combination rule's bounds, :func:`benchmarks.report.frame.members_of`)
on its ok, resolved questions, with the computations of :mod:`benchmarks.scoring.diversity`:

* the **ambiguity decomposition**: mean member Brier = Brier of the members' mean + diversity (the members' spread),
  each with its clustered interval and the identity's rounding error (Krogh & Vedelsby 1995);
* the **correlation of the members' errors** (``p_yes - outcome``), its mean over pairs and the **effective number
  of independent members** ``m / (1 + (m - 1) * rho)`` (Clemen & Winkler 1985); the matrix itself for runs of at
  most :data:`MAX_MATRIX_MEMBERS` members (the page's figure draws it for any);
* for each **reconciled method** (debate, supervisor, pipeline, gated or not): the members' spread it removes, its
  gain over the pool split into "toward the better member" and "beyond every member", and how often it moved
  toward the outcome;
* **crowd copying**, for runs whose questions carry a crowd price: how close the members stay to it (correlation,
  share within 0.02) next to the mean's Brier against the crowd's, flagged by whether the members were shown the
  price (``run --show-crowd``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from benchmarks import scoring
from benchmarks.protocol.methods import RECONCILIATION_METHODS, method_of
from benchmarks.report.frame import members_of
from benchmarks.report.leaderboard import markdown_table
from benchmarks.run_folder.load import LoadedRun
from benchmarks.scoring import diversity as div

__all__ = ["CORRELATION_TITLE", "CROWD_TITLE", "DECOMPOSITION_TITLE", "DiversityReport", "MAX_MATRIX_MEMBERS", "RECONCILED_TITLE",
           "RunMembers", "decomposition_text", "diversity_report", "identity_text", "run_members"]

DECOMPOSITION_TITLE = ("Diversity: mean member Brier = Brier of the members' mean + diversity (the members' spread; "
                       "Krogh & Vedelsby 1995), 95% clustered intervals")
CORRELATION_TITLE = "Correlation of the members' errors (p_yes - outcome) over the questions both answered"
RECONCILED_TITLE = ("Reconciled methods against the members' mean (gains in Brier; positive: better than the mean of the "
                    "members it read)")
CROWD_TITLE = "Crowd copying: how close the members stay to the crowd price"
#: Most members of a run whose error-correlation matrix is written as a table (a panel of 40 is drawn, not tabled).
MAX_MATRIX_MEMBERS = 12
DECOMPOSITION_NOTE = (
    "Per question, the mean of the members' Brier scores equals the Brier score of their mean plus the mean squared "
    "deviation of the members from their mean (exact; averaged over questions, each weighing one): the pool beats "
    "the average member by exactly the members' disagreement. `identity_error` is the largest rounding error of the "
    "identity. The pool is the mean of the members as scored (clipped), so it can differ in the fourth decimal from "
    "the `mean` row. `n_effective` = m / (1 + (m - 1) * rho), rho the mean pairwise correlation of the members' "
    f"errors over pairs with at least {div.MIN_OVERLAP} common questions and m the members per question (Clemen & "
    "Winkler 1985): 1 when members err alike, m when independently. Each run is decomposed on its own resolved "
    "questions with members (its `n`). Definitions: benchmarks/scoring/diversity.py.")
RECONCILED_NOTE = (
    "A reconciler reads the members and gives one forecast r, removing their whole spread (`spread`, the mean's gain "
    "over the average member). `gain_vs_mean` = Brier(mean of members) - Brier(r), split exactly at c = r held inside "
    "the members' range: `toward_better_member` = Brier(mean) - Brier(c) (moving toward the end of the range nearer "
    "the outcome, the better member's; negative: toward the worse one) and `beyond_every_member` = Brier(c) - "
    "Brier(r) (non-zero only when r left the range). `gain_vs_average_member` = spread + gain_vs_mean. Shares count "
    "questions on which r moved from the mean toward the outcome, away from it, or outside the members' range.")
CROWD_NOTE = (
    f"Every member forecast against its question's crowd price: Pearson correlation, share within {div.CROWD_TOLERANCE} "
    "and mean distance; `crowd_shown` says whether the members saw the price (`run --show-crowd`). "
    "`delta_mean_vs_crowd` is the `mean` row's Brier minus the crowd's on the questions both have (paired, clustered "
    "interval; negative: the mean beats the crowd).")


@dataclass(frozen=True)
class RunMembers:
    """One run's members as a matrix, with what each question's diagnostics need.

    Attributes
    ----------
    run_id : str
    question_ids : list of str
        The ok, resolved questions with at least one successful member, in record order.
    members : list of str
        Member labels (``agent_id``; ``agent_id (model)`` when the members ran on several models), in order of
        first appearance.
    p : ndarray of shape (n_questions, n_members)
        p_yes as scored (clipped); NaN where the member gave no forecast.
    outcomes : ndarray of shape (n_questions,)
        1 / 0.
    clusters : ndarray of shape (n_questions,)
        Each question's cluster label.
    methods : pandas.DataFrame
        Each ok method row's p_yes (columns) by question (index, ``question_ids``), NaN where absent.
    crowd : ndarray of shape (n_questions,)
        The ``crowd`` baseline's price, NaN where absent.
    crowd_shown : bool
        Whether the members were shown the crowd price (the manifest's ``config.show_crowd``).
    """

    run_id: str
    question_ids: list[str]
    members: list[str]
    p: np.ndarray
    outcomes: np.ndarray
    clusters: np.ndarray
    methods: pd.DataFrame
    crowd: np.ndarray
    crowd_shown: bool


def run_members(run: LoadedRun) -> RunMembers | None:
    """The members of ``run``'s ok, resolved questions as a :class:`RunMembers` (None when no such question has one)."""
    qids, outcomes, clusters, crowd, cells, methods, models = [], [], [], [], [], {}, {}
    index: dict[str, int] = {}
    for r in run.records:
        if r.get("status") != "ok" or r.get("outcome") is None:
            continue
        members = members_of(r)
        if not members:
            continue
        row = len(qids)
        qids.append(r["question_id"])
        outcomes.append(int(r["outcome"]))
        clusters.append(str(r.get("cluster") if r.get("cluster") is not None else r["question_id"]))
        c = (r.get("baselines") or {}).get("crowd") or {}
        crowd.append(float(c["p_yes"]) if c.get("status") == "ok" and c.get("p_yes") is not None else np.nan)
        for agent, model, p in members:
            cells.append((row, index.setdefault(agent, len(index)), p))
            models.setdefault(agent, model)
        methods[r["question_id"]] = {m: float(v["p_yes"]) for m, v in (r.get("methods") or {}).items()
                                     if v.get("status") == "ok" and v.get("p_yes") is not None}
    if not qids:
        return None
    p = np.full((len(qids), len(index)), np.nan)
    rows, cols, vals = zip(*cells)
    p[list(rows), list(cols)] = vals
    cfg = run.manifest.get("config") or {}
    mixed = len(set(models.values())) > 1  # a mixed ensemble: say which model each member ran on
    labels = [f"{agent} ({models[agent]})" if mixed else agent for agent in index]
    return RunMembers(run_id=run.run_id, question_ids=qids, members=labels, p=p, outcomes=np.array(outcomes, dtype=float),
                      clusters=np.array(clusters, dtype=object),
                      methods=pd.DataFrame.from_dict(methods, orient="index").reindex(qids),
                      crowd=np.array(crowd, dtype=float), crowd_shown=bool(cfg.get("show_crowd", False)))


@dataclass
class DiversityReport:
    """The diversity tables of a report's runs (:func:`diversity_report`).

    Attributes
    ----------
    decomposition : pandas.DataFrame
        One row per run with members: ``run_id``, ``n``, ``members_per_question``, ``mean_member_brier``,
        ``pool_brier``, ``diversity`` (each with ``*_ci_low`` / ``*_ci_high``), ``diversity_share`` (fraction of
        the mean member Brier), ``identity_error``, ``mean_error_correlation``, ``n_pairs``, ``n_effective``.
    correlations : dict of str to pandas.DataFrame
        Each run's error-correlation matrix (members x members), by run id.
    reconciled : pandas.DataFrame
        One row per (run, reconciled method): :class:`benchmarks.scoring.diversity.ReconciliationSplit`'s fields.
    crowd : pandas.DataFrame
        One row per run with crowd prices: :class:`benchmarks.scoring.diversity.CrowdCloseness`'s fields,
        ``crowd_shown`` and ``delta_mean_vs_crowd`` with its interval.
    """

    decomposition: pd.DataFrame
    correlations: dict[str, pd.DataFrame] = field(default_factory=dict)
    reconciled: pd.DataFrame = field(default_factory=pd.DataFrame)
    crowd: pd.DataFrame = field(default_factory=pd.DataFrame)

    def _matrices(self) -> dict[str, pd.DataFrame]:
        """The correlation matrices shown as tables, by title: those of 2 to :data:`MAX_MATRIX_MEMBERS` members with
        a pair estimated (an all-NaN matrix says nothing)."""
        multi = len(self.correlations) > 1
        return {CORRELATION_TITLE + (f": {run_id}" if multi else ""): matrix.reset_index()
                for run_id, matrix in self.correlations.items()
                if 1 < len(matrix) <= MAX_MATRIX_MEMBERS and np.isfinite(matrix.to_numpy(float)[np.triu_indices(len(matrix), 1)]).any()}

    def markdown_sections(self) -> list[str]:
        """The report's Markdown sections (nothing when no run has members)."""
        if self.decomposition.empty:
            return []
        shown = self.decomposition.assign(identity_error=[identity_text(e) for e in self.decomposition["identity_error"]])
        out = [f"## {DECOMPOSITION_TITLE}", DECOMPOSITION_NOTE, markdown_table(shown)]
        for title, matrix in self._matrices().items():
            out += [f"## {title}", markdown_table(matrix)]
        if not self.reconciled.empty:
            out += [f"## {RECONCILED_TITLE}", RECONCILED_NOTE, markdown_table(self.reconciled)]
        if not self.crowd.empty:
            out += [f"## {CROWD_TITLE}", CROWD_NOTE, markdown_table(self.crowd)]
        return out

    def tables(self) -> dict[str, pd.DataFrame]:
        """The page's tables, by title."""
        if self.decomposition.empty:
            return {}
        out = {DECOMPOSITION_TITLE: self.decomposition}
        out.update(self._matrices())
        if not self.reconciled.empty:
            out[RECONCILED_TITLE] = self.reconciled
        if not self.crowd.empty:
            out[CROWD_TITLE] = self.crowd
        return out

    def lines(self) -> list[str]:
        """At most two terminal lines (at most 100 columns) for a report of one run: the decomposition (mean member
        Brier = Brier of the members' mean + spread, the spread's interval, the mean error correlation and n_eff of
        the members per question), and the members' correlation with the crowd price, their share within 0.02 of it
        and the mean's Brier against the crowd's when they were shown it; none for several runs."""
        if len(self.decomposition) != 1:
            return []
        d = self.decomposition.iloc[0]
        ci = (f" [{d.diversity_ci_low:.4f}, {d.diversity_ci_high:.4f}]" if d.diversity_ci_low == d.diversity_ci_low else "")
        rho = "n/a" if d.mean_error_correlation != d.mean_error_correlation else f"{d.mean_error_correlation:.2f}"
        corr = (f"err corr n/a (no pair shares {div.MIN_OVERLAP} questions)" if rho == "n/a"
                else f"err corr {rho}, n_eff {d.n_effective:.1f}/{d.members_per_question:.1f}")
        out = [f"members {d.mean_member_brier:.4f} = mean {d.pool_brier:.4f} + spread {d.diversity:.4f}{ci}; {corr}"]
        shown = self.crowd[self.crowd["crowd_shown"]] if not self.crowd.empty else self.crowd
        if not shown.empty:
            c = shown.iloc[0]
            gap = c.get("delta_mean_vs_crowd", float("nan"))
            low, high = c.get("delta_mean_vs_crowd_ci_low", float("nan")), c.get("delta_mean_vs_crowd_ci_high", float("nan"))
            ci = f" [{low:+.4f}, {high:+.4f}]" if low == low else ""
            out.append(f"crowd shown: corr {c.correlation:.2f}, {c.share_within:.0%} within {c.tolerance:.2f}; "
                       f"mean - crowd Brier {gap:+.4f}{ci}")
        return out


def identity_text(error: float) -> str:
    """The identity's rounding error as the tables show it: ``"2e-17 (< 1e-12)"``, or ``"... (NOT < 1e-12)"``."""
    return f"{error:.0e} ({'<' if error < 1e-12 else 'NOT <'} 1e-12)"


def _ci(prefix: str, ci: scoring.BootstrapCI) -> dict[str, float]:
    return {prefix: ci.mean, f"{prefix}_ci_low": ci.low, f"{prefix}_ci_high": ci.high}


def diversity_report(runs: Sequence[LoadedRun], *, n_resamples: int = 1000, seed: int = 0) -> DiversityReport:
    """The diversity tables of ``runs`` (module docstring); empty tables when no run has members.

    Parameters
    ----------
    runs : sequence of LoadedRun
        The report's runs (:func:`benchmarks.run_folder.load.load_run`).
    n_resamples, seed : int
        Clustered bootstrap resamples and seed.

    Returns
    -------
    DiversityReport
    """
    decomposition, reconciled, crowd, correlations = [], [], [], {}
    for run in runs:
        m = run_members(run)
        if m is None:
            continue
        d = div.ambiguity_decomposition(m.p, m.outcomes, m.clusters, n_resamples=n_resamples, seed=seed)
        c = div.error_correlation(m.p, m.outcomes)
        correlations[m.run_id] = pd.DataFrame(c.matrix, index=pd.Index(m.members, name="member"), columns=m.members)
        decomposition.append({"run_id": m.run_id, "n": d.n, "members_per_question": d.members_per_question,
                              **_ci("mean_member_brier", d.mean_member_brier), **_ci("pool_brier", d.pool_brier),
                              **_ci("diversity", d.diversity), "diversity_share": d.diversity_share,
                              "identity_error": d.identity_error, "mean_error_correlation": c.mean_correlation,
                              "n_pairs": c.n_pairs, "n_effective": c.n_effective})
        for label in m.methods.columns:
            if method_of(label) not in RECONCILIATION_METHODS:
                continue
            r = m.methods[label].to_numpy(dtype=float)
            have = ~np.isnan(r)
            if not have.any():
                continue
            s = div.reconciliation_split(m.p[have], m.outcomes[have], r[have], m.clusters[have], n_resamples=n_resamples, seed=seed)
            reconciled.append({"run_id": m.run_id, "method": label, "n": s.n, "spread": s.spread,
                               **_ci("gain_vs_mean", s.gain_vs_pool), **_ci("toward_better_member", s.toward_better_member),
                               **_ci("beyond_every_member", s.beyond_every_member),
                               "gain_vs_average_member": s.gain_vs_average_member, "share_toward_outcome": s.share_toward_outcome,
                               "share_away": s.share_away, "share_outside_range": s.share_outside_range, "mean_shift": s.mean_shift})
        priced = ~np.isnan(m.crowd)
        if priced.any():
            k = div.crowd_closeness(m.p[priced], m.crowd[priced])
            row = {"run_id": m.run_id, "crowd_shown": m.crowd_shown, "n_forecasts": k.n_forecasts, "correlation": k.correlation,
                   "share_within": k.share_within, "tolerance": k.tolerance, "mean_abs_distance": k.mean_abs_distance}
            if "mean" in m.methods.columns:
                mean = m.methods["mean"].to_numpy(dtype=float)
                both = priced & ~np.isnan(mean)
                if both.any():
                    o = m.outcomes[both]
                    gap = scoring.paired_difference_ci(scoring.brier_score(mean[both], o), scoring.brier_score(m.crowd[both], o),
                                                       m.clusters[both], n_resamples=n_resamples, seed=seed)
                    row.update(_ci("delta_mean_vs_crowd", gap))
            crowd.append(row)
    return DiversityReport(decomposition=pd.DataFrame(decomposition), correlations=correlations,
                           reconciled=pd.DataFrame(reconciled), crowd=pd.DataFrame(crowd))



def decomposition_text(report: DiversityReport, *, n_resamples: int = 1000) -> str:
    """Each run's decomposition as plain lines under 100 columns: the three terms with their intervals, the identity's
    error, the mean error correlation and ``n_eff`` ('' when no run has members)."""
    def term(name: str, d: Any) -> str:
        low, high = d[f"{name}_ci_low"], d[f"{name}_ci_high"]
        return f"{d[name]:.4f} [{low:.4f}, {high:.4f}]" if low == low else f"{d[name]:.4f} [no interval: too few clusters]"

    blocks = []
    for d in report.decomposition.to_dict("records"):
        rho = "n/a" if d["mean_error_correlation"] != d["mean_error_correlation"] else f"{d['mean_error_correlation']:.2f}"
        blocks.append("\n".join([
            f"run {d['run_id']}: {d['n']} questions, {d['members_per_question']:.1f} members per question "
            f"(95% clustered intervals, {n_resamples} resamples)",
            f"  mean member Brier     {term('mean_member_brier', d)}",
            f"  Brier of their mean   {term('pool_brier', d)}",
            f"  diversity (spread)    {term('diversity', d)}  ({d['diversity_share']:.1%} of the mean member Brier)",
            f"  identity: |mean member - pool - diversity| = {identity_text(d['identity_error'])}",
            (f"  error correlation n/a: no pair of members shares {div.MIN_OVERLAP} questions ({d['members_per_question']:.1f} members)"
             if rho == "n/a" else f"  error correlation {rho} over {d['n_pairs']} pairs: n_eff {d['n_effective']:.2f} of "
             f"{d['members_per_question']:.1f} members")]))
    return "\n\n".join(blocks)

