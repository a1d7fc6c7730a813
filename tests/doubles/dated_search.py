"""A scripted search backend holding dated documents: it answers every query with all of its documents, as
DuckDuckGo does (the cutoff date is a hint no engine is sent; :class:`agent_tools.ToolExecutor` is what enforces
it), and records each query with the cutoff date it was sent, so a test sees both what a run asked for and what
its agents were shown."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Sequence

from agent_schemas import SearchOutcome, SearchResult
from agent_schemas.dates import DateLike
from agent_tools.search_base import SearchClient, to_date

__all__ = ["DatedDocuments"]


class DatedDocuments(SearchClient):
    """A backend answering every query with ``documents`` (the first ``max_results``), whatever the cutoff.

    Parameters
    ----------
    documents : sequence of SearchResult
        The documents, each with its ``published`` date (or None: undated).

    Attributes
    ----------
    calls : list of (str, date or None)
        Every query with the cutoff date it was sent, in the order they arrived (searches run in worker threads).
    """

    name = "dated"

    def __init__(self, documents: Sequence[SearchResult]) -> None:
        self.documents = list(documents)
        self.calls: list[tuple[str, dt.date | None]] = []
        self._lock = threading.Lock()

    def search(self, query: str, *, max_results: int = 5, cutoff_date: DateLike | None = None) -> SearchOutcome:
        """Every document (at most ``max_results``), as an ok outcome; records ``(query, cutoff_date)``.

        Raises
        ------
        ValueError
            For an empty query, ``max_results < 1`` or an unreadable ``cutoff_date``, as the bundled backends do.
        """
        if not query.strip() or max_results < 1:
            raise ValueError(f"query must be non-empty and max_results >= 1, got {query!r}, {max_results}")
        cutoff = to_date(cutoff_date)
        with self._lock:
            self.calls.append((query, cutoff))
        return SearchOutcome(status="ok", attempted_query=query, results=self.documents[:max_results])
