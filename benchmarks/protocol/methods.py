"""Method names of the benchmark and how each method's probability is read from one pipeline trace.

All methods of a question come from ONE shared ensemble run, so methods differ only in
reconciliation and their extra tokens are attributable:

* aggregation methods (``mean``, ``median``, ``min``, ``max``, ``trimmed_mean``, ``geomean_odds``,
  ``extremized``) read ``trace.aggregates``; they cost no tokens beyond the ensemble;
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
(``CombinationRule.clip_low`` / ``clip_high``, default [0.01, 0.99]), so that methods differ only in
reconciliation and one confident miss does not decide a log-loss comparison. The unclipped values
stay in the trace. Baselines are not clipped.
"""

from __future__ import annotations

from typing import Any

from agent_research.aggregation import AGGREGATORS
from agent_schemas import PipelineTrace, TokenUsage

AGGREGATION_METHODS = ("mean", "median", "min", "geomean_odds", "extremized")
RECONCILIATION_METHODS = ("debate", "supervisor", "pipeline")
DEFAULT_METHODS = AGGREGATION_METHODS + RECONCILIATION_METHODS
ALL_METHODS = tuple(AGGREGATORS) + RECONCILIATION_METHODS
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
    """Per-method ``{"p_yes", "status", "note", "extra_usage"}`` read from ``trace``, keyed by label
    (:func:`method_label` at ``min_spread``, the run's spread gate; default the one the trace records).

    ``extra_usage`` is the usage the method spends beyond the shared ensemble (a TokenUsage dump).
    """
    if min_spread is None:
        min_spread = float(trace.combination_rule.get("reconcile_min_spread") or 0.0)
    return {method_label(m, min_spread): row for m, row in _rows(trace, methods).items()}


def _rows(trace: PipelineTrace, methods: list[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    lo = float(trace.combination_rule.get("clip_low", 0.0))
    hi = float(trace.combination_rule.get("clip_high", 1.0))
    failed_ensemble = trace.status == "failed" or trace.aggregate_p_yes is None
    for m in methods:
        if failed_ensemble:
            out[m] = _row(None, "failed", f"ensemble failed: {trace.error.message if trace.error else 'no members'}")
        elif m in AGGREGATORS:
            out[m] = _row(_clip(trace.aggregates.get(m), lo, hi), "ok", "")
        elif m == "debate":
            out[m] = _specialist(trace, trace.debate, "debate", lo, hi)
        elif m == "supervisor":
            out[m] = _specialist(trace, trace.supervisor, "supervisor", lo, hi)
        elif m == "pipeline":
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
            out[m] = _row(trace.final_p_yes, "ok", note, extra)
        else:  # validated earlier
            raise ValueError(f"unknown method {m!r}")
    return out


def _clip(p: float | None, lo: float, hi: float) -> float | None:
    return None if p is None else min(max(p, lo), hi)


def _specialist(trace: PipelineTrace, artifact, name: str, lo: float, hi: float) -> dict[str, Any]:
    if artifact is None:
        why = trace.reconcile_gate.reason if trace.reconcile_gate is not None else "not triggered: members agreed"
        return _row(_clip(trace.aggregates.get("mean"), lo, hi), "ok", f"{name} {why.replace('not reconciled', 'not run')}; equals mean")
    usage = artifact.usage
    if artifact.status != "ok" or artifact.p_yes is None:
        msg = artifact.error.message if artifact.error else "no probability"
        return _row(None, "failed", f"{name} failed: {msg}", usage)
    return _row(_clip(artifact.p_yes, lo, hi), "ok", "", usage)


def _row(p: float | None, status: str, note: str, extra: TokenUsage | None = None) -> dict[str, Any]:
    return {"p_yes": p, "status": status, "note": note, "extra_usage": (extra or TokenUsage()).model_dump()}
