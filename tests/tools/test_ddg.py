"""DuckDuckGoSearch at the ddgs library boundary: a fake DDGS raising the real exception classes."""

import asyncio
import datetime as dt

import pytest
from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

from agent_tools import DuckDuckGoSearch, ToolExecutor, classify_ddgs_error

NEWS = [  # shape of ddgs.results.NewsResult dicts (date already ISO-normalised by ddgs)
    {"date": "2024-07-10T14:03:00+00:00", "title": "Bond casting rumours", "body": "Studio silent on Norton.",
     "url": "https://news.example/bond", "image": "https://img.example/1.jpg", "source": "Reuters"},
    {"date": "2024-07-11T23:30:00-05:00", "title": "Late wire", "body": "Filed late evening.",
     "url": "https://news.example/late", "image": "", "source": "AP"},
    {"date": "", "title": "No date", "body": "Undated item.", "url": "https://news.example/nodate", "image": "", "source": ""},
]
TEXT = [  # shape of ddgs.results.TextResult dicts
    {"title": "James Bond - Wikipedia", "href": "https://en.wikipedia.org/wiki/James_Bond", "body": "Fictional spy."},
]


class FakeDDGS:
    """Stands in for ``ddgs.DDGS``: plays a script of return values / exceptions and records calls."""

    def __init__(self, script):
        self.script = list(script)
        self.calls = []

    def _next(self, category, query, kwargs):
        self.calls.append((category, query, kwargs))
        item = self.script.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item

    def news(self, query, **kwargs):
        return self._next("news", query, kwargs)

    def text(self, query, **kwargs):
        return self._next("text", query, kwargs)


def make(script, **kw):
    fake = FakeDDGS(script)
    sleeps = []
    client = DuckDuckGoSearch(sleep=sleeps.append, ddgs_factory=lambda: fake, **kw)
    return client, fake, sleeps


def test_news_results_are_normalised_with_dates():
    client, fake, sleeps = make([NEWS])
    out = client.search("james bond casting", max_results=5)
    assert out.ok and out.attempts == 1 and sleeps == []
    assert fake.calls == [("news", "james bond casting", {"region": "wt-wt", "max_results": 5})]
    r0, r1, r2 = out.results
    assert (r0.title, r0.url, r0.snippet, r0.published, r0.source) == (
        "Bond casting rumours", "https://news.example/bond", "Studio silent on Norton.", dt.date(2024, 7, 10), "ddgs-news:Reuters")
    assert r1.published == dt.date(2024, 7, 12)  # 23:30 at UTC-5 is 04:30 UTC the next day
    assert r2.published is None and r2.source == "ddgs-news"


def test_text_results_use_href_and_are_undated():
    client, fake, _ = make([TEXT], backend="text", region="us-en")
    out = client.search("james bond", max_results=3)
    assert fake.calls[0][0] == "text" and fake.calls[0][2]["region"] == "us-en"
    assert [(r.url, r.published, r.source) for r in out.results] == [
        ("https://en.wikipedia.org/wiki/James_Bond", None, "ddgs-text")]


def test_max_results_truncates():
    client, _, _ = make([NEWS])
    assert len(client.search("bond", max_results=2).results) == 2


def test_rate_limit_is_a_failure_not_an_empty_result():
    client, fake, sleeps = make([RatelimitException("202 Ratelimit")] * 3, base_delay_s=1.0)
    out = client.search("fed rate cut september 2024")
    assert out.status == "failed"
    assert out.failure_type == "rate_limited" and out.is_transient
    assert out.attempts == 3 and len(fake.calls) == 3
    assert sleeps == [1.0, 2.0]
    assert out.results == []
    assert "RatelimitException" in out.error_message
    alts = " | ".join(out.alternative_approaches)
    assert "narrower query" in alts and "backend='text'" in alts and "later retry" in alts
    assert "missing, not absent" in out.coverage_impact


