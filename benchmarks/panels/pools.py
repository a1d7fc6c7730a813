"""Every aggregation method's probability per question of a panel, vectorised: the panel's forecasts as one
(questions x forecasters) matrix, aggregated by :func:`agent_research.aggregation.aggregate_many`.

This is the "aggregate" whose speed ``benchmarks/perf/panel_aggregate.py`` measures against a pandas
groupby-mean of the same frame. A run of the panel takes its values as the given members' aggregates
(:meth:`benchmarks.panels.files.Panel.ensemble`, :attr:`agent_research.ensemble.EnsembleResult.aggregates`): the
pipeline writes them to ``trace.aggregates`` unclipped, as it computes them, and the run's method rows clip them to
the combination rule's bounds like any run's (:mod:`benchmarks.protocol.methods`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from agent_research.aggregation import AGGREGATORS, aggregate_many
from agent_schemas import DataValidationError

__all__ = ["POOL_METHODS", "PanelMatrix", "panel_matrix", "pool_probabilities"]

#: The aggregation methods ``aggregate`` scores by default (the run's methods; ``max`` on request).
POOL_METHODS: tuple[str, ...] = ("mean", "median", "min", "trimmed_mean", "geomean_odds", "extremized")


@dataclass(frozen=True)
class PanelMatrix:
    """A panel's forecasts as a matrix.

    Attributes
    ----------
    question_ids : ndarray of shape (n_questions,)
        Question ids, in the order of their first forecast.
    forecasters : ndarray of shape (n_forecasters,)
        Forecasters, in the order of their first forecast.
    p : ndarray of shape (n_questions, n_forecasters)
        p_yes in [0, 1]; NaN where the forecaster gave no forecast for the question.
    """

    question_ids: np.ndarray
    forecasters: np.ndarray
    p: np.ndarray


def panel_matrix(forecasts: pd.DataFrame) -> PanelMatrix:
    """The (questions x forecasters) matrix of a panel's forecasts.

    Parameters
    ----------
    forecasts : pandas.DataFrame
        Columns ``question_id``, ``forecaster`` and ``p_yes`` (in [0, 1]), one row per forecast.

    Returns
    -------
    PanelMatrix

    Raises
    ------
    DataValidationError
        When a forecaster has two rows for one question (naming both and the rows), or a column is missing.

    Examples
    --------
    >>> m = panel_matrix(pd.DataFrame({"question_id": ["a", "a", "b"], "forecaster": ["x", "y", "y"], "p_yes": [0.2, 0.4, 0.9]}))
    >>> m.p.tolist()
    [[0.2, 0.4], [nan, 0.9]]
    """
    missing = [c for c in ("question_id", "forecaster", "p_yes") if c not in forecasts.columns]
    if missing:
        raise DataValidationError(f"forecasts lack the column(s) {missing}", field=missing[0])
    qi, questions = pd.factorize(forecasts["question_id"])
    fi, forecasters = pd.factorize(forecasts["forecaster"])
    n_q, n_f = len(questions), len(forecasters)
    cell = qi.astype(np.int64) * n_f + fi
    filled = np.zeros(n_q * n_f, dtype=bool)
    filled[cell] = True
    if np.count_nonzero(filled) < len(cell):  # fewer cells than rows: some cell has two (found on this slow path only)
        rows = np.flatnonzero((np.bincount(cell, minlength=n_q * n_f) > 1)[cell])
        q, f = forecasts["question_id"].iloc[rows[0]], forecasts["forecaster"].iloc[rows[0]]
        raise DataValidationError(f"forecaster {f!r} has {len(rows)} rows for question {q!r} (rows {rows.tolist()[:5]}); "
                                  "one forecast each", field="forecaster", row=int(rows[1]), value=str(f))
    p = np.full(n_q * n_f, np.nan)
    p[cell] = forecasts["p_yes"].to_numpy(dtype=float)
    return PanelMatrix(np.asarray(questions, dtype=object), np.asarray(forecasters, dtype=object), p.reshape(n_q, n_f))


def pool_probabilities(forecasts: pd.DataFrame, methods: Sequence[str] = tuple(AGGREGATORS), **kwargs: Any) -> pd.DataFrame:
    """Every method's pooled p_yes per question of a panel (unclipped), in one vectorised pass.

    Parameters
    ----------
    forecasts : pandas.DataFrame
        Columns ``question_id``, ``forecaster`` and ``p_yes`` (in [0, 1]), one row per forecast.
    methods : sequence of str, default every method of :data:`agent_research.aggregation.AGGREGATORS`
        Aggregation methods.
    **kwargs
        ``trim``, ``d``, ``eps`` (:func:`agent_research.aggregation.aggregate_many`).

    Returns
    -------
    pandas.DataFrame of shape (n_questions, len(methods))
        p_yes in [0, 1], indexed by ``question_id`` in the order of their first forecast.

    Raises
    ------
    DataValidationError
        As :func:`panel_matrix` and :func:`~agent_research.aggregation.aggregate_many` (a p_yes outside [0, 1]
        names its row and column of the matrix).

    Examples
    --------
    Three forecasters on one question (0.1, 0.2, 0.6): mean 0.3, median 0.2, min 0.1:

    >>> f = pd.DataFrame({"question_id": ["a"] * 3, "forecaster": ["x", "y", "z"], "p_yes": [0.1, 0.2, 0.6]})
    >>> pool_probabilities(f, ["mean", "median", "min"]).round(4).to_dict("records")
    [{'mean': 0.3, 'median': 0.2, 'min': 0.1}]
    """
    m = panel_matrix(forecasts)
    return pd.DataFrame(aggregate_many(m.p, methods, **kwargs), index=pd.Index(m.question_ids, name="question_id"))
