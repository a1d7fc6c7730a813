"""DuckDuckGo / metasearch web search through the ``ddgs`` library, with classified failures.

``ddgs`` (v9) raises :class:`ddgs.exceptions.RatelimitException`, :class:`~ddgs.exceptions.TimeoutException`
or the base :class:`~ddgs.exceptions.DDGSException`. A query that matches nothing also arrives as
``DDGSException("No results found.")``: that one is a valid empty answer, not a failure. Every other
exception is classified (``rate_limited``, ``timeout``, ``network``, ``access_denied``, ``unknown``);
transient classes are retried here with bounded exponential backoff, and what remains is returned as
a failed :class:`SearchOutcome` with what was tried and what a caller could do instead.

No date filter is sent to the engines: ``ddgs`` time limits (``d``/``w``/``m``/``y``) are relative to
*now*, the opposite of a backtest cutoff, and custom date ranges are not supported by every engine.
The :class:`~agent_tools.executor.ToolExecutor` drops results published after the cutoff.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

from agent_schemas import MissingDependency, SearchOutcome, SearchResult
from agent_tools.search_base import DateLike, SearchClient, parse_published

_INSTALL_HINT = 'pip install "forecast-reconcile[search]"'
_NO_RESULTS = "no results found"
_TRANSIENT = {"rate_limited", "timeout", "network"}
_ACCESS_DENIED = re.compile(r"\b(401|403|forbidden|unauthori[sz]ed|access denied|captcha|blocked)\b", re.I)
_RATE_LIMIT = re.compile(r"\b(429|rate.?limit|too many requests)\b", re.I)
_TIMEOUT = re.compile(r"tim(ed|e)\s?out", re.I)
_NETWORK = re.compile(r"(connect|connection|dns|resolve|unreachable|reset by peer|network)", re.I)


def _import_ddgs() -> Any:
    try:
        import ddgs  # noqa: PLC0415
        import ddgs.exceptions  # noqa: F401, PLC0415
    except ImportError as exc:
        raise MissingDependency(f"DuckDuckGoSearch needs the 'ddgs' package: {_INSTALL_HINT}") from exc
    return ddgs


def classify_ddgs_error(exc: BaseException) -> str | None:
    """Map a ``ddgs`` exception to a :data:`FailureType`, or None when it means "no results".

    ``RatelimitException`` -> ``rate_limited``; ``TimeoutException`` -> ``timeout``; a base
    ``DDGSException`` is classified from its message (HTTP 429 / 403, connection errors); the
    library's ``"No results found."`` -> None (a valid empty answer).
    """
    ddgs = _import_ddgs()
    exc_mod = ddgs.exceptions
    msg = str(exc)
    if isinstance(exc, exc_mod.RatelimitException):
        return "rate_limited"
    if isinstance(exc, exc_mod.TimeoutException):
        return "timeout"
    if isinstance(exc, exc_mod.DDGSException) and msg.strip().rstrip(".").lower() == _NO_RESULTS:
        return None
    if _RATE_LIMIT.search(msg):
        return "rate_limited"
    if _TIMEOUT.search(msg) or isinstance(exc, TimeoutError):
        return "timeout"
    if _ACCESS_DENIED.search(msg):
        return "access_denied"
    if _NETWORK.search(msg) or isinstance(exc, ConnectionError):
        return "network"
    return "unknown"


class DuckDuckGoSearch(SearchClient):
    """Web search through ``ddgs`` (DuckDuckGo and other engines), returning :class:`SearchOutcome`.

    Parameters
    ----------
    backend : {"news", "text"}
        ``ddgs`` category: ``news`` gives dated results (``date``, ``title``, ``body``, ``url``,
        ``source``); ``text`` gives undated web pages (``title``, ``href``, ``body``).
    region : str
        ``ddgs`` region code, e.g. ``"wt-wt"`` (no region), ``"us-en"``.
    max_attempts : int
        Attempts per search, >= 1. Only transient failures (rate_limited, timeout, network) are retried.
    base_delay_s : float
        Backoff before retry ``i`` (1-based) is ``min(base_delay_s * 2**(i-1), max_delay_s)`` seconds.
    max_delay_s : float
        Cap of one backoff wait in seconds.
    timeout_s : int
        Per-request timeout passed to ``ddgs.DDGS`` (seconds).
    sleep : callable
        Called with the backoff in seconds (inject a recorder in tests).
    ddgs_factory : callable, optional
        Zero-argument callable returning an object with ``news(query, **kw)`` / ``text(query, **kw)``
        (default: ``ddgs.DDGS(timeout=timeout_s)``). Tests pass a fake here.

    Raises
    ------
    MissingDependency
        If ``ddgs`` is not installed (``pip install "forecast-reconcile[search]"``).
    ValueError
        For an unknown ``backend`` or ``max_attempts < 1``.
    """

    name = "ddgs"

    def __init__(
        self,
        backend: Literal["news", "text"] = "news",
        region: str = "wt-wt",
        max_attempts: int = 3,
        base_delay_s: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
        ddgs_factory: Callable[[], Any] | None = None,
        *,
        max_delay_s: float = 30.0,
        timeout_s: int = 10,
    ) -> None:
        if backend not in ("news", "text"):
            raise ValueError(f"backend must be 'news' or 'text', got {backend!r}")
        if int(max_attempts) < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts!r}")
        if base_delay_s < 0 or max_delay_s < 0:
            raise ValueError(f"base_delay_s and max_delay_s must be >= 0, got {base_delay_s!r}, {max_delay_s!r}")
        self._ddgs = _import_ddgs()
        self.backend = backend
        self.region = region
        self.max_attempts = int(max_attempts)
        self.base_delay_s = float(base_delay_s)
        self.max_delay_s = float(max_delay_s)
        self.timeout_s = timeout_s
        self._sleep = sleep
        self._factory = ddgs_factory or (lambda: self._ddgs.DDGS(timeout=self.timeout_s))

    def __repr__(self) -> str:
        return f"DuckDuckGoSearch(backend={self.backend!r}, region={self.region!r}, max_attempts={self.max_attempts})"

    @property
    def source(self) -> str:
        """Value recorded in :attr:`SearchResult.source`, e.g. ``"ddgs-news"``."""
        return f"{self.name}-{self.backend}"

    def backoff_s(self, retry: int) -> float:
        """Wait in seconds before retry number ``retry`` (1-based)."""
        return min(self.base_delay_s * 2 ** (retry - 1), self.max_delay_s)

    def normalise(self, item: Mapping[str, Any]) -> SearchResult:
        """Turn one ``ddgs`` result dict (text or news shape) into a :class:`SearchResult`."""
        url = item.get("url") or item.get("href") or ""
        source = item.get("source") or ""
        return SearchResult(
            title=str(item.get("title") or ""),
            url=str(url),
            snippet=str(item.get("body") or item.get("excerpt") or ""),
            published=parse_published(item.get("date")),
            source=f"{self.source}:{source}" if source else self.source,
        )

    def _call(self, query: str, max_results: int) -> list[dict[str, Any]]:
        client = self._factory()
        method = getattr(client, self.backend)
        return list(method(query, region=self.region, max_results=max_results) or [])

    def search(self, query: str, *, max_results: int = 5, cutoff_date: DateLike | None = None) -> SearchOutcome:
        """Search ``ddgs`` for ``query``; see the class docstring for retries and failure classes.

        ``cutoff_date`` is not sent to the engines (see the module docstring); it is only enforced by the
        :class:`~agent_tools.executor.ToolExecutor`.
        """
        if not isinstance(query, str) or not query.strip():
            raise ValueError(f"query must be a non-empty string, got {query!r}")
        if int(max_results) < 1:
            raise ValueError(f"max_results must be >= 1, got {max_results!r}")
        t0 = time.perf_counter()
        failure: str | None = None
        message = ""
        attempt = 0
        for attempt in range(1, self.max_attempts + 1):
            try:
                raw = self._call(query, int(max_results))
            except Exception as exc:  # noqa: BLE001 - every library failure is classified below
                failure = classify_ddgs_error(exc)
                message = f"{type(exc).__name__}: {exc}"[:500]
                if failure is None:  # the library's "No results found." is a valid empty answer
                    return SearchOutcome(status="ok", attempted_query=query, results=[], attempts=attempt,
                                         latency_s=time.perf_counter() - t0)
                if failure in _TRANSIENT and attempt < self.max_attempts:
                    self._sleep(self.backoff_s(attempt))
                    continue
                break
            results = [self.normalise(r) for r in raw[: int(max_results)] if isinstance(r, Mapping)]
            return SearchOutcome(status="ok", attempted_query=query, results=results, attempts=attempt,
                                 latency_s=time.perf_counter() - t0)
        assert failure is not None
        return SearchOutcome(
            status="failed",
            attempted_query=query,
            failure_type=failure,  # type: ignore[arg-type]
            is_transient=failure in _TRANSIENT,
            attempts=attempt,
            error_message=message,
            alternative_approaches=self._alternatives(query, failure),
            coverage_impact=(
                f"No {self.backend} results for {query!r}: evidence on this query is missing, not absent; "
                "treat it as a coverage gap, not as 'nothing happened'."
            ),
            latency_s=time.perf_counter() - t0,
        )

    def _alternatives(self, query: str, failure: str) -> list[str]:
        other = "text" if self.backend == "news" else "news"
        words = query.split()
        out = []
        if len(words) > 3:
            out.append(f"narrower query: {' '.join(words[:4])!r}")
        else:
            out.append("rephrase the query with the key entity and one event word")
        out.append(f"other backend: DuckDuckGoSearch(backend={other!r})")
        if failure in _TRANSIENT:
            out.append("later retry: the failure is transient (wait a minute or more)")
        out.append("offline corpus: LocalCorpusSearch.default()")
        return out
