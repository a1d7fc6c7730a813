"""One line of ``results.jsonl`` (:class:`QuestionRecord`), what makes a parsed line one (:func:`record_problem`),
and why a question failed, in one line."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any

from pydantic import BaseModel, Field

from agent_schemas import ErrorInfo, PipelineTrace

__all__ = ["QuestionRecord", "failure_reason", "record_problem"]


class QuestionRecord(BaseModel):
    """One line of ``results.jsonl``: every method's and baseline's probability for one question,
    the usage ledger, the leakage audit and the full pipeline trace."""

    question_id: str
    status: str = Field(description="'ok' or 'failed' (the ensemble policy was not met).")
    error: dict[str, Any] | None = Field(None, description="ErrorInfo of a failed question.")
    outcome: int | float | None = Field(None, description="As the question's kind stores it: 1 Yes / 0 No; the index of the option that "
                                                         "happened; a numeric value in the question's unit. None unresolved.")
    source: str
    question_type: str
    cluster: str = Field(description="Bootstrap cluster: related questions share one (benchmarks.protocol.clusters).")
    horizon_days: int | None = None
    forecast_date: str = Field(description="ISO date: the information cutoff.")
    resolution_date: str | None = None
    methods: dict[str, dict[str, Any]] = Field(description="method -> {p_yes, status, note, extra_usage}.")
    baselines: dict[str, dict[str, Any]] = Field(description="baseline -> {p_yes, status, note}.")
    ledger: list[dict[str, Any]] = Field(description="UsageLedger.to_records() of the question.")
    audit: dict[str, int] = Field(description="Leakage audit counts over the prompts sent (benchmarks.protocol.leakage.leakage_audit).")
    wall_time_s: float = Field(description="Wall time of the question in seconds.")
    trace: PipelineTrace


def _json_kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "true/false", type(None): "null"}.get(
        type(value), "a number")


def _iso_date(value: Any) -> bool:
    try:
        dt.date.fromisoformat(value[:10])
    except (TypeError, ValueError):
        return False
    return True


def _rows(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(v, dict) for v in value.values())


def _ledger(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(e, dict) and all(isinstance(e.get(k), str) for k in ("method", "role", "model"))
                                           for e in value)


#: What every reader of a record relies on: (field, check, what it must be). Fields marked optional may be absent.
_SHAPE: tuple[tuple[str, Any, str, bool], ...] = (
    ("question_id", lambda v: isinstance(v, str) and bool(v.strip()), "a non-empty string", True),
    ("status", lambda v: v in ("ok", "failed"), "'ok' or 'failed'", True),
    ("forecast_date", _iso_date, "an ISO date (YYYY-MM-DD)", True),
    ("methods", _rows, "an object of method rows (objects)", True),
    ("baselines", _rows, "an object of baseline rows (objects)", False),
    ("ledger", _ledger, "an array of ledger rows (objects with a method, role and model)", False),
    ("trace", lambda v: isinstance(v, dict), "an object", False),
    ("outcome", lambda v: v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)), "a number or null", False),
    ("resolution_date", lambda v: v is None or _iso_date(v), "an ISO date or null", False),
    *((name, lambda v: isinstance(v, str), "a string", False) for name in ("cluster", "source", "question_type")),
)


_REQUIRED_NAMES = [name for name, *_, required in _SHAPE if required]
_REQUIRED = ", ".join(_REQUIRED_NAMES[:-1]) + " and " + _REQUIRED_NAMES[-1]


def record_problem(value: Any) -> str | None:
    """What keeps ``value`` (one parsed line of ``results.jsonl``) from being a question record, in words, or None.

    Checks what every reader relies on (:data:`_SHAPE`): a JSON object whose ``question_id`` is a non-empty string,
    ``status`` "ok" or "failed", ``forecast_date`` an ISO date and ``methods`` an object of rows; and, when present
    (records of older versions or other tools may lack them: they count as empty), ``baselines`` an object of rows,
    ``ledger`` an array of rows with a method, role and model, ``trace`` an object, ``outcome`` a number or null
    (its kind's outcome: 0/1 for a binary question), ``resolution_date`` a date, ``cluster``, ``source`` and
    ``question_type`` strings. The trace's inside is not checked: a record of an older trace format is still a
    record (the viewer lists it as unreadable).

    Examples
    --------
    >>> record_problem([1, 2])
    'an array, where a question record (a JSON object) belongs'
    >>> record_problem({"foo": 1})
    'no question_id (a record has question_id, status, forecast_date and methods)'
    """
    if not isinstance(value, dict):
        return f"{_json_kind(value)}, where a question record (a JSON object) belongs"
    for name, check, want, required in _SHAPE:
        if name not in value:
            if required:
                return f"no {name} (a record has {_REQUIRED})"
            continue
        if not check(value[name]):
            shown = repr(value[name]) if not isinstance(value[name], (dict, list)) else _json_kind(value[name])
            return f"{name} is {shown[:80]}, not {want}"
    return None


def failure_reason(member_errors: list[ErrorInfo], question_error: ErrorInfo | None) -> str:
    """One line saying why a question failed: its members' most common error (``Type: message``), else
    the question's own error (an ensemble failure only says how many members failed)."""
    if member_errors:
        counts = Counter(e.type for e in member_errors)
        top = next(e for e in member_errors if e.type == counts.most_common(1)[0][0])
        return f"{top.type}: {top.message}"
    if question_error is not None:
        return f"{question_error.type}: {question_error.message}"
    return "unknown"

