"""``forecast-reconcile aggregate HUB_DIR`` and ``aggregate --panel flusight``: read a hub, pool, score, write, print.

Writes into ``-o DIR`` (created): ``leaderboard.csv`` (:mod:`benchmarks.hubs.leaderboard`'s columns), ``members.csv``
(every member alike), ``report.md`` (the printed tables, the notes: rows left out, models without a licence, the data's
attribution) and, for a quantile target, ``figures/`` (:mod:`benchmarks.hubs.plots`: each pool's WIS and coverage over
time, and a fan chart of the forecast round of each season's peak in each location); with a supervisor
(:mod:`benchmarks.hubs.supervisor`) a ``supervisor`` row with its tokens and cost, ``supervisor_rounds.csv`` (one
line per call) and its cost per week of the hub. Prints one table per season, each line under 100 characters.
"""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from agent_providers import Provider

from benchmarks.hubs.events import option_events, quantile_events
from benchmarks.hubs.leaderboard import leaderboard, score_options, score_quantiles
from benchmarks.hubs.plots import fan_chart, over_time
from benchmarks.hubs.read import Hub, is_hub_folder, read_flusight, read_hub
from benchmarks.hubs.scores import quantile_score_table
from benchmarks.hubs.supervisor import supervise, supervisor_columns, week_cost_lines

__all__ = ["BUNDLED_HUBS", "HubRun", "load_hub", "run_hub"]

#: Bundled hubs by ``--panel`` name, and the horizons scored by default (FluSight scores horizons 0-3, not the nowcast).
BUNDLED_HUBS = {"flusight": (read_flusight, [0, 1, 2, 3])}


def load_hub(path: Path | None, panel: str | None) -> tuple[Hub, list[int] | None]:
    """The hub of a folder or a bundled panel name, and its default horizons.

    Raises
    ------
    ValueError
        For an unknown panel name or a folder that is not a hub.
    """
    if panel is not None:
        if panel not in BUNDLED_HUBS:
            raise ValueError(f"--panel {panel}: not a bundled hub (known: {', '.join(BUNDLED_HUBS)})")
        reader, horizons = BUNDLED_HUBS[panel]
        return reader(), horizons
    if path is None or not is_hub_folder(path):
        raise ValueError(f"{path}: not a hub folder (no hub-config/ or model-output/)")
    return read_hub(path), None


@dataclass
class HubRun:
    """What :func:`run_hub` computed: the leaderboard, the members' table, the printed lines and the files written."""

    leaderboard: pd.DataFrame
    members: pd.DataFrame
    lines: list[str]
    files: list[Path]


def _baseline(hub: Hub, target: str, models: list[str], chosen: str | None) -> str:
    name = chosen or hub.baselines.get(target)
    if name is None:
        guesses = [m for m in models if m.lower().endswith("baseline")] or [m for m in models if "baseline" in m.lower()]
        if len(guesses) != 1:
            raise ValueError(f"target {target}: name the baseline with --baseline ({'candidates: ' + ', '.join(guesses) if guesses else 'no model named *baseline*'})")
        name = guesses[0]
    if name not in models:
        raise ValueError(f"--baseline {name}: no forecasts of target {target} (models: {', '.join(sorted(models)[:8])}...)")
    return name


def _fmt(v: float, digits: int) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


def _table(board: pd.DataFrame, primary: str, season: str) -> list[str]:
    rows = board[board["season"] == season]
    head = f"{'row':<34} {'n':>5} {primary.upper():>8} {'rel':>6} {'pairw':>6} {'c50':>5} {'c90':>5} {'vs hub [95%]':>24}"
    lines = [head, "-" * len(head)]
    d = 4 if primary == "rps" else 1
    for r in rows.sort_values(f"relative_{primary}").itertuples(index=False):
        r = r._asdict()
        diff = "" if math.isnan(r["diff_vs_hub"]) else f"{r['diff_vs_hub']:+.{d}f} [{r['diff_low']:+.{d}f}, {r['diff_high']:+.{d}f}]"
        label = r["row"] if len(r["row"]) <= 34 else r["row"][:33] + "~"
        lines.append(f"{label:<34} {r['n_events']:>5} {_fmt(r[primary], 4 if primary == 'rps' else 2):>8} "
                     f"{_fmt(r[f'relative_{primary}'], 4):>6} {_fmt(r[f'pairwise_relative_{primary}'], 3):>6} "
                     f"{_fmt(r.get('cover50', float('nan')), 2):>5} {_fmt(r.get('cover90', float('nan')), 2):>5} {diff:>24}")
    return lines


