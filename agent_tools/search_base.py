"""The search-client contract: one method that always returns a :class:`SearchOutcome` envelope.

A backend answers ``search(query, max_results=..., cutoff_date=...)`` with ``status="ok"`` (possibly
with an empty, valid result list) or ``status="failed"`` with a ``failure_type``; never a bare list and
never an empty list standing in for an access failure. The async form runs the sync search in a worker
thread. The cutoff guard that a backtest relies on is *not* the backend's job: it is enforced by
:class:`agent_tools.executor.ToolExecutor`, because search-engine date filters leak.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from abc import ABC, abstractmethod
from typing import Any, ClassVar

from agent_schemas import SearchAccessError, SearchOutcome
from agent_schemas.dates import DateLike, utc_date

def to_date(value: DateLike | None, *, field: str = "cutoff_date") -> dt.date | None:
    """Normalise a cutoff given as a date, a datetime or an ISO string to a UTC :class:`datetime.date`
    (:func:`agent_schemas.dates.utc_date`: aware date-times are converted to UTC, naive ones are UTC).

    Raises
    ------
    ValueError
        If ``value`` is neither a date, a datetime, an ISO date string nor None (names ``field``).
    """
    if value is None:
        return None
    return utc_date(value, field=field)


def parse_published(value: Any) -> dt.date | None:
    """Parse a result's publication date into a UTC calendar date, or None when absent or unreadable.

    Accepts what :func:`agent_schemas.dates.utc_date` reads (dates, date-times, ISO 8601 strings),
    POSIX timestamps (seconds), and strings that start with ``YYYY-MM-DD``.
    """
    if value is None or value == "" or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        try:
            return dt.datetime.fromtimestamp(float(value), tz=dt.timezone.utc).date()
        except (OverflowError, OSError, ValueError):
            return None
    try:
        return utc_date(value)
    except ValueError:
        pass
    if isinstance(value, str):
        m = re.match(r"^(\d{4}-\d{2}-\d{2})\b", value.strip())
        if m:
            try:
                return dt.date.fromisoformat(m.group(1))
            except ValueError:
                return None
    return None


def trim_text(text: str, max_chars: int) -> str:
    """Collapse whitespace and cut ``text`` to at most ``max_chars`` characters at a word boundary ("…" appended)."""
    s = " ".join(str(text).split())
    if len(s) <= max_chars:
        return s
    cut = s[: max_chars - 1]
    if " " in cut[max_chars // 2:]:
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip(" ,;:") + "…"


class SearchClient(ABC):
    """Base class of search backends.

    Subclasses implement :meth:`search`; :meth:`asearch` runs it in a worker thread
    (:func:`asyncio.to_thread`). ``name`` is recorded as :attr:`SearchResult.source` prefix.
    """

    name: ClassVar[str] = "search"

    @abstractmethod
    def search(self, query: str, *, max_results: int = 5, cutoff_date: DateLike | None = None) -> SearchOutcome:
        """Search for ``query``.

        Parameters
        ----------
        query : str
            The query text (non-empty).
        max_results : int
            Maximum number of results wanted (count, >= 1).
        cutoff_date : date, optional
            Backtest information cutoff. A backend may use it as a hint (filter or time limit), but
            the :class:`~agent_tools.executor.ToolExecutor` is what enforces it.

        Returns
        -------
        SearchOutcome
            ``status="ok"`` with results (possibly none), or ``status="failed"`` with the failure class.
        """

    async def asearch(self, query: str, *, max_results: int = 5, cutoff_date: DateLike | None = None) -> SearchOutcome:
        """Async form of :meth:`search` (runs the synchronous search in a worker thread)."""
        return await asyncio.to_thread(self.search, query, max_results=max_results, cutoff_date=cutoff_date)


def require_ok(outcome: SearchOutcome) -> SearchOutcome:
    """Return ``outcome`` if it succeeded, else raise :class:`SearchAccessError` carrying its failure.

    For callers that prefer an exception to inspecting ``outcome.status``.

    Raises
    ------
    SearchAccessError
        With ``failure_type`` and ``is_transient`` copied from the failed outcome.
    """
    if outcome.ok:
        return outcome
    raise SearchAccessError(
        f"search for {outcome.attempted_query!r} failed ({outcome.failure_type}) after {outcome.attempts} "
        f"attempt(s): {outcome.error_message}",
        failure_type=outcome.failure_type or "unknown",
        is_transient=outcome.is_transient,
        query=outcome.attempted_query,
        attempts=outcome.attempts,
    )
