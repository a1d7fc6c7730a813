"""Figures of a hub's quantile target: fan charts of forecast rounds, and each pool's WIS and coverage over time.

``fan_chart``
    One forecast round (a location and a reference date): the target end dates of its horizons on the x axis; the
    median pool's 90% and 50% bands shaded with its median; every other pool's and ``hub:`` row's median as a line;
    every member's median as a thin grey line; the observed outcomes as black dots (and the weeks before, for context).
``over_time``
    Per reference date, each pool's and ``hub:`` row's mean WIS relative to the baseline's on the same events (top),
    and its 50% and 90% interval coverage (bottom, nominal levels dashed).

Both write a PNG (matplotlib's Agg backend, no display needed) and return its path.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.hubs.events import QuantileEvents
from benchmarks.hubs.leaderboard import Scored

__all__ = ["fan_chart", "over_time"]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def fan_chart(ev: QuantileEvents, scored: Scored, location: str, reference_date: pd.Timestamp, path: Path) -> Path:
    """The fan chart of one forecast round (module docstring), written to ``path``.

    Raises
    ------
    ValueError
        If the round has no events.
    """
    plt = _pyplot()
    rows = np.flatnonzero(((ev.events["location"] == location) & (ev.events["reference_date"] == reference_date)).to_numpy())
    if not rows.size:
        raise ValueError(f"no events of location {location} on reference date {pd.Timestamp(reference_date).date()}")
    rows = rows[np.argsort(ev.events["target_end_date"].to_numpy()[rows])]
    x = ev.events["target_end_date"].to_numpy()[rows]
    lv = ev.levels
    idx = {round(float(v), 3): i for i, v in enumerate(lv)}
    fig, ax = plt.subplots(figsize=(8, 4.5))
    members = np.isin(ev.models, scored.roles.members)
    mid = idx.get(0.5)
    if mid is not None:
        for j in np.flatnonzero(members):
            ax.plot(x, ev.values[rows, j, mid], color="0.75", lw=0.6, zorder=1)
    med = scored.pooled["median"][rows]
    for lo, hi, alpha in ((0.05, 0.95, 0.2), (0.25, 0.75, 0.35)):
        if lo in idx and hi in idx:
            ax.fill_between(x, med[:, idx[lo]], med[:, idx[hi]], color="C0", alpha=alpha, lw=0,
                            label=f"median pool, {int(round((hi - lo) * 100))}%")
    if mid is not None:
        ax.plot(x, med[:, mid], color="C0", lw=2, label="median pool")
        for k, name in enumerate([n for n in scored.pooled if n != "median"]):
            ax.plot(x, scored.pooled[name][rows, mid], lw=1.2, color=f"C{k + 1}", label=name)
        model_index = {m: i for i, m in enumerate(ev.models)}
        for k, m in enumerate(scored.roles.hub_rows):
            ax.plot(x, ev.values[rows, model_index[m], mid], lw=1.2, ls="--", color=f"C{k + 6}", label=f"hub:{m}")
    ax.scatter(x, ev.outcome[rows], color="k", zorder=5, s=18, label="outcome")
    ax.set_title(f"{ev.target}, location {location}, forecast on {pd.Timestamp(reference_date).date()}", fontsize=10)
    ax.set_xlabel("target end date")
    ax.legend(fontsize=7, ncol=2, loc="lower left")
    return _save(plt, fig, path)


def _save(plt, fig, path: Path) -> Path:
    """Write ``fig`` (dates on its x axis) to ``path`` as PNG at 90 dpi, creating the folder, and close it."""
    fig.autofmt_xdate()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def over_time(scored: Scored, path: Path) -> Path:
    """Each pool's and ``hub:`` row's relative WIS and 50% / 90% coverage per reference date (module docstring)."""
    plt = _pyplot()
    base = scored.scores[f"hub:{scored.roles.baseline}"]["wis"]
    dates = scored.events["reference_date"].to_numpy()
    labels = [k for k, kind in scored.kinds.items() if kind in ("pool", "hub") and k != f"hub:{scored.roles.baseline}"]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    for k, label in enumerate(labels):
        sc = scored.scores[label]
        ok = ~np.isnan(sc["wis"]) & ~np.isnan(base)
        frame = pd.DataFrame({"date": dates[ok], "wis": sc["wis"][ok], "base": base[ok], "c50": sc["cover50"][ok],
                              "c90": sc["cover90"][ok]}).groupby("date").mean()
        style = "--" if label.startswith("hub:") else "-"
        top.plot(frame.index, frame["wis"] / frame["base"], ls=style, color=f"C{k}", lw=1, label=label)
        bottom.plot(frame.index, frame["c90"], ls=style, color=f"C{k}", lw=1)
        bottom.plot(frame.index, frame["c50"], ls=style, color=f"C{k}", lw=0.6, alpha=0.6)
    top.axhline(1.0, color="k", lw=0.5)
    top.set_ylabel("WIS / baseline's")
    bottom.axhline(0.9, color="k", lw=0.5, ls=":")
    bottom.axhline(0.5, color="k", lw=0.5, ls=":")
    bottom.set_ylabel("coverage (90% thick, 50% thin)")
    bottom.set_xlabel("reference date")
    top.legend(fontsize=7, ncol=3)
    top.set_title(f"{scored.events['question'].iloc[0].split(' in location')[0]}: each pool per reference date", fontsize=10)
    return _save(plt, fig, path)
