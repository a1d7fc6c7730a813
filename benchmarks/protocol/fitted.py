"""Learned combination, fitted walk-forward: methods whose parameters are fitted on resolved questions only.

The harness holds the outcomes, so it fits here, at scoring time, never inside an agent. Every fitted
method of a question is fitted only on **questions whose actual resolution date is strictly before the
question's forecast date** (the no-look-ahead rule of the ``base_rate`` baseline in
:mod:`benchmarks.protocol.baselines`): the question's own outcome, and every outcome still unknown on its forecast
date, cannot reach its parameters. The history is the run's own records, ordered by resolution date
(walk-forward within a run), plus any earlier runs given (``--fit-from runs/A,runs/B``); a question id in
several runs counts once (the scored run's record first, then the earlier runs in the order given).

========================  ==============================================  =============================
method (leaderboard)      fitted on the history                           unfitted rule (fallback)
========================  ==============================================  =============================
``fitted_extremized``     extremizing factor ``d`` of                     ``geomean_odds`` (d = 1: no
                          ``sigmoid(d * mean(logit p_i))`` over the       extremizing until the history
                          members (:func:`~agent_research.aggregation.    shows it; *Fallback of the
                          fit_extremizing_factor`, maximum likelihood)    extremizing factor*)
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

**Drift.** A question's parameters of ``fitted_platt`` weigh each earlier question by its age on the
forecast date (days from its resolution date), ``w = 0.5 ** (age / h)``, with the half-life
``h = max(30 days, age of the 100th most recent question)`` (:data:`PLATT_RECENCY`): a yes-rate that jumps
moves the intercept within about a month, yet at least 100 questions always weigh 0.5 or more, so a sparse
history is not left to a handful of questions. Only the questions resolved before the forecast date enter,
as without weights. Why this rule: measured on twelve kinds of simulated world, the yes-rate constant,
jumping or drifting, members calibrated or under-confident, histories dense or sparse
(``benchmarks/perf/fitted_recency.py``, 20 seeds each; the rule was chosen there before it was run on the
bundled market pool). Against the full history, fixed half-lives of 30, 60 and 90 days, and floors of 150
(45 days) and 200 questions, it had the best mean Brier difference to ``mean`` (-0.00474 against -0.00380
for the full history) and the smallest worst-case regret (0.00057 against 0.00315): a fixed 30 days lost
most on sparse histories, the full history most after a jump. The mean's calibration drifts with the
yes-rate because the members' probabilities lean towards a long-run rate (in the simulator the anchors are
drawn around the source's overall yes-rate); only Platt's intercept can follow that. The extremizing
factor and the pool weights have no intercept, so recency cannot make them follow a base rate (weighting the
extremizing factor the same way lost up to 0.0002 on the dense worlds in a trial): they use the whole history.

**Fallback of the extremizing factor.** With too little history ``fitted_extremized`` does not extremize
(``d = 1``, the geometric mean of odds), rather than take the hand-set ``extremized`` rule's ``d = 1.5``: how
much to extremize depends on how much the members' information overlaps and how well each is calibrated
(Baron et al. 2014, *Decision Analysis* 11(2); Satopää et al. 2014, *Int. J. Forecasting* 30(2)), which
only the history can tell, and ``d = 1`` is the factor that assumes nothing. Measured through the
command line's clusters (``run -p sim --n 2000 --question-type any``: calibrated members, 625 clusters), the
104 questions fitted on fewer than 30 resolved questions made ``fitted_extremized`` significantly worse than
``mean``, +0.00058 [+0.00001, +0.00119], with ``d = 1.5`` (``extremized`` itself is +0.0036 there); with
``d = 1`` it is +0.00027 [-0.00021, +0.00072], no worse than ``mean`` beyond its interval. The fitted
``d`` itself (median 0.99 there) was not the cause: a normal prior on ``d`` centred at 1 (sd 0.25 or 0.5)
moved the difference by 0.00002 only, so the fit stays the maximum-likelihood one.

**Refits of the member weights.** ``fitted_member_weights`` has a parameter per member (100 forecasters:
100), so one fit on thousands of questions takes seconds, and a fit per forecast date made ``aggregate`` on
a large panel take minutes per thousand questions (issue 38: 42 fits of about 4 s on 100,000 forecasts).
So it is refitted on a schedule of history sizes: at :data:`MIN_FIT_QUESTIONS` resolved questions, then
each time the history has grown by :data:`MEMBER_REFIT_GROWTH` (30, 45, 68, 102, ... questions: about 15
fits for 10,000 questions), on at most the :data:`MEMBER_FIT_MAX_QUESTIONS` most recently resolved of
them. A question uses the fit of the largest scheduled size its own history reaches: fitted on fewer
questions than it could be, never on a later one (no look-ahead, as every fit here). Its row's ``n_fit``
says how many, and its note names the schedule. The other methods have one or two parameters and are
fitted on every history.

**Speed.** The walk-forward reads every question's inputs once, as arrays (members as a questions x members
matrix), and fits with one BLAS thread (``threadpoolctl``): the fits' steps are on 2 to ~100 parameters, and
waking OpenBLAS's threads at each step of L-BFGS-B made a Platt fit on 1,000 questions take 170 ms instead of 7 ms
on two busy cores (``fitted_platt`` is refitted for every forecast date: 340 fits on 1,000 questions). Results are
the same to the last bit (the rows of :func:`walk_forward` compared with the previous code on generated panels).

Each fit uses the history's questions that have the method's inputs. With fewer than
:data:`MIN_FIT_QUESTIONS` (30) such questions, or fewer than :data:`MIN_FIT_PER_CLASS` (5) of either
outcome, the method falls back to its unfitted rule and its row says so (``fallback: true`` and a note):
below that, one or two surprising outcomes move a fitted ``d`` or an intercept by more than the
difference the methods are meant to measure. Inputs are the probabilities as scored (clipped to the
combination rule's bounds, see :mod:`benchmarks.protocol.methods`), and every fitted probability is clipped the
same way. ``fitted_blend`` needs the debate and the supervisor, so it spends their tokens; the others
cost nothing beyond the ensemble.

**What a ``--fit-from`` run must share.** A fitted parameter describes how forecasts made one way relate
to outcomes; learned from forecasts made another way it measures neither. So besides the model
(:func:`refuse_other_models`, which ``--fit-from-any-model`` lifts), every ``--fit-from`` run must have made
its forecasts as each scored run does, on every setting of :data:`FIT_SETTINGS`
(:func:`refuse_other_settings`; no option lifts it):

======================  ================================================  ==========================================
setting                 read from the manifest                            why it changes what is fitted
======================  ================================================  ==========================================
``--show-crowd``        ``config.show_crowd``                             members who see the market's price lean on
                                                                          it: their calibration is another
``members (-m)``        ``config.pipeline.n_members``                     the mean of 5 members is sharper than of 3;
                                                                          the member weights name the members
``personas``            ``config.pipeline.personas``                      each persona has its own lean
``temperatures``        ``config.pipeline.temperatures``                  sampling noise changes the spread
``evidence``            ``config.search``, ``config.snippet_chars``,      what the members read
                        ``config.pipeline.member``
``--evidence-cutoff``   ``config.evidence_cutoff`` (absent:               up to 10 fewer days of news read: their
                        ``forecast``, the default, left out)              calibration is another
``question kinds``      ``question_kinds``                                binary and other kinds are scored apart
``prompt version``      ``prompt_version``                                (:func:`benchmarks.harness.manifest.
                                                                          prompt_version`) other words, other
                                                                          answers
======================  ================================================  ==========================================

A setting a manifest does not record (a run written before it was) reads ``not recorded`` and differs from
any recorded value.

Each row records the fitted parameters, ``n_fit`` (questions fitted on), ``n_fit_yes``, the date the
history was cut at, and for ``fitted_platt`` the half-life used and the effective number of questions
(Kish's ``(sum w)^2 / sum w^2``); the report writes them to ``fitted.jsonl`` and sums them up in a table.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from agent_research.aggregation import (
    PlattScaler,
    extremized,
    fit_extremizing_factor,
    fit_platt_scaling,
)
from agent_research.learned import fit_pool_weights, weighted_pool
from agent_schemas import DataValidationError, TokenUsage
from benchmarks.protocol.baselines import evidence_cutoff_of
from benchmarks.protocol.methods import method_of

__all__ = ["BLEND_INPUTS", "FITTED_METHODS", "LEARNED_MEAN", "MIN_FIT_PER_CLASS", "MIN_FIT_QUESTIONS", "PLATT_RECENCY",
           "RECENCY_METHODS", "UNFITTED_RULE", "FitInputs", "RecencyWeights", "fallback_equals", "fit_inputs", "fit_runs", "fit_sources",
           "fitted_extra_usage", "fitted_summary", "refuse_other_models", "refuse_other_settings", "run_models", "walk_forward",
           "FIT_SETTINGS", "fit_settings"]

#: The fitted methods, in leaderboard order.
FITTED_METHODS: tuple[str, ...] = ("fitted_extremized", "fitted_platt", "fitted_blend", "fitted_member_weights")
#: The method each fitted method falls back to with too little history.
UNFITTED_RULE: dict[str, str] = {"fitted_extremized": "geomean_odds", "fitted_platt": "mean",
                                 "fitted_blend": "pipeline", "fitted_member_weights": "mean"}
#: The extremizing factor of ``fitted_extremized`` with too little history (module docstring, *Fallback of the
#: extremizing factor*): 1, no extremizing (``geomean_odds``), not the ``extremized`` rule's 1.5.
UNFITTED_EXTREMIZING_FACTOR = 1.0
#: The methods ``fitted_blend`` blends.
BLEND_INPUTS: tuple[str, ...] = ("mean", "debate", "supervisor")
#: The learned mean: the reference the cost-effectiveness table also measures debate and supervisor against.
LEARNED_MEAN = "fitted_platt"
#: Fewest resolved questions a fit may rest on (count).
MIN_FIT_QUESTIONS = 30
#: Fewest questions of each outcome (Yes and No) a fit may rest on (count).
MIN_FIT_PER_CLASS = 5


@dataclass(frozen=True)
class RecencyWeights:
    """Weights of a walk-forward fit by age: ``w = 0.5 ** (age / h)``, ``h = max(half_life_days, age of the
    min_questions-th most recent question)`` (module docstring, *Drift*).

    Attributes
    ----------
    half_life_days : float
        Shortest half-life (days, > 0).
    min_questions : int
        The ``min_questions`` most recent questions always weigh at least 0.5 (count, >= 0; 0 for a fixed
        half-life).
    """

    half_life_days: float = 30.0
    min_questions: int = 100

    def __post_init__(self) -> None:
        if not (np.isfinite(self.half_life_days) and self.half_life_days > 0) or self.min_questions < 0:
            raise ValueError(f"need half_life_days > 0 and min_questions >= 0, got {self.half_life_days}, {self.min_questions}")

    def half_life(self, ages: np.ndarray) -> float:
        """The half-life (days) for questions of ``ages`` (days, shape (n,))."""
        if self.min_questions == 0 or ages.size == 0:
            return float(self.half_life_days)
        return float(max(self.half_life_days, np.sort(ages)[min(self.min_questions, ages.size) - 1]))

    def weights(self, ages: np.ndarray) -> np.ndarray:
        """The weight in (0, 1] of each question, by its age (days, shape (n,))."""
        return np.power(0.5, np.asarray(ages, dtype=float) / self.half_life(np.asarray(ages)))


#: The recency rule of ``fitted_platt`` (module docstring, *Drift*).
PLATT_RECENCY = RecencyWeights(half_life_days=30.0, min_questions=100)
#: The fitted methods whose fit is weighted by recency (those with an intercept, which tracks a base rate).
RECENCY_METHODS: tuple[str, ...] = ("fitted_platt",)
#: ``fitted_member_weights`` is refitted only when the resolved history has grown by this factor since its
#: last fit (see "Refits of the member weights" in the module docstring).
MEMBER_REFIT_GROWTH = 1.5
#: ``fitted_member_weights`` is fitted on at most this many of the most recently resolved questions.
MEMBER_FIT_MAX_QUESTIONS = 2000


@dataclass(frozen=True)
class FitInputs:
    """What the fitted methods read from one question's record.

    ``members`` maps ``agent_id@model`` to the p_yes of each successful member; ``methods`` the scored
    (clipped) p_yes of mean, debate, supervisor and pipeline (None when absent or failed; a gated run's
    ``debate_gated`` etc. under their method's name, :func:`benchmarks.protocol.methods.method_of`); ``clip`` the
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


def fitted_extra_usage(method: str, t: FitInputs) -> dict[str, Any]:
    """What fitted ``method`` spends on question ``t`` beyond the shared ensemble (a TokenUsage dump): the debate
    and the supervisor's usage for ``fitted_blend``, which blends them (:data:`BLEND_INPUTS`); nothing for the
    others, which read the members only."""
    return t.extra_usage if method == "fitted_blend" else TokenUsage().model_dump()


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
        # keyed by method: a gated run's ``debate_gated`` is its debate (benchmarks.protocol.methods.method_of)
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


@dataclass(frozen=True)
class _Inputs:
    """The fitted methods' inputs of a sequence of :class:`FitInputs` as arrays, built once (one pass over each
    row's members) rather than a dict look-up per (row, member) for every fit: ``members`` of shape
    (n_rows, n_keys), p_yes, NaN where a member is absent; ``blend`` of shape (n_rows, 3), the scored p_yes of
    :data:`BLEND_INPUTS` (NaN where None); ``mean`` of shape (n_rows,), the scored mean (NaN where None);
    ``outcome`` of shape (n_rows,), 0/1 (NaN where unresolved)."""

    members: np.ndarray
    blend: np.ndarray
    mean: np.ndarray
    outcome: np.ndarray

    @classmethod
    def of(cls, rows: Sequence[FitInputs], keys: Sequence[str]) -> "_Inputs":
        column = {k: j for j, k in enumerate(keys)}
        members = np.full((len(rows), len(keys)), np.nan)
        for i, r in enumerate(rows):
            if r.members:
                js, ps = zip(*((column[k], p) for k, p in r.members.items()))
                members[i, list(js)] = ps
        blend = np.array([[np.nan if r.methods.get(m) is None else r.methods[m] for m in BLEND_INPUTS] for r in rows],
                         dtype=float).reshape(len(rows), len(BLEND_INPUTS))
        outcome = np.array([np.nan if r.outcome is None else float(r.outcome) for r in rows], dtype=float)
        return cls(members, blend, blend[:, 0].copy(), outcome)


def _fit(method: str, x: _Inputs, at: np.ndarray, keys: Sequence[str], weights: np.ndarray | None) -> dict[str, float]:
    """Parameters of ``method`` fitted on the rows ``at`` (indices into ``x``; resolved, with the method's
    inputs), by ``weights`` (``fitted_platt`` only; None: equal)."""
    o = x.outcome[at]
    if method == "fitted_extremized":
        return {"d": fit_extremizing_factor(x.members[at], o)}
    if method == "fitted_platt":
        s = fit_platt_scaling(x.mean[at], o, target_smoothing=True, sample_weight=weights)
        return {"a": s.a, "b": s.b}
    if method == "fitted_blend":
        return dict(zip(BLEND_INPUTS, map(float, fit_pool_weights(x.blend[at], o))))
    return dict(zip(keys, map(float, fit_pool_weights(x.members[at], o))))


def _unfitted(method: str, keys: Sequence[str]) -> dict[str, float]:
    if method == "fitted_extremized":
        return {"d": UNFITTED_EXTREMIZING_FACTOR}
    if method == "fitted_platt":
        return {"a": 1.0, "b": 0.0}
    if method == "fitted_blend":
        return {}
    return {k: 1.0 / len(keys) for k in keys}


def _apply(method: str, params: dict[str, float], row: FitInputs, x: _Inputs, i: int, keys: Sequence[str], fallback: bool) -> float | None:
    """``method``'s p_yes of ``row`` (row ``i`` of ``x``) with ``params``."""
    if method == "fitted_extremized":
        return float(extremized(x.members[i:i + 1], d=params["d"])[0])
    if method == "fitted_platt":
        return float(PlattScaler(params["a"], params["b"]).transform(row.methods["mean"]))
    if method == "fitted_blend":
        if fallback:
            return row.methods.get("pipeline") if row.methods.get("pipeline") is not None else row.methods["mean"]
        return float(weighted_pool(x.blend[i:i + 1], [params[m] for m in BLEND_INPUTS])[0])
    p = weighted_pool(x.members[i:i + 1], [params[k] for k in keys])[0]
    return None if np.isnan(p) else float(p)


def _has_inputs(method: str, row: FitInputs) -> bool:
    if method in ("fitted_platt", "fitted_blend"):
        return row.methods.get("mean") is not None
    return bool(row.members)


def _fmt(params: dict[str, float]) -> str:
    return ", ".join(f"{k}={v:.3g}" for k, v in params.items())


# --- walk-forward --------------------------------------------------------------------------------------


def _scheduled_size(n: int, start: int) -> int:
    """The largest history size of the member weights' refit schedule (``start``, then each time grown by
    :data:`MEMBER_REFIT_GROWTH`, rounded up) that is at most ``n``; ``n`` itself below ``start``."""
    if n < start:
        return n
    size = start
    while (nxt := math.ceil(size * MEMBER_REFIT_GROWTH)) <= n:
        size = nxt
    return size


@dataclass(frozen=True)
class _Fit:
    params: dict[str, float]
    n: int
    n_yes: int
    fallback: bool
    half_life_days: float | None
    n_eff: float


def walk_forward(
    targets: Sequence[FitInputs],
    history: Sequence[FitInputs] | None = None,
    *,
    methods: Sequence[str] = FITTED_METHODS,
    min_questions: int = MIN_FIT_QUESTIONS,
    min_per_class: int = MIN_FIT_PER_CLASS,
    recency: RecencyWeights | None = PLATT_RECENCY,
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
    recency : RecencyWeights or None
        Weights of the earlier questions by age in the fit of ``fitted_platt`` (:data:`RECENCY_METHODS`);
        None weighs every earlier question alike (the full-history fit).

    Returns
    -------
    dict
        ``{question_id: {method: row}}``; a row has ``p_yes`` (in [0, 1], clipped to the question's
        combination bounds; None when failed), ``status`` ("ok" or "failed"), ``note``, ``params``
        (dict of floats), ``n_fit`` and ``n_fit_yes`` (questions, counts), ``fit_before`` (ISO date: the
        history holds outcomes resolved strictly before it), ``fallback`` (bool), ``equals`` (the method
        a fallback row equals, e.g. ``"mean"``; None when fitted), ``half_life_days`` (days; None when
        unweighted), ``n_eff`` (Kish's effective number of questions; ``n_fit`` when unweighted) and
        ``extra_usage``.

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
    cache: dict[tuple[str, int, str | None, dt.date | None], _Fit] = {}
    x = _Inputs.of(pool, keys)  # the pool's inputs as arrays, indexed by position in the pool
    has = {method: np.array([_has_inputs(method, r) for r in pool], dtype=bool) for method in methods}

    def fitted(method: str, n_prefix: int, own: str | None, on: dt.date) -> _Fit:
        weighted = recency is not None and method in RECENCY_METHODS
        first = 0
        if method == "fitted_member_weights" and own is None:  # the refit schedule (module docstring)
            n_prefix = _scheduled_size(n_prefix, min_questions)
            first = max(0, n_prefix - MEMBER_FIT_MAX_QUESTIONS)
        key = (method, n_prefix, own, on if weighted else None)
        if key not in cache:
            usable = has[method][first:n_prefix].copy()
            if own is not None and first <= position[own] < n_prefix:
                usable[position[own] - first] = False
            at = first + np.flatnonzero(usable)
            n, n_yes = int(at.size), int(x.outcome[at].sum())
            if n < min_questions or min(n_yes, n - n_yes) < min_per_class:
                cache[key] = _Fit(_unfitted(method, keys), n, n_yes, True, None, float(n))
            elif weighted:
                ages = (np.datetime64(on, "D") - resolved_on[at]).astype(np.int64)  # days
                w = recency.weights(ages)  # type: ignore[union-attr]
                cache[key] = _Fit(_fit(method, x, at, keys, w), n, n_yes, False,
                                  recency.half_life(ages), float(w.sum() ** 2 / (w ** 2).sum()))  # type: ignore[union-attr]
            else:
                cache[key] = _Fit(_fit(method, x, at, keys, None), n, n_yes, False, None, float(n))
        return cache[key]

    mine = _Inputs.of(targets, keys)
    # one BLAS thread for the fits: L-BFGS-B's and BFGS's steps on 2 to ~100 parameters are far too small to share, and
    # waking OpenBLAS's threads for each made a Platt fit take 170 ms instead of 7 ms on 2 busy cores (module docstring)
    from scipy import optimize  # noqa: F401  (loads scipy's own OpenBLAS, so that the limit below covers it too)

    with threadpool_limits(limits=1, user_api="blas"):
        return _walk(targets, mine, keys, methods, fitted, resolved_on, position, min_questions, min_per_class)


def _walk(targets: Sequence[FitInputs], mine: _Inputs, keys: Sequence[str], methods: Sequence[str],
          fitted: Callable[[str, int, str | None, dt.date], _Fit], resolved_on: np.ndarray, position: Mapping[str, int],
          min_questions: int, min_per_class: int) -> dict[str, dict[str, dict[str, Any]]]:
    """The rows of :func:`walk_forward`, each target's fit taken from ``fitted``."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for i, t in enumerate(targets):
        n_prefix = int(np.searchsorted(resolved_on, np.datetime64(t.forecast_date, "D"), side="left"))
        # the target's own record is in the prefix only if it resolved before its forecast date (bad data)
        own = t.question_id if position.get(t.question_id, n_prefix) < n_prefix else None
        rows: dict[str, dict[str, Any]] = {}
        for method in methods:
            extra = fitted_extra_usage(method, t)
            base = {"fit_before": t.forecast_date.isoformat(), "extra_usage": extra}
            if not t.ok or not _has_inputs(method, t):
                why = "the ensemble failed" if not t.ok else "the run did not score mean"
                rows[method] = {**base, "p_yes": None, "status": "failed", "note": f"no inputs: {why}",
                                "params": {}, "n_fit": 0, "n_fit_yes": 0, "fallback": False, "equals": None,
                                "half_life_days": None, "n_eff": 0.0}
                continue
            fit = fitted(method, n_prefix, own, t.forecast_date)
            p = _apply(method, fit.params, t, mine, i, keys, fit.fallback)
            lo, hi = t.clip
            p = None if p is None else min(max(p, lo), hi)
            when = f"resolved before {t.forecast_date.isoformat()}"
            equals = None
            if fit.fallback:
                equals = UNFITTED_RULE[method] if method != "fitted_blend" or t.methods.get("pipeline") is not None else "mean"
                shown = _fmt(fit.params) if fit.params else "the hand-set combination rule"
                note = (f"fallback to {equals} ({shown}): only {fit.n} questions ({fit.n_yes} Yes) {when}; "
                        f"a fit needs {min_questions}, at least {min_per_class} of each outcome")
            elif fit.half_life_days is not None:
                note = (f"fitted on {fit.n} questions ({fit.n_yes} Yes) {when}, weighted by recency (half-life "
                        f"{fit.half_life_days:.0f} days, effective n {fit.n_eff:.0f}): {_fmt(fit.params)}")
            elif method == "fitted_member_weights":
                note = (f"fitted on {fit.n} questions ({fit.n_yes} Yes) {when} (refitted as the history grows by "
                        f"{MEMBER_REFIT_GROWTH:g}x, on at most the {MEMBER_FIT_MAX_QUESTIONS:,} latest): {_fmt(fit.params)}")
            else:
                note = f"fitted on {fit.n} questions ({fit.n_yes} Yes) {when}: {_fmt(fit.params)}"
            rows[method] = {**base, "p_yes": p, "status": "ok" if p is not None else "failed", "note": note,
                            "params": fit.params, "n_fit": fit.n, "n_fit_yes": fit.n_yes, "fallback": fit.fallback,
                            "equals": equals, "half_life_days": fit.half_life_days, "n_eff": fit.n_eff}
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


def fallback_equals(fitted: Mapping[str, Mapping[str, Mapping[str, Mapping[str, Any]]]], *, prefix_run: bool = False,
                    min_questions: int = MIN_FIT_QUESTIONS, min_per_class: int = MIN_FIT_PER_CLASS) -> dict[str, str]:
    """The fitted methods that fell back on every question they answered, with what they equal and why.

    Such a method is its unfitted rule under another name (``fitted_platt`` is then ``mean`` on every
    question), so the leaderboard gives it no rank of its own
    (:func:`benchmarks.scoring.ranking.rank_methods`, ``equals``).

    Parameters
    ----------
    fitted : mapping
        ``{run_id: {question_id: {method: row}}}`` (:func:`fit_runs`).
    prefix_run : bool
        Label methods ``<run_id>:<method>`` (the leaderboard's labels when several runs are compared).
    min_questions, min_per_class : int
        The fit's minimums (counts, as given to :func:`walk_forward`), named in the reason.

    Returns
    -------
    dict
        ``{label: "<rule> (not fitted: <why>)"}``, e.g. ``{"fitted_platt": "mean (not fitted: n < 30)"}``. The
        reason is ``one forecast date`` when every question was forecast on the same day (a single round: no
        question can have resolved before another's forecast date, however many there are), ``n < 30`` when
        fewer questions resolved before the latest forecast date, and ``fewer than 5 of an outcome`` when 30 were
        there but not both outcomes.
        The rule is the one the rows used (``fitted_blend`` without a pipeline: ``mean``).
    """
    out = {}
    for run_id, questions in fitted.items():
        for method in FITTED_METHODS:
            got = [q[method] for q in questions.values() if method in q and q[method]["status"] == "ok"]
            if not got or not all(r["fallback"] for r in got):
                continue
            rule = " or ".join(dict.fromkeys(r.get("equals") or UNFITTED_RULE[method] for r in got))
            n_max = max(r["n_fit"] for r in got)
            if n_max >= min_questions:
                why = f"fewer than {min_per_class} of an outcome"
            elif len({r.get("fit_before") for r in got}) == 1:  # every question forecast on one day: no history can grow
                why = "one forecast date"
            else:
                why = f"n < {min_questions}"
            out[f"{run_id}:{method}" if prefix_run else method] = f"{rule} (not fitted: {why})"
    return out


def run_models(manifest: Mapping[str, Any]) -> tuple[str, ...]:
    """The models of a run, as ``<provider>/<model>`` from its manifest (sorted, each once).

    The provider is the spec's prefix and the model the manifest's ``model`` (the simulator's: its
    parameters), so ``openai-compatible/qwen`` is one model at any URL and ``sim`` with other parameters
    is another model; a manifest without ``model`` gives the spec.
    """
    out = set()
    for p in manifest.get("providers") or []:
        spec = str(p.get("spec", ""))
        out.add(f"{spec.partition('/')[0]}/{p['model']}" if p.get("model") else spec)
    return tuple(sorted(out))


def fit_sources(scored: Mapping[str, Mapping[str, Any]], earlier: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """The runs the fitted methods learn from, and their models.

    Parameters
    ----------
    scored : mapping of str to manifest
        The scored runs (folder as given -> ``manifest.json`` content): each learns from its own questions.
    earlier : mapping of str to manifest
        The ``--fit-from`` runs (folder -> manifest): every scored run learns from them too.

    Returns
    -------
    pandas.DataFrame
        One row per run: ``run`` (folder), ``run_id``, ``learned_as`` ("scored run" or "--fit-from"),
        ``models`` (:func:`run_models`, comma-separated) and ``other_model`` (bool: a ``--fit-from`` run whose
        models differ from a scored run's, so that run's fit would learn another model's forecasts).
    """
    mine = {run_models(m) for m in scored.values()}
    rows = [{"run": run, "run_id": m.get("run_id", ""), "learned_as": "scored run", "models": ", ".join(run_models(m)),
             "other_model": False} for run, m in scored.items()]
    rows += [{"run": run, "run_id": m.get("run_id", ""), "learned_as": "--fit-from", "models": ", ".join(run_models(m)),
              "other_model": any(run_models(m) != models for models in mine)} for run, m in earlier.items()]
    return pd.DataFrame(rows, columns=["run", "run_id", "learned_as", "models", "other_model"])


def refuse_other_models(sources: pd.DataFrame) -> None:
    """Raise when a ``--fit-from`` run has other models than a scored run (:func:`fit_sources`).

    A fitted method learns how one model's forecasts relate to outcomes (its calibration, its members'
    weights); fitted on another model's records it measures neither. ``--fit-from-any-model`` allows it.

    Raises
    ------
    DataValidationError
        One line naming the runs and their models (field ``--fit-from``).
    """
    other = sources[sources["other_model"]]
    if other.empty:
        return

    def named(rows: pd.DataFrame) -> str:
        return "; ".join(f"{r.run} ({r.models or 'models unknown'})" for r in rows.itertuples())

    scored = sources[sources["learned_as"] == "scored run"]
    differ = scored[~scored["models"].isin(set(other["models"]))]  # name the scored runs of other models
    raise DataValidationError(
        f"--fit-from {named(other)} {'is' if len(other) == 1 else 'are'} not the model of {named(differ if len(differ) else scored)}: "
        "the fitted methods would learn one model's forecasts for another's; give --fit-from-any-model to fit on it anyway",
        field="--fit-from", value=", ".join(other["run"]))


def _config(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    return manifest.get("config") or {}


def _pipeline(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    return _config(manifest).get("pipeline") or {}


def _evidence(manifest: Mapping[str, Any]) -> Any:
    cfg = _config(manifest)
    if "search" not in cfg:
        return _NOT_RECORDED
    member = dict(_pipeline(manifest).get("member") or {})
    # who saw which results (agent_research.evidence_modes): recorded only when not shared, so a shared run reads as before
    mode = _pipeline(manifest).get("evidence")
    return (f"search={cfg['search']}, snippet_chars={cfg.get('snippet_chars')}, " + ", ".join(f"{k}={v}" for k, v in sorted(member.items()))
            + (f", evidence={mode}" if mode else ""))


_NOT_RECORDED = "not recorded"


def _recorded(value: Any, key: str, where: Mapping[str, Any]) -> Any:
    return value if key in where else _NOT_RECORDED


#: The settings a ``--fit-from`` run must share with every scored run (module docstring, *What a
#: ``--fit-from`` run must share*): name -> the setting's value read from a manifest.
FIT_SETTINGS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "--show-crowd": lambda m: _recorded(_config(m).get("show_crowd"), "show_crowd", _config(m)),
    "members (-m)": lambda m: _recorded(_pipeline(m).get("n_members"), "n_members", _pipeline(m)),
    "personas": lambda m: _recorded(_pipeline(m).get("personas"), "personas", _pipeline(m)),
    "temperatures": lambda m: _recorded(_pipeline(m).get("temperatures"), "temperatures", _pipeline(m)),
    "evidence": _evidence,
    "--evidence-cutoff": evidence_cutoff_of,
    "question kinds": lambda m: ", ".join(m["question_kinds"]) if "question_kinds" in m else _NOT_RECORDED,
    "prompt version": lambda m: m.get("prompt_version") or _NOT_RECORDED,
}


def fit_settings(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """Every setting of :data:`FIT_SETTINGS` as the run's manifest records it (``"not recorded"`` when it
    does not)."""
    return {name: read(manifest) for name, read in FIT_SETTINGS.items()}


def refuse_other_settings(scored: Mapping[str, Mapping[str, Any]], earlier: Mapping[str, Mapping[str, Any]],
                          *, only: Sequence[str] | None = None) -> None:
    """Raise when a ``--fit-from`` run made its forecasts another way than a scored run (:data:`FIT_SETTINGS`).

    Parameters
    ----------
    scored, earlier : mapping of str to manifest
        The scored runs and the ``--fit-from`` runs (folder -> ``manifest.json`` content).
    only : sequence of str, optional
        The settings to compare (default: all); ``run`` compares those its config states before it starts.

    Raises
    ------
    DataValidationError
        One line naming the setting, the ``--fit-from`` run and its value, the scored run and its value (field
        ``--fit-from``).
    """
    names = list(FIT_SETTINGS) if only is None else list(only)
    for run, manifest in earlier.items():
        theirs = fit_settings(manifest)
        for scored_run, scored_manifest in scored.items():
            mine = fit_settings(scored_manifest)
            for name in names:
                if theirs[name] != mine[name]:
                    raise DataValidationError(
                        f"--fit-from {run} was made with {name} {theirs[name]!r}, the scored run {scored_run} with {mine[name]!r}: "
                        "the fitted methods would learn forecasts made another way (the settings that must match: "
                        "benchmarks.protocol.fitted.FIT_SETTINGS)", field="--fit-from", value=run)


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
