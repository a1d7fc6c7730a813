"""FaultInjectingProvider raises what the real adapters raise: same classes, same context."""

import pytest

from agent_providers import ScriptedProvider
from agent_schemas import ProviderOverloaded, ProviderTimeout, RateLimited
from tests.doubles.faults import FaultInjectingProvider

MSG = [{"role": "user", "content": "Will it rain?"}]


class WithTimeout(ScriptedProvider):
    timeout_s = 60.0  # like AnthropicProvider / OpenAIProvider


@pytest.mark.parametrize("kind, cls, details", [
    # the details agent_providers.errors_map.map_sdk_error gives for HTTP 429, HTTP 529 and an SDK timeout
    ("rate_limit", RateLimited, {"provider": "scripted", "model": "scripted", "status_code": 429, "retry_after_s": 2.5}),
    ("overload", ProviderOverloaded, {"provider": "scripted", "model": "scripted", "status_code": 529, "retry_after_s": 2.5}),
    ("timeout", ProviderTimeout, {"provider": "scripted", "model": "scripted", "timeout_s": 60.0}),
])
def test_injected_errors_have_the_adapters_shape(kind, cls, details):
    p = FaultInjectingProvider(WithTimeout(["never reached"]), {kind: 1.0}, retry_after_s=2.5)
    with pytest.raises(cls) as err:
        p.complete(MSG)
    assert err.value.details == details and type(err.value).retryable
    assert p.injected == {kind: 1} and p.inner.remaining == 1


def test_truncation_goes_through_the_shared_stop_reason_check():
    from agent_schemas import ResponseTruncated

    p = FaultInjectingProvider(ScriptedProvider(['{"p_yes_percent": 40}']), {"truncation": 1.0})
    with pytest.raises(ResponseTruncated) as err:
        p.complete(MSG)
    assert err.value.details["stop_reason"] == "length"
