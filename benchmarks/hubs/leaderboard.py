"""A hub target's leaderboard: our pools, the hub's own pools and baseline (``hub:<model>``) and single members, per season.

**Who is what** (:func:`roles`): *members* are the models whose metadata says ``designated_model: true`` (the hubverse
rule for ensemble eligibility), the baseline excepted; only they are pooled. The *baseline* and the hub's own
ensembles (``ensemble_of_hub_models: true`` and not designated, plus :attr:`Hub.extra_hub_rows`) are scored as rows
``hub:<model>``, never pooled. Every other model is left out and counted. A member's forecast without every
quantile level is left out of the pools and counted.

**Events scored**: those the baseline forecast (the relative scores need it; others are counted in the notes), so
that every row's mean is over a subset of one event set. **Columns** (one row per season x row): ``n_events``; for quantile targets ``wis`` with its clustered bootstrap
interval (``wis_low``, ``wis_high``) and its parts ``dispersion``, ``overprediction``, ``underprediction``;
``relative_wis``, the row's mean WIS over the baseline's on the same events (the hubs' relative WIS);
``pairwise_relative_wis``, the geometric mean over every other row of the ratio of mean WIS on the events both
forecast, divided by the baseline's (Cramer et al. 2022, PNAS 119(15) e2113561119, "relative WIS"); ``ae_median``,
``cover50``, ``cover90``; ``diff_vs_hub`` (``diff_low``, ``diff_high``), the paired mean WIS difference against the
hub's ensemble (:func:`hub_ensemble`, named in ``vs``) on the events both forecast, negative when the row is better. For option
targets ``rps`` (interval ``rps_low``, ``rps_high``), ``relative_rps``, ``pairwise_relative_rps``, ``brier``,
``log_loss``, ``diff_vs_hub``. Intervals: 95%, clustered by location x reference date
(:func:`benchmarks.scoring.bootstrap.clustered_bootstrap_ci`, :func:`~benchmarks.scoring.bootstrap.paired_difference_ci`).

Single members appear as ``best member``, ``median member`` and ``worst member`` (by relative score, picked
in-sample among members with at least :data:`MIN_PICK_EVENTS` events in the season, each on its own events).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from benchmarks.hubs.events import OptionEvents, QuantileEvents
from benchmarks.hubs.pools import option_pools, quantile_pools, walk_forward_weights, weighted_mean
from benchmarks.hubs.read import Hub
from benchmarks.hubs.scores import option_score_table, quantile_score_table
from benchmarks.scoring.bootstrap import clustered_bootstrap_ci, paired_difference_ci

__all__ = ["MIN_PICK_EVENTS", "Roles", "Scored", "hub_ensemble", "leaderboard", "roles", "score_options", "score_quantiles"]

#: Fewest events a member needs in a season to be picked as the best, median or worst member.
MIN_PICK_EVENTS = 30


@dataclass
class Roles:
    """Which model is what (module docstring): ``member``, ``hub`` (the baseline and the hub's pools) or ``other``."""

    baseline: str
    members: list[str]
    hub_rows: list[str]
    others: list[str]


def roles(hub: Hub, models: np.ndarray, baseline: str) -> Roles:
    """The roles of the target's ``models`` (module docstring)."""
    meta = hub.models.set_index("model")
    members, hub_rows, others = [], [baseline], []
    for m in models:
        if m == baseline:
            continue
        designated = bool(meta["designated_model"].get(m, False))
        pooled_by_hub = bool(meta["ensemble_of_hub_models"].get(m, False)) or m in hub.extra_hub_rows
        (members if designated else hub_rows if pooled_by_hub else others).append(str(m))
    return Roles(baseline, members, hub_rows, others)


def hub_ensemble(hub_rows: list[str], n_events: dict[str, int]) -> str | None:
    """The hub's ensemble the paired differences are taken against: a ``...-ensemble`` row, else the hub pool with most events."""
    pools = [m for m in hub_rows[1:] if n_events.get(m, 0) > 0]
    named = [m for m in pools if m.lower().endswith("-ensemble")]
    return (named or sorted(pools, key=lambda m: -n_events[m]) or [None])[0]


@dataclass
class Scored:
    """Per-event scores of every row: ``scores[label][metric]`` of shape ``(n_events,)``, NaN where the row has no forecast."""

    events: pd.DataFrame
    scores: dict[str, dict[str, np.ndarray]]
    kinds: dict[str, str]
    roles: Roles
    primary: str
    notes: list[str] = field(default_factory=list)
    pooled: dict[str, np.ndarray] = field(default_factory=dict)


def _member_mask(models: np.ndarray, names: list[str]) -> np.ndarray:
    return np.isin(models.astype(str), names)


def score_quantiles(hub: Hub, ev: QuantileEvents, baseline: str) -> Scored:
    """Pools of the members and per-event scores of every row of a quantile target."""
    r = roles(hub, ev.models, baseline)
    is_member = _member_mask(ev.models, r.members)
    complete, present = ev.complete, ev.present
    incomplete = int((present & ~complete & is_member[None, :]).sum())
    x = np.where((complete & is_member[None, :])[..., None], ev.values, np.nan)
    all_scores = quantile_score_table(ev.values, ev.outcome[:, None], ev.levels)  # (n_events, n_models) each
    pooled = quantile_pools(x, ev.levels)
    median_wis = quantile_score_table(pooled["median"], ev.outcome, ev.levels)["wis"]
    member_wis = np.where(complete & is_member[None, :], all_scores["wis"], np.nan)
    weights = walk_forward_weights(member_wis, median_wis, ev.events["reference_date"].to_numpy(), ev.events["target_end_date"].to_numpy())
    pooled["trained_mean"] = weighted_mean(x, weights)
    scores: dict[str, dict[str, np.ndarray]] = {}
    kinds: dict[str, str] = {}
    for name, q in pooled.items():
        scores[name] = quantile_score_table(q, ev.outcome, ev.levels)
        kinds[name] = "pool"
    index = {m: i for i, m in enumerate(ev.models)}
    for m in r.hub_rows:
        scores[f"hub:{m}"] = {k: v[:, index[m]].copy() for k, v in all_scores.items()}
        kinds[f"hub:{m}"] = "hub"
    for m in r.members:
        i = index[m]
        scores[m] = {k: np.where(complete[:, i], v[:, i], np.nan) for k, v in all_scores.items()}
        kinds[m] = "member"
    notes = [f"{len(r.members)} members (designated_model: true), {len(r.hub_rows)} hub rows ({', '.join(r.hub_rows)}), "
             f"{len(r.others)} other models left out"]
    if incomplete:
        notes.append(f"{incomplete:,} member forecasts without all {ev.levels.size} quantile levels left out of the pools")
    given = (complete & is_member[None, :]).sum(axis=1)
    if is_member.any():
        notes.append(f"members skip events: an event has {np.median(given):.0f} members' forecasts (median; "
                     f"{given.min()} to {given.max()}); a pool uses the members that forecast the event")
    return Scored(ev.events, scores, kinds, r, "wis", notes, pooled)


def score_options(hub: Hub, ev: OptionEvents, baseline: str) -> Scored:
    """Pools of the members and per-event scores of every row of an option target."""
    r = roles(hub, ev.models, baseline)
    is_member = _member_mask(ev.models, r.members)
    p = np.where(is_member[None, :, None], ev.probs, np.nan)
    scores: dict[str, dict[str, np.ndarray]] = {}
    kinds: dict[str, str] = {}
    pooled = option_pools(p)
    for name, q in pooled.items():
        scores[name] = option_score_table(q, ev.outcome)
        kinds[name] = "pool"
    index = {m: i for i, m in enumerate(ev.models)}
    for m in r.hub_rows:
        scores[f"hub:{m}"] = option_score_table(ev.probs[:, index[m]], ev.outcome)
        kinds[f"hub:{m}"] = "hub"
    for m in r.members:
        scores[m] = option_score_table(ev.probs[:, index[m]], ev.outcome)
        kinds[m] = "member"
    notes = [f"{len(r.members)} members (designated_model: true), {len(r.hub_rows)} hub rows ({', '.join(r.hub_rows)}), "
             f"{len(r.others)} other models left out"]
    return Scored(ev.events, scores, kinds, r, "rps", notes, pooled)


def _pairwise(primary: dict[str, np.ndarray], labels: list[str], base: str) -> dict[str, float]:
    """Cramer et al. (2022) pairwise relative score of each label, scaled by the baseline's."""
    s = np.column_stack([primary[k] for k in labels])
    have = ~np.isnan(s)
    s0 = np.where(have, s, 0.0)
    sums = s0.T @ have  # sums[i, j]: i's total on the events both i and j forecast
    with np.errstate(all="ignore"):
        theta = sums / sums.T
    both = (have.T.astype(np.int64) @ have.astype(np.int64)) > 0
    ok = both & (sums.T > 0) & (sums > 0)
    np.fill_diagonal(ok, False)
    logs = np.where(ok, np.log(np.where(ok, theta, 1.0)), 0.0)
    n = ok.sum(axis=1)
    with np.errstate(all="ignore"):
        g = np.exp(logs.sum(axis=1) / n)
    b = labels.index(base)
    return {k: float(g[i] / g[b]) if n[i] else float("nan") for i, k in enumerate(labels)}


def leaderboard(scored: Scored, *, n_resamples: int = 1000, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(leaderboard, members)``: one row per season x row (module docstring), and every member's row alike."""
    p = scored.primary
    base = f"hub:{scored.roles.baseline}"
    seasons = sorted(scored.events["season"].unique())
    clusters = scored.events["cluster"].to_numpy()
    counts = {k[4:]: int((~np.isnan(v[p])).sum()) for k, v in scored.scores.items() if k.startswith("hub:")}
    ens = hub_ensemble(scored.roles.hub_rows, counts)
    rows, member_rows = [], []
    for season in seasons:
        sm = (scored.events["season"] == season).to_numpy()
        # every row on the events the baseline forecast (relative scores need it): the rows' means are comparable
        sm = sm & ~np.isnan(scored.scores[base][p])
        prim = {k: np.where(sm, v[p], np.nan) for k, v in scored.scores.items()}
        pairwise = _pairwise(prim, list(prim), base)
        for label, sc in scored.scores.items():
            row = _row(label, sc, prim, base, f"hub:{ens}" if ens else None, p, sm, clusters, n_resamples, seed)
            if row is not None:
                row["vs"] = ens or ""
            if row is None:
                continue
            row.update(season=season, kind=scored.kinds[label], **{f"pairwise_relative_{p}": pairwise[label]})
            (member_rows if scored.kinds[label] == "member" else rows).append(row)
        picks = [r for r in member_rows if r["season"] == season and r["n_events"] >= MIN_PICK_EVENTS]
        picks.sort(key=lambda r: (r[f"relative_{p}"], r["row"]))
        if picks:
            for name, r in (("best member", picks[0]), ("median member", picks[(len(picks) - 1) // 2]), ("worst member", picks[-1])):
                rows.append({**r, "row": f"{name} ({r['row']})", "kind": "pick"})
    cols = ["season", "row", "kind", "n_events", p, f"{p}_low", f"{p}_high"]
    first = pd.DataFrame(rows)
    order = cols + [c for c in first.columns if c not in cols]
    return first[order].reset_index(drop=True), pd.DataFrame(member_rows, columns=order)


def _row(label: str, sc: dict[str, np.ndarray], prim: dict[str, np.ndarray], base: str, ens: str | None, p: str, sm: np.ndarray,
         clusters: np.ndarray, n_resamples: int, seed: int) -> dict | None:
    mine = prim[label]
    have = ~np.isnan(mine)
    if not have.any():
        return None
    ci = clustered_bootstrap_ci(mine[have], clusters[have], n_resamples=n_resamples, seed=seed)
    row = {"row": label, "n_events": int(have.sum()), p: ci.mean, f"{p}_low": ci.low, f"{p}_high": ci.high}
    for k, v in sc.items():
        if k != p:
            row[k] = float(np.nanmean(np.where(sm & have, v, np.nan))) if (sm & have & ~np.isnan(v)).any() else float("nan")
    both = have & ~np.isnan(prim[base])
    row[f"relative_{p}"] = float(mine[both].mean() / prim[base][both].mean()) if both.any() and prim[base][both].mean() > 0 else float("nan")
    row["diff_vs_hub"] = row["diff_low"] = row["diff_high"] = float("nan")
    if ens is not None and label != ens:
        both = have & ~np.isnan(prim[ens])
        if both.any():
            d = paired_difference_ci(mine[both], prim[ens][both], clusters[both], n_resamples=n_resamples, seed=seed)
            row.update(diff_vs_hub=d.mean, diff_low=d.low, diff_high=d.high)
    return row
