"""Audits of runs: the leakage audit summed per run, the contamination split (questions due after the models'
training cutoffs), and the label of simulated results."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from agent_providers.simulator import SIMULATION_NOTE, is_simulated
from benchmarks import scoring
from benchmarks.protocol.leakage import AUDIT_KEYS
from benchmarks.protocol.model_cutoffs import training_cutoff
from benchmarks.run_folder.load import LoadedRun

__all__ = ["contamination_split", "leakage_audit_table", "simulated_specs", "simulation_note"]



def leakage_audit_table(runs: Sequence[LoadedRun]) -> pd.DataFrame:
    """Per loaded run: the leakage audit (:func:`benchmarks.protocol.leakage.leakage_audit` of each question)
    summed over questions (:data:`benchmarks.protocol.leakage.AUDIT_KEYS`; ``findings`` must be 0), with failed
    questions, provider call counts and ``simulated`` (the run's simulator specs, :func:`simulated_specs`, or ``no``):
    a comparison of runs lists which of them are simulated."""
    rows = []
    for run in runs:
        manifest, records = run.manifest, run.records
        tot = dict.fromkeys(AUDIT_KEYS, 0)
        for r in records:
            for k in tot:
                tot[k] += int(r.get("audit", {}).get(k, 0))
        stats = manifest.get("provider_stats", {})
        rows.append({"run_id": manifest["run_id"], "questions": len(records),
                     "failed_questions": sum(r["status"] != "ok" for r in records), **tot,
                     "provider_calls": stats.get("calls"), "retries": stats.get("retries"),
                     "cache_hits": stats.get("cache_hits"), "simulated": ", ".join(simulated_specs(manifest)) or "no"})
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


def simulated_specs(manifest: Mapping[str, Any]) -> list[str]:
    """The simulator specs a run's results come from: its providers' (``sim``, ``sim/...``) and, for a panel's run,
    the models its members' forecasts were made by (a panel exported from a simulated run keeps them in its
    ``model`` column, :mod:`benchmarks.panels.files`), sorted, each once."""
    pool = ((manifest.get("question_selection") or {}).get("pool") or {})
    specs = [p.get("spec", "") for p in manifest.get("providers") or []] + list(pool.get("models") or [])
    return sorted({s for s in specs if is_simulated(s)})


def simulation_note(manifests: Mapping[str, Mapping[str, Any]]) -> str:
    """The label of results that come from the simulator (:data:`agent_providers.simulator.SIMULATION_NOTE`
    naming the runs' simulator specs, :func:`simulated_specs`), or '' when no run used it.

    When only some of the runs are simulated (a comparison with a real model's run), the label says which:
    ``SIMULATED runs: a, b (of 3) ...``; the others' scores are a model's.
    """
    by_run = {rid: simulated_specs(m) for rid, m in manifests.items()}
    specs = sorted({s for v in by_run.values() for s in v})
    if not specs:
        return ""
    note = f"{SIMULATION_NOTE} Providers: {', '.join(specs)}."
    sim_runs = [rid for rid, v in by_run.items() if v]
    if len(sim_runs) < len(by_run):
        real = [rid for rid in by_run if rid not in sim_runs]
        note = (f"SIMULATED runs: {', '.join(sim_runs)} (of {len(by_run)}): their rows measure the simulator ({', '.join(specs)}), "
                f"a seeded simulation, not any model's forecasting skill. The rows of {', '.join(real)} are not simulated.")
    return note
