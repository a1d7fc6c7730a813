"""Method names of the benchmark and how each method's probability is read from one pipeline trace.

All methods of a question come from ONE shared ensemble run, so methods differ only in
reconciliation and their extra tokens are attributable:

* aggregation methods (the pooling rules of the question's kind, :mod:`agent_schemas.kinds`: for a binary
  question ``mean``, ``median``, ``min``, ``max``, ``trimmed_mean``, ``geomean_odds``, ``extremized``) read
  ``trace.aggregates``; they cost no tokens beyond the ensemble; a method that is no pooling rule of the
  question's kind (``geomean_odds`` on a multiple-choice question) gives no row for it;
* ``debate`` is the debate's midpoint probability, ``supervisor`` the supervisor's ``p_yes``;
  a specialist that ran and failed gives a failed method row (never a default probability);
* ``pipeline`` is the trace's final probability (combination rule, then clipping); its note says
  when a specialist failed and the combination fell back to the other steps.

A run whose pipeline reconciles only questions whose members disagree (``reconcile_min_spread`` > 0,
the spread gate recorded per question as ``PipelineTrace.reconcile_gate``) scores the reconciliation
methods under their own labels, ``debate_gated``, ``supervisor_gated`` and ``pipeline_gated``
(:func:`method_label`): where the members agreed the specialists did not run and the method's
probability is the ``mean`` aggregate at no extra cost (noted "not run: the members agree ..."), so
the row measures the gated method, and runs with and without the gate stay apart on a leaderboard.

Every method's probability is clipped to the same bounds as the pipeline's final probability
(``CombinationRule.clip_low`` / ``clip_high``, default [0.01, 0.99]; for another kind as the kind clips:
:meth:`agent_schemas.kinds.base.QuestionKind.clip`), so that methods differ only in reconciliation and one
confident miss does not decide a log-loss comparison. The unclipped values stay in the trace. Baselines are
not clipped.

A row holds its forecast as the question's kind stores it: ``p_yes`` for a binary question, ``distribution``
for the others (:meth:`~agent_schemas.kinds.base.QuestionKind.fields`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agent_schemas import PipelineTrace, TokenUsage
from agent_schemas.kinds import KINDS, QuestionKind

#: The pooling methods a binary run scores by default (the binary kind's ``default_methods``).
AGGREGATION_METHODS = KINDS["binary"].default_methods
RECONCILIATION_METHODS = ("debate", "supervisor", "pipeline")
DEFAULT_METHODS = AGGREGATION_METHODS + RECONCILIATION_METHODS
#: Every method of every kind: the pooling rules of each kind (binary first), then the reconciliation methods.
ALL_METHODS = tuple(dict.fromkeys(m for k in KINDS.values() for m in k.pools)) + RECONCILIATION_METHODS


def default_methods(kind: QuestionKind) -> tuple[str, ...]:
    """The methods a run on questions of ``kind`` scores by default: its pooling rules, then the reconciliation
    methods (for binary: :data:`DEFAULT_METHODS`)."""
    return kind.default_methods + RECONCILIATION_METHODS
#: Label suffix of a reconciliation method in a run with a spread gate (see the module docstring).
GATED_SUFFIX = "_gated"


def method_label(method: str, min_spread: float) -> str:
    """The label under which ``method`` is scored in a run reconciling at a member spread of at least
    ``min_spread`` (probability units): a reconciliation method gets :data:`GATED_SUFFIX` when
    ``min_spread`` > 0; every other method keeps its name.

    >>> method_label("pipeline", 0.1), method_label("pipeline", 0.0), method_label("mean", 0.1)
    ('pipeline_gated', 'pipeline', 'mean')
    """
    return method + GATED_SUFFIX if method in RECONCILIATION_METHODS and min_spread > 0 else method


def method_of(label: str) -> str:
    """The method a label scores (:func:`method_label` undone): ``"pipeline_gated"`` -> ``"pipeline"``."""
    base = label.removesuffix(GATED_SUFFIX)
    return base if base in RECONCILIATION_METHODS else label


def validate_methods(methods: list[str] | tuple[str, ...]) -> list[str]:
    """Return ``methods`` as a list, or raise ValueError naming the unknown ones and the valid names."""
    methods = list(methods)
    unknown = [m for m in methods if m not in ALL_METHODS]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; valid: {', '.join(ALL_METHODS)}")
    if not methods:
        raise ValueError("methods is empty")
    return methods


def method_rows(trace: PipelineTrace, methods: list[str], *, min_spread: float | None = None) -> dict[str, dict[str, Any]]:
    """Per-method ``{"p_yes" (or "distribution"), "status", "note", "extra_usage"}`` read from ``trace``, keyed
    by label (:func:`method_label` at ``min_spread``, the run's spread gate; default the one the trace records).
    Methods that are no pooling rule of the question's kind (and no reconciliation method) give no row.

    ``extra_usage`` is the usage the method spends beyond the shared ensemble (a TokenUsage dump).
    """
    if min_spread is None:
        min_spread = float(trace.combination_rule.get("reconcile_min_spread") or 0.0)
    return {method_label(m, min_spread): row for m, row in _rows(trace, methods).items()}


def _rows(trace: PipelineTrace, methods: list[str]) -> dict[str, dict[str, Any]]:
    spec = trace.question.spec
    kind = trace.question.kind
    out: dict[str, dict[str, Any]] = {}
    lo = float(trace.combination_rule.get("clip_low", 0.0))
    hi = float(trace.combination_rule.get("clip_high", 1.0))

    def row(forecast: np.ndarray | None, status: str, note: str, extra: TokenUsage | None = None) -> dict[str, Any]:
        return {**kind.fields(forecast), "status": status, "note": note, "extra_usage": (extra or TokenUsage()).model_dump()}

    def clipped(value: Any) -> np.ndarray | None:
        forecast = kind.vector(value)
        return None if forecast is None else kind.clip(spec, forecast, lo, hi)

    failed_ensemble = trace.status == "failed" or kind.forecast_of(trace, "aggregate_") is None
    for m in methods:
        if m not in ALL_METHODS:
            raise ValueError(f"unknown method {m!r}")
        if m not in kind.pools and m not in RECONCILIATION_METHODS:
            continue  # a pooling rule of another kind of question
        if failed_ensemble:
            out[m] = row(None, "failed", f"ensemble failed: {trace.error.message if trace.error else 'no members'}")
        elif m in kind.pools:
            out[m] = row(clipped(trace.aggregates.get(m)), "ok", "")
        elif m in ("debate", "supervisor"):
            artifact = trace.debate if m == "debate" else trace.supervisor
            if artifact is None:
                gate = trace.reconcile_gate
                why = gate.reason if gate is not None else "not triggered: members agreed"
                out[m] = row(clipped(trace.aggregates.get("mean")), "ok", f"{m} {why.replace('not reconciled', 'not run')}; equals mean")
            elif artifact.status != "ok" or kind.forecast_of(artifact) is None:
                msg = artifact.error.message if artifact.error else f"no {kind.forecast_word}"
                out[m] = row(None, "failed", f"{m} failed: {msg}", artifact.usage)
            else:
                out[m] = row(kind.clip(spec, kind.forecast_of(artifact), lo, hi), "ok", "", artifact.usage)
        else:  # pipeline
            extra = TokenUsage()
            if trace.debate is not None:
                extra = extra + trace.debate.usage
            if trace.supervisor is not None:
                extra = extra + trace.supervisor.usage
            failed = [a for a, art in (("debate", trace.debate), ("supervisor", trace.supervisor))
                      if art is not None and art.status != "ok"]
            note = trace.final_source + (f" ({' and '.join(failed)} failed: left out)" if failed else "")
            gate = trace.reconcile_gate
            if gate is not None and not gate.reconciled:
                note += f" ({gate.reason})"
            out[m] = row(kind.forecast_of(trace, "final_"), "ok", note, extra)
    return out
