"""Record raw search outcomes for offline replay, and replay them.

:class:`RecordingSearchClient` wraps a backend and stores each raw :class:`SearchOutcome` (before the
:class:`~agent_tools.executor.ToolExecutor` guard) in the current context's sink
(:data:`SEARCH_RECORDING_SINK`, set per pipeline run). :class:`ReplaySearchClient` serves them back by
(query, max_results, cutoff date); the guard then applies again exactly as in the recorded run.
"""

from __future__ import annotations

import contextvars
import threading
from collections import defaultdict, deque

from agent_schemas import RecordedSearch, SearchOutcome
from agent_tools.search_base import DateLike, SearchClient, to_date

__all__ = ["SEARCH_RECORDING_SINK", "RecordedSearch", "RecordingSearchClient", "ReplaySearchClient"]

SEARCH_RECORDING_SINK: contextvars.ContextVar[list[RecordedSearch] | None] = contextvars.ContextVar(
    "search_recording_sink", default=None
)


def _key(query: str, max_results: int, cutoff: DateLike | None) -> tuple[str, int, str | None]:
    c = to_date(cutoff)
    return query, max_results, c.isoformat() if c else None


class RecordingSearchClient(SearchClient):
    """Delegate to ``inner`` and record each outcome into :data:`SEARCH_RECORDING_SINK` when set."""

    def __init__(self, inner: SearchClient) -> None:
        self.inner = inner
        self.name = inner.name  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"RecordingSearchClient({self.inner!r})"

    def search(self, query: str, *, max_results: int = 5, cutoff_date: DateLike | None = None) -> SearchOutcome:
        outcome = self.inner.search(query, max_results=max_results, cutoff_date=cutoff_date)
        sink = SEARCH_RECORDING_SINK.get()
        if sink is not None:
            q, k, c = _key(query, max_results, cutoff_date)
            sink.append(RecordedSearch(query=q, max_results=k, cutoff_date=c, outcome=outcome))
        return outcome


class ReplaySearchClient(SearchClient):
    """Serve recorded outcomes by (query, max_results, cutoff); repeated requests in recording order.

    A request that was not recorded gets a failed outcome (``failure_type="unknown"``) saying so: the
    replayed run diverged from the recorded one.
    """

    name = "replay"

    def __init__(self, records: list[RecordedSearch]) -> None:
        self._by_key: dict[tuple, deque[SearchOutcome]] = defaultdict(deque)
        for r in records:
            self._by_key[(r.query, r.max_results, r.cutoff_date)].append(r.outcome)
        self._lock = threading.Lock()

    def search(self, query: str, *, max_results: int = 5, cutoff_date: DateLike | None = None) -> SearchOutcome:
        key = _key(query, max_results, cutoff_date)
        with self._lock:
            queue = self._by_key.get(key)
            if queue:
                return queue.popleft()
        return SearchOutcome(status="failed", attempted_query=query, failure_type="unknown",
                             error_message="replay miss: this search was not recorded")
