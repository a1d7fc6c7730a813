"""Method names of the benchmark and how each method's probability is read from one pipeline trace.

All methods of a question come from ONE shared ensemble run, so methods differ only in
reconciliation and their extra tokens are attributable:

* aggregation methods (``mean``, ``median``, ``min``, ``max``, ``trimmed_mean``, ``geomean_odds``,
  ``extremized``) read ``trace.aggregates``; they cost no tokens beyond the ensemble;
* ``debate`` is the debate's midpoint probability, ``supervisor`` the supervisor's ``p_yes``;
  when the members agreed (spread below the pipeline's ``reconcile_min_spread``) the specialist is not
  run and the method equals the ``mean`` aggregate at no extra cost (noted as "not triggered");
  a specialist that ran and failed gives a failed method row (never a default probability);
* ``pipeline`` is the trace's final probability (combination rule, then clipping); its note says
  when a specialist failed and the combination fell back to the other steps.

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


def validate_methods(methods: list[str] | tuple[str, ...]) -> list[str]:
    """Return ``methods`` as a list, or raise ValueError naming the unknown ones and the valid names."""
    methods = list(methods)
    unknown = [m for m in methods if m not in ALL_METHODS]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; valid: {', '.join(ALL_METHODS)}")
    if not methods:
        raise ValueError("methods is empty")
    return methods


def method_rows(trace: PipelineTrace, methods: list[str]) -> dict[str, dict[str, Any]]:
    """Per-method ``{"p_yes", "status", "note", "extra_usage"}`` read from ``trace``.

    ``extra_usage`` is the usage the method spends beyond the shared ensemble (a TokenUsage dump).
    """
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
            out[m] = _row(trace.final_p_yes, "ok", note, extra)
        else:  # validated earlier
            raise ValueError(f"unknown method {m!r}")
    return out


def _clip(p: float | None, lo: float, hi: float) -> float | None:
    return None if p is None else min(max(p, lo), hi)


def _specialist(trace: PipelineTrace, artifact, name: str, lo: float, hi: float) -> dict[str, Any]:
    if artifact is None:
        return _row(_clip(trace.aggregates.get("mean"), lo, hi), "ok", f"{name} not triggered: members agreed; equals mean")
    usage = artifact.usage
    if artifact.status != "ok" or artifact.p_yes is None:
        msg = artifact.error.message if artifact.error else "no probability"
        return _row(None, "failed", f"{name} failed: {msg}", usage)
    return _row(_clip(artifact.p_yes, lo, hi), "ok", "", usage)


def _row(p: float | None, status: str, note: str, extra: TokenUsage | None = None) -> dict[str, Any]:
    return {"p_yes": p, "status": status, "note": note, "extra_usage": (extra or TokenUsage()).model_dump()}
