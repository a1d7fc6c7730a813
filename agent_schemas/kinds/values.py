"""Readers of the values a model writes inside an answer, shared by the kinds: a probability (a number in
[0, 1], a percentage string, or an integer percent field) and its JSON schema. Each reader returns a valid value
or raises :class:`~agent_schemas.errors.ForecastParseError`; none clamps or guesses."""

from __future__ import annotations

import math
import numbers
from typing import Any

from agent_schemas.errors import ForecastParseError

__all__ = ["parse_number", "parse_probability", "percent_schema", "probability_schema"]


def parse_probability(value: Any, *, field: str = "p_yes", raw_text: str | None = None, percent: bool | None = None) -> float:
    """Validate one probability value and return it as a float in [0, 1].

    Parameters
    ----------
    value : Any
        A number, or a numeric / percentage string (``"0.35"``, ``"35.4%"``).
    field : str
        Name of the field (recorded in the error). A name ending in ``_percent`` means percent units.
    raw_text : str, optional
        The full model answer, recorded in the error (default: ``repr(value)``).
    percent : bool, optional
        Force percent units ([0, 100], divided by 100); default: inferred from ``field``. A bare
        non-integer in [0, 1] in percent units (``0.35``: a fraction, or 0.35 %?) is ambiguous and
        rejected; ``35.4`` is read as 35.4 %; a string with a ``%`` sign may have decimals.

    Returns
    -------
    float
        Probability in [0, 1]. No clamping: out-of-range values are errors.

    Raises
    ------
    ForecastParseError
        For None, booleans, NaN, infinities, non-numeric strings, other types, or values outside
        [0, 1] (or [0, 100] in percent units); carries ``raw_text``, ``field`` and ``value``.

    Examples
    --------
    >>> parse_probability("35.4%")
    0.354
    >>> parse_probability(35, field="p_yes_percent")
    0.35
    """
    raw = raw_text if raw_text is not None else repr(value)
    as_percent = field.endswith("_percent") if percent is None else percent

    def fail(why: str) -> ForecastParseError:
        return ForecastParseError(f"{field} {why}, got {value!r}", raw_text=raw, field=field, value=value)

    if value is None:
        raise fail("is missing")
    if isinstance(value, bool):
        raise fail("must be a number, not a boolean")
    explicit_percent = False
    if isinstance(value, str):
        s = value.strip()
        if s.endswith("%"):
            s, explicit_percent = s[:-1].strip(), True
        try:
            x = float(s)
        except ValueError:
            raise fail("is not a number") from None
    elif isinstance(value, numbers.Real):
        try:
            x = float(value)
        except OverflowError:
            raise fail("is out of range") from None
    else:
        raise fail(f"must be a number, not {type(value).__name__}")
    if not math.isfinite(x):
        raise fail("must be finite")
    if explicit_percent or as_percent:
        if not 0.0 <= x <= 100.0:
            raise fail("must be a percentage in [0, 100]")
        if as_percent and not explicit_percent and not x.is_integer() and x <= 1.0:
            # 0.35 in a percent field is ambiguous (a fraction given as percent?): refuse to guess
            raise fail("is ambiguous in a percent field (a fraction or a percent below 1?); write fractions as p_yes or with a % sign")
        return x / 100.0
    if not 0.0 <= x <= 1.0:
        raise fail("must be a probability in [0, 1] (no clamping)")
    return x



def probability_schema(field: str = "p_yes_percent", *, description: str | None = None) -> dict[str, dict[str, Any]]:
    """``{field: schema}`` for an integer-percent probability, to merge into an answer schema's properties.

    The schema is ``{"type": "integer", "enum": [0, 1, ..., 100]}``: the embedded llama.cpp grammar
    enforces an integer enum but ignores ``minimum``/``maximum``, and escaped regex ``pattern`` s break it.
    The parser validates the value anyway (:func:`parse_probability`).

    Raises
    ------
    ValueError
        If ``field`` does not end with ``_percent`` (the parser reads percent units from the name).

    Examples
    --------
    >>> schema = {"type": "object", "properties": {**probability_schema("bull_p_yes_percent"), "argument": {"type": "string"}}}
    >>> schema["properties"]["bull_p_yes_percent"]["enum"][-1]
    100
    """
    if not field.endswith("_percent"):
        raise ValueError(f"field must end with '_percent' (percent units are read from the name), got {field!r}")
    prop: dict[str, Any] = {"type": "integer", "enum": list(range(101))}
    prop["description"] = description or "Probability that the question resolves Yes, as an integer percent (0-100)."
    return {field: prop}



def percent_schema(description: str) -> dict[str, Any]:
    """Schema of one integer percent, ``{"type": "integer", "enum": [0, ..., 100]}`` with ``description``:
    the form llama.cpp's JSON-schema grammar enforces (it ignores ``minimum``/``maximum``)."""
    return {"type": "integer", "enum": list(range(101)), "description": description}


def parse_number(value: Any, *, field: str, raw_text: str | None = None) -> float:
    """Validate one real number a model wrote (a JSON number, or a numeric string with optional thousands
    separators, ``"1,250"``) and return it as a finite float.

    Raises
    ------
    ForecastParseError
        For None, booleans, NaN, infinities, non-numeric strings or other types; carries ``raw_text``,
        ``field`` and ``value``.

    Examples
    --------
    >>> parse_number("1,250.5", field="p50")
    1250.5
    """
    raw = raw_text if raw_text is not None else repr(value)

    def fail(why: str) -> ForecastParseError:
        return ForecastParseError(f"{field} {why}, got {value!r}", raw_text=raw, field=field, value=value)

    if value is None:
        raise fail("is missing")
    if isinstance(value, bool):
        raise fail("must be a number, not a boolean")
    if isinstance(value, str):
        s = value.strip().replace(",", "").replace("_", "")
        try:
            x = float(s)
        except ValueError:
            raise fail("is not a number") from None
    elif isinstance(value, numbers.Real):
        try:
            x = float(value)
        except OverflowError:
            raise fail("is out of range") from None
    else:
        raise fail(f"must be a number, not {type(value).__name__}")
    if not math.isfinite(x):
        raise fail("must be finite")
    return x
