"""A persistent response cache (``diskcache``) and a provider wrapper that uses it.

The key is the SHA-256 of a canonical JSON document holding everything that determines the answer:
provider spec, model, every message (role, content and ``cache`` flag), ``json_schema``, ``temperature``,
``max_tokens`` and ``seed``. Only the :class:`Completion` is stored (text, usage, model, provider, stop
reason): no API key, no HTTP headers, no request objects. Errors are never cached.

A hit returns the stored completion with ``from_cache=True``, ``attempts=0`` and the *original* usage, so
tokens stay attributed to the method that first spent them; the harness counts hits separately
(``CachingProvider.hits``) to report what a re-run actually cost.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path
from typing import Any

from agent_schemas import ChatMessage, Completion, MissingDependency
from agent_providers.base import Provider

#: Bump when the key document or the stored value changes shape.
CACHE_FORMAT_VERSION = 1


def cache_key(
    spec: str,
    model: str,
    messages: list[ChatMessage],
    *,
    json_schema: dict[str, Any] | None,
    temperature: float | None,
    max_tokens: int | None,
    seed: int | None,
) -> str:
    """Hex SHA-256 of the canonical JSON of the request (see module doc); 64 characters."""
    doc = {
        "v": CACHE_FORMAT_VERSION,
        "spec": spec,
        "model": model,
        "messages": [{"role": m.role, "content": m.content, "cache": m.cache} for m in messages],
        "json_schema": _schema_json(json_schema),
        "temperature": temperature,
        "max_tokens": max_tokens,
        "seed": seed,
    }
    blob = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


_SCHEMA_TEXT: dict[int, tuple[dict[str, Any], str]] = {}


def _schema_json(schema: dict[str, Any] | None) -> str | None:
    """Canonical JSON of a schema, memoised per schema object (answer schemas are reused constants and
    encoding a 101-value enum on every call dominated the harness's per-call CPU time)."""
    if schema is None:
        return None
    hit = _SCHEMA_TEXT.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    text = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if len(_SCHEMA_TEXT) > 256:
        _SCHEMA_TEXT.clear()
    _SCHEMA_TEXT[id(schema)] = (schema, text)
    return text


class ResponseCache:
    """Completions on disk, keyed by :func:`cache_key`.

    Parameters
    ----------
    directory : str or Path
        Folder for the ``diskcache`` database (created if missing). Safe to share between processes.

    Raises
    ------
    MissingDependency
        If ``diskcache`` is not installed.
    """

    def __init__(self, directory: str | Path) -> None:
        try:
            import diskcache
        except ImportError as exc:  # pragma: no cover - diskcache is a core dependency
            raise MissingDependency("the response cache needs diskcache: pip install 'diskcache>=5.6'") from exc
        self.directory = Path(directory)
        self._cache = diskcache.Cache(str(self.directory))

    def get(self, key: str) -> Completion | None:
        """The stored completion for ``key``, or None."""
        raw = self._cache.get(key)
        return None if raw is None else Completion.model_validate_json(raw)

    def put(self, key: str, completion: Completion) -> None:
        """Store ``completion`` (as JSON text) under ``key``."""
        stored = completion.model_copy(update={"from_cache": False, "attempts": 1})
        self._cache.set(key, stored.model_dump_json())

    def __len__(self) -> int:
        return len(self._cache)

    def clear(self) -> None:
        """Delete every entry."""
        self._cache.clear()

    def close(self) -> None:
        """Close the database handle (safe to call twice)."""
        self._cache.close()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.directory)!r})"


class CachingProvider(Provider):
    """Serve repeated requests from a :class:`ResponseCache`; counts ``hits`` and ``misses``.

    Parameters
    ----------
    inner : Provider
        The provider to call on a miss (typically a :class:`RetryingProvider`).
    cache : ResponseCache
        Where completions are stored.
    """

    def __init__(self, inner: Provider, cache: ResponseCache) -> None:
        super().__init__(inner.model)
        self.inner = inner
        self.cache = cache
        self.name = inner.name  # type: ignore[misc]
        self.supports_json_schema = inner.supports_json_schema  # type: ignore[misc]
        self.needs_key = inner.needs_key  # type: ignore[misc]
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def spec(self) -> str:
        return self.inner.spec

    def __repr__(self) -> str:
        return f"CachingProvider({self.inner!r}, {self.cache!r})"

    def stats(self) -> dict[str, int]:
        """Counters as a dict: ``hits``, ``misses``."""
        with self._lock:
            return {"hits": self.hits, "misses": self.misses}

    def _lookup(self, key: str) -> Completion | None:
        t0 = time.perf_counter()
        hit = self.cache.get(key)
        with self._lock:
            if hit is None:
                self.misses += 1
                return None
            self.hits += 1
        return hit.model_copy(
            update={"from_cache": True, "attempts": 0, "latency_s": time.perf_counter() - t0}
        )

    def _key(self, messages, json_schema, temperature, max_tokens, seed) -> str:
        return cache_key(
            self.inner.spec, self.inner.model, messages,
            json_schema=json_schema, temperature=temperature, max_tokens=max_tokens, seed=seed,
        )

    def _complete(self, messages, *, json_schema, temperature, max_tokens, seed) -> Completion:
        key = self._key(messages, json_schema, temperature, max_tokens, seed)
        hit = self._lookup(key)
        if hit is not None:
            return hit
        c = self.inner.complete(
            messages, json_schema=json_schema, temperature=temperature, max_tokens=max_tokens, seed=seed
        )
        self.cache.put(key, c)
        return c

    async def _acomplete(self, messages, *, json_schema, temperature, max_tokens, seed) -> Completion:
        key = self._key(messages, json_schema, temperature, max_tokens, seed)
        hit = self._lookup(key)
        if hit is not None:
            return hit
        c = await self.inner.acomplete(
            messages, json_schema=json_schema, temperature=temperature, max_tokens=max_tokens, seed=seed
        )
        self.cache.put(key, c)
        return c

    def close(self) -> None:
        """Close the inner provider (the cache is owned by the caller)."""
        self.inner.close()
