"""The one check of probability arrays, shared by aggregation (``agent_research.aggregation``) and scoring
(``benchmarks.scoring``): numeric, of the expected dimension, every value in [0, 1], and NaN only where
the caller allows a missing value. Errors name the array, the position and the value, e.g.
``"p_yes has values outside [0, 1]: 1.198 at index 3"``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agent_schemas.errors import DataValidationError

__all__ = ["as_float_array", "check_probabilities"]


def as_float_array(values: Any, name: str, *, ndim: int | None = None, shape: str = "", hint: str = "",
                   what: str = "numeric") -> np.ndarray:
    """``values`` as a float64 ndarray of ``ndim`` dimensions.

    Parameters
    ----------
    values : array-like
    name : str
        The argument's name, used in the messages.
    ndim : int, optional
        Required number of dimensions; any when None.
    shape : str
        The expected shape in words for the message, e.g. ``"(n_questions,)"``.
    hint : str
        Sentence appended to the dimension error (how to fix it).
    what : str
        What the values must be, for the conversion error ("numeric", "numeric probabilities").

    Raises
    ------
    DataValidationError
        (a ``ValueError``) when the values are not numbers or have the wrong number of dimensions.
    """
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataValidationError(f"{name} must be {what}: {exc}", field=name) from exc
    if ndim is not None and arr.ndim != ndim:
        of_shape = f" of shape {shape}" if shape else ""
        raise DataValidationError(f"{name} must be {ndim}-D{of_shape}; got shape {arr.shape}" + (f". {hint}" if hint else ""),
                                  field=name, value=arr.shape)
    return arr


def _position(arr: np.ndarray, bad: np.ndarray) -> tuple[str, int | None, float]:
    """Where the first ``bad`` value of ``arr`` is: its words (``index i``, ``(row r, column c)``), row, value."""
    if arr.ndim == 0:
        return "", None, float(arr)
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    value = float(arr[idx])
    if arr.ndim == 1:
        return f" at index {idx[0]}", idx[0], value
    if arr.ndim == 2:
        return f" at (row {idx[0]}, column {idx[1]})", idx[0], value
    return f" at index {idx}", None, value


def check_probabilities(values: Any, name: str, *, ndim: int | None = None, shape: str = "", hint: str = "",
                        allow_nan: bool = False, nan_note: str = "") -> np.ndarray:
    """``values`` as a float64 ndarray whose every value is a probability in [0, 1].

    Parameters
    ----------
    values : array-like of any shape (or of ``ndim`` dimensions)
        Probabilities of Yes.
    name : str
        The argument's name, used in the messages.
    ndim, shape, hint
        As for :func:`as_float_array`.
    allow_nan : bool, default False
        Whether NaN (a missing value, e.g. a member that did not answer) is accepted.
    nan_note : str
        Text appended to the NaN error, e.g. ``" (a missing forecast); drop unanswered questions first"``.

    Returns
    -------
    ndarray of float64, same shape as ``values``

    Raises
    ------
    DataValidationError
        (a ``ValueError``) for non-numeric values, a wrong dimension, a value outside [0, 1] or a NaN
        that is not allowed. The message names the first offending position (``index i`` for 1-D,
        ``(row r, column c)`` for 2-D) and value; ``.row`` and ``.value`` hold them.

    Examples
    --------
    >>> check_probabilities([0.2, 1.0], "p_yes").tolist()
    [0.2, 1.0]
    >>> check_probabilities([[0.1, 1.2]], "p", allow_nan=True)
    Traceback (most recent call last):
    ...
    agent_schemas.errors.DataValidationError: p has values outside [0, 1]: 1.2 at (row 0, column 1)
    """
    arr = as_float_array(values, name, ndim=ndim, shape=shape, hint=hint, what="numeric probabilities")
    if not allow_nan:
        if arr.size and arr.min() >= 0.0 and arr.max() <= 1.0:  # the fast path: NaN fails this test
            return arr
        nan = np.isnan(arr)
        if nan.any():
            where, row, _ = _position(arr, nan)
            raise DataValidationError(f"{name} has NaN{where}{nan_note}", field=name, row=row, value=float("nan"))
    bad = (arr < 0) | (arr > 1)  # NaN compares False
    if bad.any():
        where, row, value = _position(arr, bad)
        raise DataValidationError(f"{name} has values outside [0, 1]: {value!r}{where}", field=name, row=row, value=value)
    return arr
