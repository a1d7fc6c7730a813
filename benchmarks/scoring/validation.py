"""Input checks shared by every scoring function: forecasts and outcomes as 1-D float arrays of equal,
non-zero length, probabilities in [0, 1] (:func:`agent_schemas.check_probabilities`), outcomes 0/1."""

from __future__ import annotations

from typing import Any

import numpy as np

from agent_schemas.errors import DataValidationError
from agent_schemas.probabilities import as_float_array, check_probabilities

__all__ = ["as_1d_float", "check_n_bins", "check_probs", "first_bad", "validate_forecasts"]


def as_1d_float(x: Any, name: str) -> np.ndarray:
    return as_float_array(x, name, ndim=1, shape="(n_questions,)")


def first_bad(arr: np.ndarray, bad: np.ndarray) -> tuple[int, float]:
    i = int(np.argmax(bad))
    return i, float(arr[i])


def check_probs(p: np.ndarray, name: str) -> None:
    """Raise unless every value is in [0, 1] and not NaN (:func:`agent_schemas.probabilities.check_probabilities`)."""
    check_probabilities(p, name, nan_note=" (a missing forecast); drop unanswered questions first")


def validate_forecasts(p_yes: Any, outcomes: Any) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(p, o)`` as float64 1-D arrays of equal, non-zero length, or raise DataValidationError."""
    p = as_1d_float(p_yes, "p_yes")
    o_raw = np.asarray(outcomes)
    o = as_1d_float(o_raw, "outcomes")
    if p.shape != o.shape:
        raise DataValidationError(f"p_yes and outcomes must have the same shape: {p.shape} vs {o.shape}", field="outcomes", value=o.shape)
    if p.size == 0:
        raise DataValidationError("p_yes is empty: nothing to score", field="p_yes")
    check_probs(p, "p_yes")
    if o_raw.dtype != np.bool_:
        if not (o.min() >= 0.0 and o.max() <= 1.0 and not np.count_nonzero(o * (1.0 - o))):
            nan = np.isnan(o)
            if nan.any():
                i = int(np.argmax(nan))
                raise DataValidationError(
                    f"outcomes has NaN at index {i} (an unresolved question); drop it first",
                    field="outcomes", row=i, value=float("nan"),
                )
            i, v = first_bad(o, (o != 0) & (o != 1))
            raise DataValidationError(f"outcomes must be 0 or 1: {v!r} at index {i}", field="outcomes", row=i, value=v)
    return p, o


def check_n_bins(n_bins: Any) -> int:
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise DataValidationError(f"n_bins must be a positive integer; got {n_bins!r}", field="n_bins", value=n_bins)
    return int(n_bins)
