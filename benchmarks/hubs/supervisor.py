"""A supervisor on a hub: the :class:`~agent_specialists.SupervisorAgent` weights the members, one call per reference date.

**Calls.** One call per reference date (forecast round), not per event: the weights it returns apply to every
location and horizon of that round (FluSight: about 30 rounds a season instead of about 7,000 events), so the cost
per week of a hub is one call's. The call (:mod:`agent_specialists.member_weights`) shows each member's method
summary from ``model-metadata`` (fenced: untrusted team text) and its **past score**: its mean WIS over the
baseline's on the events both forecast whose outcome was observed before the reference date (target end date at
least :data:`~benchmarks.hubs.pools.REPORTING_LAG_DAYS` days earlier, the walk-forward rule of the trained pool);
an outcome observed later never reaches the prompt, by construction (:func:`member_records`).

**The pool** (row ``supervisor``, kind ``pool``): the weighted mean of the members' quantiles with the returned
weights (:func:`~benchmarks.hubs.pools.weighted_mean`; a member with weight that skipped an event is left out and
the rest renormalised; an event none of the weighted members forecast falls back to the equal-weight mean). Only
the rounds run are scored (``--rounds N``: the first N reference dates).

**A failed call** (provider error, or an answer that does not parse: never a default weighting) is counted
(``failed_calls``) and its round's events are scored with the forecast of the member with the highest WIS on each
event, a penalty the scorer picks with the outcome: WIS is convex in the quantiles, so no weighting of the members
could score worse, and a failure never improves the pool. Columns ``calls``, ``failed_calls``, ``input_tokens``,
``output_tokens`` and ``cost_usd`` (the provider's price; 0 on the simulator and the embedded model) are set on
the ``supervisor`` rows of the leaderboard.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from agent_providers import Provider, run_sync
from agent_providers.pricing import cost_usd
from agent_schemas.usage import TokenUsage
from agent_specialists import MemberRecord, SupervisorAgent
from benchmarks.hubs.events import QuantileEvents
from benchmarks.hubs.leaderboard import Scored
from benchmarks.hubs.pools import REPORTING_LAG_DAYS, mean, weighted_mean
from benchmarks.hubs.read import Hub
from benchmarks.hubs.scores import quantile_score_table

__all__ = ["PRICED_MODEL", "SupervisorPool", "member_records", "supervise", "supervisor_columns", "week_cost_lines"]

#: The real API model the cost per week is priced for (the project's pricing table, genai-prices).
PRICED_MODEL = "anthropic/claude-sonnet-4-6"


@dataclass
class SupervisorPool:
    """The supervisor's pool: ``forecast`` ``(n_events, n_levels)`` (NaN on rounds not run), per round its usage."""

    forecast: np.ndarray
    #: one row per round run: reference_date, season, ok, error, calls, input_tokens, output_tokens, cost_usd, summary,
    #: weights and reasons (JSON objects by member; the weights of the members selected, summing to 1)
    rounds: pd.DataFrame
    weights: dict[str, dict[str, float]] = field(default_factory=dict)


def member_records(hub: Hub, ev: QuantileEvents, members: list[str], baseline: str, member_wis: np.ndarray,
                   reference_date: np.datetime64) -> list[MemberRecord]:
    """Each member's record at ``reference_date``: method summary and past relative WIS (module docstring).

    ``member_wis`` is ``(n_events, n_models)`` (NaN where a model gave no complete forecast); only events whose
    target end date is at least :data:`REPORTING_LAG_DAYS` days before ``reference_date`` are read.
    """
    index = {str(m): i for i, m in enumerate(ev.models)}
    known = ev.events["target_end_date"].to_numpy() <= np.datetime64(reference_date) - np.timedelta64(REPORTING_LAG_DAYS, "D")
    base = member_wis[known, index[baseline]]
    methods = hub.models.set_index("model")["methods"]
    out = []
    for m in members:
        mine = member_wis[known, index[m]]
        both = ~np.isnan(mine) & ~np.isnan(base)
        rel = float(mine[both].sum() / base[both].sum()) if both.any() and base[both].sum() > 0 else math.nan
        out.append(MemberRecord(m, str(methods.get(m, "") or ""), rel, int(both.sum())))
    return out


