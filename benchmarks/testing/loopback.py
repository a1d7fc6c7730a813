"""Start a threading HTTP server on 127.0.0.1: the one loopback server of the fake remote services (the fake
provider APIs of :mod:`benchmarks.testing.fake_api`, the tests' recorded bodies and search engines)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["serve_on_loopback"]


def serve_on_loopback(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """Serve ``handler`` on 127.0.0.1 (a free port) from a daemon thread; the caller shuts it down.

    Its URL is ``f"http://127.0.0.1:{server.server_address[1]}"``.
    """
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server
