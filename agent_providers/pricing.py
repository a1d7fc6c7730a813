"""A dated price table (USD per million tokens) and :func:`cost_usd` for a :class:`TokenUsage`.

Sources: the providers' public pricing pages,
https://www.anthropic.com/pricing (API section; also https://docs.claude.com/en/docs/about-claude/pricing)
and https://openai.com/api/pricing/ (also https://platform.openai.com/docs/pricing).

The figures were transcribed by hand from those pages as they stood at :data:`PRICES_AS_OF` and could not
be re-checked from this build machine (no web access). Prices change and this table may be stale; models
released later (e.g. ``claude-sonnet-4-6``, ``gpt-5.4``) are absent and cost ``None`` (unknown), never 0.
Check the pages above before quoting a cost in a paper. Costs computed here are for
comparing methods with each other (debate vs supervisor vs ensemble) under one price list, not invoices.

Conventions (see :mod:`agent_schemas.usage`): ``input_tokens`` is the whole prompt including cache reads
and cache writes, which are subsets of it. So

``cost = (input - cache_read - cache_write) * input_price + cache_read * cache_read_price
+ cache_write * cache_write_price + output * output_price``, all divided by 1e6.

Anthropic cache writes are priced at the 5-minute TTL rate (1.25 x input), the only TTL our adapter asks
for. OpenAI charges nothing extra for cache writes, so its ``cache_write`` price equals its input price.
Reasoning tokens are a subset of output tokens and are billed at the output price.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_schemas import TokenUsage

#: Month the table was transcribed (``YYYY-MM``); prices may have changed since.
PRICES_AS_OF = "2025-11"


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens for one model."""

    input: float
    """Uncached prompt tokens (USD / 1e6 tokens)."""
    output: float
    """Generated tokens, reasoning included (USD / 1e6 tokens)."""
    cache_read: float
    """Prompt tokens read from the prompt cache (USD / 1e6 tokens)."""
    cache_write: float
    """Prompt tokens written to the prompt cache (USD / 1e6 tokens)."""


def _anthropic(inp: float, out: float) -> ModelPrice:
    # Anthropic: cache read = 0.1 x input, 5-minute cache write = 1.25 x input.
    return ModelPrice(input=inp, output=out, cache_read=round(inp * 0.1, 6), cache_write=round(inp * 1.25, 6))


def _openai(inp: float, cached: float, out: float) -> ModelPrice:
    # OpenAI: cached input has its own price; writing to the cache costs the normal input price.
    return ModelPrice(input=inp, output=out, cache_read=cached, cache_write=inp)


#: USD per million tokens, keyed by model name without provider prefix or date suffix.
PRICES_USD_PER_MTOK: dict[str, ModelPrice] = {
    # --- Anthropic -----------------------------------------------------------------------------
    "claude-opus-4-5": _anthropic(5.00, 25.00),
    "claude-opus-4-1": _anthropic(15.00, 75.00),
    "claude-opus-4": _anthropic(15.00, 75.00),
    "claude-sonnet-4-5": _anthropic(3.00, 15.00),
    "claude-sonnet-4": _anthropic(3.00, 15.00),
    "claude-3-7-sonnet": _anthropic(3.00, 15.00),
    "claude-haiku-4-5": _anthropic(1.00, 5.00),
    "claude-3-5-haiku": _anthropic(0.80, 4.00),
    "claude-3-haiku": _anthropic(0.25, 1.25),
    # --- OpenAI --------------------------------------------------------------------------------
    "gpt-5": _openai(1.25, 0.125, 10.00),
    "gpt-5-mini": _openai(0.25, 0.025, 2.00),
    "gpt-5-nano": _openai(0.05, 0.005, 0.40),
    "gpt-4.1": _openai(2.00, 0.50, 8.00),
    "gpt-4.1-mini": _openai(0.40, 0.10, 1.60),
    "gpt-4.1-nano": _openai(0.10, 0.025, 0.40),
    "gpt-4o": _openai(2.50, 1.25, 10.00),
    "gpt-4o-mini": _openai(0.15, 0.075, 0.60),
    "o3": _openai(2.00, 0.50, 8.00),
    "o4-mini": _openai(1.10, 0.275, 4.40),
}

#: Provider prefixes whose models run on this machine and cost nothing per token.
FREE_PROVIDERS = ("local", "scripted")

# A dated snapshot name such as "claude-sonnet-4-5-20250929" or "gpt-4.1-mini-2025-04-14", or "-latest".
_SNAPSHOT_SUFFIX = re.compile(r"^-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


def price_for(model: str) -> ModelPrice | None:
    """Look up the price of ``model``.

    Parameters
    ----------
    model : str
        A bare model name (``"gpt-4.1-mini"``), a dated snapshot (``"claude-sonnet-4-5-20250929"``)
        or a provider-qualified one (``"anthropic/claude-sonnet-4-5"``).

    Returns
    -------
    ModelPrice or None
        None when the model is not in :data:`PRICES_USD_PER_MTOK` (unknown is not free).
    """
    name = model.split("/", 1)[1] if "/" in model else model
    name = name.strip().lower()
    if name in PRICES_USD_PER_MTOK:
        return PRICES_USD_PER_MTOK[name]
    # longest base name first so "gpt-4.1-mini-2025-04-14" never matches "gpt-4.1"
    for base in sorted(PRICES_USD_PER_MTOK, key=len, reverse=True):
        if name.startswith(base) and _SNAPSHOT_SUFFIX.match(name[len(base):]):
            return PRICES_USD_PER_MTOK[base]
    return None


def cost_usd(model: str, usage: TokenUsage) -> float | None:
    """Cost in USD of ``usage`` on ``model`` under the dated table (:data:`PRICES_AS_OF`).

    Parameters
    ----------
    model : str
        Model name, bare or provider-qualified. ``"local/..."`` and ``"scripted..."`` cost 0.0.
    usage : TokenUsage
        Token counts of one or more calls. ``input_tokens`` includes cache reads and writes.

    Returns
    -------
    float or None
        USD. None when the model's price is unknown or ``input_tokens``/``output_tokens`` is unknown.

    Examples
    --------
    >>> u = TokenUsage(input_tokens=1_000_000, output_tokens=100_000, cache_read_tokens=500_000, calls=1)
    >>> round(cost_usd("openai/gpt-4.1-mini", u), 4)  # 0.5M x 0.40 + 0.5M x 0.10 + 0.1M x 1.60
    0.41
    """
    prefix = model.split("/", 1)[0] if "/" in model else model
    if prefix in FREE_PROVIDERS:
        return 0.0
    price = price_for(model)
    if price is None or usage.input_tokens is None or usage.output_tokens is None:
        return None
    read = usage.cache_read_tokens or 0
    write = usage.cache_write_tokens or 0
    uncached = max(usage.input_tokens - read - write, 0)
    total = (
        uncached * price.input
        + read * price.cache_read
        + write * price.cache_write
        + usage.output_tokens * price.output
    )
    return total / 1e6