def supervise(hub: Hub, ev: QuantileEvents, scored: Scored, provider: Provider, *, rounds: int | None = None,
              seed: int = 0) -> SupervisorPool:
    """Run the supervisor on the first ``rounds`` reference dates (all by default) and build its pool (module docstring)."""
    r = scored.roles
    index = {str(m): i for i, m in enumerate(ev.models)}
    cols = np.array([index[m] for m in r.members], dtype=np.int64)
    complete = ev.complete
    wis_all = quantile_score_table(ev.values, ev.outcome[:, None], ev.levels)["wis"]
    wis_all = np.where(complete, wis_all, np.nan)
    x = np.where(complete[:, cols, None], ev.values[:, cols], np.nan)  # members' cube (n_events, n_members, n_levels)
    agent = SupervisorAgent(provider, max_queries=0, max_tokens=2000, seed=seed)
    refs = np.sort(ev.events["reference_date"].unique())
    if rounds is not None:
        refs = refs[:rounds]
    ref_col = ev.events["reference_date"].to_numpy()
    forecast = np.full((ev.n, ev.levels.size), np.nan)
    rows, weights = [], {}
    question = f"{ev.target}: every location and horizon of the round"
    for ref in refs:
        records = member_records(hub, ev, r.members, r.baseline, wis_all, ref)
        day = pd.Timestamp(ref).date()
        answer = run_sync(agent.aweigh_members(question, day, records))
        sel = ref_col == ref
        if answer.ok:
            w = np.array([answer.weights[m] for m in r.members])
            pooled = weighted_mean(x[sel], np.broadcast_to(w, (int(sel.sum()), w.size)))
            fallback = mean(x[sel])
            forecast[sel] = np.where(np.isnan(pooled), fallback, pooled)
            weights[str(day)] = answer.weights
        else:  # the member with the highest WIS on each event: no weighting could do worse
            member_wis = wis_all[sel][:, cols]
            worst = np.nanargmax(np.where(np.isnan(member_wis), -np.inf, member_wis), axis=1)
            forecast[sel] = x[sel][np.arange(int(sel.sum())), worst]
        u = answer.usage
        rows.append({"reference_date": pd.Timestamp(ref), "season": ev.events.loc[sel, "season"].iloc[0], "ok": answer.ok,
                     "error": "" if answer.ok else f"{type(answer.error).__name__}: {answer.error}",
                     "calls": u.calls, "input_tokens": u.input_tokens or 0, "output_tokens": u.output_tokens or 0,
                     "cost_usd": u.cost_usd, "summary": answer.summary,
                     "weights": json.dumps({m: round(w, 4) for m, w in answer.weights.items() if w > 0}),
                     "reasons": json.dumps(answer.reasons)})
    return SupervisorPool(forecast, pd.DataFrame(rows), weights)


def supervisor_columns(board: pd.DataFrame, pool: SupervisorPool) -> pd.DataFrame:
    """``board`` with ``calls``, ``failed_calls``, ``input_tokens``, ``output_tokens``, ``cost_usd`` on its ``supervisor`` rows."""
    board = board.copy()
    for c in ("calls", "failed_calls", "input_tokens", "output_tokens", "cost_usd"):
        board[c] = np.nan
    for season, g in pool.rounds.groupby("season"):
        at = (board["row"] == "supervisor") & (board["season"] == season)
        costs = g["cost_usd"]
        board.loc[at, ["calls", "failed_calls", "input_tokens", "output_tokens"]] = [
            int(g["calls"].sum()), int((~g["ok"]).sum()), int(g["input_tokens"].sum()), int(g["output_tokens"].sum())]
        board.loc[at, "cost_usd"] = float(costs.sum()) if costs.notna().all() else np.nan
    return board


def week_cost_lines(pool: SupervisorPool, provider: Provider) -> list[str]:
    """What one week of the hub (one round, one call) costs: tokens measured per call, USD on the provider and on
    :data:`PRICED_MODEL` (the project's pricing table, :func:`agent_providers.pricing.cost_usd`)."""
    g = pool.rounds
    if g.empty:
        return ["supervisor: no rounds run"]
    n_in, n_out = float(g["input_tokens"].mean()), float(g["output_tokens"].mean())
    usage = TokenUsage(input_tokens=round(n_in), output_tokens=round(n_out), calls=1)
    priced = cost_usd(PRICED_MODEL, usage, on=dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc))
    own = g["cost_usd"].mean() if g["cost_usd"].notna().all() else float("nan")
    return [f"supervisor: {len(g)} rounds, {int((~g['ok']).sum())} failed calls; per week of the hub (one call): "
            f"{n_in:,.0f} input + {n_out:,.0f} output tokens,",
            f"  USD {own:.4f} per week on {provider.spec}",
            f"  priced as {PRICED_MODEL}: {'unknown' if priced is None else f'USD {priced:.4f}'} per week, "
            f"{'unknown' if priced is None else f'USD {52 * priced:.2f}'} per year (52 weeks)"]
