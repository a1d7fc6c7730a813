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

**Writes off the caller's thread.** The asynchronous path (:meth:`CachingProvider.acomplete`, the harness's)
queues each completion (:meth:`ResponseCache.put_later`) for the cache's writer thread, which stores what is
queued in order, one SQLite transaction per batch, so the event loop never waits for a database write. A
queued completion is served by :meth:`ResponseCache.get` at once (read your writes), and
:meth:`ResponseCache.flush` returns when everything queued before it is stored (or the cache switched off):
the harness flushes before it writes a question's record, so an answer whose question is recorded is in the
cache; a process that ends flushes its caches at exit. The synchronous path writes through.

A hit returns the stored completion with ``from_cache=True``, ``attempts=0`` and the *original* usage, so
tokens stay attributed to the method that first spent them; the harness counts hits separately
(``CachingProvider.hits``) to report what a re-run actually cost.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import logging
import os
import threading
import time
import weakref
from collections import deque
from json.encoder import encode_basestring as _encode_str
from pathlib import Path
from typing import Any

from agent_schemas import ChatMessage, Completion, MissingDependency
from agent_providers.base import Provider, WrappingProvider
from agent_providers.storable import storable_json

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
    """Hex SHA-256 of the canonical JSON of the request (see module doc); 64 characters.

    The canonical JSON is ``json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` of
    ``{"v", "spec", "model", "messages": [{"role", "content", "cache"}, ...], "json_schema", "temperature",
    "max_tokens", "seed"}``; it is assembled from pieces (each message's JSON is encoded once per message
    object, :func:`_message_json`: a request's system and case-facts messages are shared by many calls, and
    the recorder's key, :func:`agent_providers.recording.request_key`, encodes the same messages again), with
    the same text as that ``json.dumps`` (tests compare the two).
    """
    d = _scalar_json
    blob = (f'{{"json_schema":{d(_schema_json(json_schema))},"max_tokens":{d(max_tokens)},'
            f'"messages":[{",".join([_message_json(m) for m in messages])}],"model":{d(model)},"seed":{d(seed)},'
            f'"spec":{d(spec)},"temperature":{d(temperature)},"v":{CACHE_FORMAT_VERSION}}}')
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=1024, typed=True)
def _scalar_json(value: str | int | float | None) -> str:
    """``json.dumps(value, ensure_ascii=False)`` of a spec, model, temperature, token cap or seed, remembered (the
    same few values recur in every call: encoding them was a fifth of a key's time)."""
    return json.dumps(value, ensure_ascii=False)


_MESSAGE_JSON: dict[int, tuple[ChatMessage, str]] = {}


def _message_json(m: ChatMessage) -> str:
    """Canonical JSON of one message (``{"cache":...,"content":...,"role":...}``), memoised per message object
    (messages are frozen; the memo keeps the object, so an id is never reused while its entry lives). Assembled
    from :func:`json.encoder.encode_basestring` of each text (what ``json.dumps`` writes for a str with
    ``ensure_ascii=False``), without the encoder's per-call set-up."""
    hit = _MESSAGE_JSON.get(id(m))
    if hit is not None and hit[0] is m:
        return hit[1]
    cache = "true" if m.cache is True else "false" if m.cache is False else json.dumps(m.cache)
    text = f'{{"cache":{cache},"content":{_encode_str(m.content)},"role":{_encode_str(m.role)}}}'
    if len(_MESSAGE_JSON) > 4096:
        _MESSAGE_JSON.clear()
    _MESSAGE_JSON[id(m)] = (m, text)
    return text


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


#: Seconds the writer thread of a :class:`ResponseCache` waits for more work before it exits.
WRITER_IDLE_S = 2.0


def _stored(completion: Completion) -> Completion:
    """The form a completion is stored in: not from the cache, one attempt."""
    return completion.model_copy(update={"from_cache": False, "attempts": 1})


def _flush_at_exit(ref: weakref.ReferenceType[ResponseCache]) -> None:
    cache = ref()
    if cache is not None:
        cache.flush(timeout_s=30.0)


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
        # the writer thread's queue (put_later): completions by key until stored, in order, and two counters
        self._queue: deque[tuple[str, Completion]] = deque()
        self._pending: dict[str, Completion] = {}
        self._queued = self._stored = 0
        self._queue_changed = threading.Condition(threading.Lock())
        self._writer: threading.Thread | None = None
        atexit.register(_flush_at_exit, weakref.ref(self))

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
        with self._queue_changed:  # what is queued will not be stored: no longer served either
            self._pending.clear()
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
        """The stored completion for ``key`` (or the one queued for it, :meth:`put_later`); None on a miss, an
        unusable entry, or a cache failure."""
        with self._queue_changed:
            queued = self._pending.get(key)
        if queued is not None:
            return queued
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
        """Store ``completion`` as JSON text under ``key`` now; False (and the cache switched off) on failure."""
        try:
            cache = self._open()
            if cache is None:
                return False
            cache.set(key, storable_json(_stored(completion)), retry=False)
        except Exception as exc:
            self._switch_off("write", exc)
            return False
        return True

    def put_later(self, key: str, completion: Completion) -> None:
        """Queue ``completion`` to be stored under ``key`` by the writer thread (see the module doc): returns at
        once; :meth:`get` serves it from now on; :meth:`flush` waits until it is stored. Nothing when the cache
        is switched off."""
        if not self.enabled:
            return
        stored = _stored(completion)
        with self._queue_changed:
            self._pending[key] = stored
            self._queue.append((key, stored))
            self._queued += 1
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_queued, name=f"response-cache-writer-{id(self):x}", daemon=True)
                self._writer.start()
            self._queue_changed.notify_all()

    def flush(self, timeout_s: float | None = None) -> bool:
        """Wait until every completion queued before this call is stored (or dropped because the cache switched
        off); True when it is, False when ``timeout_s`` seconds passed first."""
        with self._queue_changed:
            target = self._queued
            return self._queue_changed.wait_for(lambda: self._stored >= target, timeout=timeout_s)

    def _write_queued(self) -> None:
        """The writer thread: store what is queued, oldest first, one transaction per batch; exit after
        :data:`WRITER_IDLE_S` seconds with nothing queued (the next :meth:`put_later` starts it again)."""
        while True:
            with self._queue_changed:
                if not self._queue_changed.wait_for(lambda: bool(self._queue), timeout=WRITER_IDLE_S):
                    self._writer = None
                    return
                batch = list(self._queue)
                self._queue.clear()
            self._store_batch(batch)
            with self._queue_changed:
                for key, stored in batch:
                    if self._pending.get(key) is stored:
                        del self._pending[key]
                self._stored += len(batch)
                self._queue_changed.notify_all()

    def _store_batch(self, batch: list[tuple[str, Completion]]) -> None:
        try:
            cache = self._open()
            if cache is None:
                return
            with cache.transact(retry=False):
                for key, stored in batch:
                    cache.set(key, storable_json(stored), retry=False)
        except Exception as exc:
            self._switch_off("write", exc)

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
        """Store what is queued (:meth:`flush`), then close the database handle (safe to call twice; the cache
        reopens on next use)."""
        self.flush()
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
        self.cache.put_later(key, c)  # stored by the cache's writer thread, off the event loop
        return c
