"""A hub target's events as arrays: one event per combination of task ids, every model's forecast of it stacked.

An **event** is one (location, reference date, horizon, target end date) of one target. Its question text is
built from them: "wk inc flu hosp in location 06 for the week ending 2024-01-06 (forecast on 2023-12-30, horizon
1)". Its **season** is the respiratory season of its reference date (August to July: ``2023-24``). Events with no
observed outcome are left out and counted; so are forecasts of events outside ``--location`` / ``--horizon``.

Quantile targets become a cube ``values`` of shape ``(n_events, n_models, n_levels)``, NaN where a model did not
forecast; :attr:`QuantileEvents.complete` marks the forecasts with every level. Option targets become a stack of
shape ``(n_events, n_models, k)``, NaN where a model did not forecast, options in the hub's order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from agent_schemas.errors import DataValidationError
from benchmarks.hubs.read import Hub

__all__ = ["OptionEvents", "QuantileEvents", "event_frame", "option_events", "quantile_events", "season_of"]

_TASK = ["location", "reference_date", "horizon", "target_end_date"]


def season_of(dates: pd.Series) -> pd.Series:
    """The respiratory season (August to July) of each date, as ``"2023-24"``."""
    d = pd.to_datetime(dates)
    start = d.dt.year - (d.dt.month < 8).astype(int)
    return start.astype(str) + "-" + ((start + 1) % 100).astype(str).str.zfill(2)


@dataclass
class _Events:
    target: str
    #: one row per event: location, reference_date, horizon, target_end_date, season, question, cluster
    events: pd.DataFrame
    #: model names, shape (n_models,)
    models: np.ndarray
    notes: list[str] = field(default_factory=list)

    @property
    def n(self) -> int:
        return len(self.events)


@dataclass
class QuantileEvents(_Events):
    """A quantile target's events: ``values`` ``(n_events, n_models, n_levels)`` at ``levels``, ``outcome`` ``(n_events,)``."""

    levels: np.ndarray = field(default_factory=lambda: np.empty(0))
    values: np.ndarray = field(default_factory=lambda: np.empty((0, 0, 0)))
    outcome: np.ndarray = field(default_factory=lambda: np.empty(0))

    @property
    def complete(self) -> np.ndarray:
        """``(n_events, n_models)``: the model gave every level for the event."""
        return ~np.isnan(self.values).any(axis=2)

    @property
    def present(self) -> np.ndarray:
        """``(n_events, n_models)``: the model gave at least one level for the event."""
        return ~np.isnan(self.values).all(axis=2)


@dataclass
class OptionEvents(_Events):
    """An option target's events: ``probs`` ``(n_events, n_models, k)`` over ``options``, ``outcome`` the index of the option that happened."""

    options: list[str] = field(default_factory=list)
    probs: np.ndarray = field(default_factory=lambda: np.empty((0, 0, 0)))
    outcome: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))

    @property
    def present(self) -> np.ndarray:
        return ~np.isnan(self.probs).any(axis=2)


def _select(rows: pd.DataFrame, target: str, locations: list[str] | None, horizons: list[int] | None, notes: list[str]) -> pd.DataFrame:
    keep = (rows["target"] == target).to_numpy()
    rows = rows[keep]
    for col, allowed in (("location", locations), ("horizon", horizons)):
        if allowed is not None:
            k = rows[col].isin(allowed).to_numpy()
            if (~k).any():
                notes.append(f"{(~k).sum():,} rows outside the chosen {col}s left out")
            rows = rows[k]
    return rows


def event_frame(keys: pd.DataFrame, target: str) -> tuple[pd.DataFrame, np.ndarray]:
    """The distinct events of ``keys`` (:data:`_TASK` columns) and each row's event index."""
    codes = []
    sizes = []
    for col in _TASK:
        c, u = pd.factorize(keys[col], sort=True)
        codes.append(c.astype(np.int64))
        sizes.append(len(u))
    flat = np.zeros(len(keys), dtype=np.int64)
    for c, n in zip(codes, sizes):
        flat = flat * n + c
    uniq, first, inverse = np.unique(flat, return_index=True, return_inverse=True)
    ev = keys.iloc[first][_TASK].reset_index(drop=True)
    ev["reference_date"] = pd.to_datetime(ev["reference_date"])
    ev["target_end_date"] = pd.to_datetime(ev["target_end_date"])
    ev["season"] = season_of(ev["reference_date"]).to_numpy()
    ev["question"] = (target + " in location " + ev["location"].astype(str) + " for the week ending "
                      + ev["target_end_date"].dt.strftime("%Y-%m-%d") + " (forecast on " + ev["reference_date"].dt.strftime("%Y-%m-%d")
                      + ", horizon " + ev["horizon"].astype(str) + ")")
    ev["cluster"] = ev["location"].astype(str) + "|" + ev["reference_date"].dt.strftime("%Y-%m-%d")
    return ev, inverse.reshape(-1)


