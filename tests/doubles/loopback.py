"""Start a threading HTTP server on 127.0.0.1: the one loopback server of the fake remote services (the fake
provider APIs of :mod:`tests.doubles.fake_api`, the tests' recorded bodies and search engines)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["LoopbackHandler", "serve_on_loopback"]


class LoopbackHandler(BaseHTTPRequestHandler):
    """The base of every fake service's request handler: HTTP/1.1 with keep-alive, no Nagle delay (else each
    response, and each TLS handshake through a proxy, stalls about 40 ms on delayed ACKs), no log lines, and
    :meth:`body`."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def body(self) -> bytes:
        """The request body (``content-length`` bytes; empty without one)."""
        length = int(self.headers.get("content-length") or 0)
        return self.rfile.read(length) if length else b""

    def log_message(self, format: str, *args: object) -> None:  # keep test and script output quiet
        pass


def serve_on_loopback(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """Serve ``handler`` on 127.0.0.1 (a free port) from a daemon thread; the caller shuts it down.

    Its URL is ``f"http://127.0.0.1:{server.server_address[1]}"``.
    """
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server
