"""Providers by name, with SDKs imported lazily (pattern from inspect_ai ``model/_providers``).

Spec strings:

=========================================  ==========================================================
``"anthropic/<model>"``                    :class:`AnthropicProvider` (needs ``ANTHROPIC_API_KEY``)
``"openai/<model>"``                       :class:`OpenAIProvider` (needs ``OPENAI_API_KEY``)
``"openai-compatible/<model>@<base_url>"`` :class:`OpenAIProvider` against Ollama / vLLM / llama.cpp
``"local/smollm2"`` or ``"local/<path>"``  :class:`LocalLlamaProvider` (embedded llama.cpp, no network)
``"scripted"``                             :class:`ScriptedProvider` (tests, notebooks)
=========================================  ==========================================================
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from agent_schemas import UnknownProvider
from agent_providers.base import Provider

log = logging.getLogger(__name__)

KNOWN_PREFIXES = ("anthropic", "openai", "openai-compatible", "local", "scripted")


def get_provider(spec: str, **kwargs) -> Provider:
    """Build a provider from a spec string such as ``"anthropic/claude-sonnet-4-5"``.

    Keyword arguments are passed to the provider's constructor (e.g. ``api_key``, ``n_threads``).

    Raises
    ------
    UnknownProvider
        If the prefix is not one of ``anthropic``, ``openai``, ``openai-compatible``, ``local``, ``scripted``
        or an ``openai-compatible`` spec lacks ``@<base_url>``.
    MissingDependency
        If the provider's SDK is not installed (the message names the ``pip install`` that fixes it).
    """
    if not isinstance(spec, str) or not spec.strip():
        raise UnknownProvider(f"provider spec must be a non-empty string, got {spec!r}")
    spec = spec.strip()
    prefix, _, rest = spec.partition("/")
    if prefix == "scripted":
        from agent_providers.scripted import ScriptedProvider

        return ScriptedProvider(model=rest or None, **kwargs)
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
                f"openai-compatible spec must look like 'openai-compatible/<model>@<base_url>', got {spec!r}"
            )
        from agent_providers.openai_provider import OpenAIProvider

        return OpenAIProvider(model=model, base_url=base_url, compatible=True, **kwargs)
    if prefix == "local":
        from agent_providers.local_llama import LocalLlamaProvider

        return LocalLlamaProvider(model=rest or None, **kwargs)
    raise UnknownProvider(
        f"unknown provider prefix {prefix!r} in spec {spec!r}; expected one of {', '.join(KNOWN_PREFIXES)}"
    )


@dataclass(frozen=True)
class AutoChoice:
    """What :func:`auto_provider` picked and why."""

    spec: str
    reason: str


def choose_auto_spec(environ: dict[str, str] | None = None) -> AutoChoice:
    """Pick a provider spec from the environment, without building it.

    Order: ``ANTHROPIC_API_KEY`` -> Anthropic; ``OPENAI_API_KEY`` -> OpenAI; ``OPENAI_BASE_URL`` ->
    an OpenAI-compatible server (model from ``OPENAI_MODEL``, default ``"default"``); else the embedded
    local model. ``FORECAST_RECONCILE_PROVIDER`` overrides all of them. Key values are never echoed.
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


def auto_provider(environ: dict[str, str] | None = None, **kwargs) -> Provider:
    """Build the provider :func:`choose_auto_spec` picks; logs (INFO) what it picked and why.

    The choice is also available as ``provider.auto_choice``.
    """
    choice = choose_auto_spec(environ)
    provider = get_provider(choice.spec, **kwargs)
    choice = AutoChoice(provider.spec, choice.reason)  # the provider's spec: credentials in a URL are dropped
    log.info("auto_provider picked %s because %s", choice.spec, choice.reason)
    provider.auto_choice = choice  # type: ignore[attr-defined]
    return provider