def test_genuine_empty_result_is_ok():
    # ddgs 9 raises DDGSException("No results found.") when every engine answered with nothing
    client, fake, sleeps = make([DDGSException("No results found.")])
    out = client.search("zxqv nonexistent topic")
    assert out.status == "ok" and out.results == [] and out.attempts == 1 and sleeps == []
    client, _, _ = make([[]])
    out = client.search("zxqv nonexistent topic")
    assert out.status == "ok" and out.results == []


def test_timeout_retried_then_success():
    client, fake, sleeps = make([TimeoutException("timed out"), TimeoutException("timed out"), NEWS[:1]], base_delay_s=0.5)
    out = client.search("bond")
    assert out.ok and out.attempts == 3 and len(fake.calls) == 3
    assert sleeps == [0.5, 1.0]
    assert [r.url for r in out.results] == ["https://news.example/bond"]


def test_backoff_is_capped():
    client, _, sleeps = make([TimeoutException("t")] * 4, max_attempts=4, base_delay_s=10.0, max_delay_s=15.0)
    out = client.search("bond")
    assert out.failure_type == "timeout" and out.attempts == 4
    assert sleeps == [10.0, 15.0, 15.0]


def test_access_denied_not_retried():
    client, fake, sleeps = make([DDGSException("HTTP 403 Forbidden from engine")])
    out = client.search("bond")
    assert (out.status, out.failure_type, out.is_transient, out.attempts, sleeps) == ("failed", "access_denied", False, 1, [])
    assert "later retry" not in " ".join(out.alternative_approaches)


def test_network_error_retried():
    msg = "ConnectError: ConnectError('dns error: failed to lookup address')"
    client, fake, sleeps = make([DDGSException(msg), NEWS[:1]])
    out = client.search("bond")
    assert out.ok and out.attempts == 2 and sleeps == [1.0]


def test_unknown_error_single_attempt():
    client, _, sleeps = make([DDGSException("unexpected markup")])
    out = client.search("bond")
    assert (out.failure_type, out.attempts, out.is_transient, sleeps) == ("unknown", 1, False, [])


def test_classification_table():
    assert classify_ddgs_error(RatelimitException("x")) == "rate_limited"
    assert classify_ddgs_error(TimeoutException("x")) == "timeout"
    assert classify_ddgs_error(DDGSException("No results found.")) is None
    assert classify_ddgs_error(DDGSException("429 Too Many Requests")) == "rate_limited"
    assert classify_ddgs_error(DDGSException("Error in engine: request timed out")) == "timeout"
    assert classify_ddgs_error(ConnectionError("reset")) == "network"
    assert classify_ddgs_error(ValueError("boom")) == "unknown"


def test_validation():
    with pytest.raises(ValueError, match="backend"):
        DuckDuckGoSearch(backend="images")
    with pytest.raises(ValueError, match="max_attempts"):
        DuckDuckGoSearch(max_attempts=0)
    client, _, _ = make([NEWS])
    with pytest.raises(ValueError, match="query"):
        client.search("   ")


def test_async_search():
    client, _, _ = make([NEWS])
    out = asyncio.run(client.asearch("bond", max_results=1))
    assert out.ok and len(out.results) == 1


def test_leaky_engine_is_guarded_by_executor():
    # the engine ignores the cutoff and returns a result from after it; the executor drops it
    client, fake, _ = make([NEWS])
    ex = ToolExecutor(client)
    out = ex.execute_search("bond", max_results=5, cutoff_date=dt.date(2024, 7, 11))
    assert [r.url for r in out.results] == ["https://news.example/bond"]
    assert (out.dropped_after_cutoff, out.dropped_undated, out.cutoff_date) == (1, 1, dt.date(2024, 7, 11))
    assert fake.calls[0][2]["max_results"] == 10  # overfetch x2 when a cutoff is given, capped at 10


def test_missing_ddgs_names_the_install_command(monkeypatch):
    import sys

    from agent_schemas import MissingDependency

    monkeypatch.setitem(sys.modules, "ddgs", None)  # makes `import ddgs` raise ImportError
    with pytest.raises(MissingDependency, match=r'pip install "forecast-reconcile\[search\]"'):
        DuckDuckGoSearch()
