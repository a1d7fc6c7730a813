"""DuckDuckGoSearch through the real ddgs 9 engines, primp client and TLS, against the fake web on 127.0.0.1.

Nothing of ddgs is patched: every engine's real request goes through :class:`tests.tools.ddgs_web.FakeWeb`,
which answers as the engine's host would (hits, an empty page, 429, 202, 403, 5xx, no reply, a dropped
connection). The outcome table below is the contract of the search envelope for each of them.
"""

import asyncio
import datetime as dt
import socket

import pytest
import trustme
from ddgs.engines import ENGINES
from ddgs.exceptions import DDGSException, TimeoutException

from agent_tools import DuckDuckGoSearch, ToolExecutor, classify_ddgs_error
from agent_tools.ddg import CallLog, EngineExchange, classify_http_status
from tests.tools.ddgs_web import ENGINE_HOSTS, FakeWeb

QUERY = "fed rate cut september 2024"
ENGINE_KEYS = {backend: {k for k in ENGINE_HOSTS.values() if k.startswith(backend)} for backend in ("text", "news")}


@pytest.fixture(scope="module")
def ca():
    return trustme.CA()


@pytest.fixture(scope="module")
def ca_path(ca, tmp_path_factory):
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return str(path)


@pytest.fixture
def web(ca, ca_path):
    w = FakeWeb(ca, ca_path)
    yield w
    w.close()


def client(web, sleeps, **kw):
    kw.setdefault("max_attempts", 2)
    kw.setdefault("timeout_s", 5.0)
    return DuckDuckGoSearch(proxy=web.proxy_url, verify=web.ca_path, sleep=sleeps.append, **kw)


def unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_fake_web_plays_every_engine_ddgs_enables():
    # a ddgs upgrade that adds an engine must add its recorded host here, or the table below proves less
    for backend in ("text", "news"):
        assert {f"{backend}-{name}" for name in ENGINES[backend]} == ENGINE_KEYS[backend]


#                every engine does   status    failure_type    transient  attempts (max 2)
OUTCOMES = {
    "hits":      ("hits",            "ok",     None,           False,     1),
    "empty":     ("empty",           "ok",     None,           False,     1),
    "429":       (429,               "failed", "rate_limited", True,      2),
    "202":       (202,               "failed", "rate_limited", True,      2),
    "403":       (403,               "failed", "access_denied", False,    1),
    "500":       (500,               "failed", "server_error", True,      2),
    "503":       (503,               "failed", "server_error", True,      2),
    "timeout":   ("timeout",         "failed", "timeout",      True,      2),
    "dropped":   ("drop",            "failed", "network",      True,      2),
}


@pytest.mark.parametrize("backend", ["text", "news"])
@pytest.mark.parametrize("outcome", list(OUTCOMES))
def test_outcome_table_through_the_real_engines(web, backend, outcome):
    behaviour, status, failure, transient, attempts = OUTCOMES[outcome]
    web.default = behaviour
    sleeps = []
    out = client(web, sleeps, backend=backend, timeout_s=0.1 if behaviour == "timeout" else 5.0).search(QUERY, max_results=5)
    assert (out.status, out.failure_type, out.is_transient, out.attempts) == (status, failure, transient, attempts)
    assert sleeps == [1.0] * (attempts - 1)
    assert web.unknown_hosts == []
    if outcome == "hits":  # how many depends on which engines ddgs drew first (it shuffles them)
        assert out.results and all(r.url.startswith("https://") and r.title and r.snippet for r in out.results)
        return
    assert out.results == []
    assert web.engines_seen() == ENGINE_KEYS[backend]  # every engine was asked before deciding
    if status == "failed":
        for key in ENGINE_KEYS[backend]:  # the message names every refused engine
            assert key.split("-", 1)[1] in out.error_message
        assert "missing, not absent" in out.coverage_impact
        assert ("later retry: the failure is transient (wait a minute or more)" in out.alternative_approaches) == transient


@pytest.mark.parametrize("backend", ["text", "news"])
def test_refused_connection_is_a_transient_network_failure(ca_path, backend):
    sleeps = []
    search = DuckDuckGoSearch(backend=backend, proxy=f"http://127.0.0.1:{unused_port()}", verify=ca_path,
                              sleep=sleeps.append, max_attempts=3, base_delay_s=0.5)
    out = search.search(QUERY)
    assert (out.status, out.failure_type, out.is_transient, out.attempts, sleeps) == ("failed", "network", True, 3, [0.5, 1.0])
    assert "Connection refused" in out.error_message


