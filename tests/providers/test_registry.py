"""The provider registry from the user's side: which provider a spec or the environment gives (issue 18).

No network: the SDK clients are built (real ``anthropic`` / ``openai`` packages) but never called.
"""

from __future__ import annotations

import logging

import pytest

import agent_providers.local_llama as local_llama
from agent_providers import ScriptedProvider, SimulatorProvider, auto_provider, get_provider
from agent_providers.anthropic_provider import AnthropicProvider
from agent_providers.openai_provider import OpenAIProvider
from agent_providers.registry import AutoChoice, choose_auto_spec
from agent_providers.retry import RetryingProvider, RetryPolicy
from agent_schemas import UnknownProvider

ANTHROPIC = "anthropic/claude-sonnet-4-6"
OPENAI = "openai/gpt-4.1-mini"
LOCAL_REASON = "no API key or OPENAI_BASE_URL in the environment: using the embedded model"
URL = "http://127.0.0.1:9/v1"

#: Environment -> (spec, reason): the documented order, every pair of settings.
AUTO_ORDER = [
    ({}, ("local/smollm2", LOCAL_REASON)),
    ({"ANTHROPIC_API_KEY": "a"}, (ANTHROPIC, "ANTHROPIC_API_KEY is set")),
    ({"OPENAI_API_KEY": "o"}, (OPENAI, "OPENAI_API_KEY is set")),
    ({"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}, (ANTHROPIC, "ANTHROPIC_API_KEY is set")),
    ({"ANTHROPIC_API_KEY": "a", "OPENAI_BASE_URL": URL}, (ANTHROPIC, "ANTHROPIC_API_KEY is set")),
    ({"OPENAI_BASE_URL": URL}, (f"openai-compatible/default@{URL}", "OPENAI_BASE_URL is set (OpenAI-compatible server)")),
    ({"OPENAI_API_KEY": "o", "OPENAI_BASE_URL": URL, "OPENAI_MODEL": "qwen2.5"},
     (f"openai-compatible/qwen2.5@{URL}", "OPENAI_BASE_URL is set (OpenAI-compatible server)")),
    ({"FORECAST_RECONCILE_PROVIDER": "scripted/x", "ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"},
     ("scripted/x", "FORECAST_RECONCILE_PROVIDER is set")),
    ({"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "FORECAST_RECONCILE_PROVIDER": ""},
     ("local/smollm2", LOCAL_REASON)),  # empty values are unset
    ({"ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": "o"}, (OPENAI, "OPENAI_API_KEY is set")),
]


@pytest.mark.parametrize("env, expected", AUTO_ORDER)
def test_auto_spec_order(env, expected):
    choice = choose_auto_spec(env)
    assert (choice.spec, choice.reason) == expected


def test_auto_spec_reads_the_process_environment_by_default(monkeypatch):
    for name in ("FORECAST_RECONCILE_PROVIDER", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "o")
    assert choose_auto_spec().spec == OPENAI
    assert choose_auto_spec({}).spec == "local/smollm2"  # a given mapping is used instead, even empty


@pytest.mark.parametrize("env, kind", [
    ({"ANTHROPIC_API_KEY": "sk-ant-test", "OPENAI_API_KEY": "sk-test"}, AnthropicProvider),
    ({"OPENAI_API_KEY": "sk-test"}, OpenAIProvider),
])
def test_auto_provider_builds_the_chosen_remote_provider_with_one_retry_layer(monkeypatch, caplog, env, kind):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with caplog.at_level(logging.INFO, logger="agent_providers.registry"):
        p = auto_provider(env)
    spec, reason = choose_auto_spec(env).spec, choose_auto_spec(env).reason
    assert isinstance(p, RetryingProvider) and p.policy == RetryPolicy() and type(p.inner) is kind
    assert p.spec == spec and p.auto_choice == AutoChoice(spec, reason)
    assert caplog.messages == [f"auto_provider picked {spec} because {reason}"]
    bare = auto_provider(env, retry=False, timeout_s=7)
    assert type(bare) is kind and bare.timeout_s == 7


def test_auto_provider_passes_its_arguments_and_the_override():
    p = auto_provider({"FORECAST_RECONCILE_PROVIDER": "scripted/m"}, outputs=['{"p_yes": 0.2}'])
    assert type(p) is ScriptedProvider and p.spec == "scripted/m"
    assert p.complete([{"role": "user", "content": "q"}]).text == '{"p_yes": 0.2}'
    assert p.auto_choice == AutoChoice("scripted/m", "FORECAST_RECONCILE_PROVIDER is set")
    policy = RetryPolicy(max_attempts=2)
    assert auto_provider({"OPENAI_BASE_URL": URL}, retry=policy).policy is policy


def test_auto_choice_shows_url_credentials_redacted():
    choice = choose_auto_spec({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1?key=QSECRET"})
    assert choice.spec.endswith("?key=QSECRET")  # it builds the provider
    shown = "AutoChoice(spec='openai-compatible/default@http://127.0.0.1:9/v1?key=***', reason='OPENAI_BASE_URL is set (OpenAI-compatible server)')"
    assert repr(choice) == shown == str(choice)


def test_offline_providers_take_their_arguments():
    assert get_provider("sim/seed=2", latency_s=0.25).latency_s == 0.25
    assert get_provider("scripted", latency_s=0.5).latency_s == 0.5


@pytest.mark.parametrize("spec, kind, shown", [
    ("scripted", ScriptedProvider, "scripted"),
    ("  scripted/m  ", ScriptedProvider, "scripted/m"),
    ("sim", SimulatorProvider, "sim"),
    ("sim/seed=3", SimulatorProvider, "sim/seed=3"),
])
def test_offline_providers_are_never_wrapped(spec, kind, shown):
    for retry in (True, RetryPolicy(), False):
        p = get_provider(spec, retry=retry)
        assert type(p) is kind and p.spec == shown


@pytest.mark.parametrize("spec, kind, shown", [
    ("anthropic", AnthropicProvider, ANTHROPIC),
    ("anthropic/claude-haiku-4-5", AnthropicProvider, "anthropic/claude-haiku-4-5"),
    ("openai", OpenAIProvider, OPENAI),
    ("openai/gpt-4o", OpenAIProvider, "openai/gpt-4o"),
    (f"openai-compatible/qwen@{URL}", OpenAIProvider, f"openai-compatible/qwen@{URL}"),
])
def test_remote_providers_get_the_default_retry_layer_unless_told(spec, kind, shown):
    wrapped = get_provider(spec, api_key="k", timeout_s=3)
    assert isinstance(wrapped, RetryingProvider) and wrapped.policy == RetryPolicy()
    assert type(wrapped.inner) is kind and wrapped.spec == shown and wrapped.inner.timeout_s == 3
    policy = RetryPolicy(max_attempts=7)
    assert get_provider(spec, api_key="k", retry=policy).policy is policy
    bare = get_provider(spec, api_key="k", retry=False)
    assert type(bare) is kind and bare.spec == shown


def test_openai_compatible_spec_sets_model_and_base_url():
    p = get_provider(f"openai-compatible/qwen@{URL}", retry=False)
    assert p.compatible and p.model == "qwen"
    assert not get_provider("openai/gpt-4o", api_key="k", retry=False).compatible


def test_local_spec_builds_the_embedded_model_unwrapped(monkeypatch):
    built = []

    class Spy:  # records what the registry hands the embedded model's constructor (no model load)
        def __init__(self, model=None, **kwargs):
            built.append((model, kwargs))
            self.spec = f"local/{model}"

    monkeypatch.setattr(local_llama, "LocalLlamaProvider", Spy)
    assert type(get_provider("local/smollm2", n_threads=1)) is Spy
    assert type(get_provider("local", retry=RetryPolicy())) is Spy
    assert built == [("smollm2", {"n_threads": 1}), (None, {})]


@pytest.mark.parametrize("spec, message", [
    ("", "provider spec must be a non-empty string, got ''"),
    ("   ", "provider spec must be a non-empty string, got '   '"),
    (None, "provider spec must be a non-empty string, got None"),
    ("gemini/pro", "unknown provider prefix 'gemini' in spec 'gemini/pro'; expected one of anthropic, openai, "
                   "openai-compatible, local, scripted, sim"),
    ("openai-compatible/qwen", "openai-compatible spec must look like 'openai-compatible/<model>@<base_url>', "
                               "got 'openai-compatible/qwen'"),
    ("openai-compatible/qwen@", "got 'openai-compatible/qwen@'"),
    (f"openai-compatible/@{URL}?key=SECRET", f"got 'openai-compatible/@{URL}?key=***'"),
    ("gemini/pro@http://h/v1?key=SECRET", "in spec 'gemini/pro@http://h/v1?key=***'"),
])
def test_bad_specs_are_one_clear_error_with_the_spec_redacted(spec, message):
    with pytest.raises(UnknownProvider) as ei:
        get_provider(spec)
    assert message in str(ei.value) and "SECRET" not in str(ei.value)
