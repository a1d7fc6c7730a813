"""A scripted model that is a real provider: queued outputs, recorded requests, deterministic usage.

Pattern from inspect_ai ``mockllm`` and llm's ``MockModel.enqueue``. Tests and notebooks use it through
the same registry (``get_provider("scripted")``) so they exercise the real code paths, token
accounting included.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from agent_schemas import ChatMessage, Completion, ReconcileError, ScriptExhausted, TokenUsage
from agent_providers.base import Provider

ScriptItem = str | Completion | BaseException | Callable[[list[ChatMessage]], "str | Completion"]


def count_tokens_approx(text: str) -> int:
    """Deterministic token estimate used by the scripted provider: ``ceil(len(text) / 4)`` (tokens)."""
    return math.ceil(len(text) / 4)


class ScriptedProvider(Provider):
    """Provider that replays queued outputs and records every request.

    Parameters
    ----------
    outputs : iterable of str, Completion, exception or callable, optional
        Answers in order. An exception instance is raised for that call; a callable receives the
        messages and returns text (or a Completion) so answers can depend on the prompt (useful when
        calls run concurrently and queue order is not deterministic).
    responder : callable, optional
        Used when the queue is empty: ``responder(messages) -> str | Completion``.
    model : str
        Model name reported in completions (default ``"scripted"``).
    latency_s : float
        Simulated latency per call in seconds (``asyncio.sleep`` in async calls, ``time.sleep`` in sync).
    cost_per_token_usd : float, optional
        If given, ``cost_usd = cost_per_token_usd * (input + output tokens)``.

    Usage is deterministic: ``input_tokens = sum(ceil(len(content) / 4))`` over the messages and
    ``output_tokens = ceil(len(text) / 4)``, one call each.

    Raises
    ------
    ScriptExhausted
        When asked for an answer with an empty queue and no responder.
    """

    name = "scripted"
    supports_json_schema = False
    default_model = "scripted"

    def __init__(
        self,
        outputs: Iterable[ScriptItem] | None = None,
        *,
        responder: Callable[[list[ChatMessage]], str | Completion] | None = None,
        model: str | None = None,
        latency_s: float = 0.0,
        cost_per_token_usd: float | None = None,
    ) -> None:
        super().__init__(model)
        self._queue: deque[ScriptItem] = deque(outputs or [])
        self._lock = threading.Lock()
        self.responder = responder
        self.latency_s = latency_s
        self.cost_per_token_usd = cost_per_token_usd
        self.requests: list[dict[str, Any]] = []

    @property
    def spec(self) -> str:
        return "scripted" if self.model == self.default_model else f"scripted/{self.model}"

    def enqueue(self, *outputs: ScriptItem) -> "ScriptedProvider":
        """Append outputs to the queue; returns self for chaining."""
        with self._lock:
            self._queue.extend(outputs)
        return self

    @property
    def remaining(self) -> int:
        """Number of queued outputs not yet consumed."""
        return len(self._queue)

    def _next(self, messages: list[ChatMessage], params: dict[str, Any]) -> Completion:
        with self._lock:
            self.requests.append({"messages": messages, **params})
            item: ScriptItem | None = self._queue.popleft() if self._queue else None
        if item is None:
            if self.responder is None:
                raise ScriptExhausted(
                    f"ScriptedProvider has no queued output for request #{len(self.requests)} (queue answers in Python "
                    "with enqueue() or a responder; to try the pipeline without a model use the simulator: --provider sim)",
                    provider=self.spec,
                    model=self.model,
                )
            item = self.responder
        if isinstance(item, BaseException):
            raise item
        if callable(item) and not isinstance(item, (str, Completion)):
            item = item(messages)
        if isinstance(item, Completion):
            return item
        if not isinstance(item, str):
            raise ReconcileError(f"ScriptedProvider output must be str, Completion or exception, got {type(item).__name__}")
        return Completion(text=item, usage=self.usage_for(messages, item), model=self.model, provider=self.spec)

    def usage_for(self, messages: list[ChatMessage], text: str) -> TokenUsage:
        """The deterministic usage this provider reports for ``messages`` answered with ``text``."""
        n_in = sum(count_tokens_approx(m.content) for m in messages)
        n_out = count_tokens_approx(text)
        cost = None if self.cost_per_token_usd is None else self.cost_per_token_usd * (n_in + n_out)
        return TokenUsage(input_tokens=n_in, output_tokens=n_out, calls=1, cost_usd=cost)

    async def _acomplete(self, messages, *, json_schema, temperature, max_tokens, seed) -> Completion:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        params = dict(json_schema=json_schema, temperature=temperature, max_tokens=max_tokens, seed=seed)
        return self._next(messages, params)

    def _complete(self, messages, *, json_schema, temperature, max_tokens, seed) -> Completion:
        if self.latency_s:
            import time

            time.sleep(self.latency_s)
        params = dict(json_schema=json_schema, temperature=temperature, max_tokens=max_tokens, seed=seed)
        return self._next(messages, params)
