"""DuckDuckGo / metasearch web search through ``ddgs`` 9, with failures read from the HTTP exchanges.

How ``ddgs`` 9 reports trouble: each engine sends its requests through ``ddgs.http_client.HttpClient``
(``primp`` underneath). A reply other than 200 makes the engine return nothing; a transport failure
(timeout, refused connection, DNS, TLS) raises inside the engine, and ``DDGS`` logs and keeps it. When no
engine produced a hit, ``DDGS`` raises ``DDGSException("No results found.")`` (no engine raised) or
``DDGSException(<last engine error>)``. It never raises ``RatelimitException``. Its exceptions therefore
cannot tell "every engine answered and found nothing" from "every engine refused us".

:class:`DuckDuckGoSearch` watches every HTTP exchange of a call instead: it wraps ``request`` of each
engine's ``HttpClient`` (and the engine's ``search``, to count its hits) in the ``DDGS`` instance it
creates for that call, and decides from what it saw:

=============================================  ===================================================
what the engines did                           outcome
=============================================  ===================================================
at least one hit                               ok, with the hits
every exchange answered 200, no hit            ok, zero results (a valid empty answer)
some exchange refused, no hit                  failed, typed from the refusals; retried when transient
hits that came after ``DDGS`` stopped waiting  failed, ``timeout`` (``DDGS`` drops late answers)
no hit and no exchange observed                failed, ``unknown`` (cannot tell empty from refused)
=============================================  ===================================================

An exchange is refused when it got HTTP 429 or 202 (DuckDuckGo's rate-limit page) -> ``rate_limited``;
401, 403, 451 -> ``access_denied``; 408 or a client timeout -> ``timeout``; 5xx -> ``server_error``; a
connection, DNS or TLS failure -> ``network``; any other status -> ``unknown``. When engines were refused
in different ways, the call's type is the first of ``rate_limited, server_error, timeout, network,
access_denied, unknown`` present (transient classes first: a retry may still get through). The error
message lists every engine's exchanges, so nothing is hidden behind the one type.

No date filter is sent to the engines: ``ddgs`` time limits (``d``/``w``/``m``/``y``) are relative to
*now*, the opposite of a backtest cutoff, and custom date ranges are not supported by every engine.
The :class:`~agent_tools.executor.ToolExecutor` drops results published after the cutoff.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from agent_schemas import MissingDependency, SearchOutcome, SearchResult
from agent_schemas.search import FailureType
from agent_tools.search_base import DateLike, SearchClient, parse_published

_INSTALL_HINT = 'pip install "forecast-reconcile[search]"'
_NO_RESULTS = "no results found"
_TRANSIENT = frozenset({"rate_limited", "server_error", "timeout", "network"})
#: Order in which a call's failure type is chosen among its engines' refusals (see the module docstring).
REFUSAL_PRECEDENCE: tuple[FailureType, ...] = (
    "rate_limited", "server_error", "timeout", "network", "access_denied", "unknown",
)
_STATUS_FAILURE: dict[int, FailureType] = {
    202: "rate_limited",  # html.duckduckgo.com answers its anomaly (rate-limit) page with 202
    429: "rate_limited",
    401: "access_denied",
    403: "access_denied",
    451: "access_denied",
    408: "timeout",
}
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s]+@")
_URL = re.compile(r"https?://\S+")
_REGION = re.compile(r"[a-z]{2}-[a-z]{2}")


def _import_ddgs() -> Any:
    try:
        import ddgs  # noqa: PLC0415
        import ddgs.exceptions  # noqa: F401, PLC0415
    except ImportError as exc:
        raise MissingDependency(f"DuckDuckGoSearch needs the 'ddgs' package: {_INSTALL_HINT}") from exc
    return ddgs


def classify_http_status(status: int) -> FailureType | None:
    """Failure class of one engine reply with HTTP ``status``, or None for 200 (the engine answered).

    429 and 202 -> ``rate_limited``; 401, 403, 451 -> ``access_denied``; 408 -> ``timeout``;
    5xx -> ``server_error``; any other status -> ``unknown``.
    """
    if status == 200:
        return None
    if status in _STATUS_FAILURE:
        return _STATUS_FAILURE[status]
    if 500 <= status <= 599:
        return "server_error"
    return "unknown"


def _exception_chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it wraps: ``__cause__``, ``__context__`` and exception arguments
    (``DDGS`` re-raises the last engine error as ``DDGSException(err)``)."""
    seen: list[BaseException] = []
    todo = [exc]
    while todo and len(seen) < 16:
        e = todo.pop()
        if any(e is s for s in seen):
            continue
        seen.append(e)
        todo.extend(x for x in (e.__cause__, e.__context__, *e.args) if isinstance(x, BaseException))
    return seen


