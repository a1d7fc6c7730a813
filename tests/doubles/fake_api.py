"""A loopback fake of the Anthropic and OpenAI HTTP APIs, answering from the scripted world.

For tests and the perf scripts (``benchmarks/perf/scale.py``): the real adapters (official SDKs, real
HTTP) talk to it exactly as to the providers. It serves

* **direct calls**: ``POST /v1/messages`` (Anthropic Messages) and ``POST /v1/chat/completions``
  (OpenAI Chat Completions), after ``latency_s`` seconds, under an optional sliding-window limit of
  ``requests_per_minute`` per ``minute_s`` seconds (an HTTP 429 in each provider's error shape, with a
  ``retry-after`` header, past it);
* **batches**, in the documented shapes (each checked against the SDKs' own types by the tests):
  Anthropic Message Batches (``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}``, its
  ``results_url`` streaming one JSON line per request: ``{"custom_id", "result": {"type": "succeeded",
  "message": {...}}}``); the OpenAI Batch API (``POST /v1/files`` with a JSONL file of ``{"custom_id",
  "method", "url", "body"}`` lines, ``POST /v1/batches``, ``GET /v1/batches/{id}``, ``GET
  /v1/files/{id}/content`` with one ``{"id", "custom_id", "response": {"status_code", "request_id",
  "body"}, "error"}`` line per request). A batch ends after ``batch_polls`` retrievals.

Answers are :func:`agent_providers.scripted_world.respond` of the request's messages (system text first, then
the conversation) and of the role a model would read from them (:func:`role_read_from_prompt`: a remote API is
never told the agent's label), usage is ``ceil(characters / 4)`` of the prompt and of the answer: so a batch and the
same calls made one by one get the same answers and the same tokens.
"""

from __future__ import annotations

import datetime as dt
import email.parser
import email.policy
import itertools
import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from agent_schemas import ChatMessage
from tests.doubles.loopback import LoopbackHandler, serve_on_loopback
from agent_providers.scripted_world import respond

__all__ = ["FakeBatch", "FakeProviderAPI"]

ANTHROPIC_MODEL = "claude-haiku-4-5-20251001"
OPENAI_MODEL = "gpt-4.1-mini-2025-04-14"


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _iso(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).isoformat().replace("+00:00", "Z")


@dataclass
class FakeBatch:
    """One submitted batch: its requests (``custom_id`` -> request body) and how many polls are left."""

    id: str
    kind: str
    """"anthropic" or "openai"."""
    requests: dict[str, dict[str, Any]]
    created_at: float
    polls_left: int
    metadata: dict[str, Any] = field(default_factory=dict)
    input_file_id: str | None = None
    results: list[dict[str, Any]] | None = None
    """Result lines once the batch ended."""


def role_read_from_prompt(messages: Sequence[ChatMessage]) -> str:
    """The role a request's prompt asks for, read as a model reads it (the debaters' and supervisor's task lines):
    the fake stands in for a remote model, which sees the prompt and never the agent's label."""
    text = "\n".join(m.content for m in messages[1:])
    if "You are the BULL" in text or "You are the BEAR" in text:
        return "bull" if "You are the BULL" in text else "bear"
    if "You are the SUPERVISOR" in text:
        return "disagreements" if '"disagreements"' in text else "decision"
    return "forecaster"


def answer_as_a_model(messages: Sequence[ChatMessage]) -> str:
    """The scripted world's answer to the role :func:`role_read_from_prompt` reads (the fake's default answer)."""
    return respond(messages, role=role_read_from_prompt(messages))