def test_text_hits_are_normalised(web):
    web.behave(**{"text-duckduckgo": "hits"})  # every other engine answers an empty page
    out = client(web, [], backend="text").search(QUERY, max_results=5)
    assert out.ok and out.attempts == 1
    assert [(r.title, r.url, r.published, r.source) for r in out.results] == [
        ("Federal Reserve issues FOMC statement",
         "https://www.federalreserve.gov/newsevents/pressreleases/monetary20240918a.htm", None, "ddgs-text"),
        ("Fed cuts rates by half a percentage point | Reuters",
         "https://www.reuters.com/markets/us/fed-cuts-rates-by-half-point-2024-09-18/", None, "ddgs-text"),
        ("Fed makes first rate cut in four years | AP News",
         "https://apnews.com/article/federal-reserve-interest-rate-cut-inflation-0a5d0e3b", None, "ddgs-text"),
    ]  # the engine drops DuckDuckGo's y.js ad
    assert out.results[0].snippet.startswith("The Committee decided to lower the target range for the federal funds rate")


def test_news_results_are_normalised_with_utc_dates(web):
    web.behave(**{"news-duckduckgo": "hits"})
    out = client(web, [], backend="news").search(QUERY, max_results=5)
    assert [(r.title, r.published, r.source) for r in out.results] == [
        ("Fed cuts rates by half a point", dt.date(2024, 9, 18), "ddgs-news:Reuters"),  # 1726686180 = 18 Sep 19:03 UTC
        ("Fed meeting starts with a cut all but certain", dt.date(2024, 9, 17), "ddgs-news:CNBC"),  # 17 Sep 22:00 UTC
    ]
    assert out.results[0].snippet == "The Federal Reserve on Wednesday cut its benchmark rate by half a percentage point."


@pytest.mark.parametrize("backend, engines, default, expected", [
    # one engine rate-limited, the others found hits: the hits are the answer
    ("text", {"text-duckduckgo": 429}, "hits", ("ok", None)),
    ("news", {"news-duckduckgo": 429, "news-yahoo": "hits"}, "empty", ("ok", None)),
    ("text", {"text-duckduckgo": "hits"}, 503, ("ok", None)),
    # one engine refused, the others found nothing: the refused one might have; a gap, not "nothing happened"
    ("text", {"text-duckduckgo": 429}, "empty", ("failed", "rate_limited")),
    ("text", {"text-brave": 403}, "empty", ("failed", "access_denied")),
    ("news", {"news-bing": "timeout"}, "empty", ("failed", "timeout")),
    ("news", {"news-bing": 403, "news-duckduckgo": 429}, "empty", ("failed", "rate_limited")),
    ("news", {"news-yahoo": 403, "news-bing": 502}, "empty", ("failed", "server_error")),
])
def test_mixed_engines(web, backend, engines, default, expected):
    web.default = default
    web.behave(**engines)
    timeout_s = 0.1 if "timeout" in engines.values() else 5.0
    out = client(web, [], backend=backend, timeout_s=timeout_s).search(QUERY, max_results=5)
    assert (out.status, out.failure_type) == expected
    if out.ok:
        assert out.results and not any("duckduckgo" in r.url for r in out.results)
        if engines.get("news-yahoo") == "hits":
            assert [r.url for r in out.results] == [
                "https://www.bloomberg.com/news/articles/2024-09-18/fed-cuts-rates-by-half-point"]
    else:
        for key, behaviour in engines.items():  # the refused engines and how, in the message
            engine = key.split("-", 1)[1]
            assert engine in out.error_message
            if isinstance(behaviour, int):
                assert f"{engine} GET" in out.error_message or f"{engine} POST" in out.error_message
                assert f"HTTP {behaviour}" in out.error_message


def test_rate_limit_lifted_during_backoff_gives_results_on_retry(web):
    web.default = 429
    sleeps = []

    def backoff(s):
        sleeps.append(s)
        web.default = "hits"

    search = DuckDuckGoSearch(backend="news", proxy=web.proxy_url, verify=web.ca_path, sleep=backoff, base_delay_s=2.0)
    out = search.search(QUERY, max_results=3)
    assert out.ok and out.attempts == 2 and sleeps == [2.0]
    assert 1 <= len(out.results) <= 3  # how many depends on which engines ddgs drew first (it shuffles them)


def test_backoff_is_capped(web):
    web.default = 429
    sleeps = []
    out = client(web, sleeps, backend="news", max_attempts=4, base_delay_s=10.0, max_delay_s=15.0).search("bond")
    assert (out.failure_type, out.attempts, sleeps) == ("rate_limited", 4, [10.0, 15.0, 15.0])


def test_engines_and_region_reach_ddgs(web):
    out = client(web, [], backend="news", engines="bing", region="uk-en").search(QUERY)
    assert out.ok and web.engines_seen() == {"news-bing"}
    assert "cc=uk&setlang=en" in web.seen[0].path


def test_failure_suggests_alternatives(web):
    web.default = 429
    out = client(web, [], backend="news").search(QUERY)
    alts = " | ".join(out.alternative_approaches)
    assert "narrower query: 'fed rate cut september'" in alts and "backend='text'" in alts and "later retry" in alts
    assert "LocalCorpusSearch.default()" in alts


