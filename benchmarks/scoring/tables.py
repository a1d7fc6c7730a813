"""Score tables: one row per method (:func:`score_table`) or per segment and method (:func:`segment_table`),
with clustered bootstrap intervals and paired deltas to a baseline, and forecast-horizon buckets."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from agent_schemas.errors import DataValidationError
from benchmarks.scoring.bootstrap import MIN_CLUSTERS_FOR_INTERVAL, bootstrap_mean, cluster_codes, count_clusters
from benchmarks.scoring.summary import ScoreSummary, score_summary
from benchmarks.scoring.validation import first_bad

__all__ = ["HORIZON_BUCKETS", "horizon_bucket", "require_columns", "score_table", "segment_table"]

HORIZON_BUCKETS: tuple[str, ...] = ("<=7d", "8-30d", "31-90d", "91-180d", ">180d")
"""Labels of :func:`horizon_bucket`, in order: (0, 7], (7, 30], (30, 90], (90, 180], (180, inf) days."""

_HORIZON_EDGES = np.array([7.0, 30.0, 90.0, 180.0])

_TABLE_COLUMNS = [
    "n", "n_missing", "n_unresolved", "n_clusters", "brier", "brier_ci_low", "brier_ci_high", "log_loss", "ece",
    "reliability", "resolution", "uncertainty", "within_bin", "brier_skill_vs_in_sample_rate", "n_common",
    "brier_skill_vs_baseline", "delta_brier_vs_baseline", "delta_brier_ci_low", "delta_brier_ci_high", "interval_note",
]


def horizon_bucket(days: Any) -> Any:
    """Bucket forecast horizons (days from forecast to resolution) for :func:`segment_table`.

    Buckets are right-closed: ``<=7d`` is [0, 7], ``8-30d`` is (7, 30], ``31-90d`` (30, 90],
    ``91-180d`` (90, 180], ``>180d`` above 180 (a fractional 7.5 days is ``8-30d``).

    Parameters
    ----------
    days : float or array-like of float
        Horizon in days, >= 0; NaN (unknown) maps to NaN.

    Returns
    -------
    str or pandas.Categorical
        A label from :data:`HORIZON_BUCKETS` for a scalar; an ordered categorical for an array.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for a negative horizon.

    Examples
    --------
    >>> horizon_bucket(7), horizon_bucket(31)
    ('<=7d', '31-90d')
    >>> list(horizon_bucket([0, 8, 400]))
    ['<=7d', '8-30d', '>180d']
    """
    arr = np.asarray(days, dtype=np.float64)
    if (arr < 0).any():
        flat = arr.ravel()
        i, v = first_bad(flat, flat < 0)
        raise DataValidationError(f"days must be >= 0: {v!r} at index {i}", field="days", row=i, value=v)
    codes = np.searchsorted(_HORIZON_EDGES, arr, side="left")
    if arr.ndim == 0:
        return None if np.isnan(arr) else HORIZON_BUCKETS[int(codes)]
    codes = np.where(np.isnan(arr), -1, codes)
    return pd.Categorical.from_codes(codes.ravel(), categories=list(HORIZON_BUCKETS), ordered=True)


def require_columns(df: pd.DataFrame, **cols: str | None) -> None:
    """Raise a :class:`DataValidationError` naming the role, the column and the frame's columns for each
    ``role=column`` that is not a column of ``df`` (a None column is not required)."""
    for role, col in cols.items():
        if col is not None and col not in df.columns:
            raise DataValidationError(
                f"{role}={col!r} is not a column of the data frame; columns are {list(df.columns)}",
                field=role, value=col,
            )


def _check_group_values(group: pd.DataFrame, values: np.ndarray, col: str, *, bad: np.ndarray, what: str) -> None:
    if bad.any():
        j = int(np.argmax(bad))
        raise DataValidationError(
            f"{col} has {what}: {float(values[j])!r} at row {group.index[j]!r}", field=col, row=None, value=float(values[j])
        )


def score_table(
    df: pd.DataFrame,
    *,
    method_col: str = "method",
    question_col: str = "question_id",
    p_col: str = "p_yes",
    outcome_col: str = "outcome",
    cluster_col: str | None = "cluster",
    baseline: str | None = "mean",
    n_bins: int = 10,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: Any = 0,
    min_clusters: int = MIN_CLUSTERS_FOR_INTERVAL,
) -> pd.DataFrame:
    """One row of scores per method, with clustered bootstrap intervals and paired deltas to a baseline.

    Rows with NaN ``p_yes`` (the method did not answer) or NaN outcome (unresolved) are dropped and
    counted in ``n_missing`` / ``n_unresolved``. Differences to the baseline are computed on the
    questions both methods answered (``n_common``), with a paired clustered bootstrap that draws the same
    clusters for both.

    Parameters
    ----------
    df : pandas.DataFrame
        Long format, one row per (method, question): ``method_col``, ``question_col``, ``p_col``
        (p_yes in [0, 1]), ``outcome_col`` (0/1) and ``cluster_col``.
    method_col, question_col, p_col, outcome_col : str
        Column names.
    cluster_col : str or None, default="cluster"
        Column with the bootstrap cluster of each question; None makes every question its own cluster.
    baseline : str or None, default="mean"
        Method the deltas and ``brier_skill_vs_baseline`` refer to; None leaves those columns NaN.
    n_bins : int, default=10
        Calibration bins for ECE and the Murphy decomposition.
    n_resamples, confidence, seed, min_clusters
        Bootstrap settings (see :func:`clustered_bootstrap_ci`); every method uses the same seed. Below
        ``min_clusters`` clusters the interval bounds are NaN and ``interval_note`` says why.

    Returns
    -------
    pandas.DataFrame
        One row per method (in order of first appearance), a default RangeIndex and the columns
        ``method_col`` (the method name), ``n``, ``n_missing``,
        ``n_unresolved``, ``n_clusters``, ``brier``, ``brier_ci_low``, ``brier_ci_high``, ``log_loss``
        (nats, loss), ``ece``, ``reliability``, ``resolution``, ``uncertainty``, ``within_bin`` (Murphy
        terms), ``brier_skill_vs_in_sample_rate`` (Brier skill against always forecasting the yes-rate of
        the scored questions themselves, ``1 - brier / uncertainty``: an in-sample climatology, not the
        ``base_rate`` baseline, which uses only outcomes known before each forecast date), ``n_common``,
        ``brier_skill_vs_baseline``, ``delta_brier_vs_baseline`` (negative: better than the baseline),
        ``delta_brier_ci_low``, ``delta_brier_ci_high`` and ``interval_note`` ("" or why an interval is
        not available). Lower is better for every loss.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for a missing column, an unknown baseline, a duplicated (method, question)
        row, or invalid values (the message names the column and row).

    Examples
    --------
    >>> df = pd.DataFrame({"method": ["mean"] * 3 + ["min"] * 3, "question_id": [1, 2, 3] * 2,
    ...                    "p_yes": [0.8, 0.3, 0.6, 0.6, 0.1, 0.2], "outcome": [1, 0, 1] * 2})
    >>> t = score_table(df, cluster_col=None, n_resamples=100).set_index("method")
    >>> round(float(t.loc["min", "brier"]), 4), round(float(t.loc["min", "delta_brier_vs_baseline"]), 4)
    (0.27, 0.1733)
    """
    require_columns(df, method_col=method_col, question_col=question_col, p_col=p_col, outcome_col=outcome_col, cluster_col=cluster_col)
    data = df[[c for c in dict.fromkeys([method_col, question_col, p_col, outcome_col, cluster_col]) if c is not None]]
    dup = data.duplicated([method_col, question_col])
    if dup.any():
        i = int(np.argmax(dup.to_numpy()))
        raise DataValidationError(
            f"duplicated (method, question) row at position {i}: {data.iloc[i][method_col]!r}, {data.iloc[i][question_col]!r}",
            field=question_col, row=i, value=data.iloc[i][question_col],
        )
    for role, col in (("method_col", method_col), ("cluster_col", cluster_col)):
        if col is not None and data[col].isna().any():
            i = int(np.argmax(data[col].isna().to_numpy()))
            raise DataValidationError(f"{col} has a missing value at row {data.index[i]!r}", field=col, row=i)
    methods = list(pd.unique(data[method_col]))
    if baseline is not None and baseline not in methods:
        raise DataValidationError(f"baseline {baseline!r} is not among the methods {methods}", field="baseline", value=baseline)

    per_method: dict[Any, pd.DataFrame] = {}
    counts: dict[Any, tuple[int, int]] = {}
    for method, group in data.groupby(method_col, sort=False):
        p = pd.to_numeric(group[p_col], errors="coerce").to_numpy(np.float64, na_value=np.nan)
        o = pd.to_numeric(group[outcome_col], errors="coerce").to_numpy(np.float64, na_value=np.nan)
        bad_p = np.isnan(p) & group[p_col].notna().to_numpy()
        if bad_p.any():
            j = int(np.argmax(bad_p))
            raise DataValidationError(f"{p_col} is not numeric: {group[p_col].iloc[j]!r} at row {group.index[j]!r}", field=p_col, value=group[p_col].iloc[j])
        _check_group_values(group, p, p_col, bad=(p < 0) | (p > 1), what="values outside [0, 1]")
        _check_group_values(group, o, outcome_col, bad=(o != 0) & (o != 1) & ~np.isnan(o), what="outcomes other than 0/1")
        unresolved = np.isnan(o)
        missing = np.isnan(p) & ~unresolved
        keep = ~(unresolved | np.isnan(p))
        counts[method] = (int(missing.sum()), int(unresolved.sum()))
        kept = pd.DataFrame({
            "question": group[question_col].to_numpy()[keep],
            "p": p[keep],
            "o": o[keep],
            "cluster": (group[cluster_col] if cluster_col is not None else group[question_col]).to_numpy()[keep],
        })
        per_method[method] = kept

    rows = []
    base_scores: pd.Series | None = None
    summaries: dict[Any, ScoreSummary] = {}
    for method, kept in per_method.items():
        if len(kept):
            summaries[method] = score_summary(kept["p"].to_numpy(), kept["o"].to_numpy(), n_bins=n_bins)
    if baseline is not None and baseline in summaries:
        kb = per_method[baseline]
        base_scores = pd.Series(summaries[baseline].brier_scores, index=kb["question"].to_numpy())

    for method, kept in per_method.items():
        row: dict[str, Any] = dict.fromkeys(_TABLE_COLUMNS, np.nan)
        row["n"] = len(kept)
        row["n_missing"], row["n_unresolved"] = counts[method]
        row["n_common"] = 0
        row["interval_note"] = ""
        s = summaries.get(method)
        if s is not None:
            codes = cluster_codes(kept["cluster"].to_numpy(), s.n)
            ci = bootstrap_mean(s.brier_scores, codes, n_resamples, confidence, seed, min_clusters)
            m = s.murphy
            row.update(
                n_clusters=count_clusters(codes),
                brier=s.brier, brier_ci_low=ci.low, brier_ci_high=ci.high, log_loss=s.log_loss, ece=s.ece,
                reliability=m.reliability, resolution=m.resolution, uncertainty=m.uncertainty, within_bin=m.within_bin,
                brier_skill_vs_in_sample_rate=(1.0 - s.brier / m.uncertainty) if m.uncertainty > 0 else np.nan,
            )
            if row["n_clusters"] < min_clusters:
                row["interval_note"] = f"no interval: {row['n_clusters']} clusters < {min_clusters}"
            if base_scores is not None:
                q = kept["question"].to_numpy()
                common = pd.Index(q).isin(base_scores.index)
                row["n_common"] = int(common.sum())
                if common.any():
                    a = s.brier_scores[common]
                    b = base_scores.loc[q[common]].to_numpy()
                    d = bootstrap_mean(a - b, cluster_codes(kept["cluster"].to_numpy()[common], a.size), n_resamples, confidence,
                                   seed, min_clusters)
                    mean_b = float(b.mean())
                    row.update(
                        brier_skill_vs_baseline=(1.0 - float(a.mean()) / mean_b) if mean_b > 0 else np.nan,
                        delta_brier_vs_baseline=d.mean, delta_brier_ci_low=d.low, delta_brier_ci_high=d.high,
                    )
        rows.append(row)
    table = pd.DataFrame(rows, columns=_TABLE_COLUMNS)
    table["n_clusters"] = table["n_clusters"].fillna(0)
    table = table.astype({"n": "int64", "n_missing": "int64", "n_unresolved": "int64", "n_common": "int64", "n_clusters": "int64"})
    table.insert(0, method_col, list(per_method))
    return table


def segment_table(df: pd.DataFrame, segment_col: str, **kwargs: Any) -> pd.DataFrame:
    """:func:`score_table` per segment (e.g. source, question type or :func:`horizon_bucket`).

    Parameters
    ----------
    df : pandas.DataFrame
        As for :func:`score_table`, plus ``segment_col``.
    segment_col : str
        Column to split on; NaN segments form their own group.
    **kwargs
        Passed to :func:`score_table`. A segment in which the baseline method has no rows gets NaN deltas.

    Returns
    -------
    pandas.DataFrame
        The :func:`score_table` rows of every segment with ``segment_col`` as the first column (segments
        in sorted, or categorical, order) and a default RangeIndex.

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for a missing column or as :func:`score_table`.

    Examples
    --------
    >>> df = pd.DataFrame({"method": ["mean"] * 4, "question_id": [1, 2, 3, 4], "p_yes": [0.8, 0.3, 0.6, 0.1],
    ...                    "outcome": [1, 0, 1, 0], "source": ["acled", "acled", "fred", "fred"]})
    >>> segment_table(df, "source", cluster_col=None, n_resamples=50)["brier"].round(3).tolist()
    [0.065, 0.085]
    """
    require_columns(df, segment_col=segment_col)
    method_col = kwargs.get("method_col", "method")
    baseline = kwargs.get("baseline", "mean")
    parts = []
    keys = []
    for key, group in df.groupby(segment_col, sort=True, dropna=False, observed=True):
        kw = dict(kwargs)
        if baseline is not None and method_col in group and baseline not in set(group[method_col]):
            kw["baseline"] = None
        parts.append(score_table(group, **kw))
        keys.append(key)
    if not parts:
        raise DataValidationError("segment_table got an empty data frame", field=segment_col)
    for key, part in zip(keys, parts):
        part.insert(0, segment_col, [key] * len(part))
    out = pd.concat(parts, ignore_index=True)
    if isinstance(df[segment_col].dtype, pd.CategoricalDtype):
        out[segment_col] = pd.Categorical(out[segment_col], dtype=df[segment_col].dtype)
    return out
