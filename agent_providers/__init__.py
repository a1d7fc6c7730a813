"""Provider adapters behind one small contract. Importing this package imports no SDK.

``get_provider(spec)`` builds any provider by name (remote ones wrapped in the one retry layer);
``auto_provider()`` picks one from the environment; ``get_provider("sim")`` is a seeded simulation of
the pipeline's agents (no key, no model, $0) for trying the harness; ``redact_spec(spec)`` gives a spec safe to write
anywhere (no URL credentials).
Adapter classes are importable from here lazily (``from agent_providers import AnthropicProvider``
imports the ``anthropic`` SDK only then).
"""

from agent_providers.base import Ask, Provider, UsageMeter, WrappingProvider, normalise_messages, provider_ask, run_sync, spent_usage
from agent_providers.credentials import redact_spec
from agent_providers.roles import CALL_ROLES, CallRole, call_role, calling_as
from agent_providers.registry import AutoChoice, auto_provider, choose_auto_spec, get_provider, split_specs
from agent_providers.scripted import ScriptedProvider

_LAZY = {
    "AnthropicProvider": "agent_providers.anthropic_provider",
    "OpenAIProvider": "agent_providers.openai_provider",
    "LocalLlamaProvider": "agent_providers.local_llama",
    "RetryingProvider": "agent_providers.retry",
    "RetryPolicy": "agent_providers.retry",
    "CachingProvider": "agent_providers.cache",
    "ResponseCache": "agent_providers.cache",
    "PRICE_SOURCE": "agent_providers.pricing",
    "cost_usd": "agent_providers.pricing",
    "price_for": "agent_providers.pricing",
    "SimulatorProvider": "agent_providers.simulator",
    "SimParams": "agent_providers.simulator",
    "SimWorld": "agent_providers.simulator",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'agent_providers' has no attribute {name!r}")


__all__ = [
    "CALL_ROLES", "Ask", "AutoChoice", "CallRole", "Provider", "ScriptedProvider", "UsageMeter", "WrappingProvider", "auto_provider", "call_role", "calling_as", "choose_auto_spec",
    "get_provider", "normalise_messages", "provider_ask", "redact_spec", "run_sync", "spent_usage", "split_specs", *_LAZY,
]
