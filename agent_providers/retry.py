"""The one retry layer: capped exponential backoff with jitter, decided from the error class alone.

Pattern from inspect_ai's ``RetryDecision`` and the backoff of anthropic-sdk-python ``_base_client.py``
(SDK retries are switched off in our adapters so that retries are never stacked).

Delay before retry ``n`` (``n = 1`` after the first failed attempt):

* if the error carries ``retry_after_s`` (server ``retry-after`` on :class:`RateLimited` /
  :class:`ProviderOverloaded`): ``min(retry_after_s, max_delay_s)``, no jitter;
* else ``min(base_delay_s * 2 ** (n - 1), max_delay_s) * (1 + jitter * u)`` with ``u`` uniform on
  [-1, 1) from ``random.Random(seed)``, then capped again at ``max_delay_s``.

A server ``retry-after`` that is not a finite number >= 0 never reaches here (the adapters treat it as
absent, :func:`agent_providers.errors_map.parse_retry_after`); :meth:`RetryPolicy.delay_s` checks again.

Only errors whose class has ``retryable = True`` are retried (:class:`RateLimited`,
:class:`ProviderOverloaded`, :class:`ProviderTimeout`, :class:`ProviderConnectionError`,
:class:`EmptyResponse`, :class:`UnreadableResponse`); everything else propagates at once
(:class:`ResponseRefused`, :class:`ResponseTruncated`, :class:`AuthenticationFailed`, ...).

Usage of failed attempts is never lost: a failed attempt that was billed (an empty or unreadable
answer) carries its usage (``spent_usage``), and the retry layer sums them. A completion returned after
retries has ``usage`` = the billed failed attempts + its own (``calls`` counts every billed attempt);
the error re-raised when the layer gives up has ``usage`` = the sum over all its attempts. A request
stopped from outside (a member's deadline or a cancellation: ``asyncio.CancelledError``; Ctrl-C), during an
attempt or while waiting to retry, leaves with the same sum attached (the attempt in flight counted as an
``unanswered_calls``), so the deadline's caller charges every attempt the server billed
(:class:`agent_providers.UsageMeter`).
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from agent_schemas import Completion, ReconcileError, TokenUsage
from agent_providers.base import Provider, WrappingProvider, keep_spent, spent_usage

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetryPolicy:
    """How many attempts and how long to wait between them.

    Parameters
    ----------
    max_attempts : int
        Total attempts including the first (>= 1). ``1`` disables retries.
    base_delay_s : float
        Delay before the first retry, seconds (>= 0).
    max_delay_s : float
        Cap on any single delay, seconds (>= base_delay_s), also on server ``retry-after`` values.
    jitter : float
        Relative jitter in [0, 1]: the backoff is multiplied by ``1 + jitter * u``, ``u`` in [-1, 1).
    seed : int, optional
        Seed of the jitter generator, for reproducible delays.

    Raises
    ------
    ValueError
        If a parameter is out of range (the message names it and its value).
    """

    max_attempts: int = 4
    base_delay_s: float = 1.0
    max_delay_s: float = 30.0
    jitter: float = 0.2
    seed: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.max_attempts, int) or self.max_attempts < 1:
            raise ValueError(f"max_attempts must be an integer >= 1, got {self.max_attempts!r}")
        if self.base_delay_s < 0:
            raise ValueError(f"base_delay_s must be >= 0 seconds, got {self.base_delay_s!r}")
        if self.max_delay_s < self.base_delay_s:
            raise ValueError(f"max_delay_s must be >= base_delay_s ({self.base_delay_s}), got {self.max_delay_s!r}")
        if not 0.0 <= self.jitter <= 1.0:
            raise ValueError(f"jitter must be in [0, 1], got {self.jitter!r}")

    def backoff_s(self, retry_number: int, rng: random.Random) -> float:
        """Backoff before retry ``retry_number`` (1-based) without a server hint, in seconds."""
        raw = min(self.base_delay_s * 2 ** (retry_number - 1), self.max_delay_s)
        u = rng.uniform(-1.0, 1.0) if self.jitter else 0.0
        return min(max(raw * (1.0 + self.jitter * u), 0.0), self.max_delay_s)

    def delay_s(self, retry_number: int, error: BaseException, rng: random.Random) -> float:
        """Delay before retry ``retry_number`` after ``error``: the server's retry-after if any, else backoff."""
        hint = getattr(error, "retry_after_s", None)
        if isinstance(hint, (int, float)) and math.isfinite(hint) and hint >= 0:
            return min(float(hint), self.max_delay_s)
        return self.backoff_s(retry_number, rng)  # no hint, or an unusable one (NaN, inf, negative)