def classify_ddgs_error(exc: BaseException) -> FailureType | None:
    """Map an exception raised by ``ddgs`` (or by its HTTP client) to a failure class, or None for "no results".

    Classified from the exception types along its chain (``DDGS`` wraps ``primp`` errors and re-raises the
    last engine error as an argument): a timeout (``ddgs`` ``TimeoutException``, ``primp.TimeoutError``)
    -> ``timeout``; ``RatelimitException`` -> ``rate_limited``; another ``primp`` transport error
    (connection, DNS, TLS, body) or a ``ConnectionError`` -> ``network``; the library's
    ``"No results found."`` -> None; anything else (an engine that could not read a 200 page) ->
    ``unknown``. A call's HTTP refusals are classified by :func:`classify_http_status` first; this
    function only decides what the exchanges cannot.
    """
    ddgs = _import_ddgs()
    import primp  # noqa: PLC0415 - installed with ddgs

    chain = _exception_chain(exc)
    if any(isinstance(e, (ddgs.exceptions.TimeoutException, primp.TimeoutError, TimeoutError)) for e in chain):
        return "timeout"
    if any(isinstance(e, ddgs.exceptions.RatelimitException) for e in chain):
        return "rate_limited"
    if any(isinstance(e, (primp.PrimpError, ConnectionError)) for e in chain):
        return "network"
    if isinstance(exc, ddgs.exceptions.DDGSException) and str(exc).strip().rstrip(".").lower() == _NO_RESULTS:
        return None
    return "unknown"


@dataclass(frozen=True)
class EngineExchange:
    """One HTTP request a ``ddgs`` engine made during a search, and what came back.

    ``status`` is the HTTP status (None when no reply arrived); ``error`` the client error
    (``"TimeoutError: operation timed out"``) when there was no reply; ``failure`` the failure class
    (None when the engine answered 200). ``url`` has no query string.
    """

    engine: str
    method: str
    url: str
    status: int | None
    error: str | None
    failure: FailureType | None

    def describe(self) -> str:
        """``"duckduckgo POST html.duckduckgo.com/html/ -> HTTP 429"``."""
        got = f"HTTP {self.status}" if self.status is not None else (self.error or "no reply")
        return f"{self.engine} {self.method} {self.url} -> {got}"


@dataclass
class CallLog:
    """What the engines of one ``DDGS`` call did: every HTTP exchange, and how many hits each engine returned."""

    exchanges: list[EngineExchange] = field(default_factory=list)
    hits: dict[str, int] = field(default_factory=dict)

    def describe(self) -> str:
        """Every exchange, ``"; "``-separated (see :meth:`EngineExchange.describe`)."""
        return "; ".join(x.describe() for x in self.exchanges)


def _short_url(url: str) -> str:
    parts = urlsplit(str(url))
    return f"{parts.netloc}{parts.path.split(';', 1)[0]}"


def _client_error(exc: BaseException) -> str:
    """``"ConnectError: Connection refused (os error 111)"``: the innermost ``primp`` error and its last reason."""
    import primp  # noqa: PLC0415 - installed with ddgs

    inner = next((e for e in reversed(_exception_chain(exc)) if isinstance(e, primp.PrimpError)), exc)
    reason = _URL.sub("", str(inner).split(" > ")[-1]).strip(" :")
    return f"{type(inner).__name__}: {reason}"[:100]


