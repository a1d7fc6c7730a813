"""Learned combination, fitted walk-forward: methods whose parameters are fitted on resolved questions only.

The harness holds the outcomes, so it fits here, at scoring time, never inside an agent. Every fitted
method of a question is fitted only on **questions whose actual resolution date is strictly before the
question's forecast date** (the no-look-ahead rule of the ``base_rate`` baseline in
:mod:`benchmarks.baselines`): the question's own outcome, and every outcome still unknown on its forecast
date, cannot reach its parameters. The history is the run's own records, ordered by resolution date
(walk-forward within a run), plus any earlier runs given (``--fit-from runs/A,runs/B``); a question id in
several runs counts once (the scored run's record first, then the earlier runs in the order given).

========================  ==============================================  =============================
method (leaderboard)      fitted on the history                           unfitted rule (fallback)
========================  ==============================================  =============================
``fitted_extremized``     extremizing factor ``d`` of                     ``extremized`` (d = 1.5)
                          ``sigmoid(d * mean(logit p_i))`` over the
                          members (:func:`~agent_research.aggregation.
                          fit_extremizing_factor`, maximum likelihood)
``fitted_platt``          Platt scaling ``sigmoid(a * logit(mean) + b)``  ``mean`` (a = 1, b = 0)
                          of the mean (:func:`~agent_research.
                          aggregation.fit_platt_scaling`, Platt's
                          smoothed targets): the *learned mean*
``fitted_blend``          weights of a linear blend of ``mean``,          ``pipeline`` (the hand-set
                          ``debate`` and ``supervisor``                   combination rule)
                          (:func:`agent_research.learned.fit_pool_weights`)
``fitted_member_weights`` weights of a linear pool of the members, a      ``mean`` (equal weights)
                          member being ``agent_id@model``
                          (:func:`~agent_research.learned.fit_pool_weights`)
========================  ==============================================  =============================

Each fit uses the history's questions that have the method's inputs. With fewer than
:data:`MIN_FIT_QUESTIONS` (30) such questions, or fewer than :data:`MIN_FIT_PER_CLASS` (5) of either
outcome, the method falls back to its unfitted rule and its row says so (``fallback: true`` and a note):
below that, one or two surprising outcomes move a fitted ``d`` or an intercept by more than the
difference the methods are meant to measure. Inputs are the probabilities as scored (clipped to the
combination rule's bounds, see :mod:`benchmarks.methods`), and every fitted probability is clipped the
same way. ``fitted_blend`` needs the debate and the supervisor, so it spends their tokens; the others
cost nothing beyond the ensemble.

Each row records the fitted parameters, ``n_fit`` (questions fitted on), ``n_fit_yes`` and the date the
history was cut at; the report writes them to ``fitted.jsonl`` and sums them up in a table.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from agent_research.aggregation import (
    DEFAULT_EXTREMIZING_FACTOR,
    PlattScaler,
    extremized,
    fit_extremizing_factor,
    fit_platt_scaling,
)
from agent_research.learned import fit_pool_weights, weighted_pool
from agent_schemas import TokenUsage
from benchmarks.methods import method_of

__all__ = ["BLEND_INPUTS", "FITTED_METHODS", "LEARNED_MEAN", "MIN_FIT_PER_CLASS", "MIN_FIT_QUESTIONS", "UNFITTED_RULE",
           "FitInputs", "fit_inputs", "fit_runs", "fitted_summary", "walk_forward"]

#: The fitted methods, in leaderboard order.
FITTED_METHODS: tuple[str, ...] = ("fitted_extremized", "fitted_platt", "fitted_blend", "fitted_member_weights")
#: The method each fitted method falls back to with too little history.
UNFITTED_RULE: dict[str, str] = {"fitted_extremized": "extremized", "fitted_platt": "mean",
                                 "fitted_blend": "pipeline", "fitted_member_weights": "mean"}
#: The methods ``fitted_blend`` blends.
BLEND_INPUTS: tuple[str, ...] = ("mean", "debate", "supervisor")
#: The learned mean: the reference the cost-effectiveness table also measures debate and supervisor against.
LEARNED_MEAN = "fitted_platt"
#: Fewest resolved questions a fit may rest on (count).
MIN_FIT_QUESTIONS = 30
#: Fewest questions of each outcome (Yes and No) a fit may rest on (count).
MIN_FIT_PER_CLASS = 5


@dataclass(frozen=True)
class FitInputs:
    """What the fitted methods read from one question's record.

    ``members`` maps ``agent_id@model`` to the p_yes of each successful member; ``methods`` the scored
    (clipped) p_yes of mean, debate, supervisor and pipeline (None when absent or failed; a gated run's
    ``debate_gated`` etc. under their method's name, :func:`benchmarks.methods.method_of`); ``clip`` the
    combination rule's bounds; ``extra_usage`` the tokens of debate plus supervisor (a TokenUsage dump).
    ``outcome`` and ``resolution_date`` are the harness's; None when unresolved. ``ok`` is False for a
    question whose ensemble failed.
    """

    question_id: str
    forecast_date: dt.date
    resolution_date: dt.date | None
    outcome: int | None
    ok: bool
    members: dict[str, float] = field(default_factory=dict)
    methods: dict[str, float | None] = field(default_factory=dict)
    clip: tuple[float, float] = (0.0, 1.0)
    extra_usage: dict[str, Any] = field(default_factory=dict)
    run_id: str = ""

    @property
    def resolved(self) -> bool:
        """True when the question can teach a fit: ok inputs, an outcome and an actual resolution date."""
        return self.ok and self.outcome is not None and self.resolution_date is not None


def _date(value: Any) -> dt.date | None:
    return None if not value else dt.date.fromisoformat(str(value)[:10])


def fit_inputs(records: Iterable[Mapping[str, Any]], run_id: str = "") -> list[FitInputs]:
    """The :class:`FitInputs` of ``results.jsonl`` records (parsed JSON lines), in the records' order."""
    out = []
    for r in records:
        trace = r.get("trace") or {}
        rule = trace.get("combination_rule") or {}
        methods = r.get("methods") or {}
        members = {f"{f.get('agent_id')}@{f.get('model')}": float(f["p_yes"]) for f in trace.get("forecasts", [])
                   if f.get("status") == "ok" and f.get("p_yes") is not None}
        # keyed by method: a gated run's ``debate_gated`` is its debate (benchmarks.methods.method_of)
        scored = {method_of(m): (float(v["p_yes"]) if v.get("status") == "ok" and v.get("p_yes") is not None else None)
                  for m, v in methods.items()}
        extra = TokenUsage()
        for label, row in methods.items():
            if method_of(label) in ("debate", "supervisor"):
                extra = extra + TokenUsage(**row.get("extra_usage", {}))
        out.append(FitInputs(
            question_id=str(r["question_id"]), forecast_date=_date(r["forecast_date"]),  # type: ignore[arg-type]
            resolution_date=_date(r.get("resolution_date")), outcome=r.get("outcome"),
            ok=r.get("status") == "ok" and bool(members),
            members=members, methods=scored, clip=(float(rule.get("clip_low", 0.0)), float(rule.get("clip_high", 1.0))),
            extra_usage=extra.model_dump(), run_id=run_id,
        ))
    return out


# --- one method: inputs, fit, apply ------------------------------------------------------------------


def _member_matrix(rows: Sequence[FitInputs], keys: Sequence[str]) -> np.ndarray:
    return np.array([[r.members.get(k, np.nan) for k in keys] for r in rows], dtype=float).reshape(len(rows), len(keys))


def _blend_matrix(rows: Sequence[FitInputs]) -> np.ndarray:
    return np.array([[np.nan if r.methods.get(m) is None else r.methods[m] for m in BLEND_INPUTS] for r in rows],
                    dtype=float).reshape(len(rows), len(BLEND_INPUTS))


def _fit(method: str, rows: Sequence[FitInputs], keys: Sequence[str]) -> dict[str, float]:
    """Parameters of ``method`` fitted on ``rows`` (resolved, with the method's inputs)."""
    o = np.array([r.outcome for r in rows], dtype=float)
    if method == "fitted_extremized":
        return {"d": fit_extremizing_factor(_member_matrix(rows, keys), o)}
    if method == "fitted_platt":
        s = fit_platt_scaling(np.array([r.methods["mean"] for r in rows]), o, target_smoothing=True)
        return {"a": s.a, "b": s.b}
    if method == "fitted_blend":
        return dict(zip(BLEND_INPUTS, map(float, fit_pool_weights(_blend_matrix(rows), o))))
    return dict(zip(keys, map(float, fit_pool_weights(_member_matrix(rows, keys), o))))


def _unfitted(method: str, keys: Sequence[str]) -> dict[str, float]:
    if method == "fitted_extremized":
        return {"d": DEFAULT_EXTREMIZING_FACTOR}
    if method == "fitted_platt":
        return {"a": 1.0, "b": 0.0}
    if method == "fitted_blend":
        return {}
    return {k: 1.0 / len(keys) for k in keys}


def _apply(method: str, params: dict[str, float], row: FitInputs, keys: Sequence[str], fallback: bool) -> float | None:
    if method == "fitted_extremized":
        return float(extremized(_member_matrix([row], keys), d=params["d"])[0])
    if method == "fitted_platt":
        return float(PlattScaler(params["a"], params["b"]).transform(row.methods["mean"]))
    if method == "fitted_blend":
        if fallback:
            return row.methods.get("pipeline") if row.methods.get("pipeline") is not None else row.methods["mean"]
        return float(weighted_pool(_blend_matrix([row]), [params[m] for m in BLEND_INPUTS])[0])
    p = weighted_pool(_member_matrix([row], keys), [params[k] for k in keys])[0]
    return None if np.isnan(p) else float(p)


def _has_inputs(method: str, row: FitInputs) -> bool:
    if method in ("fitted_platt", "fitted_blend"):
        return row.methods.get("mean") is not None
    return bool(row.members)


def _fmt(params: dict[str, float]) -> str:
    return ", ".join(f"{k}={v:.3g}" for k, v in params.items())


# --- walk-forward --------------------------------------------------------------------------------------


def walk_forward(
    targets: Sequence[FitInputs],
    history: Sequence[FitInputs] | None = None,
    *,
    methods: Sequence[str] = FITTED_METHODS,
    min_questions: int = MIN_FIT_QUESTIONS,
    min_per_class: int = MIN_FIT_PER_CLASS,
) -> dict[str, dict[str, dict[str, Any]]]:
    """Every fitted method's probability for each target question, fitted without look-ahead.

    Parameters
    ----------
    targets : sequence of FitInputs
        The questions to forecast (a run's records, :func:`fit_inputs`).
    history : sequence of FitInputs, optional
        Resolved questions that may be fitted on; default ``targets`` (walk-forward within the run). Pass
        ``targets`` plus earlier runs' inputs to fit across runs; a question id counts once (first wins).
    methods : sequence of str
        Names among :data:`FITTED_METHODS`.
    min_questions, min_per_class : int
        Fewest questions (and of each outcome) a fit may rest on; below it the unfitted rule is used.

    Returns
    -------
    dict
        ``{question_id: {method: row}}``; a row has ``p_yes`` (in [0, 1], clipped to the question's
        combination bounds; None when failed), ``status`` ("ok" or "failed"), ``note``, ``params``
        (dict of floats), ``n_fit`` and ``n_fit_yes`` (questions, counts), ``fit_before`` (ISO date: the
        history holds outcomes resolved strictly before it), ``fallback`` (bool) and ``extra_usage``.

    Raises
    ------
    ValueError
        For an unknown method or a minimum below 2 (questions) or 1 (per class).
    """
    unknown = [m for m in methods if m not in FITTED_METHODS]
    if unknown:
        raise ValueError(f"unknown fitted methods {unknown}; valid: {', '.join(FITTED_METHODS)}")
    if min_questions < 2 or min_per_class < 1:
        raise ValueError(f"need min_questions >= 2 and min_per_class >= 1, got {min_questions}, {min_per_class}")
    seen: set[str] = set()
    pool: list[FitInputs] = []
    for r in (history if history is not None else targets):
        if r.question_id not in seen and r.resolved:
            seen.add(r.question_id)
            pool.append(r)
    pool.sort(key=lambda r: r.resolution_date)  # type: ignore[arg-type, return-value]
    resolved_on = np.array([np.datetime64(r.resolution_date) for r in pool], dtype="datetime64[D]")
    position = {r.question_id: i for i, r in enumerate(pool)}
    keys = sorted({k for r in [*pool, *targets] for k in r.members})
    cache: dict[tuple[str, int, str | None], tuple[dict[str, float], int, int, bool]] = {}

    def fitted(method: str, n_prefix: int, own: str | None) -> tuple[dict[str, float], int, int, bool]:
        key = (method, n_prefix, own)
        if key not in cache:
            rows = [r for r in pool[:n_prefix] if r.question_id != own and _has_inputs(method, r)]
            n_yes = sum(int(r.outcome) for r in rows)  # type: ignore[arg-type]
            if len(rows) < min_questions or min(n_yes, len(rows) - n_yes) < min_per_class:
                cache[key] = (_unfitted(method, keys), len(rows), n_yes, True)
            else:
                cache[key] = (_fit(method, rows, keys), len(rows), n_yes, False)
        return cache[key]

    out: dict[str, dict[str, dict[str, Any]]] = {}
    for t in targets:
        n_prefix = int(np.searchsorted(resolved_on, np.datetime64(t.forecast_date, "D"), side="left"))
        # the target's own record is in the prefix only if it resolved before its forecast date (bad data)
        own = t.question_id if position.get(t.question_id, n_prefix) < n_prefix else None
        rows: dict[str, dict[str, Any]] = {}
        for method in methods:
            extra = t.extra_usage if method == "fitted_blend" else TokenUsage().model_dump()
            base = {"fit_before": t.forecast_date.isoformat(), "extra_usage": extra}
            if not t.ok or not _has_inputs(method, t):
                why = "the ensemble failed" if not t.ok else "the run did not score mean"
                rows[method] = {**base, "p_yes": None, "status": "failed", "note": f"no inputs: {why}",
                                "params": {}, "n_fit": 0, "n_fit_yes": 0, "fallback": False}
                continue
            params, n, n_yes, fallback = fitted(method, n_prefix, own)
            p = _apply(method, params, t, keys, fallback)
            lo, hi = t.clip
            p = None if p is None else min(max(p, lo), hi)
            when = f"resolved before {t.forecast_date.isoformat()}"
            if fallback:
                shown = _fmt(params) if params else "the hand-set combination rule"
                note = (f"fallback to {UNFITTED_RULE[method]} ({shown}): only {n} questions ({n_yes} Yes) {when}; "
                        f"a fit needs {min_questions}, at least {min_per_class} of each outcome")
            else:
                note = f"fitted on {n} questions ({n_yes} Yes) {when}: {_fmt(params)}"
            rows[method] = {**base, "p_yes": p, "status": "ok" if p is not None else "failed", "note": note,
                            "params": params, "n_fit": n, "n_fit_yes": n_yes, "fallback": fallback}
        out[t.question_id] = rows
    return out


# --- runs ----------------------------------------------------------------------------------------------


def fit_runs(runs: Mapping[str, Sequence[Mapping[str, Any]]], earlier: Sequence[Sequence[Mapping[str, Any]]] = (),
             **kwargs: Any) -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
    """:func:`walk_forward` for each run: every run fitted on its own records and the ``earlier`` runs' records.

    Parameters
    ----------
    runs : mapping of run id to records
        The scored runs' ``results.jsonl`` records.
    earlier : sequence of record lists
        Records of earlier runs (``--fit-from``): history only, never scored here.
    **kwargs
        Passed to :func:`walk_forward` (``methods``, ``min_questions``, ``min_per_class``).

    Returns
    -------
    dict
        ``{run_id: {question_id: {method: row}}}`` (rows as :func:`walk_forward`).
    """
    history = [x for records in earlier for x in fit_inputs(records)]
    out = {}
    for run_id, records in runs.items():
        targets = fit_inputs(records, run_id)
        out[run_id] = walk_forward(targets, [*targets, *history], **kwargs)
    return out


def _median_params(rows: list[dict[str, Any]]) -> dict[str, float]:
    keys = list(dict.fromkeys(k for r in rows for k in r["params"]))  # in the order the fits name them
    return {k: float(np.median([r["params"][k] for r in rows if k in r["params"]])) for k in keys}


def fitted_summary(fitted: Mapping[str, Mapping[str, Mapping[str, Mapping[str, Any]]]], *, prefix_run: bool = False) -> pd.DataFrame:
    """One row per (run, fitted method): how many questions were fitted or fell back, and the parameters.

    Columns: ``label`` (``<run>:<method>`` when ``prefix_run``), ``run_id``, ``method``, ``questions``,
    ``fitted`` and ``fallback`` (counts), ``n_fit_max`` (the largest history a fit rested on),
    ``params_at_n_fit_max`` (the parameters of that fit) and ``params_median`` (median of each parameter over
    the fitted questions), both as ``name=value`` text.
    """
    rows = []
    for run_id, questions in fitted.items():
        for method in FITTED_METHODS:
            got = [q[method] for q in questions.values() if method in q and q[method]["status"] == "ok"]
            if not got:
                continue
            fit = [r for r in got if not r["fallback"]]
            top = max(fit, key=lambda r: r["n_fit"]) if fit else None
            rows.append({"label": f"{run_id}:{method}" if prefix_run else method, "run_id": run_id, "method": method,
                         "questions": len(got), "fitted": len(fit), "fallback": len(got) - len(fit),
                         "n_fit_max": top["n_fit"] if top else 0,
                         "params_at_n_fit_max": _fmt(top["params"]) if top else f"none: every question fell back to {UNFITTED_RULE[method]}",
                         "params_median": _fmt(_median_params(fit)) if fit else ""})
    return pd.DataFrame(rows, columns=["label", "run_id", "method", "questions", "fitted", "fallback", "n_fit_max",
                                       "params_at_n_fit_max", "params_median"])
