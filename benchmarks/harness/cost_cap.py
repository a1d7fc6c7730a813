"""The cost cap of a run (``--max-cost USD``): what was paid, what in-flight questions will cost, when to stop.

**Paid.** :class:`MeteredProvider` sits between the response cache and the retry layer of every provider
(cache -> meter -> retry -> rate limit -> adapter), so a :class:`SpendMeter` counts the USD of every
billed answer, failed answers and retried attempts included (``spent_usage``), and never a cache hit (it
was paid once, when it was bought). The manifest keeps the run's total over sessions
(``spend.paid_usd_total``), so a resumed run's cap covers what earlier sessions paid.

**Estimated.** A question not yet finished is expected to cost :attr:`CostCap.per_question_usd`: the
mean cost of the questions finished so far (their ledgers), or before any finished, the dry-run
estimate of the run (:func:`benchmarks.harness.estimate.estimate_run`: the run's own prompts, full-length answers,
genai-prices; at batch prices for ``--batch``).

**Rule.** A question starts only if ``paid + (in flight + 1) x estimate <= cap``; once that fails no
new question starts and the run stops when the questions in flight finish. Should the money actually
paid reach the cap while questions are in flight (the estimate was low), those questions are cancelled:
their calls so far stay paid, counted and cached, and they are left pending for a resume. The manifest
records why the run stopped (``stopped``). ``--resume <id> --max-cost <higher>`` continues it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from agent_providers import Provider, WrappingProvider, spent_usage
from agent_schemas import ChatMessage, Completion

__all__ = ["CostCap", "MeteredProvider", "SpendMeter", "record_cost"]


class SpendMeter:
    """USD paid so far by every provider that reports to it (thread-safe); unknown costs count 0."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.paid_usd = 0.0
        self.calls = 0

    def add(self, usd: float | None, calls: int = 0) -> None:
        """Count ``usd`` paid for ``calls`` billed answers."""
        with self._lock:
            self.paid_usd += usd or 0.0
            self.calls += calls


class MeteredProvider(WrappingProvider):
    """Reports the cost of every call that reached the provider to a :class:`SpendMeter` (see the module doc)."""

    def __init__(self, inner: Provider, meter: SpendMeter) -> None:
        super().__init__(inner)
        self.meter = meter

    def _count(self, completion: Completion) -> Completion:
        if not completion.from_cache:
            self.meter.add(completion.usage.cost_usd, completion.usage.calls)
        return completion

    async def _acomplete(self, messages: list[ChatMessage], **options: Any) -> Completion:
        try:
            return self._count(await self.inner.acomplete(messages, **options))
        except BaseException as exc:  # a cancelled question's attempts were paid too
            u = spent_usage(exc)
            self.meter.add(u.cost_usd, u.calls)
            raise

    def _complete(self, messages: list[ChatMessage], **options: Any) -> Completion:
        try:
            return self._count(self.inner.complete(messages, **options))
        except BaseException as exc:  # a cancelled question's attempts were paid too
            u = spent_usage(exc)
            self.meter.add(u.cost_usd, u.calls)
            raise


def record_cost(record: dict[str, Any]) -> float:
    """USD of one question record: its ledger's ``cost_usd`` summed (unknown counts 0)."""
    return float(sum(e.get("cost_usd") or 0.0 for e in record.get("ledger", [])))


@dataclass
class CostCap:
    """The admission rule of a capped run (module doc).

    Parameters
    ----------
    max_usd : float
        The cap (USD, over every session of the run).
    paid_before_usd : float
        USD paid by earlier sessions.
    prior_per_question_usd : float
        The dry-run estimate of one question (USD), used until questions finish.
    finished_costs : list of float
        Costs (USD) of the questions finished so far (earlier sessions' too).
    """

    max_usd: float
    paid_before_usd: float = 0.0
    prior_per_question_usd: float = 0.0
    finished_costs: list[float] = field(default_factory=list)
    paid_now_usd: float = 0.0
    """USD paid in this session (set by the executor from its meter)."""

    @property
    def paid_usd(self) -> float:
        """USD paid over every session of the run."""
        return self.paid_before_usd + self.paid_now_usd

    @property
    def per_question_usd(self) -> float:
        """Expected USD of a question: the mean of the finished ones, else the prior."""
        return sum(self.finished_costs) / len(self.finished_costs) if self.finished_costs else self.prior_per_question_usd

    def may_start(self, in_flight: int) -> bool:
        """True if one more question fits: ``paid + (in_flight + 1) x per_question <= max``."""
        return self.paid_usd + (in_flight + 1) * self.per_question_usd <= self.max_usd + 1e-12

    def exhausted(self) -> bool:
        """True once the money paid has reached the cap (in-flight questions are then cancelled)."""
        return self.paid_usd >= self.max_usd - 1e-12

    def stop_record(self, *, n_not_started: int, n_cancelled: int) -> dict[str, Any]:
        """The manifest's ``stopped`` entry: why the run stopped, with the figures the rule used."""
        return {"reason": "max_cost", "max_cost_usd": self.max_usd, "paid_usd": round(self.paid_usd, 6),
                "estimate_per_question_usd": round(self.per_question_usd, 6), "n_not_started": n_not_started,
                "n_cancelled": n_cancelled,
                "note": (f"no new question started: paid ${self.paid_usd:.4f} plus the estimate of the next question "
                         f"(${self.per_question_usd:.4f} each, in flight included) would exceed the cap of "
                         f"${self.max_usd:.2f}; resume with a higher --max-cost to continue")}