def _observe_engine(engine: Any, log: CallLog) -> None:
    """Record ``engine``'s HTTP exchanges and returned hits into ``log`` (wraps its ``http_client.request``
    and its ``search`` on the instance, once)."""
    if getattr(engine, "_forecast_reconcile_observed", False):
        return
    http = engine.http_client
    send = http.request
    search = engine.search

    def request(method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        try:
            resp = send(method, url, *args, **kwargs)
        except Exception as exc:
            log.exchanges.append(EngineExchange(engine.name, str(method), _short_url(url), None, _client_error(exc),
                                                classify_ddgs_error(exc) or "unknown"))
            raise
        log.exchanges.append(EngineExchange(engine.name, str(method), _short_url(url), resp.status_code, None,
                                            classify_http_status(resp.status_code)))
        return resp

    def observed_search(*args: Any, **kwargs: Any) -> Any:
        found = search(*args, **kwargs)
        if found:
            log.hits[engine.name] = log.hits.get(engine.name, 0) + len(found)
        return found

    http.request = request
    engine.search = observed_search
    engine._forecast_reconcile_observed = True


def observe_exchanges(client: Any, log: CallLog) -> None:
    """Record what every engine of the ``ddgs.DDGS`` instance ``client`` does into ``log``.

    ``DDGS`` (9.x) creates and caches its engines in ``_get_engines``, then runs ``engine.search`` in a
    thread pool; each engine owns an ``HttpClient``. This wraps that method on the instance so every
    engine it hands out has its requests and hits observed. Nothing is patched at class or module level,
    so concurrent searches do not share a log.
    """
    get_engines = client._get_engines

    def observed_engines(*args: Any, **kwargs: Any) -> Any:
        engines = get_engines(*args, **kwargs)
        for engine in engines:
            _observe_engine(engine, log)
        return engines

    client._get_engines = observed_engines


def refusal_type(exchanges: list[EngineExchange]) -> FailureType | None:
    """The call's failure class from its engines' refused exchanges (first in :data:`REFUSAL_PRECEDENCE`), or None."""
    refused = {x.failure for x in exchanges if x.failure is not None}
    return next((f for f in REFUSAL_PRECEDENCE if f in refused), None)


class DuckDuckGoSearch(SearchClient):
    """Web search through ``ddgs`` (DuckDuckGo and other engines), returning :class:`SearchOutcome`.

    Failures are read from the HTTP exchanges of each call (see the module docstring): a rate limit is a
    failed ``rate_limited`` outcome, never "no results".

    Parameters
    ----------
    backend : {"news", "text"}
        ``ddgs`` category: ``news`` gives dated results (``date``, ``title``, ``body``, ``url``,
        ``source``); ``text`` gives undated web pages (``title``, ``href``, ``body``).
    region : str
        ``ddgs`` region code ``"<country>-<language>"``, e.g. ``"us-en"`` (the ``ddgs`` default), ``"uk-en"``.
    max_attempts : int
        Attempts per search, >= 1. Only transient failures (rate_limited, server_error, timeout,
        network) are retried.
    base_delay_s : float
        Backoff before retry ``i`` (1-based) is ``min(base_delay_s * 2**(i-1), max_delay_s)`` seconds.
    sleep : callable
        Called with the backoff in seconds (inject a recorder in tests).
    max_delay_s : float
        Cap of one backoff wait in seconds.
    timeout_s : float
        Per-request timeout in seconds, passed to ``ddgs.DDGS`` (also how long it waits for each batch of engines).
    engines : str
        ``ddgs`` engines to ask, comma-separated (``ddgs``'s ``backend=`` argument), e.g. ``"duckduckgo"``;
        ``"auto"`` (default) asks them all.
    proxy : str, optional
        Proxy for ``ddgs`` (``http``, ``https``, ``socks5``; ``"tb"`` for Tor Browser). Never shown in
        reprs or error messages. Default: ``ddgs`` reads ``DDGS_PROXY``.
    verify : bool or str
        TLS verification: True, False, or the path of a PEM file of trusted CA certificates.

    Raises
    ------
    MissingDependency
        If ``ddgs`` is not installed (``pip install "forecast-reconcile[search]"``).
    ValueError
        For an unknown ``backend``, a malformed ``region``, ``max_attempts < 1``, negative delays or a
        non-positive timeout.
    """

    name = "ddgs"

    def __init__(
        self,
        backend: Literal["news", "text"] = "news",
        region: str = "us-en",
        max_attempts: int = 3,
        base_delay_s: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
        *,
        max_delay_s: float = 30.0,
        timeout_s: float = 10.0,
        engines: str = "auto",
        proxy: str | None = None,
        verify: bool | str = True,
    ) -> None:
        if backend not in ("news", "text"):
            raise ValueError(f"backend must be 'news' or 'text', got {backend!r}")
        if not isinstance(region, str) or not _REGION.fullmatch(region):
            raise ValueError(f"region must look like 'us-en' (<country>-<language>), got {region!r}")
        if int(max_attempts) < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts!r}")
        if base_delay_s < 0 or max_delay_s < 0:
            raise ValueError(f"base_delay_s and max_delay_s must be >= 0, got {base_delay_s!r}, {max_delay_s!r}")
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0 seconds, got {timeout_s!r}")
        if not isinstance(engines, str) or not engines.strip():
            raise ValueError(f"engines must be a non-empty string such as 'auto' or 'duckduckgo', got {engines!r}")
        self._ddgs = _import_ddgs()
        self.backend = backend
        self.region = region
        self.max_attempts = int(max_attempts)
        self.base_delay_s = float(base_delay_s)
        self.max_delay_s = float(max_delay_s)
        self.timeout_s = float(timeout_s)
        self.engines = engines
        self._proxy = proxy
        self._verify = verify
        self._sleep = sleep

    def __repr__(self) -> str:
        return (f"DuckDuckGoSearch(backend={self.backend!r}, region={self.region!r}, engines={self.engines!r}, "
                f"max_attempts={self.max_attempts})")

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

    def _call(self, query: str, max_results: int, log: CallLog) -> list[dict[str, Any]]:
        client = self._ddgs.DDGS(proxy=self._proxy, timeout=self.timeout_s, verify=self._verify)
        observe_exchanges(client, log)
        method = getattr(client, self.backend)
        return list(method(query, region=self.region, max_results=max_results, backend=self.engines) or [])

    def _redact(self, text: str) -> str:
        if self._proxy:
            text = text.replace(self._proxy, "<proxy>")
        return _URL_CREDENTIALS.sub("***@", text)

    def diagnose(self, exc: BaseException, log: CallLog) -> tuple[FailureType | None, str]:
        """Failure class and message of a call that raised ``exc`` after the engine activity in ``log``.

        Returns ``(None, "")`` when every engine answered 200 and found nothing (a valid empty answer).
        Hits that an engine returned after ``DDGS`` stopped waiting for it (it waits ``timeout_s`` per
        batch of engines, then drops what is late) make a ``timeout``, not an empty answer.
        """
        refused = refusal_type(log.exchanges)
        if refused is not None:
            return refused, f"engines refused: {log.describe()}"
        failure = classify_ddgs_error(exc)
        if failure is None and log.hits:
            late = ", ".join(f"{name} ({n})" for name, n in sorted(log.hits.items()))
            return "timeout", (f"hits arrived after ddgs stopped waiting ({self.timeout_s:g} s per batch of engines): "
                               f"{late}; exchanges: {log.describe()}")
        if failure is None and log.exchanges:
            return None, ""
        if failure is None:
            return "unknown", ("ddgs reported no results but no engine HTTP exchange was observed, so "
                               "'nothing found' cannot be told from 'refused'")
        seen = log.describe()
        return failure, f"{type(exc).__name__}: {exc}" + (f"; exchanges: {seen}" if seen else "")

    def search(self, query: str, *, max_results: int = 5, cutoff_date: DateLike | None = None) -> SearchOutcome:
        """Search ``ddgs`` for ``query``; see the module docstring for how outcomes are decided.

        ``cutoff_date`` is not sent to the engines (see the module docstring); it is only enforced by the
        :class:`~agent_tools.executor.ToolExecutor`.
        """
        if not isinstance(query, str) or not query.strip():
            raise ValueError(f"query must be a non-empty string, got {query!r}")
        if int(max_results) < 1:
            raise ValueError(f"max_results must be >= 1, got {max_results!r}")
        t0 = time.perf_counter()
        failure: FailureType | None = None
        message = ""
        attempt = 0
        for attempt in range(1, self.max_attempts + 1):
            log = CallLog()
            try:
                raw = self._call(query, int(max_results), log)
            except Exception as exc:  # noqa: BLE001 - every library failure is classified below
                failure, message = self.diagnose(exc, log)
                if failure is None:  # every engine answered and found nothing: a valid empty answer
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
            failure_type=failure,
            is_transient=failure in _TRANSIENT,
            attempts=attempt,
            error_message=self._redact(message)[:2000],
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