def test_hits_that_ddgs_dropped_as_late_are_a_timeout_not_an_empty_answer():
    # DDGS waits timeout_s per batch of engines and drops answers that come later, then says "No results found."
    late = CallLog(exchanges=[EngineExchange("duckduckgo", "POST", "html.duckduckgo.com/html/", 200, None, None)],
                   hits={"duckduckgo": 3})
    failure, message = DuckDuckGoSearch(timeout_s=0.5).diagnose(DDGSException("No results found."), late)
    assert failure == "timeout"
    assert message.startswith("hits arrived after ddgs stopped waiting (0.5 s per batch of engines): duckduckgo (3)")
    answered = CallLog(exchanges=late.exchanges)
    assert DuckDuckGoSearch().diagnose(DDGSException("No results found."), answered) == (None, "")


def test_no_observed_exchange_is_not_reported_as_empty(web, monkeypatch):
    # if a ddgs release stopped handing out engines through the hook, "no results" could hide refusals
    monkeypatch.setattr("agent_tools.ddg.observe_exchanges", lambda client, log: None)
    out = client(web, [], backend="news").search(QUERY)
    assert (out.status, out.failure_type, out.is_transient) == ("failed", "unknown", False)
    assert "no engine HTTP exchange was observed" in out.error_message


def test_proxy_credentials_stay_out_of_messages_and_repr(ca_path):
    secret = "s3cr3t-proxy-pass"
    search = DuckDuckGoSearch(backend="news", proxy=f"http://user:{secret}@127.0.0.1:{unused_port()}",
                              verify=ca_path, sleep=lambda s: None, max_attempts=1)
    out = search.search(QUERY)
    assert out.failure_type == "network"
    assert secret not in out.model_dump_json() and secret not in repr(search)


def test_classify_http_status():
    table = {200: None, 202: "rate_limited", 429: "rate_limited", 401: "access_denied", 403: "access_denied",
             451: "access_denied", 408: "timeout", 500: "server_error", 502: "server_error", 503: "server_error",
             504: "server_error", 204: "unknown", 400: "unknown", 404: "unknown"}
    assert {s: classify_http_status(s) for s in table} == table


def test_classify_ddgs_error_follows_the_wrapped_errors(ca_path):
    from ddgs.http_client import HttpClient

    # the exceptions ddgs's HTTP client really raises, and DDGS's re-raise of the last engine error
    http = HttpClient(proxy=f"http://127.0.0.1:{unused_port()}", timeout=2, verify=ca_path)
    with pytest.raises(DDGSException) as refused:
        http.get("https://duckduckgo.com/")
    assert classify_ddgs_error(refused.value) == "network"
    assert classify_ddgs_error(DDGSException(refused.value)) == "network"
    assert classify_ddgs_error(DDGSException(TimeoutException("operation timed out"))) == "timeout"
    assert classify_ddgs_error(DDGSException("No results found.")) is None
    assert classify_ddgs_error(DDGSException("_extract_vqd() query='x' Could not extract vqd.")) == "unknown"
    assert classify_ddgs_error(ValueError("boom")) == "unknown"


def test_validation():
    with pytest.raises(ValueError, match="backend"):
        DuckDuckGoSearch(backend="images")
    with pytest.raises(ValueError, match="region"):
        DuckDuckGoSearch(region="wt")
    with pytest.raises(ValueError, match="max_attempts"):
        DuckDuckGoSearch(max_attempts=0)
    with pytest.raises(ValueError, match="timeout_s"):
        DuckDuckGoSearch(timeout_s=0)
    with pytest.raises(ValueError, match="engines"):
        DuckDuckGoSearch(engines=" ")
    with pytest.raises(ValueError, match="query"):
        DuckDuckGoSearch().search("   ")


def test_async_search(web):
    web.default = "hits"
    out = asyncio.run(client(web, [], backend="news").asearch(QUERY, max_results=1))
    assert out.ok and len(out.results) == 1


def test_leaky_engine_is_guarded_by_executor(web):
    # the engine ignores the cutoff and returns a story from after it; the executor drops it
    web.behave(**{"news-duckduckgo": "hits"})
    out = ToolExecutor(client(web, [], backend="news")).execute_search(QUERY, max_results=5, cutoff_date=dt.date(2024, 9, 17))
    assert [r.url for r in out.results] == ["https://www.cnbc.com/2024/09/17/fed-meeting-starts.html"]
    assert (out.dropped_after_cutoff, out.cutoff_date) == (1, dt.date(2024, 9, 17))


def test_missing_ddgs_names_the_install_command(monkeypatch):
    import sys

    from agent_schemas import MissingDependency

    monkeypatch.setitem(sys.modules, "ddgs", None)  # makes `import ddgs` raise ImportError
    with pytest.raises(MissingDependency, match=r'pip install "forecast-reconcile\[search\]"'):
        DuckDuckGoSearch()
