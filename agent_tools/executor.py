"""The tool executor: the one place where the backtest leakage guard is enforced on search results.

Search-engine date filters leak (re-dated pages, relative time limits, undated pages), so every result
that reaches an agent passes through :meth:`ToolExecutor.execute_search`:

* a result published **after** the cutoff date is dropped (``published > cutoff_date``); a result
  published **on** the cutoff date is kept, because ForecastBench's ``forecast_due_date`` is the last
  day whose information may be used (see :attr:`agent_schemas.Question.forecast_date`);
* an undated result follows ``undated_policy``: ``"drop"`` (default, fail closed), ``"keep"``, or
  ``"flag"`` (kept with :attr:`SearchResult.flagged_undated` set);
* titles and snippets are trimmed at this boundary;
* a failed search stays failed (never turned into an empty result); its partial results are guarded too.

The executor keeps running totals in :attr:`ToolExecutor.audit` for the harness's leakage audit.
"""

from __future__ import annotations

import threading
import time
from datetime import date as dt_date
from typing import Literal

from agent_schemas import SearchAccessError, SearchOutcome, SearchResult
from agent_tools.search_base import DateLike, SearchClient, to_date, trim_text

UndatedPolicy = Literal["drop", "keep", "flag"]
_AUDIT_KEYS = ("searches", "failed", "results_returned", "dropped_after_cutoff", "dropped_undated", "flagged_undated")


