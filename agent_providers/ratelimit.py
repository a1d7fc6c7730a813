"""Rate-limit-aware scheduling per provider: concurrent requests, requests per minute, tokens per minute.

:class:`RateLimitedProvider` wraps one adapter (the harness builds one per provider spec, shared by every
call to it) and lets a call through only when every configured limit has room:

* ``max_concurrent``: requests in flight at once (an ``asyncio.Semaphore``);
* ``requests_per_minute``, ``input_tokens_per_minute``, ``output_tokens_per_minute`` and
  ``tokens_per_minute`` (input + output): each an :class:`aiolimiter.AsyncLimiter` (a leaky bucket).

**Why aiolimiter.** It is a small, maintained asyncio limiter whose ``acquire(amount)`` *waits* for
capacity (``limits`` only answers yes/no and leaves the waiting to us; ``pyrate-limiter`` brings storage
backends we do not need). Tokens are acquired in chunks of at most the bucket size, so one large prompt
waits for the refill instead of failing.

**Pacing, not bursts.** A provider may enforce "60 per minute" over shorter intervals (1 per second), so
each bucket holds one second's worth (:data:`BURST_FRACTION` of a minute, and at least one request),
and the limiter paces at ``(1 - headroom)`` of the limit: with the default 5 % headroom the requests of
any sliding minute stay under the limit even when send times and the server's clock differ by tens of
milliseconds.

**Token estimates.** Limits are checked before the answer exists: input tokens are estimated as
``ceil(characters / 4)`` of the messages (and the answer schema, which adapters send or describe). For
``tokens_per_minute`` (OpenAI's TPM, which counts ``max_tokens`` when the request arrives) output tokens are
the call's ``max_tokens`` (:data:`DEFAULT_OUTPUT_TOKENS` when the call gives none). For
``output_tokens_per_minute`` (Anthropic's OTPM, estimated from ``max_tokens`` at the start of a request and
corrected to the tokens generated at its end) they are ``max_tokens`` until :data:`OUTPUT_MEAN_AFTER`
answers have come back, then 1.2 x the mean output of the answers so far (at most ``max_tokens``), so the
pace follows what the provider finally counts.

**A 429 slows the whole provider.** A :class:`RateLimited` error from the provider pauses every call to
it until its ``retry-after`` has passed (:data:`DEFAULT_PAUSE_S` without one): calls waiting for the
limiter and new calls wait, the failed call is retried by the retry layer above. So the scheduler stops
pushing, instead of one call backing off while the others keep hitting the limit.

**Time scale.** ``minute_s`` is the length of "a minute" in seconds (60). Tests and
``benchmarks/perf/scale.py`` shrink it (a 60-per-minute limit over a 1-second "minute") so a run over
many windows takes seconds; every rate scales with it, nothing else changes.

Defaults per provider (:func:`default_limits`) are the published first-tier limits: an account with a
higher tier sets its own (``--rate-limit anthropic=rpm:4000,itpm:2000000,otpm:400000``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import json
import math
import threading
import time
from dataclasses import dataclass, field, fields, replace
from typing import Any

from agent_schemas import ChatMessage, Completion, RateLimited, TokenUsage
from agent_providers.base import Provider, WrappingProvider, keep_spent, run_sync, spent_usage

__all__ = ["DEFAULT_LIMITS", "RateLimitedProvider", "RateLimits", "default_limits", "parse_rate_limits"]

#: Fraction of a minute's rate one bucket holds (the largest burst after an idle spell): one second of
#: a real minute, see the module doc.
BURST_FRACTION = 1 / 60
#: Smallest request bucket: two requests, so a wake-up a few milliseconds late is caught up and the pace
#: holds (a bucket of one loses every late wake-up); the 5 % headroom of a limit of 40 or more per minute
#: covers the extra request in any window.
REQUEST_BURST_MIN = 2.0
#: Pause after a 429 that gives no usable retry-after (seconds).
DEFAULT_PAUSE_S = 1.0
#: Output tokens assumed for a call that sets no ``max_tokens`` (the adapters' default limit).
DEFAULT_OUTPUT_TOKENS = 1024
#: Answers seen before output tokens are estimated from their mean instead of ``max_tokens`` (OTPM only).
OUTPUT_MEAN_AFTER = 20
#: Requests in flight at once when the limits set no ``max_concurrent`` (also the size of the wrapper's
#: thread pool, see :class:`RateLimitedProvider`).
DEFAULT_MAX_CONCURRENT = 64

#: Short names accepted by :func:`parse_rate_limits` and the fields they set.
_KEYS = {
    "concurrent": "max_concurrent", "rpm": "requests_per_minute", "tpm": "tokens_per_minute",
    "itpm": "input_tokens_per_minute", "otpm": "output_tokens_per_minute", "headroom": "headroom",
}


@dataclass(frozen=True)
class RateLimits:
    """The limits of one provider; None means no limit of that kind.

    Parameters
    ----------
    max_concurrent : int, optional
        Requests in flight at once (count, >= 1).
    requests_per_minute : float, optional
        Requests started per minute (> 0).
    tokens_per_minute : float, optional
        Estimated input plus output tokens per minute (OpenAI's TPM).
    input_tokens_per_minute, output_tokens_per_minute : float, optional
        Estimated input / output tokens per minute (Anthropic's ITPM and OTPM).
    headroom : float
        Fraction of each rate kept in reserve, in [0, 0.5] (default 0.05: paced at 95 %).
    minute_s : float
        Length of a minute in seconds (60; tests scale it down, see the module doc).

    Raises
    ------
    ValueError
        For a value out of range (the message names the field and the value).
    """

    max_concurrent: int | None = None
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    input_tokens_per_minute: float | None = None
    output_tokens_per_minute: float | None = None
    headroom: float = 0.05
    minute_s: float = 60.0

    def __post_init__(self) -> None:
        if self.max_concurrent is not None and (not isinstance(self.max_concurrent, int) or self.max_concurrent < 1):
            raise ValueError(f"max_concurrent must be an integer >= 1, got {self.max_concurrent!r}")
        for name in ("requests_per_minute", "tokens_per_minute", "input_tokens_per_minute", "output_tokens_per_minute"):
            v = getattr(self, name)
            if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a number > 0, got {v!r}")
        if not 0 <= self.headroom <= 0.5:
            raise ValueError(f"headroom must be in [0, 0.5], got {self.headroom!r}")
        if not self.minute_s > 0:
            raise ValueError(f"minute_s must be > 0 seconds, got {self.minute_s!r}")

    def to_dict(self) -> dict[str, Any]:
        """The limits as a plain dict (for the manifest)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def describe(self) -> str:
        """The limits set, in :func:`parse_rate_limits` form (``"rpm:50,itpm:30000"``); "none" when none is."""
        short = {v: k for k, v in _KEYS.items()}
        parts = [f"{short[f.name]}:{getattr(self, f.name):g}" for f in fields(self)
                 if f.name in short and f.name != "headroom" and getattr(self, f.name) is not None]
        return ",".join(parts) or "none"


#: Defaults by provider prefix: the first published usage tier (Anthropic: 50 requests, 30,000 input and
#: 8,000 output tokens per minute; OpenAI gpt-4.1-mini: 500 requests and 200,000 tokens per minute) and a
#: concurrency cap for servers of unknown capacity. The embedded model serialises its own calls and the
#: scripted and simulated providers have no limits. Check your own limits in the provider's console and
#: pass them with ``--rate-limit``.
DEFAULT_LIMITS: dict[str, RateLimits] = {
    "anthropic": RateLimits(max_concurrent=16, requests_per_minute=50, input_tokens_per_minute=30_000, output_tokens_per_minute=8_000),
    "openai": RateLimits(max_concurrent=32, requests_per_minute=500, tokens_per_minute=200_000),
    "openai-compatible": RateLimits(max_concurrent=8),
}


def default_limits(spec: str) -> RateLimits | None:
    """The default limits of the provider ``spec`` names (by prefix), or None (no limit: ``local``, ``scripted``, ``sim``)."""
    return DEFAULT_LIMITS.get(spec.split("/", 1)[0])


def parse_rate_limits(text: str, *, base: RateLimits | None = None) -> RateLimits:
    """Limits from ``"rpm:60,tpm:200000,concurrent:8"`` (keys ``concurrent``, ``rpm``, ``tpm``, ``itpm``,
    ``otpm``, ``headroom``; ``none`` as a value removes that limit), set over ``base`` (default no limits).

    Raises
    ------
    ValueError
        For an unknown key or a value that is not a number (the message shows the part).
    """
    out = base or RateLimits()
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, sep, value = part.partition(":")
        if not sep or key.strip() not in _KEYS:
            raise ValueError(f"rate limit {part!r}: expected <key>:<value> with key one of {', '.join(_KEYS)}")
        name = _KEYS[key.strip()]
        try:
            parsed: Any = None if value.strip() == "none" else (int(value) if name == "max_concurrent" else float(value))
        except ValueError:
            raise ValueError(f"rate limit {part!r}: {value.strip()!r} is not a number") from None
        out = replace(out, **{name: parsed})
    return out


def estimate_input_tokens(messages: list[ChatMessage], json_schema: dict[str, Any] | None) -> int:
    """Estimated prompt tokens of a request: ``ceil(characters / 4)`` of its messages and answer schema."""
    chars = sum(len(m.content) for m in messages) + (len(json.dumps(json_schema)) if json_schema else 0)
    return math.ceil(chars / 4)


def _pause_s(exc: RateLimited) -> float:
    """Seconds a 429 pauses the provider: its retry-after, else :data:`DEFAULT_PAUSE_S`."""
    hint = exc.retry_after_s
    return hint if isinstance(hint, (int, float)) and math.isfinite(hint) and hint >= 0 else DEFAULT_PAUSE_S


@dataclass
class LimiterStats:
    """What the limiter did (counts and seconds), for the manifest and the perf script."""

    requests: int = 0
    rate_limited: int = 0
    """429 answers seen (each paused the provider)."""
    waited_s: float = 0.0
    """Seconds calls spent waiting for the limiter, summed over calls."""
    paused_s: float = 0.0
    """Seconds the provider was paused by 429s (wall time, overlapping pauses counted once)."""
    tokens_estimated: int = 0
    """Tokens the limiter counted for the requests let through (estimated input + ``max_tokens``)."""
    send_times: list[float] = field(default_factory=list, repr=False)
    """Event-loop time (``loop.time()``, seconds) of every request let through (kept for tests and the perf script)."""


class RateLimitedProvider(WrappingProvider):
    """A provider whose calls wait for the provider's rate limits (see the module doc).

    Parameters
    ----------
    inner : Provider
        The adapter (the retry layer goes *above* this wrapper, so a retried call waits again).
    limits : RateLimits
        The provider's limits.
    keep_send_times : bool
        Record the start time of every request in ``stats.send_times`` (tests, perf script).

    The SDK adapters are synchronous; asyncio's default thread pool (``min(32, CPUs + 4)`` threads, 6 on
    2 cores) would cap the calls in flight far below a provider's limits and queue admitted calls, which
    then leave in bursts. So the wrapper sends each admitted call at once on its own thread pool of
    ``max_concurrent`` threads (:data:`DEFAULT_MAX_CONCURRENT` when unset); an adapter that answers
    natively in asyncio is awaited directly.

    When the requests in flight are the only limit (``openai-compatible`` servers by default), a synchronous
    adapter's calls skip the event loop's semaphore: each goes to the pool at once and the pool's
    ``max_concurrent`` threads are the slots, so a thread that finishes a call takes the next queued call
    itself. Through the semaphore, the next call started only after the finished call's result had reached
    the event loop, the loop had run the waiting task and that task had handed the call to a thread: with 2
    calls in flight at 50 ms each, ``benchmarks/perf/scale.py`` reached 0.68-0.79 of the limit (issue 38). A 429's
    pause is then waited for on the pool thread, before the call is sent. With a per-minute limit the
    semaphore stays: a call admitted by a bucket must leave at once, not wait in the pool's queue and leave
    in a burst.
    """

    def __init__(self, inner: Provider, limits: RateLimits, *, keep_send_times: bool = False) -> None:
        super().__init__(inner)
        from aiolimiter import AsyncLimiter

        self.limits = limits
        self.stats = LimiterStats()
        self._keep_send_times = keep_send_times
        self._threads = limits.max_concurrent or DEFAULT_MAX_CONCURRENT
        self._semaphore = asyncio.Semaphore(self._threads)
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        adapter = inner
        while isinstance(adapter, WrappingProvider):
            adapter = adapter.inner
        #: The adapter answers natively in asyncio (the scripted provider): no thread needed.
        self._native_async = type(adapter)._acomplete is not Provider._acomplete
        #: A synchronous adapter whose only limit is the requests in flight: each call goes straight to the pool
        #: of ``max_concurrent`` threads, whose queue hands a finished call's thread to the next call without a
        #: round trip through the event loop (see the class doc).
        self._pool_limits = (not self._native_async and limits.max_concurrent is not None and limits.requests_per_minute is None
                             and all(getattr(limits, n) is None for n in ("tokens_per_minute", "input_tokens_per_minute",
                                                                        "output_tokens_per_minute")))
        self._stats_lock = threading.Lock()
        self._paused_until = 0.0
        self._output_seen = [0, 0]  # output tokens of the answers so far, and their count
        scale = 1.0 - limits.headroom

        def bucket(per_minute: float | None, *, floor: float) -> Any:
            if per_minute is None:
                return None
            per_s = per_minute * scale / limits.minute_s
            size = max(per_minute * scale * BURST_FRACTION, floor)
            return AsyncLimiter(size, size / per_s)

        self._requests = bucket(limits.requests_per_minute, floor=REQUEST_BURST_MIN)
        self._tokens = {name: bucket(getattr(limits, name), floor=1.0)
                        for name in ("tokens_per_minute", "input_tokens_per_minute", "output_tokens_per_minute")}

    def __repr__(self) -> str:
        return f"RateLimitedProvider({self.inner!r}, {self.limits.describe()})"

    def pause(self, seconds: float) -> None:
        """Hold every call to this provider for ``seconds`` from now (a 429's retry-after); call it from
        the event loop the calls run on (its clock, ``loop.time()``, is the limiter's)."""
        now = asyncio.get_running_loop().time()
        self._pause_from(now, seconds)

    def _pause_from(self, now: float, seconds: float) -> None:
        """Hold every call until ``now + seconds`` (``now`` on the event loop's clock, ``time.monotonic()``)."""
        until = now + max(seconds, 0.0)
        with self._stats_lock:
            if until > self._paused_until:
                self.stats.paused_s += until - max(self._paused_until, now)
                self._paused_until = until

    async def _wait_pause(self) -> None:
        loop = asyncio.get_running_loop()
        while (left := self._paused_until - loop.time()) > 0:
            await asyncio.sleep(left)

    async def _acquire(self, limiter: Any, amount: float) -> None:
        while amount > 0:  # chunks of at most the bucket size: a large prompt waits for the refill
            take = min(amount, limiter.max_rate)
            await limiter.acquire(take)
            amount -= take

    async def _admit(self, messages: list[ChatMessage], options: dict[str, Any]) -> None:
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        await self._wait_pause()
        n_in = estimate_input_tokens(messages, options.get("json_schema"))
        n_out = options.get("max_tokens") or DEFAULT_OUTPUT_TOKENS
        total, count = self._output_seen
        n_out_seen = min(n_out, math.ceil(1.2 * total / count)) if count >= OUTPUT_MEAN_AFTER else n_out
        if self._requests is not None:
            await self._acquire(self._requests, 1)
        for name, amount in (("tokens_per_minute", n_in + n_out), ("input_tokens_per_minute", n_in),
                             ("output_tokens_per_minute", n_out_seen)):
            if self._tokens[name] is not None:
                await self._acquire(self._tokens[name], amount)
        await self._wait_pause()  # a 429 may have arrived while this call waited
        now = loop.time()
        self.stats.waited_s += now - t0
        self.stats.requests += 1
        self.stats.tokens_estimated += n_in + n_out
        if self._keep_send_times:
            self.stats.send_times.append(now)

    def _executor(self) -> concurrent.futures.ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(self._threads, thread_name_prefix=f"{self.name}-calls")
            return self._pool

    async def _acomplete(self, messages: list[ChatMessage], **options: Any) -> Completion:
        if self._pool_limits:  # only the requests in flight limit: the pool's threads are the slots
            return await self._send(messages, options)
        async with self._semaphore:
            return await self._send(messages, options)

    def _send_now(self, messages: list[ChatMessage], options: dict[str, Any]) -> Completion:
        """Send one call on a pool thread, once a 429's pause is over (the pool-slots path, see the class doc)."""
        while (left := self._paused_until - time.monotonic()) > 0:  # loop.time() is time.monotonic()
            time.sleep(left)
        with self._stats_lock:
            self.stats.requests += 1
            self.stats.tokens_estimated += estimate_input_tokens(messages, options.get("json_schema")) + (
                options.get("max_tokens") or DEFAULT_OUTPUT_TOKENS)
            if self._keep_send_times:
                self.stats.send_times.append(time.monotonic())
        try:
            return self.inner.complete(messages, **options)
        except RateLimited as exc:  # paused here, before this thread takes the next queued call
            self._pause_from(time.monotonic(), _pause_s(exc))
            raise

    async def _send(self, messages: list[ChatMessage], options: dict[str, Any]) -> Completion:
        try:
            if self._pool_limits:
                call = functools.partial(self._send_now, messages, options)  # in the caller's context (call roles)
                t0 = time.monotonic()
                try:
                    completion = await asyncio.get_running_loop().run_in_executor(self._executor(), contextvars.copy_context().run, call)
                except asyncio.CancelledError as exc:  # the pool thread goes on: the request is sent, its answer unread
                    keep_spent(exc, spent_usage(exc) + TokenUsage(unanswered_calls=1))
                    raise
                self.stats.waited_s += 0.0 if completion is None else max(0.0, time.monotonic() - t0 - completion.latency_s)
            else:
                await self._admit(messages, options)
                if self._native_async:
                    completion = await self.inner.acomplete(messages, **options)
                else:
                    loop = asyncio.get_running_loop()
                    call = functools.partial(self.inner.complete, messages, **options)  # in the caller's context (call roles)
                    try:
                        completion = await loop.run_in_executor(self._executor(), contextvars.copy_context().run, call)
                    except asyncio.CancelledError as exc:  # the thread goes on: the request is sent, its answer unread
                        keep_spent(exc, spent_usage(exc) + TokenUsage(unanswered_calls=1))
                        raise
        except RateLimited as exc:
            self.stats.rate_limited += 1
            if not self._pool_limits:  # the pool's thread paused already
                self.pause(_pause_s(exc))
            raise
        if completion.usage.output_tokens is not None:
            self._output_seen[0] += completion.usage.output_tokens
            self._output_seen[1] += 1
        return completion

    def _complete(self, messages: list[ChatMessage], **options: Any) -> Completion:
        """Synchronous calls go through the same limiter (one event loop per call: for scripts that call
        one at a time; the harness calls asynchronously)."""
        return run_sync(self._acomplete(messages, **options))

    def close(self) -> None:
        """Stop the thread pool and close the inner provider."""
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)
        super().close()
