"""Token usage as a value that adds, and a ledger keyed by (method, role, model).

Conventions (normalised by each provider adapter, see ``agent_providers``):

* ``input_tokens`` is the *total* prompt size, including cache reads and cache writes.
  ``cache_read_tokens`` and ``cache_write_tokens`` are a breakdown (subsets) of it.
* ``output_tokens`` is the total generated, including reasoning; ``reasoning_tokens`` is a subset.
* ``None`` means "unknown" (the provider did not report it, or reported a malformed value), never 0.
* ``calls`` counts **billed responses**: every answer a provider delivered to a completion request
  (HTTP 2xx, or an embedded model's finished generation), whether or not it could be used. An empty,
  refused, truncated or unreadable answer is a billed response; an HTTP error status (429, 5xx, 4xx),
  a timeout or a connection failure is not (no answer arrived). So after retries, a completion's
  ``calls`` is the number of billed attempts behind it (see ``agent_providers.retry``), and a failed
  call's error carries the usage of the billed attempts it made (``agent_providers.base.spent_usage``).
  A response-cache hit replays the usage of the answer it stores, ``calls`` included: that is what
  the answer cost when it was bought; ``Completion.from_cache`` says it was not bought again.
* ``unanswered_calls`` counts requests an adapter had sent (or was sending) when the caller stopped
  waiting for them: a member's deadline, a cancelled question, Ctrl-C. No answer arrived, so their tokens
  and cost are unknown (the sum's token fields do not include them), but the provider may have received
  and billed them (a non-streaming request is usually generated to the end). A server's count of the
  requests it answered is ``calls + unanswered_calls`` (HTTP error statuses aside).

Addition follows inspect_ai's ``ModelUsage.__add__``: None + None stays None; a known value plus an
unknown one gives the known value (so a sum is a lower bound when some parts were unreported).
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field


def _add(a: int | float | None, b: int | float | None) -> int | float | None:
    if a is None and b is None:
        return None
    return (a or 0) + (b or 0)


class TokenUsage(BaseModel):
    """Tokens, calls and USD cost of one or more provider calls; ``a + b`` sums field by field."""

    model_config = ConfigDict(frozen=True)

    input_tokens: int | None = Field(None, ge=0, description="Prompt tokens in total, including cache reads and writes (tokens).")
    output_tokens: int | None = Field(None, ge=0, description="Generated tokens in total, including reasoning tokens (tokens).")
    cache_read_tokens: int | None = Field(None, ge=0, description="Prompt tokens served from the provider's prompt cache; subset of input_tokens (tokens).")
    cache_write_tokens: int | None = Field(None, ge=0, description="Prompt tokens written to the provider's prompt cache; subset of input_tokens (tokens).")
    reasoning_tokens: int | None = Field(None, ge=0, description="Hidden reasoning tokens; subset of output_tokens (tokens).")
    calls: int = Field(0, ge=0, description="Billed provider responses summed here, failed answers (empty, refused, truncated, unreadable) included; a cache hit replays its stored answer's count (count).")
    unanswered_calls: int = Field(0, ge=0, description="Requests sent whose answer was never read because the caller stopped waiting (a deadline, a cancellation): possibly billed, tokens unknown (count).")
    cost_usd: float | None = Field(None, ge=0, description="Cost in USD from genai-prices' dated price data (agent_providers.pricing); None when the model's price is unknown.")

    def __add__(self, other: "TokenUsage") -> "TokenUsage":
        if not isinstance(other, TokenUsage):
            return NotImplemented
        return TokenUsage(
            input_tokens=_add(self.input_tokens, other.input_tokens),
            output_tokens=_add(self.output_tokens, other.output_tokens),
            cache_read_tokens=_add(self.cache_read_tokens, other.cache_read_tokens),
            cache_write_tokens=_add(self.cache_write_tokens, other.cache_write_tokens),
            reasoning_tokens=_add(self.reasoning_tokens, other.reasoning_tokens),
            calls=self.calls + other.calls,
            unanswered_calls=self.unanswered_calls + other.unanswered_calls,
            cost_usd=_add(self.cost_usd, other.cost_usd),
        )

    def __radd__(self, other: object) -> "TokenUsage":
        # lets sum([...]) start from 0
        if other == 0:
            return self
        return NotImplemented  # type: ignore[return-value]

    @property
    def total_tokens(self) -> int | None:
        """Input plus output tokens, or None when both are unknown."""
        return _add(self.input_tokens, self.output_tokens)  # type: ignore[return-value]

    @classmethod
    def sum(cls, usages: Iterable["TokenUsage"]) -> "TokenUsage":
        """Sum an iterable of usages; an empty iterable gives an all-unknown usage with 0 calls."""
        total = cls()
        for u in usages:
            total = total + u
        return total


class UsageEntry(BaseModel):
    """One ledger row: the usage of one (method, role, model) key."""

    method: str = Field(description="Reconciliation method or pipeline stage that spent the tokens, e.g. 'ensemble', 'debate'.")
    role: str = Field(description="Agent role: 'forecaster', 'bull', 'bear', 'supervisor', ...")
    model: str = Field(description="Provider-qualified model name, e.g. 'local/smollm2'.")
    usage: TokenUsage = Field(default_factory=TokenUsage, description="Summed usage for this key.")


class UsageLedger(BaseModel):
    """Usage keyed by (method, role, model); per-method and per-role totals fall out of one structure.

    Examples
    --------
    >>> ledger = UsageLedger()
    >>> ledger.record("debate", "bull", "scripted", TokenUsage(input_tokens=10, output_tokens=5, calls=1))
    >>> ledger.record("debate", "bear", "scripted", TokenUsage(input_tokens=12, output_tokens=4, calls=1))
    >>> ledger.by_method()["debate"].input_tokens
    22
    """

    entries: list[UsageEntry] = Field(default_factory=list, description="One row per (method, role, model) key.")

    def _find(self, method: str, role: str, model: str) -> UsageEntry | None:
        for e in self.entries:
            if (e.method, e.role, e.model) == (method, role, model):
                return e
        return None

    def record(self, method: str, role: str, model: str, usage: TokenUsage) -> None:
        """Add ``usage`` to the row for (method, role, model), creating it if needed."""
        entry = self._find(method, role, model)
        if entry is None:
            self.entries.append(UsageEntry(method=method, role=role, model=model, usage=usage))
        else:
            entry.usage = entry.usage + usage

    def merge(self, other: "UsageLedger") -> "UsageLedger":
        """Add every row of ``other`` into this ledger (in place) and return self."""
        for e in other.entries:
            self.record(e.method, e.role, e.model, e.usage)
        return self

    def __add__(self, other: "UsageLedger") -> "UsageLedger":
        out = UsageLedger()
        out.merge(self)
        out.merge(other)
        return out

    def total(self) -> TokenUsage:
        """Usage summed over all rows."""
        return TokenUsage.sum(e.usage for e in self.entries)

    def _group(self, attr: str) -> dict[str, TokenUsage]:
        out: dict[str, TokenUsage] = {}
        for e in self.entries:
            key = getattr(e, attr)
            out[key] = out.get(key, TokenUsage()) + e.usage
        return out

    def by_method(self) -> dict[str, TokenUsage]:
        """Usage summed per method."""
        return self._group("method")

    def by_role(self) -> dict[str, TokenUsage]:
        """Usage summed per role."""
        return self._group("role")

    def by_model(self) -> dict[str, TokenUsage]:
        """Usage summed per model."""
        return self._group("model")

    def to_records(self) -> list[dict]:
        """Flat dicts (method, role, model, and every TokenUsage field), e.g. for ``pandas.DataFrame``."""
        return [
            {"method": e.method, "role": e.role, "model": e.model, **e.usage.model_dump()}
            for e in self.entries
        ]
