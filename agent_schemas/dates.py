"""One rule for turning dates and date-times into calendar dates: UTC, everywhere.

A backtest compares calendar dates (a question's forecast date, a document's publication date, a
model's training cutoff). A date-time with a UTC offset names a moment; its calendar date depends on
the time zone it is read in, so ``2024-06-01T01:00:00+09:00`` is 2024-05-31 in UTC. Every loader, the
cutoff guard and the baselines read dates through :func:`utc_date`, so the same string always gives
the same date.

Rules
-----
* a :class:`datetime.date` (not a date-time) is taken as it is;
* an aware :class:`datetime.datetime` is converted to UTC, then its date is taken;
* a naive date-time is taken to be in UTC already;
* a string is read as ISO 8601 (``YYYY-MM-DD``, ``YYYY-MM-DDTHH:MM[:SS][.ffffff][+HH:MM|Z]``, a space
  instead of ``T`` is accepted), then as above.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

DateLike = dt.date | dt.datetime | str


def utc_date(value: Any, *, field: str = "date") -> dt.date:
    """The UTC calendar date of ``value`` (see the module rules).

    Parameters
    ----------
    value : date, datetime or str
        A date, a date-time (aware or naive) or an ISO 8601 string.
    field : str
        Name of the field, used in the error message.

    Returns
    -------
    datetime.date

    Raises
    ------
    ValueError
        If ``value`` is None, empty, of another type, or a string that is not ISO 8601 (the message
        names ``field`` and the value).

    Examples
    --------
    >>> utc_date("2024-06-01T01:00:00+09:00")
    datetime.date(2024, 5, 31)
    >>> utc_date("2024-06-01")
    datetime.date(2024, 6, 1)
    """
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None and value.tzinfo.utcoffset(value) is not None:
            value = value.astimezone(dt.timezone.utc)
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        s = value.strip()
        if s:
            try:
                if len(s) == 10:
                    return dt.date.fromisoformat(s)
                return utc_date(dt.datetime.fromisoformat(s.replace("Z", "+00:00").replace("z", "+00:00")), field=field)
            except ValueError:
                pass
    raise ValueError(f"{field} must be an ISO 8601 date or date-time (read in UTC), got {value!r}")