class FakeProviderAPI:
    """The fake server (see the module doc); ``url`` is its root, ``close()`` stops it.

    Parameters
    ----------
    answer : callable
        ``answer(messages) -> text`` (default :func:`answer_as_a_model`, the scripted world).
    latency_s : float
        Seconds before each direct answer.
    requests_per_minute : int, optional
        Sliding-window limit on direct calls (both APIs together); None: no limit.
    minute_s : float
        Length of the limit's window in seconds (60; tests and perf scripts scale it down).
    batch_polls : int
        Retrievals of a batch before it has ended (1: the first poll finds it ended).
    anthropic_model, openai_model : str
        Model ids the replies report.
    """

    def __init__(self, *, answer: Callable[[Sequence[ChatMessage]], str] = answer_as_a_model, latency_s: float = 0.0,
                 requests_per_minute: int | None = None, minute_s: float = 60.0, batch_polls: int = 1,
                 anthropic_model: str = ANTHROPIC_MODEL, openai_model: str = OPENAI_MODEL) -> None:
        self.answer = answer
        self.latency_s = latency_s
        self.requests_per_minute = requests_per_minute
        self.minute_s = minute_s
        self.batch_polls = batch_polls
        self.anthropic_model = anthropic_model
        self.openai_model = openai_model
        #: ``time.monotonic()`` of every direct call accepted, and the count refused with a 429.
        self.accepted: list[float] = []
        self.refused = 0
        self.batches: dict[str, FakeBatch] = {}
        self.files: dict[str, bytes] = {}
        #: Every request as ``(method, path)``, in order.
        self.seen: list[tuple[str, str]] = []
        self._window: deque[float] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        api = self

        class Handler(LoopbackHandler):
            def do_POST(self):  # noqa: N802
                api.route(self, "POST", self.body())

            def do_GET(self):  # noqa: N802
                api.route(self, "GET", b"")

        self.server = serve_on_loopback(Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        """Stop the server."""
        self.server.shutdown()
        self.server.server_close()

    # --- answers ---------------------------------------------------------------------------------
    def anthropic_message(self, params: dict[str, Any]) -> dict[str, Any]:
        """A Messages API reply body for the request ``params``."""
        system = "\n".join(b.get("text", "") for b in params.get("system") or [] if isinstance(b, dict))
        msgs = [ChatMessage(role="system", content=system)] if system else []
        for m in params.get("messages", []):
            content = m["content"]
            text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
            msgs.append(ChatMessage(role=m["role"], content=text))
        text = self.answer(msgs)
        n_in = sum(_tokens(m.content) for m in msgs)
        return {"id": f"msg_{next(self._ids)}", "type": "message", "role": "assistant", "model": self.anthropic_model,
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": n_in, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                          "output_tokens": _tokens(text)}}

    def openai_completion(self, body: dict[str, Any]) -> dict[str, Any]:
        """A Chat Completions reply body for the request ``body``."""
        msgs = [ChatMessage(role=m["role"], content=m["content"]) for m in body.get("messages", [])]
        text = self.answer(msgs)
        n_in, n_out = sum(_tokens(m.content) for m in msgs), _tokens(text)
        return {"id": f"chatcmpl-{next(self._ids)}", "object": "chat.completion", "created": int(time.time()),
                "model": self.openai_model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": None},
                             "logprobs": None, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out}}

    # --- routing ---------------------------------------------------------------------------------
    def route(self, h: BaseHTTPRequestHandler, method: str, raw: bytes) -> None:
        path = h.path.split("?", 1)[0]
        with self._lock:
            self.seen.append((method, path))
        parts = [p for p in path.split("/") if p]
        try:
            if method == "POST" and path == "/v1/messages":
                return self._direct(h, "anthropic", json.loads(raw))
            if method == "POST" and path == "/v1/chat/completions":
                return self._direct(h, "openai", json.loads(raw))
            if method == "POST" and path == "/v1/messages/batches":
                return self._send(h, 200, self._create_anthropic(json.loads(raw)))
            if method == "GET" and parts[:3] == ["v1", "messages", "batches"] and len(parts) == 4:
                return self._send(h, 200, self._anthropic_batch(self._poll(parts[3])))
            if method == "GET" and parts[:3] == ["v1", "messages", "batches"] and parts[4:] == ["results"]:
                lines = self.batches[parts[3]].results or []
                return self._send(h, 200, "".join(json.dumps(r) + "\n" for r in lines).encode(), "application/binary")
            if method == "POST" and path == "/v1/files":
                return self._send(h, 200, self._upload(h.headers.get("content-type", ""), raw))
            if method == "POST" and path == "/v1/batches":
                return self._send(h, 200, self._create_openai(json.loads(raw)))
            if method == "GET" and parts[:2] == ["v1", "batches"] and len(parts) == 3:
                return self._send(h, 200, self._openai_batch(self._poll(parts[2])))
            if method == "GET" and parts[:2] == ["v1", "files"] and parts[3:] == ["content"]:
                return self._send(h, 200, self.files[parts[2]], "application/octet-stream")
        except KeyError as exc:
            return self._send(h, 404, {"error": {"type": "not_found_error", "message": f"no such object {exc}"}})
        except Exception as exc:  # a request the fake cannot read: say so, as a server would
            return self._send(h, 400, {"error": {"type": "invalid_request_error", "message": f"{type(exc).__name__}: {exc}"}})
        self._send(h, 404, {"error": {"type": "not_found_error", "message": f"{method} {path} is not served"}})

    def _send(self, h: BaseHTTPRequestHandler, status: int, body: Any, content_type: str = "application/json",
              headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            h.send_response(status)
            h.send_header("content-type", content_type)
            h.send_header("content-length", str(len(data)))
            for k, v in (headers or {}).items():
                h.send_header(k, v)
            h.end_headers()
            h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _direct(self, h: BaseHTTPRequestHandler, kind: str, body: dict[str, Any]) -> None:
        now = time.monotonic()
        with self._lock:
            limit = self.requests_per_minute
            while self._window and self._window[0] <= now - self.minute_s:
                self._window.popleft()
            if limit is not None and len(self._window) >= limit:
                self.refused += 1
                wait = max(self._window[0] + self.minute_s - now, 0.0)
                refuse = True
            else:
                self._window.append(now)
                self.accepted.append(now)
                refuse = False
        if refuse:
            err = ({"type": "error", "error": {"type": "rate_limit_error", "message": "Number of requests has exceeded your rate limit"}}
                   if kind == "anthropic" else
                   {"error": {"message": "Rate limit reached for requests", "type": "requests", "param": None, "code": "rate_limit_exceeded"}})
            return self._send(h, 429, err, headers={"retry-after": f"{wait:.3f}"})
        if self.latency_s:
            time.sleep(self.latency_s)
        self._send(h, 200, self.anthropic_message(body) if kind == "anthropic" else self.openai_completion(body))

    # --- batches ---------------------------------------------------------------------------------
    def _poll(self, batch_id: str) -> FakeBatch:
        with self._lock:
            b = self.batches[batch_id]
            if b.results is None:
                b.polls_left -= 1
                if b.polls_left <= 0:
                    b.results = [self._result(b, cid, req) for cid, req in b.requests.items()]
        return b

    def _result(self, b: FakeBatch, custom_id: str, request: dict[str, Any]) -> dict[str, Any]:
        if b.kind == "anthropic":
            return {"custom_id": custom_id, "result": {"type": "succeeded", "message": self.anthropic_message(request)}}
        n = next(self._ids)
        return {"id": f"batch_req_{n}", "custom_id": custom_id, "error": None,
                "response": {"status_code": 200, "request_id": f"req_{n}", "body": self.openai_completion(request)}}

    def _new_batch(self, kind: str, prefix: str, requests: dict[str, dict[str, Any]], **kw: Any) -> FakeBatch:
        with self._lock:
            b = FakeBatch(id=f"{prefix}{next(self._ids):06d}", kind=kind, requests=requests, created_at=time.time(),
                          polls_left=self.batch_polls, **kw)
            self.batches[b.id] = b
        return b

    def _create_anthropic(self, body: dict[str, Any]) -> dict[str, Any]:
        reqs = {r["custom_id"]: r["params"] for r in body["requests"]}
        if len(reqs) != len(body["requests"]):
            raise ValueError("custom_id values must be unique within a batch")
        return self._anthropic_batch(self._new_batch("anthropic", "msgbatch_", reqs))

    def _anthropic_batch(self, b: FakeBatch) -> dict[str, Any]:
        ended = b.results is not None
        n = len(b.requests)
        return {"id": b.id, "type": "message_batch", "processing_status": "ended" if ended else "in_progress",
                "request_counts": {"processing": 0 if ended else n, "succeeded": n if ended else 0, "errored": 0,
                                   "canceled": 0, "expired": 0},
                "ended_at": _iso(time.time()) if ended else None, "created_at": _iso(b.created_at),
                "expires_at": _iso(b.created_at + 86_400), "archived_at": None, "cancel_initiated_at": None,
                "results_url": f"{self.url}/v1/messages/batches/{b.id}/results" if ended else None}

    def _upload(self, content_type: str, raw: bytes) -> dict[str, Any]:
        msg = email.parser.BytesParser(policy=email.policy.default).parsebytes(
            b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw)
        data, filename, purpose = b"", "upload.jsonl", ""
        for part in msg.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if name == "file":
                data, filename = part.get_payload(decode=True), part.get_filename() or filename
            elif name == "purpose":
                purpose = part.get_payload(decode=True).decode()
        with self._lock:
            fid = f"file-{next(self._ids):06d}"
            self.files[fid] = data
        return {"id": fid, "object": "file", "bytes": len(data), "created_at": int(time.time()), "filename": filename,
                "purpose": purpose, "status": "processed", "expires_at": None, "status_details": None}

    def _create_openai(self, body: dict[str, Any]) -> dict[str, Any]:
        lines = [json.loads(line) for line in self.files[body["input_file_id"]].decode().splitlines() if line.strip()]
        reqs = {line["custom_id"]: line["body"] for line in lines}
        b = self._new_batch("openai", "batch_", reqs, metadata=body.get("metadata") or {}, input_file_id=body["input_file_id"])
        return self._openai_batch(b)

    def _openai_batch(self, b: FakeBatch) -> dict[str, Any]:
        ended = b.results is not None
        out_id = None
        if ended:
            out_id = f"file-out-{b.id}"
            with self._lock:
                self.files.setdefault(out_id, "".join(json.dumps(r) + "\n" for r in b.results or []).encode())
        n, created = len(b.requests), int(b.created_at)
        return {"id": b.id, "object": "batch", "endpoint": "/v1/chat/completions", "errors": None,
                "input_file_id": b.input_file_id, "completion_window": "24h", "status": "completed" if ended else "in_progress",
                "output_file_id": out_id, "error_file_id": None, "created_at": created, "in_progress_at": created,
                "expires_at": created + 86_400, "finalizing_at": None, "completed_at": int(time.time()) if ended else None,
                "failed_at": None, "expired_at": None, "cancelling_at": None, "cancelled_at": None,
                "request_counts": {"total": n, "completed": n if ended else 0, "failed": 0}, "metadata": b.metadata}
