"""Providers by name, with SDKs imported lazily (pattern from inspect_ai ``model/_providers``).

Spec strings:

=========================================  ==========================================================
``"anthropic/<model>"``                    :class:`AnthropicProvider` (needs ``ANTHROPIC_API_KEY``)
``"openai/<model>"``                       :class:`OpenAIProvider` (needs ``OPENAI_API_KEY``)
``"openai-compatible/<model>@<base_url>"`` :class:`OpenAIProvider` against Ollama / vLLM / llama.cpp
``"local/smollm2"`` or ``"local/<path>"``  :class:`LocalLlamaProvider` (embedded llama.cpp, no network)
``"scripted"``                             :class:`ScriptedProvider` (tests, notebooks)
``"sim"`` or ``"sim/<name>=<value>,..."``  :class:`SimulatorProvider`: a seeded simulation, not a model
=========================================  ==========================================================

Remote providers come wrapped in the one retry layer (:class:`RetryingProvider`) unless ``retry=False``.
Specs are written anywhere only through :func:`agent_providers.credentials.redact_spec`.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent_schemas import UnknownProvider
from agent_providers.base import Provider
from agent_providers.credentials import redact_spec

if TYPE_CHECKING:
    from agent_providers.retry import RetryPolicy

log = logging.getLogger(__name__)

KNOWN_PREFIXES = ("anthropic", "openai", "openai-compatible", "local", "scripted", "sim")
#: Prefixes of providers reached over the network: wrapped in the retry layer by default.
REMOTE_PREFIXES = ("anthropic", "openai", "openai-compatible")


def split_specs(text: str) -> list[str]:
    """The provider specs of a comma-separated list (``--provider``): a ``name=value`` part continues the
    simulator spec before it, whose parameters are themselves comma-separated.

    Examples
    --------
    >>> split_specs("sim/scale=0.6,rho=0.5, local/smollm2")
    ['sim/scale=0.6,rho=0.5', 'local/smollm2']
    """
    specs: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if specs and specs[-1].startswith("sim/") and "/" not in part and "=" in part:
            specs[-1] += "," + part
        else:
            specs.append(part)
    return specs


def get_provider(spec: str, *, retry: "bool | RetryPolicy" = True, **kwargs) -> Provider:
    """Build a provider from a spec string such as ``"anthropic/claude-sonnet-4-5"``.

    Parameters
    ----------
    spec : str
        ``"<prefix>/<model>"`` (see the module table).
    retry : bool or RetryPolicy
        Remote providers (``anthropic``, ``openai``, ``openai-compatible``) are returned wrapped in
        :class:`RetryingProvider`, the one retry layer (the SDKs' own retries are off), so
        ``get_provider("anthropic/...").complete(...)`` survives a 429 or 529: ``True`` (default) uses
        ``RetryPolicy()`` (4 attempts, backoff from 1 s, capped at 30 s, honouring ``retry-after``); a
        :class:`RetryPolicy` sets it; ``False`` returns the bare adapter (for callers that add their own
        retry layer, like the benchmark runner: never stack two). ``scripted`` and ``local`` are never
        wrapped: a scripted provider replays its queue exactly (a retry would consume queued answers
        and hide the failures a test asked for), and the embedded model fails only deterministically
        (a prompt over ``n_ctx``, a bad grammar), so a retry would repeat the same failure.
    **kwargs
        Passed to the provider's constructor (e.g. ``api_key``, ``base_url``, ``n_threads``).

    Raises
    ------
    UnknownProvider
        If the prefix is not one of ``anthropic``, ``openai``, ``openai-compatible``, ``local``, ``scripted``,
        ``sim``, an ``openai-compatible`` spec lacks ``@<base_url>``, or a ``sim`` spec has invalid parameters. Messages show the spec redacted.
    MissingDependency
        If the provider's SDK is not installed (the message names the ``pip install`` that fixes it).
    AuthenticationFailed, BadRequest
        From the provider's constructor (no key; credentials in a URL's user info; a redacted query
        value whose ``OPENAI_COMPATIBLE_QUERY_<NAME>`` variable is unset).
    """
    if not isinstance(spec, str) or not spec.strip():
        raise UnknownProvider(f"provider spec must be a non-empty string, got {spec!r}")
    spec = spec.strip()
    prefix, _, rest = spec.partition("/")
    provider = _build(prefix, rest, spec, kwargs)
    if prefix not in REMOTE_PREFIXES or retry is False:
        return provider
    from agent_providers.retry import RetryingProvider, RetryPolicy

    return RetryingProvider(provider, retry if isinstance(retry, RetryPolicy) else RetryPolicy())


def _build(prefix: str, rest: str, spec: str, kwargs: dict) -> Provider:
    if prefix == "scripted":
        from agent_providers.scripted import ScriptedProvider

        return ScriptedProvider(model=rest or None, **kwargs)
    if prefix == "sim":
        from agent_providers.simulator import SimulatorProvider

        return SimulatorProvider(rest or None, **kwargs)
    if prefix == "anthropic":
        from agent_providers.anthropic_provider import AnthropicProvider

        return AnthropicProvider(model=rest or None, **kwargs)
    if prefix == "openai":
        from agent_providers.openai_provider import OpenAIProvider

        return OpenAIProvider(model=rest or None, **kwargs)
    if prefix == "openai-compatible":
        model, sep, base_url = rest.partition("@")
        if not sep or not base_url or not model:
            raise UnknownProvider(
                "openai-compatible spec must look like 'openai-compatible/<model>@<base_url>', "
                f"got {redact_spec(spec)!r}"
            )
        from agent_providers.openai_provider import OpenAIProvider

        return OpenAIProvider(model=model, base_url=base_url, compatible=True, **kwargs)
    if prefix == "local":
        from agent_providers.local_llama import LocalLlamaProvider

        return LocalLlamaProvider(model=rest or None, **kwargs)
    raise UnknownProvider(
        f"unknown provider prefix {prefix!r} in spec {redact_spec(spec)!r}; expected one of {', '.join(KNOWN_PREFIXES)}"
    )


@dataclass(frozen=True)
class AutoChoice:
    """What :func:`auto_provider` picked and why. ``spec`` may hold URL credentials taken from the
    environment (it builds the provider); ``repr``/``str`` show it redacted."""

    spec: str
    reason: str

    def __repr__(self) -> str:
        return f"AutoChoice(spec={redact_spec(self.spec)!r}, reason={self.reason!r})"

    __str__ = __repr__


def choose_auto_spec(environ: dict[str, str] | None = None) -> AutoChoice:
    """Pick a provider spec from the environment, without building it.

    Order: ``ANTHROPIC_API_KEY`` -> Anthropic; ``OPENAI_API_KEY`` -> OpenAI; ``OPENAI_BASE_URL`` ->
    an OpenAI-compatible server (model from ``OPENAI_MODEL``, default ``"default"``); else the embedded
    local model. ``FORECAST_RECONCILE_PROVIDER`` overrides all of them. Key values are never echoed.
    An OpenAI-compatible server gets the key in ``OPENAI_COMPATIBLE_API_KEY`` (never ``OPENAI_API_KEY``,
    which goes to OpenAI only); credentials inside ``OPENAI_BASE_URL`` follow
    :mod:`agent_providers.credentials` (query keys are sent as query parameters, user info is refused).
    """
    env = os.environ if environ is None else environ
    from agent_providers.anthropic_provider import DEFAULT_ANTHROPIC_MODEL
    from agent_providers.openai_provider import DEFAULT_OPENAI_MODEL

    if env.get("FORECAST_RECONCILE_PROVIDER"):
        return AutoChoice(env["FORECAST_RECONCILE_PROVIDER"], "FORECAST_RECONCILE_PROVIDER is set")
    if env.get("ANTHROPIC_API_KEY"):
        return AutoChoice(f"anthropic/{DEFAULT_ANTHROPIC_MODEL}", "ANTHROPIC_API_KEY is set")
    if env.get("OPENAI_API_KEY") and not env.get("OPENAI_BASE_URL"):
        return AutoChoice(f"openai/{DEFAULT_OPENAI_MODEL}", "OPENAI_API_KEY is set")
    if env.get("OPENAI_BASE_URL"):
        model = env.get("OPENAI_MODEL", "default")
        return AutoChoice(
            f"openai-compatible/{model}@{env['OPENAI_BASE_URL']}", "OPENAI_BASE_URL is set (OpenAI-compatible server)"
        )
    return AutoChoice("local/smollm2", "no API key or OPENAI_BASE_URL in the environment: using the embedded model")


def auto_provider(environ: dict[str, str] | None = None, *, retry: "bool | RetryPolicy" = True, **kwargs) -> Provider:
    """Build the provider :func:`choose_auto_spec` picks; logs (INFO) what it picked and why, with the
    spec redacted. ``retry`` as in :func:`get_provider`.

    The choice is also available as ``provider.auto_choice`` (its ``spec`` is the provider's redacted spec).
    """
    choice = choose_auto_spec(environ)
    provider = get_provider(choice.spec, retry=retry, **kwargs)
    choice = AutoChoice(provider.spec, choice.reason)  # the provider's spec: credentials in a URL are dropped
    log.info("auto_provider picked %s because %s", choice.spec, choice.reason)
    provider.auto_choice = choice  # type: ignore[attr-defined]
    return provider
