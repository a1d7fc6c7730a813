"""A fault-injecting provider wrapper for reliability tests of the harness.

Each call draws, from a seeded generator, whether to fail and how: rate limit (with a retry-after),
overload (529), timeout, malformed JSON (the answer text is corrupted) or truncation (stop reason
``length``). Everything else passes through to the wrapped provider. Counters record what was injected
so a test can reconcile ``calls = ok + failed + retried``.
"""

from __future__ import annotations

import random
import threading
from collections import Counter

from agent_providers.base import Provider, WrappingProvider
from agent_schemas import Completion, ProviderOverloaded, ProviderTimeout, RateLimited

FAULT_KINDS = ("rate_limit", "overload", "timeout", "malformed_json", "truncation")


class FaultInjectingProvider(WrappingProvider):
    """Wrap ``inner`` and inject faults at seeded rates.

    Parameters
    ----------
    inner : Provider
        Provider that answers when no fault is drawn.
    rates : dict[str, float]
        Probability per call of each fault kind in :data:`FAULT_KINDS`; their sum must be <= 1.
    seed : int
        Seed of the fault draws (reproducible runs).
    retry_after_s : float
        Retry-after in seconds attached to injected rate limits and overloads.

    Raises
    ------
    ValueError
        For an unknown fault kind, a negative rate, or rates summing to more than 1.
    """

    def __init__(self, inner: Provider, rates: dict[str, float], *, seed: int = 0, retry_after_s: float = 0.0) -> None:
        unknown = set(rates) - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; valid: {', '.join(FAULT_KINDS)}")
        if any(r < 0 for r in rates.values()):
            raise ValueError(f"fault rates must be >= 0, got {rates}")
        if sum(rates.values()) > 1 + 1e-12:
            raise ValueError(f"fault rates sum to {sum(rates.values()):.3f} > 1")
        super().__init__(inner)
        self.rates = dict(rates)
        self.retry_after_s = retry_after_s
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self.injected: Counter[str] = Counter()
        self.passed = 0

    def _draw(self) -> str | None:
        with self._lock:
            u = self._rng.random()
        acc = 0.0
        for kind in FAULT_KINDS:
            acc += self.rates.get(kind, 0.0)
            if u < acc:
                return kind
        return None

    def _raise_or_none(self, kind: str | None) -> None:
        if kind is None or kind in ("malformed_json", "truncation"):
            return
        with self._lock:
            self.injected[kind] += 1
        # the same classes and context the adapters' error mapping gives (agent_providers.errors_map)
        ctx = {"provider": self.spec, "model": self.model}
        if kind == "rate_limit":
            raise RateLimited(f"{self.spec}: HTTP 429: injected rate limit", retry_after_s=self.retry_after_s,
                              status_code=429, **ctx)
        if kind == "overload":
            raise ProviderOverloaded(f"{self.spec}: HTTP 529: injected overload", retry_after_s=self.retry_after_s,
                                     status_code=529, **ctx)
        timeout_s = getattr(self.inner, "timeout_s", None)
        raise ProviderTimeout(f"{self.spec}: injected timeout after {timeout_s} s", timeout_s=timeout_s, **ctx)

    def _corrupt(self, kind: str | None, c: Completion) -> Completion:
        with self._lock:
            if kind in ("malformed_json", "truncation"):
                self.injected[kind] += 1
            else:
                self.passed += 1
        if kind == "malformed_json":
            return c.model_copy(update={"text": c.text.replace("{", "(").replace("}", ")")})
        if kind == "truncation":
            return c.model_copy(update={"text": c.text[: max(1, len(c.text) // 2)], "stop_reason": "length"})
        return c

    def _complete(self, messages, **options) -> Completion:
        kind = self._draw()
        self._raise_or_none(kind)
        c = self.inner.complete(messages, **options)
        return self._corrupt(kind, c)

    async def _acomplete(self, messages, **options) -> Completion:
        kind = self._draw()
        self._raise_or_none(kind)
        c = await self.inner.acomplete(messages, **options)
        return self._corrupt(kind, c)
