"""Cost in USD of a :class:`TokenUsage`, from ``genai-prices``' dated price data (works offline).

Source: `genai-prices <https://github.com/pydantic/genai-prices>`_ (pydantic's curated price database;
every provider lists its pricing pages, e.g. https://www.anthropic.com/pricing#api and
https://openai.com/api/pricing/). We use the snapshot bundled with the installed package and never start
its network auto-update, so a cost is reproducible from the package version recorded in
:data:`PRICE_SOURCE` (written to every run's ``manifest.json``). Prices that changed over time are
applied for the date of the call.

Model ids are matched the way genai-prices matches them, exactly where prices differ between snapshots:

* OpenAI: the exact id or a listed snapshot id. ``gpt-4o-2024-05-13`` has its own price ($5 / $15 per
  million input / output tokens), not the ``gpt-4o`` alias's ($2.50 / $10); a snapshot genai-prices does
  not list (``gpt-4o-2099-01-01``) costs None (unknown), never the alias's price.
* Anthropic: the model id and every dated snapshot of it (``claude-sonnet-4-5-20250929``), since
  Anthropic prices a model, not its snapshots.

The adapters price the model id the API reports in the reply (the snapshot that actually answered).
An unknown model costs None, never 0; ``local/...``, ``scripted`` and ``sim`` cost 0.0 (they run here).

Conventions (see :mod:`agent_schemas.usage`; genai-prices uses the same): ``input_tokens`` is the whole
prompt, cache reads and cache writes are subsets of it, so

``cost = (input - cache_read - cache_write) * input_price + cache_read * cache_read_price
+ cache_write * cache_write_price + output * output_price``, all per million tokens.

Anthropic cache writes are priced at the 5-minute TTL rate (1.25 x input), the only TTL our adapter asks
for; OpenAI has no cache-write price, so its cache writes cost the input price. Reasoning tokens are a
subset of output tokens, billed at the output price. Tiered prices (Anthropic's long-context rate above
200k prompt tokens) apply per call, so price each reply's usage, not a sum over calls.

Batch pricing (the Batch APIs bill 50% of list) is expressed with ``cost_usd(..., batch=True)``
(genai-prices' ``processing: batch`` price variants); None when a model has no batch price listed.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from agent_schemas import TokenUsage

log = logging.getLogger(__name__)

#: Registry prefixes and the genai-prices provider id their models are priced under.
PRICED_PROVIDERS = {"openai": "openai", "anthropic": "anthropic"}
#: Provider prefixes whose models run on this machine and cost nothing per token.
FREE_PROVIDERS = ("local", "scripted", "sim")

try:
    _GENAI_PRICES_VERSION: str | None = version("genai-prices")
except PackageNotFoundError:  # pragma: no cover - a core dependency on Python >= 3.11
    _GENAI_PRICES_VERSION = None

#: Where prices come from: the genai-prices version whose bundled data is used ("unavailable": costs None).
PRICE_SOURCE = (
    f"genai-prices {_GENAI_PRICES_VERSION} (bundled price data, https://github.com/pydantic/genai-prices)"
    if _GENAI_PRICES_VERSION
    else "unavailable: genai-prices is not installed, every remote cost is None"
)
#: Release month (``YYYY-MM``) of genai-prices 0.2.3, the version this module was checked against (its
#: newest price note reads "as of 2026-10-14"); a newer installed version has newer data, see PRICE_SOURCE.
PRICES_AS_OF = "2026-11"


@dataclass(frozen=True)
class ModelPrice:
    """USD per million tokens for one model at one date (a view of genai-prices' data). Tiered prices
    show their base tier (prompts under the first threshold); :func:`cost_usd` applies the tiers."""

    model_id: str
    """genai-prices' id of the matched model, e.g. ``"gpt-4o-2024-05-13"``."""
    input: float | None
    """Uncached prompt tokens (USD / 1e6 tokens)."""
    output: float | None
    """Generated tokens, reasoning included (USD / 1e6 tokens)."""
    cache_read: float | None
    """Prompt tokens read from the prompt cache (USD / 1e6 tokens); None when not listed."""
    cache_write: float | None
    """Prompt tokens written to the prompt cache, 5-minute TTL (USD / 1e6 tokens); None when not listed
    (OpenAI: writes cost the input price)."""


@functools.lru_cache(maxsize=1)
def _genai_prices() -> Any:
    try:
        import genai_prices
    except ImportError:
        log.warning("genai-prices is not installed: costs are unknown (None). pip install 'genai-prices>=0.2.3' "
                    "(needs Python >= 3.11)")
        return None
    return genai_prices


def _split(model: str) -> tuple[str | None, str]:
    """``"openai/gpt-4o"`` -> ``("openai", "gpt-4o")``; a bare name -> ``(None, name)``."""
    prefix, sep, name = model.partition("/")
    return (prefix, name) if sep else (None, model)


def _lookup(model: str) -> tuple[str | None, Any] | None:
    """``(genai-prices provider id, ModelInfo)`` for ``model``, or None when it is not priced."""
    gp = _genai_prices()
    prefix, name = _split(model.strip())
    if gp is None or not name or (prefix is not None and prefix not in PRICED_PROVIDERS):
        return None
    provider_id = PRICED_PROVIDERS.get(prefix) if prefix else None
    try:
        provider, info = gp.data_snapshot.get_snapshot().find_provider_model(name.lower(), None, provider_id, None)
    except LookupError:
        return None
    return provider.id, info


def _per_mtok(value: Any) -> float | None:
    if value is None:
        return None
    return float(value.base) if hasattr(value, "tiers") else float(value)


def price_for(model: str, *, on: dt.datetime | None = None) -> ModelPrice | None:
    """Look up the price of ``model``.

    Parameters
    ----------
    model : str
        A bare model id (``"gpt-4.1-mini"``), a dated snapshot (``"claude-sonnet-4-5-20250929"``) or a
        provider-qualified one (``"anthropic/claude-sonnet-4-5"``).
    on : datetime, optional
        Date of the prices (default now, UTC).

    Returns
    -------
    ModelPrice or None
        None when genai-prices does not price the model (unknown is not free).
    """
    found = _lookup(model)
    if found is None:
        return None
    _, info = found
    p = info.get_prices(on or dt.datetime.now(dt.timezone.utc))
    return ModelPrice(
        model_id=info.id,
        input=_per_mtok(getattr(p, "input_mtok", None)),
        output=_per_mtok(getattr(p, "output_mtok", None)),
        cache_read=_per_mtok(getattr(p, "cache_read_mtok", None)),
        cache_write=_per_mtok(getattr(p, "cache_write_mtok", None)),
    )


def cost_usd(model: str, usage: TokenUsage, *, batch: bool = False, on: dt.datetime | None = None) -> float | None:
    """Cost in USD of ``usage`` on ``model`` (genai-prices data, see the module doc).

    Parameters
    ----------
    model : str
        Model id, bare or provider-qualified. ``"local/..."`` and ``"scripted..."`` cost 0.0;
        ``"openai-compatible/..."`` and unknown models cost None.
    usage : TokenUsage
        Token counts of one reply (tiered prices apply per call). ``input_tokens`` includes cache
        reads and writes.
    batch : bool
        Price at the Batch API rate (50% of list for OpenAI and Anthropic); None when not listed.
    on : datetime, optional
        Date of the call, for prices that changed over time (default now, UTC).

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
    prefix, _ = _split(model)
    if (prefix or model) in FREE_PROVIDERS:
        return 0.0
    if usage.input_tokens is None or usage.output_tokens is None:
        return None
    found = _lookup(model)
    if found is None:
        return None
    provider_id, info = found
    gp = _genai_prices()
    snapshot = gp.data_snapshot.get_snapshot()
    provider = next(p for p in snapshot.providers if p.id == provider_id)
    priced = gp.Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens or None,
        cache_write_tokens=usage.cache_write_tokens or None,
    )
    context = {"processing": "batch"} if batch else None
    try:
        calc = info.calc_price(priced, provider, genai_request_timestamp=on, price_context=context)
    except (LookupError, ValueError) as exc:  # e.g. a usage unit the model has no price for
        log.debug("no price for %s: %s", model, exc)
        return None
    if batch and info.get_prices(on or dt.datetime.now(dt.timezone.utc), context) == info.get_prices(
        on or dt.datetime.now(dt.timezone.utc)
    ):
        return None  # no batch variant listed: the list price would be wrong
    return float(calc.total_price)