def run_hub(hub: Hub, out_dir: Path, *, target: str | None = None, baseline: str | None = None, locations: list[str] | None = None,
            horizons: list[int] | None = None, n_resamples: int = 1000, seed: int = 0, figures: bool = True,
            supervisor: Provider | None = None, rounds: int | None = None) -> HubRun:
    """Score every pool, hub row and member of one target of ``hub`` and write the files (module docstring).

    Raises
    ------
    ValueError
        For an unknown or missing ``--target`` (a hub with several targets), or a baseline that cannot be found.
    """
    targets = hub.targets
    if not targets:
        raise ValueError(f"hub {hub.name}: no quantile or pmf forecasts in its model output (nothing to score)")
    if target is None:
        if hub.default_target is not None:
            target = hub.default_target
        elif len(targets) == 1:
            target = targets[0]
        else:
            raise ValueError(f"the hub has several targets: choose one with --target ({'; '.join(targets)})")
    if target not in targets:
        raise ValueError(f"--target {target}: not a target of the hub ({'; '.join(targets)})")
    is_quantile = target in set(hub.quantiles["target"].unique())
    ev = (quantile_events if is_quantile else option_events)(hub, target, locations=locations, horizons=horizons)
    base = _baseline(hub, target, [str(m) for m in ev.models], baseline)
    scored = (score_quantiles if is_quantile else score_options)(hub, ev, base)
    pool = None
    if supervisor is not None:
        if not is_quantile:
            raise ValueError(f"--supervisor: only for a quantile target ({target} is an option target)")
        pool = supervise(hub, ev, scored, supervisor, rounds=rounds, seed=seed)
        scored.scores["supervisor"] = quantile_score_table(pool.forecast, ev.outcome, ev.levels)
        scored.kinds["supervisor"] = "pool"
        scored.pooled["supervisor"] = pool.forecast
    board, members = leaderboard(scored, n_resamples=n_resamples, seed=seed)
    if pool is not None:
        board = supervisor_columns(board, pool)
    primary = scored.primary
    notes = [f"hub {hub.name}, target {target} ({'quantiles' if is_quantile else 'options'}), baseline {base}; "
             f"{ev.n:,} events with outcomes", *ev.notes, *scored.notes, *hub.notes]
    lines = [part for note in notes for part in textwrap.wrap(note, 100, subsequent_indent="  ")]
    vs = board["vs"].replace("", pd.NA).dropna()
    for season in sorted(board["season"].unique()):
        in_season = int((ev.events["season"] == season).sum())
        n = int(board.loc[(board["season"] == season) & (board["row"] == f"hub:{base}"), "n_events"].sum())
        if n < in_season:
            lines += ["", f"season {season}: {in_season - n:,} of {in_season:,} events with no forecast of {base} left out"]
        lines += ["", f"season {season}: {n:,} events forecast by {base}; rel = mean {primary.upper()} / the baseline's on",
                  f"the same events; pairw = pairwise relative (Cramer et al. 2022); vs hub = paired difference",
                  f"of mean {primary.upper()} against hub:{vs.iloc[0] if len(vs) else '-'} (95%, clustered by location x reference date)"]
        lines += _table(board, primary, season)
    if pool is not None:
        lines += ["", *week_cost_lines(pool, supervisor)]
    lines += ["", *textwrap.wrap(hub.attribution, 100)]
    out_dir.mkdir(parents=True, exist_ok=True)
    files = [out_dir / "leaderboard.csv", out_dir / "members.csv", out_dir / "report.md"]
    if pool is not None:
        files.append(out_dir / "supervisor_rounds.csv")
        pool.rounds.to_csv(files[-1], index=False)
    board.to_csv(files[0], index=False)
    members.to_csv(files[1], index=False)
    files[2].write_text("# Hub leaderboard\n\n```\n" + "\n".join(lines) + "\n```\n", encoding="utf-8")
    if figures and is_quantile:
        files += _figures(ev, scored, out_dir / "figures")
    return HubRun(board, members, lines, files)


def _figures(ev, scored, folder: Path) -> list[Path]:
    """Each pool over time, and a fan chart of each season's peak forecast round in each location."""
    out = [over_time(scored, folder / "over_time.png")]
    # the round whose horizon-0 outcome is the season's peak in the location: where pools differ most
    frame = ev.events.assign(outcome=ev.outcome)
    peaks = frame.loc[frame.groupby(["season", "location"])["outcome"].idxmax(), ["location", "reference_date"]]
    for r in peaks.itertuples(index=False):
        name = f"fan_{r.location}_{pd.Timestamp(r.reference_date).date()}.png"
        out.append(fan_chart(ev, scored, r.location, r.reference_date, folder / name))
    return out
