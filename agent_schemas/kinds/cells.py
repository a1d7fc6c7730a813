"""Reading the cells of a question file that state a question's kind (its spec columns and its outcome), shared
by the kinds' :meth:`~agent_schemas.kinds.base.QuestionKind.spec_from_cells` and
:meth:`~agent_schemas.kinds.base.QuestionKind.outcome_from_cell`.

Every reader returns a clean value or raises :class:`~agent_schemas.errors.DataValidationError` whose ``field`` is
the column and ``value`` the cell as written; the file reader (:mod:`benchmarks.questions.files`) adds the file and
the row, so a bad cell is one line naming all four. A cell is *blank* when it is None, NaN or only spaces.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from agent_schemas.errors import DataValidationError

__all__ = ["OPTION_SEPARATOR", "bad_cell", "blank", "cell_bool", "cell_number", "cell_options", "cell_text"]

#: What separates the options of a multiple-choice question in one text cell (``Arsenal | Liverpool | Other``);
#: a cell starting with ``[`` is read as a JSON array of labels instead (for labels holding a ``|``).
OPTION_SEPARATOR = "|"

_TRUE = ("1", "true", "yes", "y")
_FALSE = ("0", "false", "no", "n")


def blank(value: Any) -> bool:
    """True for a cell that states nothing: None, NaN, or text of only spaces."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


def bad_cell(column: str, value: Any, problem: str) -> DataValidationError:
    """The error of a bad cell in ``column`` (the file reader adds the file and row)."""
    return DataValidationError(problem, field=column, value=value)


def cell_text(cells: Mapping[str, Any], column: str, default: str = "") -> str:
    """The cell as text with its spaces trimmed (``default`` when blank)."""
    v = cells.get(column)
    return default if blank(v) else str(v).strip()


def cell_bool(cells: Mapping[str, Any], column: str, default: bool = False) -> bool:
    """A yes/no cell: ``1``/``0``, ``true``/``false``, ``yes``/``no`` (any case); ``default`` when blank.

    Raises
    ------
    DataValidationError
        For any other value.
    """
    v = cells.get(column)
    if blank(v):
        return default
    if isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    if s in _TRUE or s == "1.0":
        return True
    if s in _FALSE or s == "0.0":
        return False
    raise bad_cell(column, v, f"{column} must be true or false (also 1/0, yes/no)")


def cell_number(cells: Mapping[str, Any], column: str, *, required: bool = True) -> float | None:
    """A finite number cell (None when blank and not ``required``).

    Raises
    ------
    DataValidationError
        For a blank required cell, text that is not a number, or an infinite / NaN value.
    """
    v = cells.get(column)
    if blank(v):
        if required:
            raise bad_cell(column, v, f"required value {column!r} is empty")
        return None
    if isinstance(v, bool):
        raise bad_cell(column, v, f"{column} must be a number")
    try:
        x = float(str(v).strip().replace(",", "")) if isinstance(v, str) else float(v)
    except (TypeError, ValueError):
        raise bad_cell(column, v, f"{column} must be a number") from None
    if not math.isfinite(x):
        raise bad_cell(column, v, f"{column} must be a finite number")
    return x


def cell_options(cells: Mapping[str, Any], column: str) -> tuple[str, ...]:
    """Option labels from one cell: separated by :data:`OPTION_SEPARATOR`, or a JSON array of strings (a cell
    starting with ``[``; a list value as a JSONL file gives it).

    Raises
    ------
    DataValidationError
        For a blank cell or a JSON array that is malformed or holds anything but strings.
    """
    v = cells.get(column)
    if isinstance(v, (list, tuple)):
        labels = list(v)
    elif blank(v):
        raise bad_cell(column, v, f"required value {column!r} is empty (the options, separated by '{OPTION_SEPARATOR}')")
    elif str(v).strip().startswith("["):
        try:
            labels = json.loads(str(v))
        except json.JSONDecodeError as exc:
            raise bad_cell(column, v, f"{column} starts with '[' but is not a JSON array: {exc.msg}") from None
        if not isinstance(labels, list):
            raise bad_cell(column, v, f"{column} must be a JSON array of option labels")
    else:
        labels = str(v).split(OPTION_SEPARATOR)
    if not all(isinstance(x, str) for x in labels):
        raise bad_cell(column, v, f"{column} must hold option labels (text)")
    return tuple(x.strip() for x in labels)