class ToolExecutor:
    """Run searches for agents with the cutoff-date leakage guard, output trimming and an audit tally.

    Parameters
    ----------
    search : SearchClient
        The backend (e.g. :class:`~agent_tools.local_corpus.LocalCorpusSearch`,
        :class:`~agent_tools.ddg.DuckDuckGoSearch`).
    undated_policy : {"drop", "keep", "flag"}
        What to do with results that have no publication date when a cutoff is given. Without a
        cutoff, undated results are kept unchanged.
    snippet_chars : int
        Maximum snippet length in characters after trimming.
    title_chars : int
        Maximum title length in characters after trimming.
    max_results_cap : int
        Upper bound on ``max_results`` an agent may ask for (count).
    overfetch : int
        When a cutoff is given, the backend is asked for ``min(max_results * overfetch, max_results_cap)``
        results, so that dropping late ones still leaves up to ``max_results``.

    Attributes
    ----------
    audit : dict of str to int
        Running totals: ``searches``, ``failed``, ``results_returned``, ``dropped_after_cutoff``,
        ``dropped_undated``, ``flagged_undated`` (counts over the executor's lifetime).
    """

    def __init__(
        self,
        search: SearchClient,
        *,
        undated_policy: UndatedPolicy = "drop",
        snippet_chars: int = 300,
        title_chars: int = 200,
        max_results_cap: int = 10,
        overfetch: int = 2,
    ) -> None:
        if undated_policy not in ("drop", "keep", "flag"):
            raise ValueError(f"undated_policy must be 'drop', 'keep' or 'flag', got {undated_policy!r}")
        if snippet_chars < 20:
            raise ValueError(f"snippet_chars must be >= 20, got {snippet_chars!r}")
        if title_chars < 10:
            raise ValueError(f"title_chars must be >= 10, got {title_chars!r}")
        if max_results_cap < 1:
            raise ValueError(f"max_results_cap must be >= 1, got {max_results_cap!r}")
        if overfetch < 1:
            raise ValueError(f"overfetch must be >= 1, got {overfetch!r}")
        self.search = search
        self.undated_policy: UndatedPolicy = undated_policy
        self.snippet_chars = int(snippet_chars)
        self.title_chars = int(title_chars)
        self.max_results_cap = int(max_results_cap)
        self.overfetch = int(overfetch)
        self.audit: dict[str, int] = {k: 0 for k in _AUDIT_KEYS}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (f"ToolExecutor(search={self.search!r}, undated_policy={self.undated_policy!r}, "
                f"snippet_chars={self.snippet_chars}, max_results_cap={self.max_results_cap})")

    # --- validation --------------------------------------------------------------------------------
    def _validate(self, query: str, max_results: int) -> tuple[str, int]:
        if not isinstance(query, str) or not query.strip():
            raise ValueError(f"query must be a non-empty string, got {query!r}")
        if isinstance(max_results, bool) or not isinstance(max_results, int) or max_results < 1:
            raise ValueError(f"max_results must be an integer >= 1, got {max_results!r}")
        return " ".join(query.split()), min(max_results, self.max_results_cap)

    # --- guard ---------------------------------------------------------------------------------------
    def guard(self, results: list[SearchResult], cutoff: dt_date | None) -> tuple[list[SearchResult], dict[str, int]]:
        """Apply the cutoff guard and trimming to ``results``; return kept results and drop counts.

        ``cutoff=None`` keeps every result (only trimming applies).
        """
        kept: list[SearchResult] = []
        counts = {"dropped_after_cutoff": 0, "dropped_undated": 0, "flagged_undated": 0}
        for r in results:
            flagged = False
            if cutoff is not None:
                if r.published is None:
                    if self.undated_policy == "drop":
                        counts["dropped_undated"] += 1
                        continue
                    if self.undated_policy == "flag":
                        counts["flagged_undated"] += 1
                        flagged = True
                elif r.published > cutoff:
                    counts["dropped_after_cutoff"] += 1
                    continue
            kept.append(r.model_copy(update={
                "title": trim_text(r.title, self.title_chars),
                "url": r.url.strip(),
                "snippet": trim_text(r.snippet, self.snippet_chars),
                "flagged_undated": flagged or r.flagged_undated,
            }))
        return kept, counts

    # --- entry points ---------------------------------------------------------------------------------
    def _finish(self, outcome: SearchOutcome, query: str, max_results: int, cutoff: dt_date | None, t0: float) -> SearchOutcome:
        results, counts = self.guard(list(outcome.results), cutoff)
        partial, pcounts = self.guard(list(outcome.partial_results), cutoff)
        for k in counts:
            counts[k] += pcounts[k]
        results = results[:max_results]
        # flagged undated results are counted among those returned, not among those cut by max_results
        counts["flagged_undated"] = sum(r.flagged_undated for r in results) + sum(r.flagged_undated for r in partial)
        guarded = outcome.model_copy(update={
            "results": results,
            "partial_results": partial,
            "cutoff_date": cutoff,
            "latency_s": max(outcome.latency_s, time.perf_counter() - t0),
            **counts,
        })
        with self._lock:
            self.audit["searches"] += 1
            self.audit["failed"] += 0 if guarded.ok else 1
            self.audit["results_returned"] += len(results)
            for k, v in counts.items():
                self.audit[k] += v
        return guarded

    def _fetch_k(self, max_results: int, cutoff: dt_date | None) -> int:
        return max_results if cutoff is None else min(max_results * self.overfetch, self.max_results_cap)

    @staticmethod
    def _from_access_error(query: str, exc: SearchAccessError) -> SearchOutcome:
        return SearchOutcome(
            status="failed", attempted_query=query, failure_type=exc.failure_type,  # type: ignore[arg-type]
            is_transient=exc.is_transient, error_message=exc.message[:500],
            alternative_approaches=["later retry" if exc.is_transient else "another search backend"],
            coverage_impact=f"no results for {query!r}: evidence on this query is missing, not absent",
        )

    def execute_search(self, query: str, *, max_results: int = 5, cutoff_date: DateLike | None = None) -> SearchOutcome:
        """Search with the leakage guard.

        Parameters
        ----------
        query : str
            Non-empty query; whitespace is collapsed.
        max_results : int
            Results wanted (count, >= 1); capped at ``max_results_cap``.
        cutoff_date : date, datetime or ISO str, optional
            Information cutoff: results with ``published > cutoff_date`` are dropped; ``published ==
            cutoff_date`` is kept. Undated results follow ``undated_policy``.

        Returns
        -------
        SearchOutcome
            ``cutoff_date``, ``dropped_after_cutoff``, ``dropped_undated`` and ``flagged_undated`` set;
            a failed backend outcome stays failed. A :class:`SearchAccessError` raised by the backend
            becomes a failed outcome.

        Raises
        ------
        ValueError
            For an empty ``query``, ``max_results < 1`` or an unreadable ``cutoff_date`` (names the field).
        """
        q, k = self._validate(query, max_results)
        cutoff = to_date(cutoff_date)
        t0 = time.perf_counter()
        try:
            outcome = self.search.search(q, max_results=self._fetch_k(k, cutoff), cutoff_date=cutoff)
        except SearchAccessError as exc:
            outcome = self._from_access_error(q, exc)
        return self._finish(outcome, q, k, cutoff, t0)

    async def aexecute_search(self, query: str, *, max_results: int = 5, cutoff_date: DateLike | None = None) -> SearchOutcome:
        """Async form of :meth:`execute_search` (uses the backend's ``asearch``)."""
        q, k = self._validate(query, max_results)
        cutoff = to_date(cutoff_date)
        t0 = time.perf_counter()
        try:
            outcome = await self.search.asearch(q, max_results=self._fetch_k(k, cutoff), cutoff_date=cutoff)
        except SearchAccessError as exc:
            outcome = self._from_access_error(q, exc)
        return self._finish(outcome, q, k, cutoff, t0)

    def reset_audit(self) -> dict[str, int]:
        """Return the current totals and reset them to zero."""
        with self._lock:
            out = dict(self.audit)
            self.audit = {k: 0 for k in _AUDIT_KEYS}
        return out
