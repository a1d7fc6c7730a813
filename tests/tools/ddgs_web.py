"""The search engines that ``ddgs`` 9 talks to, played on 127.0.0.1 from recorded-looking bodies.

``ddgs`` sends every request through ``primp``, a Rust HTTP client that Python cannot patch. So the
tests do not patch at all: ``DDGS(proxy=web.proxy_url, verify=web.ca_path)`` sends every request
through :class:`FakeWeb`, a loopback HTTPS proxy. It accepts ``CONNECT``, terminates TLS with a
certificate from a throwaway CA (``trustme``), reads the engine's real request and answers it as the
engine's host would: a results page or JSON (``recorded_ddgs/<engine>_hits.*``), an empty one
(``<engine>_empty.*``), a refusal status, a reply that never comes (timeout) or a dropped connection.
The bodies have the markup the installed engine parsers read (``ddgs/engines/*.py``).
"""

from __future__ import annotations

import ssl
import threading
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Literal, Union

import trustme

from tests.doubles.loopback import LoopbackHandler, serve_on_loopback

RECORDED = Path(__file__).parent / "recorded_ddgs"

#: host -> engine key ("<ddgs category>-<ddgs engine name>") for every engine ddgs 9 enables for text and news.
ENGINE_HOSTS = {
    "html.duckduckgo.com": "text-duckduckgo",
    "search.brave.com": "text-brave",
    "www.mojeek.com": "text-mojeek",
    "www.startpage.com": "text-startpage",
    "search.yahoo.com": "text-yahoo",
    "en.wikipedia.org": "text-wikipedia",
    "grokipedia.com": "text-grokipedia",
    "duckduckgo.com": "news-duckduckgo",
    "www.bing.com": "news-bing",
    "news.search.yahoo.com": "news-yahoo",
}

#: What an engine's host does: serve hits, serve an empty results page, refuse with an HTTP status,
#: never reply (the client times out) or drop the connection after reading the request.
Behaviour = Union[Literal["hits", "empty", "timeout", "drop"], int]


@dataclass(frozen=True)
class Seen:
    """One request that reached the fake web."""

    engine: str
    method: str
    path: str


def _recorded(engine: str, variant: str) -> tuple[str, bytes]:
    for ext, ctype in (("json", "application/json"), ("html", "text/html; charset=utf-8")):
        path = RECORDED / f"{engine}_{variant}.{ext}"
        if path.exists():
            return ctype, path.read_bytes()
    raise FileNotFoundError(f"no recorded body {engine}_{variant}.* in {RECORDED}")


def _page(engine: str, method: str, path: str, variant: str) -> tuple[str, bytes]:
    """The body an engine host serves for one request, when it answers 200."""
    if engine == "news-duckduckgo" and not path.startswith("/news.js"):
        return _recorded(engine, "vqd")  # the search page that carries the vqd token
    if engine == "text-startpage" and method == "GET":
        return _recorded(engine, "home")  # the home page that carries the 'sc' form token
    if engine == "text-wikipedia" and "action=query" in path:
        return _recorded(engine, "extract")  # the intro extract of the page the opensearch call found
    return _recorded(engine, variant)


def _refusal(engine: str, status: int) -> tuple[str, bytes]:
    if (RECORDED / f"{engine}_refused.html").exists():  # e.g. DuckDuckGo's anomaly (bot) page
        return _recorded(engine, "refused")
    reason = HTTPStatus(status).phrase
    return "text/html", f"<html><head><title>{status} {reason}</title></head><body><h1>{status} {reason}</h1></body></html>".encode()


class FakeWeb:
    """A loopback HTTPS proxy answering as the engines' hosts would; see the module docstring.

    ``web.behave(**{"text-duckduckgo": 429})`` sets one engine; engines not set answer ``default``.
    ``web.seen`` records every request, ``web.unknown_hosts`` every CONNECT to a host not in
    :data:`ENGINE_HOSTS` (refused with 502).
    """

    def __init__(self, ca: trustme.CA, ca_path: str, default: Behaviour = "empty") -> None:
        self.ca_path = ca_path
        self.default: Behaviour = default
        self.behaviour: dict[str, Behaviour] = {}
        self.seen: list[Seen] = []
        self.unknown_hosts: list[str] = []
        self._release = threading.Event()
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ca.issue_cert(*ENGINE_HOSTS).configure_cert(ctx)
        ctx.set_alpn_protocols(["http/1.1"])
        web = self

        class Handler(LoopbackHandler):
            engine = ""

            def do_CONNECT(self):  # noqa: N802 - the proxy tunnel, then TLS as the engine's host
                host = self.path.rsplit(":", 1)[0]
                if host not in ENGINE_HOSTS:
                    web.unknown_hosts.append(host)
                    self.send_error(502, f"FakeWeb has no recorded engine for {host}")
                    return
                self.send_response(200, "Connection established")
                self.end_headers()
                tls = ctx.wrap_socket(self.connection, server_side=True)
                self.connection = tls
                self.rfile = tls.makefile("rb")
                self.wfile = tls.makefile("wb")
                self.engine = ENGINE_HOSTS[host]
                self.close_connection = False

            def _answer(self):
                self.body()
                web.seen.append(Seen(self.engine, self.command, self.path))
                behaviour = web.behaviour.get(self.engine, web.default)
                if behaviour == "drop":
                    self.close_connection = True
                    self.connection.close()
                    return
                if behaviour == "timeout":
                    web._release.wait(10)
                    self.close_connection = True
                    return
                if isinstance(behaviour, int):
                    status, (ctype, body) = behaviour, _refusal(self.engine, behaviour)
                else:
                    status, (ctype, body) = 200, _page(self.engine, self.command, self.path, behaviour)
                try:
                    self.send_response(status)
                    self.send_header("content-type", ctype)
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    self.wfile.flush()
                except OSError:
                    pass

            do_GET = do_POST = _answer

        self.server = serve_on_loopback(Handler)
        self.proxy_url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def behave(self, **engines: Behaviour) -> "FakeWeb":
        """Set what each named engine does (keys are engine keys such as ``"text-duckduckgo"``)."""
        unknown = set(engines) - set(ENGINE_HOSTS.values())
        if unknown:
            raise KeyError(f"unknown engine keys {sorted(unknown)}; known: {sorted(ENGINE_HOSTS.values())}")
        self.behaviour.update(engines)
        return self

    def engines_seen(self) -> set[str]:
        """Engine keys that received at least one request."""
        return {s.engine for s in self.seen}

    def close(self) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()
