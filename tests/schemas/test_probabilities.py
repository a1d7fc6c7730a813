"""One probability validator: aggregation and scoring reject the same bad value with the same words."""

from __future__ import annotations

import numpy as np
import pytest

from agent_research.aggregation import PlattScaler, aggregate, fit_platt_scaling
from agent_schemas import DataValidationError, check_probabilities
from benchmarks import scoring


@pytest.mark.parametrize("values, message, row", [
    ([0.1, 1.198], r"p has values outside \[0, 1\]: 1\.198 at index 1$", 1),
    ([[0.1, 0.2], [0.3, -0.5]], r"p has values outside \[0, 1\]: -0\.5 at \(row 1, column 1\)$", 1),
    ([0.2, np.nan, 0.1], r"p has NaN at index 1$", 1),
    (["a"], r"p must be numeric probabilities", None),
])
def test_messages_name_the_position_and_value(values, message, row):
    with pytest.raises(DataValidationError, match=message) as err:
        check_probabilities(values, "p")
    assert err.value.row == row


def test_nan_allowed_when_asked_and_shape_checked():
    out = check_probabilities([[0.5, np.nan]], "p", allow_nan=True, ndim=2)
    assert out.dtype == np.float64 and np.isnan(out[0, 1])
    with pytest.raises(DataValidationError, match=r"p must be 1-D of shape \(n_questions,\); got shape \(1, 2\)"):
        check_probabilities([[0.5, 0.5]], "p", ndim=1, shape="(n_questions,)")


def test_aggregation_and_scoring_share_the_check():
    with pytest.raises(DataValidationError, match=r"outside \[0, 1\]: 1\.5 at index 0$"):
        scoring.brier_score([1.5], [1])
    with pytest.raises(DataValidationError, match=r"outside \[0, 1\]: 1\.5 at index 0$"):
        PlattScaler(a=1.0, b=0.0).transform([1.5])
    with pytest.raises(DataValidationError, match=r"outside \[0, 1\]: 1\.5 at index 0$"):
        fit_platt_scaling([1.5, 0.2], [1, 0])
    with pytest.raises(DataValidationError, match=r"outside \[0, 1\]: 1\.5 at \(row 0, column 0\)$"):
        aggregate("mean", [[1.5, 0.2]])
