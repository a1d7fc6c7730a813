"""Fixtures for the provider tests: a loopback fake API server and the llama.cpp helpers.

The official SDKs send through ``httpx2`` (not ``httpx``), so respx-style mocking would not intercept
them. Instead the SDKs talk real HTTP to :class:`FakeAPI`, a threading ``http.server`` on 127.0.0.1
that answers from a queue of recorded response bodies (``tests/providers/recorded/``) and records every
request (path, headers, JSON body) and every reply it served (:meth:`FakeAPI.billed` is the billing
oracle of the fault-injection tests).
"""

from __future__ import annotations

import json
import queue
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.doubles.loopback import LoopbackHandler, serve_on_loopback

RECORDED = Path(__file__).parent / "recorded"
#: A fake key; tests check it never leaks into reprs, errors or cache files.
FAKE_KEY = "sk-test-FAKE-0123456789abcdefXYZ"


def recorded(name: str) -> str:
    """Text of a recorded response body."""
    return (RECORDED / name).read_text()


@dataclass
class Reply:
    status: int = 200
    body: str | bytes = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class SeenRequest:
    method: str
    path: str
    headers: dict[str, str]
    json: dict | None


@dataclass(frozen=True)
class Billing:
    """What a provider would bill for the replies served: one call per HTTP 200 reply, and the tokens
    its body reports (OpenAI ``prompt_tokens``/``completion_tokens``; Anthropic ``input_tokens`` plus
    cache reads and writes / ``output_tokens``); a body without readable usage bills tokens 0."""

    calls: int
    input_tokens: int
    output_tokens: int


class FakeAPI:
    """A loopback HTTP server answering queued replies in order."""

    def __init__(self) -> None:
        self.replies: queue.Queue[Reply] = queue.Queue()
        self.requests: list[SeenRequest] = []
        self.served: list[Reply] = []
        #: Served when the queue is empty (None: an HTTP 500 saying so).
        self.default_reply: Reply | None = None
        api = self

        class Handler(LoopbackHandler):
            def do_POST(self):  # noqa: N802
                raw = self.body()
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
                    reply = api.default_reply or Reply(500, json.dumps({"error": {"message": "FakeAPI: no queued reply"}}))
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                api.served.append(reply)
                data = reply.body if isinstance(reply.body, bytes) else reply.body.encode()
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

        self.server = serve_on_loopback(Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def enqueue(self, *replies: Reply) -> "FakeAPI":
        for r in replies:
            self.replies.put(r)
        return self

    def enqueue_reply(
        self, status: int, body: str | bytes | dict, headers: dict[str, str] | None = None, delay_s: float = 0.0
    ) -> "FakeAPI":
        text = body if isinstance(body, (str, bytes)) else json.dumps(body)
        return self.enqueue(Reply(status, text, headers or {}, delay_s))

    def answer_by_default(self, status: int, body: str | dict) -> "FakeAPI":
        """Serve this reply whenever the queue is empty (e.g. every call of a benchmark run)."""
        self.default_reply = Reply(status, body if isinstance(body, str) else json.dumps(body))
        return self

    def enqueue_file(self, name: str, status: int = 200, headers: dict[str, str] | None = None, **fmt) -> "FakeAPI":
        body = recorded(name)
        for k, v in fmt.items():
            body = body.replace("{" + k + "}", v)
        return self.enqueue(Reply(status, body, headers or {}))

    def billed(self) -> Billing:
        """The billing oracle: calls and tokens of every HTTP 200 reply served so far."""
        calls = tin = tout = 0
        for r in self.served:
            if r.status != 200:
                continue
            calls += 1
            try:
                usage = json.loads(r.body).get("usage") or {}
            except (ValueError, AttributeError):
                continue
            if "prompt_tokens" in usage:
                tin += usage["prompt_tokens"]
                tout += usage.get("completion_tokens", 0)
            else:
                tin += usage.get("input_tokens", 0) + usage.get("cache_read_input_tokens", 0) + usage.get(
                    "cache_creation_input_tokens", 0)
                tout += usage.get("output_tokens", 0)
        return Billing(calls, tin, tout)

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


def openai_body(content: str | None = "ok", *, finish: str = "stop", prompt: int = 100, completion: int = 20,
                refusal: str | None = None, model: str = "gpt-4.1-mini-2025-04-14") -> str:
    """A Chat Completions reply body (the shape of the recorded ones) with the given content and usage."""
    return json.dumps({
        "id": "chatcmpl-fault", "object": "chat.completion", "created": 1741570600, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": refusal},
                     "logprobs": None, "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    })


def anthropic_body(text: str = "ok", *, stop: str = "end_turn", input_tokens: int = 100, output_tokens: int = 20,
                   model: str = "claude-haiku-4-5-20251001") -> str:
    """A Messages API reply body (the shape of the recorded ones) with the given text and usage."""
    return json.dumps({
        "id": "msg_fault", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": text}] if text else [], "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                  "output_tokens": output_tokens},
    })


@pytest.fixture
def openai_reply():
    """``openai_reply(content, finish=..., prompt=..., completion=..., refusal=...)`` -> a reply body."""
    return openai_body


@pytest.fixture
def anthropic_reply():
    """``anthropic_reply(text, stop=..., input_tokens=..., output_tokens=...)`` -> a reply body."""
    return anthropic_body


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def unused_url() -> str:
    """A loopback URL on which nothing listens (connections are refused)."""
    return f"http://127.0.0.1:{free_port()}"
