"""A persistent response cache (``diskcache``) holding plain JSON text only, and a provider wrapper.

The key is the SHA-256 of a canonical JSON document holding everything that determines the answer:
provider spec (redacted: no credentials), model, every message (role, content and ``cache`` flag),
``json_schema``, ``temperature``, ``max_tokens`` and ``seed``. Only the :class:`Completion` is stored (text,
usage, model, provider, stop reason) as JSON text: no API key, no HTTP headers, no request objects.
Errors are never cached.

**Plain data only.** Entries are read through :class:`JSONTextDisk`, a diskcache ``Disk`` that returns
stored text and never unpickles: an entry written as a pickle (diskcache's format for anything that is
not text, e.g. planted in a shared cache folder) is a miss and no code in it runs. Anything that is not
the JSON of a :class:`Completion` is a miss too. One warning per cache names the first such entry.

**Never fails a call.** The database opens on first use (so building a provider writes nothing) with a
busy timeout of :data:`CACHE_TIMEOUT_S` seconds instead of diskcache's 60 s. A failure to open, read or
write it (``diskcache.Timeout`` "database is locked" when another process holds the write lock, sqlite
errors, an unwritable folder) switches this cache off for the rest of its life with one warning: calls
go on uncached, and a paid completion is returned even when storing it failed.

A hit returns the stored completion with ``from_cache=True``, ``attempts=0`` and the *original* usage, so
tokens stay attributed to the method that first spent them; the harness counts hits separately
(``CachingProvider.hits``) to report what a re-run actually cost.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

from agent_schemas import ChatMessage, Completion, MissingDependency
from agent_providers.base import Provider, WrappingProvider

log = logging.getLogger(__name__)

#: SQLite busy timeout of the cache database, seconds: how long a read or write waits for another
#: process's lock before the cache gives up and switches itself off.
CACHE_TIMEOUT_S = 2.0

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


class NotPlainText(Exception):
    """A cache entry stored in a form other than text (e.g. a pickle); it is never decoded."""


@functools.lru_cache(maxsize=1)
def _json_text_disk() -> type:
    """The :class:`JSONTextDisk` class (built on first use: diskcache is imported lazily)."""
    try:
        import diskcache
        from diskcache.core import MODE_BINARY, MODE_RAW, MODE_TEXT, UNKNOWN
    except ImportError as exc:  # pragma: no cover - diskcache is a core dependency
        raise MissingDependency("the response cache needs diskcache: pip install 'diskcache>=5.6'") from exc

    class JSONTextDisk(diskcache.Disk):
        """A diskcache ``Disk`` that stores text and returns text or bytes, never unpickling anything.

        ``fetch`` raises :class:`NotPlainText` for pickled entries (and any mode it does not know) and for
        a value file outside the cache folder, before reading them.
        """

        def store(self, value, read, key=UNKNOWN):
            if type(value) is not str:
                raise TypeError(f"the response cache stores JSON text only, got {type(value).__name__}")
            return super().store(value, read, key=key)

        def fetch(self, mode, filename, value, read):
            if mode == MODE_RAW:
                return super().fetch(mode, filename, value, False)
            if mode in (MODE_TEXT, MODE_BINARY):
                root = os.path.realpath(self._directory)
                path = os.path.realpath(os.path.join(root, str(filename)))
                if not path.startswith(root + os.sep):
                    raise NotPlainText(f"value file {filename!r} is outside the cache folder")
                return super().fetch(mode, filename, value, False)
            raise NotPlainText(f"stored in diskcache mode {mode!r} (pickle), not as text")

    return JSONTextDisk


class ResponseCache:
    """Completions on disk as JSON text, keyed by :func:`cache_key`; never raises from :meth:`get`/:meth:`put`.

    Parameters
    ----------
    directory : str or Path
        Folder for the ``diskcache`` database (created on first use). Safe to share between processes.
    timeout_s : float
        SQLite busy timeout in seconds (default :data:`CACHE_TIMEOUT_S`).

    Attributes
    ----------
    enabled : bool
        False once a failure switched the cache off (see module doc).
    unusable_entries : int
        Entries read that were not plain JSON of a completion (each one a miss).

    Raises
    ------
    MissingDependency
        If ``diskcache`` is not installed.
    """

    def __init__(self, directory: str | Path, *, timeout_s: float = CACHE_TIMEOUT_S) -> None:
        self._disk = _json_text_disk()
        self.directory = Path(directory)
        self.timeout_s = timeout_s
        self._cache: Any = None
        self._lock = threading.Lock()
        self.enabled = True
        self.unusable_entries = 0
        self._warned = False

    def _open(self) -> Any:
        """The diskcache ``Cache``, opened on first use; None when the cache is switched off."""
        if self._cache is None and self.enabled:
            import diskcache

            with self._lock:
                if self._cache is None and self.enabled:
                    self._cache = diskcache.Cache(str(self.directory), timeout=self.timeout_s, disk=self._disk)
        return self._cache if self.enabled else None

    def _warn_once(self, message: str, *args: Any) -> None:
        with self._lock:
            first, self._warned = not self._warned, True
        (log.warning if first else log.debug)(message, *args)

    def _switch_off(self, action: str, exc: BaseException) -> None:
        with self._lock:
            was_on, self.enabled = self.enabled, False
            cache, self._cache = self._cache, None
        if not was_on:
            return
        import diskcache

        detail = str(exc)
        if isinstance(exc, diskcache.Timeout):  # raised with no message
            detail = f"database is locked by another process for more than {self.timeout_s:g} s"
        self._warn_once(
            "response cache %s: %s failed (%s: %s); continuing without the cache for the rest of this run",
            self.directory, action, type(exc).__name__, detail,
        )
        if cache is not None:
            try:
                cache.close()
            except Exception:  # closing a broken database must not fail the call either
                pass

    def _unusable(self, key: str, why: str) -> None:
        with self._lock:
            self.unusable_entries += 1
        self._warn_once("response cache %s: entry %s... %s; treated as a miss", self.directory, key[:12], why)

    def get(self, key: str) -> Completion | None:
        """The stored completion for ``key``; None on a miss, an unusable entry, or a cache failure."""
        try:
            cache = self._open()
            if cache is None:
                return None
            raw = cache.get(key, default=None, retry=False)
        except NotPlainText as exc:
            self._unusable(key, f"is not plain text ({exc})")
            return None
        except Exception as exc:  # Timeout, sqlite3 errors, OSError: the cache is an accelerator, never a failure
            self._switch_off("read", exc)
            return None
        if raw is None:
            return None
        try:
            text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
            if not isinstance(text, str):
                raise ValueError(f"a stored {type(raw).__name__}")
            return Completion.model_validate_json(text)
        except ValueError as exc:  # UnicodeDecodeError, pydantic ValidationError
            self._unusable(key, f"is not the JSON of a completion ({type(exc).__name__})")
            return None

    def put(self, key: str, completion: Completion) -> bool:
        """Store ``completion`` as JSON text under ``key``; False (and the cache switched off) on failure."""
        stored = completion.model_copy(update={"from_cache": False, "attempts": 1})
        try:
            cache = self._open()
            if cache is None:
                return False
            cache.set(key, stored.model_dump_json(), retry=False)
        except Exception as exc:
            self._switch_off("write", exc)
            return False
        return True

    def __len__(self) -> int:
        try:
            cache = self._open()
            return 0 if cache is None else len(cache)
        except Exception as exc:
            self._switch_off("count", exc)
            return 0

    def clear(self) -> None:
        """Delete every entry (nothing when the cache is switched off)."""
        try:
            cache = self._open()
            if cache is not None:
                cache.clear(retry=False)
        except Exception as exc:
            self._switch_off("clear", exc)

    def close(self) -> None:
        """Close the database handle (safe to call twice; the cache reopens on next use)."""
        with self._lock:
            cache, self._cache = self._cache, None
        if cache is not None:
            cache.close()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.directory)!r})"


class CachingProvider(WrappingProvider):
    """Serve repeated requests from a :class:`ResponseCache`; counts ``hits`` and ``misses``.

    Parameters
    ----------
    inner : Provider
        The provider to call on a miss (typically a :class:`RetryingProvider`).
    cache : ResponseCache
        Where completions are stored.
    """

    def __init__(self, inner: Provider, cache: ResponseCache) -> None:
        super().__init__(inner)
        self.cache = cache
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

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

    def key(self, messages: list[ChatMessage], **options: Any) -> str:
        """The cache key of a request to this provider (:func:`cache_key` of the inner spec and model)."""
        return cache_key(self.inner.spec, self.inner.model, messages, **options)

    def _complete(self, messages, **options) -> Completion:
        key = self.key(messages, **options)
        hit = self._lookup(key)
        if hit is not None:
            return hit
        c = self.inner.complete(messages, **options)
        self.cache.put(key, c)
        return c

    async def _acomplete(self, messages, **options) -> Completion:
        key = self.key(messages, **options)
        hit = self._lookup(key)
        if hit is not None:
            return hit
        c = await self.inner.acomplete(messages, **options)
        self.cache.put(key, c)
        return c
