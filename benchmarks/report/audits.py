"""Audits of runs: the leakage audit summed per run, the contamination split (questions due after the models'
training cutoffs), and the label of simulated results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from agent_providers.simulator import SIMULATION_NOTE, is_simulated
from benchmarks import scoring
from benchmarks.protocol.leakage import AUDIT_KEYS
from benchmarks.protocol.model_cutoffs import training_cutoff
from benchmarks.run_folder.load import LoadedRun

__all__ = ["contamination_split", "leakage_audit_table", "simulation_note"]



def leakage_audit_table(runs: Sequence[LoadedRun]) -> pd.DataFrame:
    """Per loaded run: the leakage audit (:func:`benchmarks.protocol.leakage.leakage_audit` of each question)
    summed over questions (:data:`benchmarks.protocol.leakage.AUDIT_KEYS`; ``findings`` must be 0), with failed
    questions and provider call counts."""
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
                     "cache_hits": stats.get("cache_hits")})
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


def simulation_note(manifests: dict[str, dict[str, Any]]) -> str:
    """The label of results that come from the simulator (:data:`agent_providers.simulator.SIMULATION_NOTE`
    naming the runs' simulator specs), or '' when no run used it."""
    specs = sorted({p["spec"] for m in manifests.values() for p in m.get("providers", []) if is_simulated(p["spec"])})
    return f"{SIMULATION_NOTE} Providers: {', '.join(specs)}." if specs else ""