def _duplicate(rows: pd.DataFrame, flat: np.ndarray, what: str) -> None:
    counts = np.bincount(flat)
    if (counts > 1).any():
        dup = np.flatnonzero(counts[flat] > 1)[0]
        r = rows.iloc[dup]
        raise DataValidationError(f"model {r['model']} forecast {what} {r.iloc[-2]!r} of location {r['location']}, reference date "
                                  f"{pd.Timestamp(r['reference_date']).date()}, horizon {r['horizon']} twice", field="model", value=r["model"])


def quantile_events(hub: Hub, target: str, *, locations: list[str] | None = None, horizons: list[int] | None = None) -> QuantileEvents:
    """The events of quantile target ``target``, with every model's quantiles and the outcome.

    Raises
    ------
    DataValidationError
        If a model forecast one level of one event twice (two files of one round).
    """
    notes: list[str] = []
    rows = _select(hub.quantiles, target, locations, horizons, notes)
    truth = hub.truth[hub.truth["target"] == target]
    ev, inv = event_frame(rows, target)
    y = ev[["location", "target_end_date"]].merge(truth.assign(target_end_date=pd.to_datetime(truth["target_end_date"])),
                                                   on=["location", "target_end_date"], how="left")["value"].to_numpy(dtype=np.float64)
    m_codes, models = pd.factorize(rows["model"], sort=True)
    levels, l_codes = np.unique(rows["level"].to_numpy(dtype=np.float64), return_inverse=True)
    n_e, n_m, n_l = len(ev), len(models), len(levels)
    flat = (inv * n_m + m_codes) * n_l + l_codes.reshape(-1)
    _duplicate(rows, flat, "level")
    values = np.full(n_e * n_m * n_l, np.nan)
    values[flat] = rows["value"].to_numpy(dtype=np.float64)
    values = values.reshape(n_e, n_m, n_l)
    known = ~np.isnan(y)
    if (~known).any():
        notes.append(f"{(~known).sum():,} of {n_e:,} events of {target} have no observed outcome yet: left out")
    ev = ev[known].reset_index(drop=True)
    return QuantileEvents(target, ev, np.asarray(models, dtype=object), notes, levels, values[known], y[known])


def option_events(hub: Hub, target: str, *, locations: list[str] | None = None, horizons: list[int] | None = None) -> OptionEvents:
    """The events of pmf target ``target``, with every model's probabilities and the option that happened.

    Raises
    ------
    DataValidationError
        If a model forecast one option of one event twice, or an outcome names an option the hub does not have.
    """
    notes: list[str] = []
    rows = _select(hub.options, target, locations, horizons, notes)
    order = hub.option_order.get(target) or sorted(rows["category"].unique())
    ev, inv = event_frame(rows, target)
    truth = hub.option_truth[hub.option_truth["target"] == target].copy()
    truth["target_end_date"] = pd.to_datetime(truth["target_end_date"])
    on = ["location", "target_end_date"] + (["horizon"] if (truth["horizon"] >= 0).any() else [])
    cat = ev[on].merge(truth[on + ["category"]], on=on, how="left")["category"]
    unknown = cat.notna() & ~cat.isin(order)
    if unknown.any():
        v = cat[unknown].iloc[0]
        raise DataValidationError(f"the oracle of {target} names option {v!r}, not one of {', '.join(order)}", field="output_type_id", value=v)
    m_codes, models = pd.factorize(rows["model"], sort=True)
    c_codes = pd.Categorical(rows["category"], categories=order).codes.astype(np.int64)
    if (c_codes < 0).any():
        i = int(np.argmax(c_codes < 0))
        raise DataValidationError(f"model {rows['model'].iloc[i]} gives option {rows['category'].iloc[i]!r} of {target}, not one of "
                                  f"{', '.join(order)}", field="output_type_id", value=rows["category"].iloc[i])
    n_e, n_m, k = len(ev), len(models), len(order)
    flat = (inv * n_m + m_codes) * k + c_codes
    _duplicate(rows, flat, "option")
    probs = np.full(n_e * n_m * k, np.nan)
    probs[flat] = rows["probability"].to_numpy(dtype=np.float64)
    probs = probs.reshape(n_e, n_m, k)
    # a forecast that leaves an option out gives it probability 0 (hubverse: options are optional), if it gave any
    given = ~np.isnan(probs).all(axis=2, keepdims=True)
    probs = np.where(given & np.isnan(probs), 0.0, probs)
    known = cat.notna().to_numpy()
    if (~known).any():
        notes.append(f"{(~known).sum():,} of {n_e:,} events of {target} have no observed outcome: left out")
    outcome = pd.Categorical(cat[known], categories=order).codes.astype(np.int64)
    return OptionEvents(target, ev[known].reset_index(drop=True), np.asarray(models, dtype=object), notes, order, probs[known], outcome)
