"""Record provider responses for offline replay, and replay them.

:class:`RecordingProvider` wraps any provider and keeps one :class:`agent_schemas.RecordedCall` per
call (the completion, or the typed error it raised), keyed by :func:`request_key`.
:class:`ReplayProvider` serves recorded calls back by the same key, so a pipeline trace can be re-run
with no network and no model, and must give the same final probability.
"""

from __future__ import annotations

import contextvars
import threading
from collections import defaultdict, deque
from typing import Any

from agent_schemas import ChatMessage, Completion, ProviderError, ReconcileError, RecordedCall
from agent_providers.base import Provider, WrappingProvider
from agent_providers.cache import cache_key


def request_key(
    spec: str,
    messages: list[ChatMessage],
    *,
    json_schema: dict[str, Any] | None,
    temperature: float | None,
    max_tokens: int | None,
    seed: int | None,
) -> str:
    """SHA-256 hex digest identifying a request: the response cache's key
    (:func:`agent_providers.cache.cache_key`) for ``spec``. API keys never enter it."""
    return cache_key(spec, "", messages, json_schema=json_schema, temperature=temperature, max_tokens=max_tokens, seed=seed)


#: Where :class:`RecordingProvider` appends records in the current context (one list per pipeline run).
#: asyncio tasks and ``asyncio.to_thread`` copy the context, so concurrent runs do not mix records.
RECORDING_SINK: contextvars.ContextVar[list[RecordedCall] | None] = contextvars.ContextVar("recording_sink", default=None)


class RecordingProvider(WrappingProvider):
    """Wrap ``inner`` and record every call as a :class:`RecordedCall` labelled with ``role``.

    Records go to the list in :data:`RECORDING_SINK` when the calling context set one (a pipeline run
    does), else to ``self.records``.

    Parameters
    ----------
    inner : Provider
        The provider doing the work.
    role : str
        Label stored with each record ("forecaster", "bull", "bear", "supervisor").
    """

    def __init__(self, inner: Provider, role: str) -> None:
        super().__init__(inner)
        self.role = role
        self.records: list[RecordedCall] = []
        self._lock = threading.Lock()

    def _record(self, key: str, messages: list[ChatMessage], completion: Completion | None, error: ReconcileError | None) -> None:
        rec = RecordedCall(
            role=self.role,
            provider=self.inner.spec,
            request_key=key,
            messages=list(messages),
            completion=completion,
            error=error.to_info() if error is not None else None,
        )
        sink = RECORDING_SINK.get()
        with self._lock:
            (sink if sink is not None else self.records).append(rec)

    async def _acomplete(self, messages, **options) -> Completion:
        key = request_key(self.inner.spec, messages, **options)
        try:
            c = await self.inner.acomplete(messages, **options)
        except ReconcileError as exc:
            self._record(key, messages, None, exc)
            raise
        self._record(key, messages, c, None)
        return c

    def _complete(self, messages, **options) -> Completion:
        key = request_key(self.inner.spec, messages, **options)
        try:
            c = self.inner.complete(messages, **options)
        except ReconcileError as exc:
            self._record(key, messages, None, exc)
            raise
        self._record(key, messages, c, None)
        return c


class ReplayMiss(ProviderError):
    """A replayed run asked for a request that was never recorded (the run diverged)."""


class ReplayedError(ProviderError):
    """Re-raised in replay for a call that failed when recorded; ``recorded_type`` names the original class."""


class ReplayProvider(Provider):
    """Serve recorded completions by request key (no network, no model).

    Identical requests recorded several times are served in recording order. A recorded error is
    re-raised as :class:`ReplayedError` carrying the original type name and message.

    Raises
    ------
    ReplayMiss
        When a request was not recorded.
    """

    name = "replay"

    def __init__(self, records: list[RecordedCall], spec: str) -> None:
        super().__init__(model=spec.partition("/")[2] or spec)
        self._spec = spec
        self._by_key: dict[str, deque[RecordedCall]] = defaultdict(deque)
        for r in records:
            if r.provider == spec:
                self._by_key[r.request_key].append(r)
        self._lock = threading.Lock()

    @property
    def spec(self) -> str:
        return self._spec

    def _complete(self, messages, *, json_schema, temperature, max_tokens, seed) -> Completion:
        key = request_key(self._spec, messages, json_schema=json_schema, temperature=temperature, max_tokens=max_tokens, seed=seed)
        with self._lock:
            queue = self._by_key.get(key)
            if not queue:
                raise ReplayMiss(f"no recorded response for request {key[:12]} on {self._spec}", provider=self._spec)
            rec = queue.popleft()
        if rec.error is not None:
            raise ReplayedError(f"{rec.error.type}: {rec.error.message}", provider=self._spec, recorded_type=rec.error.type)
        assert rec.completion is not None
        return rec.completion

    async def _acomplete(self, messages, *, json_schema, temperature, max_tokens, seed) -> Completion:
        return self._complete(messages, json_schema=json_schema, temperature=temperature, max_tokens=max_tokens, seed=seed)
