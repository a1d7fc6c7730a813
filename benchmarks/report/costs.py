"""What each method cost: tokens, calls, USD and wall time per method and per role, and the Brier change per
1,000 extra tokens against a reference method."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from agent_schemas import TokenUsage
from benchmarks import scoring
from benchmarks.protocol.fitted import FITTED_METHODS, LEARNED_MEAN, fit_inputs, fitted_extra_usage
from benchmarks.protocol.methods import method_of
from benchmarks.report.frame import AddedMethods, methods_of
from benchmarks.run_folder.load import LoadedRun

__all__ = ["cost_effectiveness", "cost_tables", "ledger_usage", "reference_note", "reference_vs_mean"]


def _usage_dict(u: TokenUsage) -> dict[str, Any]:
    return {"input_tokens": u.input_tokens or 0, "output_tokens": u.output_tokens or 0,
            "cached_tokens": u.cache_read_tokens or 0, "reasoning_tokens": u.reasoning_tokens or 0,
            "calls": u.calls, "unanswered_calls": u.unanswered_calls, "cost_usd": u.cost_usd}


def ledger_usage(entry: dict[str, Any]) -> TokenUsage:
    """The :class:`TokenUsage` of one ledger row of a record (a field the row lacks, from a record written before
    it existed, is unknown, or 0 for the counts)."""
    return TokenUsage(**{k: entry[k] for k in TokenUsage.model_fields if k in entry})


def _replaced_rows(record: dict[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """The method rows a set-aside record spent on, for the methods ``names`` of the report: its own rows, and for a
    fitted method (computed after the run, on the records scored) the extra usage it would have read there."""
    own = record.get("methods") or {}
    inputs = fit_inputs([record])[0]
    return {name: own[name] if name in own else {"extra_usage": fitted_extra_usage(name, inputs) if name in FITTED_METHODS else {}}
            for name in names}


def cost_tables(runs: Sequence[LoadedRun], added: AddedMethods | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tokens, calls, USD and wall time per method, and usage per role and model, of the loaded ``runs``.

    The roles table has one row per (run, role, model): the members of a mixed ensemble
    (``run --ensemble``) show their cost per member model.

    A method's usage is the shared ensemble usage plus its own extra usage (debate, supervisor,
    pipeline, and ``fitted_blend`` of the ``added`` rows, which reads both); aggregation methods cost exactly
    the ensemble. Wall time per question: ensemble = the slowest member (members run concurrently); debate /
    supervisor add their own wall time; the pipeline (and ``fitted_blend``) adds the longer of the two (they
    run concurrently).

    **What is counted.** Every figure of usage (``input_tokens``, ``output_tokens``, ``cached_tokens``,
    ``reasoning_tokens``, ``calls``, ``unanswered_calls``, ``cost_usd``, ``wall_time_s``, and the roles table)
    sums every record the run ever wrote: the records scored (one per question, ``results.jsonl``) and the failed
    records ``--retry-failed`` set aside (``results.replaced.jsonl``, :attr:`LoadedRun.replaced`), whose calls
    were paid as well. ``tokens_per_question`` and ``extra_tokens_per_question`` divide those sums by the
    questions scored (a question retried once costs both attempts). ``calls`` are billed answers;
    ``unanswered_calls`` requests cut by a deadline or a cancellation, possibly billed, tokens unknown
    (:class:`agent_schemas.TokenUsage`).
    """
    method_rows, role_rows = [], []
    multi = len(runs) > 1
    for run in runs:
        run_id = run.run_id
        per_method: dict[str, dict[str, Any]] = {}
        roles: dict[tuple[str, str], TokenUsage] = {}  # by (role, model): a mixed ensemble's members cost per model

        def charge(r: dict[str, Any], rows: dict[str, Any], scored: bool) -> None:
            ledger = r.get("ledger", [])
            ens = TokenUsage.sum(ledger_usage(e) for e in ledger if e["method"] == "ensemble")
            for e in ledger:
                key = (e["role"], str(e.get("model") or ""))
                roles[key] = roles.get(key, TokenUsage()) + ledger_usage(e)
            trace = r.get("trace", {})
            ens_wall = max([f.get("latency_s", 0.0) for f in trace.get("forecasts", [])] or [0.0])
            deb_wall = (trace.get("debate") or {}).get("wall_time_s", 0.0)
            sup_wall = (trace.get("supervisor") or {}).get("wall_time_s", 0.0)
            walls = {"debate": deb_wall, "supervisor": sup_wall, "pipeline": max(deb_wall, sup_wall),
                     "fitted_blend": max(deb_wall, sup_wall)}
            for name, m in rows.items():
                extra = TokenUsage(**m.get("extra_usage", {}))
                acc = per_method.setdefault(name, {"usage": TokenUsage(), "extra": TokenUsage(), "wall": 0.0, "n": 0})
                acc["usage"] = acc["usage"] + ens + extra
                acc["extra"] = acc["extra"] + extra
                acc["wall"] += ens_wall + walls.get(method_of(name), 0.0)
                acc["n"] += scored

        for r in run.records:
            charge(r, methods_of(r, run_id, added), scored=True)
        for r in run.replaced:  # paid too: charged to every method the report lists, never scored
            charge(r, _replaced_rows(r, list(per_method)), scored=False)
        for name, acc in per_method.items():
            n = acc["n"]  # at least 1: a method is listed once a scored record has its row
            extra_tokens = (acc["extra"].input_tokens or 0) + (acc["extra"].output_tokens or 0)
            method_rows.append({"label": f"{run_id}:{name}" if multi else name, "run_id": run_id, "method": name,
                                **_usage_dict(acc["usage"]),
                                "tokens_per_question": ((acc["usage"].input_tokens or 0) + (acc["usage"].output_tokens or 0)) / n,
                                "extra_tokens_per_question": extra_tokens / n,
                                "wall_time_s": acc["wall"]})
        for (role, model), u in roles.items():
            role_rows.append({"run_id": run_id, "role": role, "model": model, **_usage_dict(u)})
    return pd.DataFrame(method_rows), pd.DataFrame(role_rows)


def cost_effectiveness(scored: pd.DataFrame, costs: pd.DataFrame, *, reference: str = "mean",
                       n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Brier change against ``reference`` per 1,000 extra tokens, with its clustered bootstrap interval.

    For each method with extra tokens, the paired Brier difference (method - reference) on the
    questions both have a row for, divided by the mean extra tokens per question / 1,000. Negative is
    better (Brier falls). The interval scales the paired-difference interval by the same factor.
    :func:`write_report` passes the compared methods' rows with their missing answers imputed
    (:func:`benchmarks.scoring.ranking.compare`), so a compared method is paired on every question and a method
    listed apart is not paired at all.
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