class RetryingProvider(WrappingProvider):
    """Wrap a provider with :class:`RetryPolicy`; counts attempts for the harness.

    Counters (attempts on the inner provider): ``calls = ok + retries + failures``, where ``retries``
    counts failed attempts that were followed by another attempt and ``failures`` counts failed attempts
    that ended a request (not retryable, or attempts exhausted).

    Parameters
    ----------
    inner : Provider
        The adapter to call.
    policy : RetryPolicy, optional
        Default ``RetryPolicy()``.
    sleep : callable, optional
        ``sleep(seconds)`` for sync calls (default :func:`time.sleep`); inject a recorder in tests.
    async_sleep : callable, optional
        ``await async_sleep(seconds)`` for async calls (default :func:`asyncio.sleep`).

    The returned :class:`Completion` has ``attempts`` = number of attempts made (1 = no retry) and
    ``usage`` = its own usage plus that of the billed failed attempts before it; a cache hit from an
    inner :class:`CachingProvider` is returned unchanged (``attempts=0``). The last error is re-raised
    when attempts run out (or at once when not retryable) with ``details["attempts"]`` set and
    ``usage`` = the summed usage of every billed attempt (see the module doc).
    """

    def __init__(
        self,
        inner: Provider,
        policy: RetryPolicy | None = None,
        *,
        sleep: Callable[[float], None] | None = None,
        async_sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        super().__init__(inner)
        self.policy = policy or RetryPolicy()
        self._sleep = sleep or time.sleep
        self._async_sleep = async_sleep or asyncio.sleep
        self._rng = random.Random(self.policy.seed)
        self._lock = threading.Lock()
        self.calls = 0
        self.ok = 0
        self.retries = 0
        self.failures = 0
        #: Delays actually waited, seconds, in order.
        self.delays_s: list[float] = []

    def __repr__(self) -> str:
        return f"RetryingProvider({self.inner!r}, max_attempts={self.policy.max_attempts})"

    def stats(self) -> dict[str, int]:
        """Counters as a dict: ``calls``, ``ok``, ``retries``, ``failures`` (attempt counts)."""
        with self._lock:
            return {"calls": self.calls, "ok": self.ok, "retries": self.retries, "failures": self.failures}

    def _after_failure(self, attempt: int, exc: Exception, spent: TokenUsage) -> float | None:
        """Book a failed attempt (``spent``: billed usage of every attempt so far, this one included);
        return the delay before the next attempt, or None to give up (then ``exc`` carries ``spent``)."""
        retry = isinstance(exc, ReconcileError) and exc.retryable and attempt < self.policy.max_attempts
        with self._lock:
            self.calls += 1
            if not retry:
                self.failures += 1
            else:
                self.retries += 1
                delay = self.policy.delay_s(attempt, exc, self._rng)
                self.delays_s.append(delay)
        if not retry:
            if isinstance(exc, ReconcileError):
                exc.details["attempts"] = attempt
            if spent.calls or spent.unanswered_calls or getattr(exc, "usage", None) is not None:
                keep_spent(exc, spent)
            return None
        log.info("%s: attempt %d failed with %s; retrying in %.2f s", self.spec, attempt, type(exc).__name__, delay)
        return delay

    def _after_success(self, attempt: int, completion: Completion, spent: TokenUsage) -> Completion:
        with self._lock:
            self.calls += 1
            self.ok += 1
        if completion.from_cache:
            return completion
        return completion.model_copy(update={"attempts": attempt, "usage": spent + completion.usage})

    def _complete(self, messages, **options) -> Completion:
        attempt, spent = 0, TokenUsage()
        while True:
            attempt += 1
            try:
                c = self.inner.complete(messages, **options)
            except Exception as exc:
                spent = spent + spent_usage(exc)
                delay = self._after_failure(attempt, exc, spent)
                if delay is None:
                    raise
            except BaseException as exc:  # Ctrl-C with an attempt in flight
                keep_spent(exc, spent + spent_usage(exc))
                raise
            else:
                return self._after_success(attempt, c, spent)
            try:
                self._sleep(delay)
            except BaseException as exc:  # stopped while waiting to retry: the attempts made stay spent
                keep_spent(exc, spent)
                raise

    async def _acomplete(self, messages, **options) -> Completion:
        attempt, spent = 0, TokenUsage()
        while True:
            attempt += 1
            try:
                c = await self.inner.acomplete(messages, **options)
            except Exception as exc:
                spent = spent + spent_usage(exc)
                delay = self._after_failure(attempt, exc, spent)
                if delay is None:
                    raise
            except BaseException as exc:  # a deadline or a cancellation with an attempt in flight
                keep_spent(exc, spent + spent_usage(exc))  # that attempt is an unanswered call (the adapter says so)
                raise
            else:
                return self._after_success(attempt, c, spent)
            try:
                await self._async_sleep(delay)
            except BaseException as exc:  # cut by a deadline or a cancellation while waiting to retry
                keep_spent(exc, spent)
                raise
