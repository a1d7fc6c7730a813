"""Fixtures for the provider tests: a loopback fake API server and the llama.cpp helpers.

The official SDKs send through ``httpx2`` (not ``httpx``), so respx-style mocking would not intercept
them. Instead the SDKs talk real HTTP to :class:`FakeAPI`, a threading ``http.server`` on 127.0.0.1
that answers from a queue of recorded response bodies (``tests/providers/recorded/``) and records every
request (path, headers, JSON body).
"""

from __future__ import annotations

import json
import queue
import socket
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from tests.loopback import serve_on_loopback

RECORDED = Path(__file__).parent / "recorded"
#: A fake key; tests check it never leaks into reprs, errors or cache files.
FAKE_KEY = "sk-test-FAKE-0123456789abcdefXYZ"


def recorded(name: str) -> str:
    """Text of a recorded response body."""
    return (RECORDED / name).read_text()


@dataclass
class Reply:
    status: int = 200
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class SeenRequest:
    method: str
    path: str
    headers: dict[str, str]
    json: dict | None


class FakeAPI:
    """A loopback HTTP server answering queued replies in order."""

    def __init__(self) -> None:
        self.replies: queue.Queue[Reply] = queue.Queue()
        self.requests: list[SeenRequest] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                api.requests.append(
                    SeenRequest("POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                try:
                    reply = api.replies.get_nowait()
                except queue.Empty:
                    reply = Reply(500, json.dumps({"error": {"message": "FakeAPI: no queued reply"}}))
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                data = reply.body.encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args):  # keep test output quiet
                pass

        self.server = serve_on_loopback(Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def enqueue(self, *replies: Reply) -> "FakeAPI":
        for r in replies:
            self.replies.put(r)
        return self

    def enqueue_reply(
        self, status: int, body: str | dict, headers: dict[str, str] | None = None, delay_s: float = 0.0
    ) -> "FakeAPI":
        text = body if isinstance(body, str) else json.dumps(body)
        return self.enqueue(Reply(status, text, headers or {}, delay_s))

    def enqueue_file(self, name: str, status: int = 200, headers: dict[str, str] | None = None, **fmt) -> "FakeAPI":
        body = recorded(name)
        for k, v in fmt.items():
            body = body.replace("{" + k + "}", v)
        return self.enqueue(Reply(status, body, headers or {}))

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_api():
    api = FakeAPI()
    yield api
    api.close()


@pytest.fixture
def fake_key() -> str:
    return FAKE_KEY


@pytest.fixture
def recorded_body():
    """``recorded_body(name)`` -> parsed JSON of a recorded response body."""
    return lambda name: json.loads(recorded(name))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def unused_url() -> str:
    """A loopback URL on which nothing listens (connections are refused)."""
    return f"http://127.0.0.1:{free_port()}"
