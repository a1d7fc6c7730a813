"""Read a forecast hub: a hubverse hub folder, or the bundled FluSight panel, into one :class:`Hub`.

**A hubverse hub folder** (https://hubverse.io, the format of the CDC FluSight, US COVID-19 and RSV and European
respiratory hubs) holds:

* ``model-output/<model>/<round>-<model>.csv`` or ``.parquet``: one row per model x task x output, columns
  ``reference_date`` (or ``origin_date``), ``target``, ``location``, ``horizon`` and/or ``target_end_date``,
  ``output_type`` (``quantile`` or ``pmf``; others are left out and counted), ``output_type_id`` (the quantile
  level, or the option's name) and ``value``;
* ``model-metadata/<model>.yml|.yaml``: ``team_abbr`` and ``model_abbr`` (or ``model_id``), ``license``,
  ``designated_model``, ``ensemble_of_hub_models`` (optional), ``methods`` (a short summary);
* ``target-data/oracle-output.csv``: ``target_end_date``, ``location``, ``target``, ``output_type``,
  ``output_type_id``, ``oracle_value``, optionally ``horizon`` and ``as_of`` (the newest ``as_of`` is kept);
* ``hub-config/tasks.json`` where present: the order of a pmf target's options (``output_type_id.required``) and
  the hub's targets. Without it, options keep the order of their first appearance in the files.

**Reader.** Files are read with pyarrow (``pyarrow.csv`` / ``pyarrow.parquet``, already a dependency: columnar,
typed) one file at a time, so every bad row is named by its file; metadata
with PyYAML (``yaml.safe_load``). The hubverse's own Python reader, ``hubdata``, needs ``hub-config/admin.json``
and ``tasks.json`` (this reader accepts a hub without them, as the issue asks) and reports no file or row on a bad
value, so it is not used.

**Bad input** (one :class:`~agent_schemas.errors.DataValidationError` naming the file, the row (``data row N (line
M)`` of a CSV, ``row N`` of a parquet file, 1-based), the column and the value; the CLI prints it on one line and
exits 2, before anything is computed): a quantile level outside (0, 1); a quantile decreasing in its level within
one task; a pmf whose probabilities do not sum to 1 within :data:`PMF_SUM_TOLERANCE`; a file whose name does not
end in its folder's model; an oracle row naming a target that neither ``tasks.json`` nor any model output has; a
metadata file that is not YAML (or not a mapping). A model without a licence in its metadata is not an error: it is
listed in :attr:`Hub.notes`, which the report prints.

**The bundled FluSight panel** (:func:`read_flusight`): the four tables and ``models.csv`` of the data card
``benchmarks/hubs/data/flusight/DATA_CARD.md``, read as a hub.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from agent_schemas.errors import DataValidationError

__all__ = ["BUNDLED_FLUSIGHT", "Hub", "is_hub_folder", "PMF_SUM_TOLERANCE", "QUANTILE_COLUMNS", "OPTION_COLUMNS", "read_flusight", "read_hub"]

#: Largest ``|sum - 1|`` of one pmf forecast's probabilities that is accepted (hubValidations' ``check_tbl_value_col_sum1``
#: rounds sums before comparing; 0.001 accepts values written with three decimals, as hub files are).
PMF_SUM_TOLERANCE = 1e-3
#: Columns of :attr:`Hub.quantiles` (one row per model x task x level).
QUANTILE_COLUMNS = ["model", "target", "location", "reference_date", "horizon", "target_end_date", "level", "value"]
#: Columns of :attr:`Hub.options` (one row per model x task x option).
OPTION_COLUMNS = ["model", "target", "location", "reference_date", "horizon", "target_end_date", "category", "probability"]
#: The bundled copy of the shared FluSight panel (its data card and every model's licence are beside it).
BUNDLED_FLUSIGHT = Path(__file__).resolve().parent / "data" / "flusight"
#: Hubverse output types this toolkit scores; rows of other types (``mean``, ``median``, ``sample``, ``cdf``) are counted and left out.
SCORED_OUTPUT_TYPES = ("quantile", "pmf")
_TASK_KEYS = ["model", "target", "location", "reference_date", "horizon", "target_end_date"]


@dataclass
class Hub:
    """One hub's forecasts, outcomes and models, whatever it was read from.

    Attributes
    ----------
    name : str
        Hub name (the folder's name, or ``flusight``).
    quantiles : pandas.DataFrame
        :data:`QUANTILE_COLUMNS`; dates as ``datetime64[ns]``, ``horizon`` int (weeks), ``level`` in (0, 1).
    options : pandas.DataFrame
        :data:`OPTION_COLUMNS`; ``probability`` in [0, 1].
    truth : pandas.DataFrame
        Observed values of quantile targets: ``target``, ``location``, ``target_end_date``, ``value``.
    option_truth : pandas.DataFrame
        The option that happened: ``target``, ``location``, ``target_end_date``, ``horizon`` (-1 if the hub's oracle
        has none), ``category``.
    models : pandas.DataFrame
        One row per model: ``model``, ``team``, ``license`` (``""`` if missing), ``designated_model``,
        ``ensemble_of_hub_models`` (bools), ``methods`` (the team's own summary: data, never prose of ours).
    option_order : dict[str, list[str]]
        Each pmf target's options in their order (the ranked probability score needs it).
    notes : list[str]
        Plain lines for the report: rows left out and why, models without a licence.
    attribution : str
        Where the data comes from and under which licences (printed with every report).
    default_target : str or None
        The target scored when none is chosen (only the bundled panel has one; a hub folder with several targets
        needs ``--target``).
    baselines : dict[str, str]
        A known baseline model per target (else the command's ``--baseline`` or its guess).
    extra_hub_rows : tuple of str
        Models scored as the hub's own pools although their metadata does not flag ``ensemble_of_hub_models``.
    """

    name: str
    quantiles: pd.DataFrame
    options: pd.DataFrame
    truth: pd.DataFrame
    option_truth: pd.DataFrame
    models: pd.DataFrame
    option_order: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    attribution: str = ""
    default_target: str | None = None
    baselines: dict[str, str] = field(default_factory=dict)
    extra_hub_rows: tuple[str, ...] = ()

    @property
    def targets(self) -> list[str]:
        """Every target with forecasts, quantile targets first, each sorted."""
        return sorted(self.quantiles["target"].unique()) + sorted(self.options["target"].unique())


def _parquet(path: Path, columns: list[str]) -> pd.DataFrame:
    """Columns of a parquet file, read by pyarrow: text as categoricals (a panel repeats a few dozen names millions of
    times), dates as ``datetime64[ns]``, ``horizon`` as int64; converted in Arrow before pandas sees them (pandas would
    make a Python ``date`` object of every one of 2.2 million dates)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=columns)
    cols = []
    for name in table.column_names:
        col = table.column(name)
        if pa.types.is_date(col.type):
            col = col.cast(pa.timestamp("ns"))
        elif pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            col = col.cast(pa.string()).dictionary_encode()
        elif name == "horizon":
            col = col.cast(pa.int64())
        cols.append(col)
    return pa.table(cols, names=table.column_names).to_pandas()


# --- the bundled FluSight panel ------------------------------------------------------------------------------------


def read_flusight(folder: Path = BUNDLED_FLUSIGHT) -> Hub:
    """The FluSight panel of ``folder`` (default the bundled copy) as a :class:`Hub`.

    Raises
    ------
    FileNotFoundError
        If a table of the panel is missing.
    """
    folder = Path(folder)
    keys = ["model", "target", "location", "reference_date", "horizon", "target_end_date"]
    q = _parquet(folder / "numeric_forecasts.parquet", [*keys, "quantile_level", "value"]).rename(columns={"quantile_level": "level"})
    c = _parquet(folder / "categorical_forecasts.parquet", [*keys, "category", "probability"])
    t = _parquet(folder / "numeric_truth.parquet", ["target", "location", "target_end_date", "value"])
    ct = _parquet(folder / "categorical_truth.parquet", ["target", "location", "target_end_date", "horizon", "category"])
    models = pd.read_csv(folder / "models.csv", dtype={"license": str}, keep_default_na=False)
    models = _models_frame(models.rename(columns={"model_id": "model"}) if "model_id" in models.columns else models)
    order = ["large_decrease", "decrease", "stable", "increase", "large_increase"]
    card = folder / "DATA_CARD.md"
    attribution = ("Data from the CDC FluSight forecast hub, https://github.com/cdcepi/FluSight-forecast-hub (MIT; model outputs "
                   f"under each team's licence, see {folder / 'models.csv'}; modified as {card.name} says).")
    hub = Hub("flusight", q, c, t, ct, models, {tg: order for tg in c["target"].unique()}, attribution=attribution,
              default_target="wk inc flu hosp",
              # the data card: the option target's baseline, and the hub's two other option pools (their metadata does not
              # flag ensemble_of_hub_models)
              baselines={"wk inc flu hosp": "FluSight-baseline", "wk flu hosp rate change": "FluSight-baseline_cat"},
              extra_hub_rows=("FluSight-ens_q_cat", "FluSight-equal_cat"))
    hub.notes += _licence_notes(hub)
    return hub


# --- a hubverse hub folder ------------------------------------------------------------------------------------------


def _where(path: Path, i: int, csv: bool) -> str:
    """``file, data row N (line M)`` of a CSV, ``file, row N`` of a parquet file (``i`` 0-based)."""
    return f"{path}, data row {i + 1} (line {i + 2})" if csv else f"{path}, row {i + 1}"


def _fail(path: Path, i: int, csv: bool, column: str, value: Any, problem: str) -> DataValidationError:
    return DataValidationError(f"{_where(path, i, csv)}, column {column}: {problem} (value {value!r})",
                               field=column, row=int(i), value=value, source=str(path))


def _read_table(path: Path) -> pd.DataFrame:
    """A CSV (every column as text, so ``06`` stays a location code) or a parquet file, with pyarrow."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        frame = pq.read_table(path).to_pandas()
        return frame.astype({c: str for c in ("location", "output_type_id", "target", "output_type") if c in frame.columns})
    import pyarrow as pa
    import pyarrow.csv as pcsv

    with path.open(encoding="utf-8-sig") as f:  # a spreadsheet's byte-order mark is not part of the first column's name
        head = f.readline().strip().split(",")
    types = {c.strip('"'): pa.string() for c in head}
    try:
        return pcsv.read_csv(path, convert_options=pcsv.ConvertOptions(column_types=types, strings_can_be_null=True)).to_pandas()
    except pa.ArrowInvalid as exc:
        raise DataValidationError(f"{path}: not a readable CSV ({' '.join(str(exc).split())})", source=str(path)) from None


def _number(frame: pd.DataFrame, col: str, path: Path, csv: bool, rows: np.ndarray | None = None) -> np.ndarray:
    """Column ``col`` as floats; an entry that is not a number fails, naming its row."""
    raw = frame[col]
    out = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
    bad = np.isnan(out) & raw.notna().to_numpy()
    if rows is not None:
        bad &= rows
    if bad.any():
        i = int(np.argmax(bad))
        raise _fail(path, i, csv, col, raw.iloc[i], "not a number")
    return out


def _dates(frame: pd.DataFrame, col: str, path: Path, csv: bool) -> pd.Series:
    out = pd.to_datetime(frame[col], errors="coerce", format="%Y-%m-%d") if frame[col].dtype == object else pd.to_datetime(frame[col])
    bad = out.isna().to_numpy() & frame[col].notna().to_numpy()
    if bad.any():
        i = int(np.argmax(bad))
        raise _fail(path, i, csv, col, frame[col].iloc[i], "not a date YYYY-MM-DD")
    return out


def _model_file(path: Path, folder_model: str) -> None:
    """A file's name must be ``<round>-<model>`` with ``<model>`` its folder's name."""
    if not path.stem.endswith("-" + folder_model) or len(path.stem) <= len(folder_model) + 1:
        raise DataValidationError(f"{path}: the file name does not match its folder's model {folder_model!r} "
                                  f"(expected <round>-{folder_model}{path.suffix}; value {path.name!r})",
                                  field="file name", value=path.name, source=str(path))


def _output_file(path: Path, model: str, counts: dict[str, int]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One model-output file checked and split into quantile rows and pmf rows (:data:`QUANTILE_COLUMNS`, :data:`OPTION_COLUMNS`)."""
    csv = path.suffix == ".csv"
    frame = _read_table(path)
    ref_col = next((c for c in ("reference_date", "origin_date", "forecast_date") if c in frame.columns), None)
    missing = [c for c in ("target", "location", "output_type", "output_type_id", "value") if c not in frame.columns]
    if ref_col is None:
        missing.append("reference_date")
    if "horizon" not in frame.columns and "target_end_date" not in frame.columns:
        missing.append("horizon or target_end_date")
    if missing:
        raise DataValidationError(f"{path}: missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                                  f"(columns: {', '.join(frame.columns)})", field=missing[0], source=str(path))
    ref = _dates(frame, ref_col, path, csv)
    if "horizon" in frame.columns:
        horizon = _number(frame, "horizon", path, csv)
        end = _dates(frame, "target_end_date", path, csv) if "target_end_date" in frame.columns else \
            ref + pd.to_timedelta(7 * horizon, unit="D")
    else:
        end = _dates(frame, "target_end_date", path, csv)
        horizon = ((end - ref).dt.days // 7).to_numpy(dtype=np.float64)
    kind = frame["output_type"].astype(str).to_numpy()
    is_q, is_p = kind == "quantile", kind == "pmf"
    other = ~(is_q | is_p)
    if other.any():
        for k, n in pd.Series(kind[other]).value_counts().items():
            counts[k] = counts.get(k, 0) + int(n)
    value = _number(frame, "value", path, csv, rows=is_q | is_p)
    base = pd.DataFrame({"model": model, "target": frame["target"].astype(str).to_numpy(), "location": frame["location"].astype(str).to_numpy(),
                         "reference_date": ref.to_numpy(), "horizon": horizon, "target_end_date": end.to_numpy()})
    row = np.arange(len(frame))
    # quantiles: levels in (0, 1), values non-decreasing in the level within a task
    level = _number(frame, "output_type_id", path, csv, rows=is_q)
    bad = is_q & ~((level > 0) & (level < 1))
    if bad.any():
        i = int(np.argmax(bad))
        raise _fail(path, i, csv, "output_type_id", frame["output_type_id"].iloc[i], "a quantile level must be in (0, 1)")
    bad = is_q & np.isnan(value)
    if bad.any():
        i = int(np.argmax(bad))
        raise _fail(path, i, csv, "value", frame["value"].iloc[i], "a quantile needs a value")
    q = base[is_q].assign(level=level[is_q], value=value[is_q], _row=row[is_q])
    if len(q):
        q = q.sort_values(["target", "location", "reference_date", "horizon", "target_end_date", "level"], kind="stable")
        same = np.ones(len(q), dtype=bool)
        for col in ("target", "location", "reference_date", "horizon", "target_end_date"):
            v = q[col].to_numpy()
            same[1:] &= v[1:] == v[:-1]
        same[0] = False
        v = q["value"].to_numpy()
        dec = np.zeros(len(q), dtype=bool)
        dec[1:] = same[1:] & (v[1:] < v[:-1])
        if dec.any():
            j = int(np.argmax(dec))
            i = int(q["_row"].iloc[j])
            raise _fail(path, i, csv, "value", frame["value"].iloc[i],
                        f"quantiles decrease in their level: level {q['level'].iloc[j]:g} is below level {q['level'].iloc[j - 1]:g}'s "
                        f"{v[j - 1]:g}")
    # pmf: probabilities in [0, 1] summing to 1 within the tolerance, per task
    bad = is_p & ~((value >= 0) & (value <= 1))
    if bad.any():
        i = int(np.argmax(bad))
        raise _fail(path, i, csv, "value", frame["value"].iloc[i], "a probability must be in [0, 1]")
    p = base[is_p].assign(category=frame["output_type_id"].astype(str).to_numpy()[is_p], probability=value[is_p], _row=row[is_p])
    if len(p):
        keys = ["target", "location", "reference_date", "horizon", "target_end_date"]
        g = p.groupby(keys, sort=False, dropna=False)
        sums = g["probability"].transform("sum").to_numpy()
        first = g["_row"].transform("min").to_numpy()
        bad = np.abs(sums - 1.0) > PMF_SUM_TOLERANCE
        if bad.any():
            j = int(np.argmax(bad))
            i = int(first[j])
            raise _fail(path, i, csv, "value", round(float(sums[j]), 6),
                        f"the probabilities of this forecast (target {p['target'].iloc[j]}, location {p['location'].iloc[j]}, "
                        f"horizon {p['horizon'].iloc[j]:g}) sum to {sums[j]:.6g}, not 1 within {PMF_SUM_TOLERANCE:g}")
    return q[QUANTILE_COLUMNS], p[OPTION_COLUMNS]


def _metadata(path: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise DataValidationError(f"{path}{where}: not YAML ({problem})", source=str(path)) from None
    if not isinstance(data, dict):
        raise DataValidationError(f"{path}: not a YAML mapping of metadata fields (value {str(data)[:60]!r})", value=data, source=str(path))
    return data


def _flag(value: Any) -> bool:
    return value is True or str(value).strip().lower() in ("true", "yes", "1")


def _models_frame(rows: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame({"model": rows["model"].astype(str)})
    out["team"] = rows["team"].astype(str) if "team" in rows.columns else ""
    out["license"] = rows["license"].fillna("").astype(str) if "license" in rows.columns else ""
    for col in ("designated_model", "ensemble_of_hub_models", "ensemble_of_models"):
        out[col] = [_flag(v) for v in rows[col]] if col in rows.columns else False
    out["methods"] = rows["methods"].fillna("").astype(str) if "methods" in rows.columns else ""
    return out.reset_index(drop=True)


def _licence_notes(hub: Hub) -> list[str]:
    have = set(hub.quantiles["model"].unique()) | set(hub.options["model"].unique())
    known = set(hub.models["model"])
    notes = []
    if no_meta := sorted(have - known):
        notes.append(f"{len(no_meta)} model(s) with forecasts have no metadata (no licence known, never members): {', '.join(no_meta)}")
    if no_licence := sorted(hub.models.loc[hub.models["license"].str.strip() == "", "model"]):
        notes.append(f"licence missing in the metadata of {len(no_licence)} model(s): {', '.join(no_licence)}")
    return notes


def _tasks(path: Path) -> tuple[set[str], dict[str, list[str]]]:
    """The targets named in ``hub-config/tasks.json`` and each pmf target's options in order."""
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataValidationError(f"{path}, line {exc.lineno}: not JSON ({exc.msg})", source=str(path)) from None
    targets: set[str] = set()
    order: dict[str, list[str]] = {}
    for rnd in config.get("rounds", []):
        for task in rnd.get("model_tasks", []):
            ids = task.get("task_ids", {}).get("target", {})
            names = [*(ids.get("required") or []), *(ids.get("optional") or [])]
            targets.update(names)
            pmf = task.get("output_type", {}).get("pmf", {}).get("output_type_id", {})
            opts = [*(pmf.get("required") or []), *(pmf.get("optional") or [])]
            if opts:
                for t in names:
                    order.setdefault(t, [str(o) for o in opts])
    return targets, order


def _oracle(path: Path, targets: set[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    frame = _read_table(path)
    need = ["target_end_date", "location", "target", "output_type", "output_type_id", "oracle_value"]
    if missing := [c for c in need if c not in frame.columns]:
        raise DataValidationError(f"{path}: missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}", field=missing[0], source=str(path))
    bad = ~frame["target"].astype(str).isin(targets).to_numpy()
    if bad.any():
        i = int(np.argmax(bad))
        raise _fail(path, i, True, "target", frame["target"].iloc[i], f"unknown target (the hub's targets: {', '.join(sorted(targets))})")
    if "as_of" in frame.columns and frame["as_of"].notna().any():  # the newest revision of each value
        frame = frame.assign(_as_of=pd.to_datetime(frame["as_of"], errors="coerce")).sort_values("_as_of", kind="stable")
    end = _dates(frame, "target_end_date", path, True)
    value = _number(frame, "oracle_value", path, True)
    horizon = _number(frame, "horizon", path, True) if "horizon" in frame.columns else np.full(len(frame), -1.0)
    kind = frame["output_type"].astype(str).to_numpy()
    base = pd.DataFrame({"target": frame["target"].astype(str).to_numpy(), "location": frame["location"].astype(str).to_numpy(),
                         "target_end_date": end.to_numpy()})
    q = base[kind == "quantile"].assign(value=value[kind == "quantile"])
    q = q.drop_duplicates(["target", "location", "target_end_date"], keep="last")
    is_p = (kind == "pmf") & (value == 1)
    p = base[is_p].assign(horizon=np.nan_to_num(horizon[is_p], nan=-1).astype(np.int64),
                          category=frame["output_type_id"].astype(str).to_numpy()[is_p])
    p = p.drop_duplicates(["target", "location", "target_end_date", "horizon"], keep="last")
    return q.reset_index(drop=True), p.reset_index(drop=True)


def is_hub_folder(path: Path) -> bool:
    """Whether ``path`` is a hubverse hub folder (it has ``hub-config/`` or ``model-output/``)."""
    path = Path(path)
    return path.is_dir() and ((path / "hub-config").is_dir() or (path / "model-output").is_dir())


def read_hub(root: Path) -> Hub:
    """Read a hubverse hub folder (module docstring) as a :class:`Hub`.

    Raises
    ------
    DataValidationError
        For bad input (module docstring): one line naming the file, row, column and value.
    FileNotFoundError
        If the folder has no ``model-output/`` or no ``target-data/oracle-output.csv``.
    """
    root = Path(root)
    out_dir = root / "model-output"
    if not out_dir.is_dir():
        raise FileNotFoundError(f"{root}: no model-output/ folder (not a hubverse hub)")
    oracle = root / "target-data" / "oracle-output.csv"
    if not oracle.is_file():
        raise FileNotFoundError(f"{oracle}: missing (the hub's outcomes; without them nothing can be scored)")
    meta_rows = []
    meta_dir = root / "model-metadata"
    for path in sorted([*meta_dir.glob("*.yml"), *meta_dir.glob("*.yaml")]) if meta_dir.is_dir() else []:
        m = _metadata(path)
        model = str(m.get("model_id") or f"{m.get('team_abbr', '')}-{m.get('model_abbr', '')}".strip("-") or path.stem)
        meta_rows.append({"model": model, "team": m.get("team_name", m.get("team_abbr", "")), "license": m.get("license") or "",
                          "designated_model": m.get("designated_model", False),
                          "ensemble_of_hub_models": m.get("ensemble_of_hub_models", False),
                          "ensemble_of_models": m.get("ensemble_of_models", False),
                          "methods": str(m.get("methods", "") or "")})
    models = _models_frame(pd.DataFrame(meta_rows, columns=["model", "team", "license", "designated_model", "ensemble_of_hub_models",
                                                            "ensemble_of_models", "methods"]))
    counts: dict[str, int] = {}
    qs, ps = [], []
    for folder in sorted(p for p in out_dir.iterdir() if p.is_dir()):
        for path in sorted([*folder.glob("*.csv"), *folder.glob("*.parquet")]):
            _model_file(path, folder.name)
            q, p = _output_file(path, folder.name, counts)
            qs.append(q)
            ps.append(p)
    quantiles = pd.concat(qs, ignore_index=True) if qs else pd.DataFrame(columns=QUANTILE_COLUMNS)
    options = pd.concat(ps, ignore_index=True) if ps else pd.DataFrame(columns=OPTION_COLUMNS)
    for frame in (quantiles, options):
        frame["horizon"] = frame["horizon"].astype(np.int64)
    targets, order = _tasks(root / "hub-config" / "tasks.json") if (root / "hub-config" / "tasks.json").is_file() else (set(), {})
    for t in options["target"].unique():
        order.setdefault(t, list(dict.fromkeys(options.loc[options["target"] == t, "category"])))
    truth, option_truth = _oracle(oracle, targets | set(quantiles["target"]) | set(options["target"]))
    hub = Hub(root.resolve().name, quantiles, options, truth, option_truth, models, order,
              attribution=f"Hub folder {root} (each model's licence in its model-metadata file).")
    if counts:
        hub.notes.append("rows of output types not scored here left out: " + ", ".join(f"{k} {n:,}" for k, n in sorted(counts.items())))
    hub.notes += _licence_notes(hub)
    return hub
