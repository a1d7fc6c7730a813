"""Tier 3: live calls to the provider auto_provider() picks from the environment.

Skipped unless FORECAST_RECONCILE_LIVE=1 (see tests/conftest.py) and an API key or OPENAI_BASE_URL is set;
never run in CI.
"""

import os

import pytest

from agent_providers import auto_provider
from agent_tools import FORECAST_JSON_SCHEMA, parse_forecast

pytestmark = pytest.mark.live


def test_live_provider_answers_a_forecast_with_token_counts():
    if not any(os.environ.get(v) for v in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL")):
        pytest.skip("no API key or OPENAI_BASE_URL set")
    llm = auto_provider()
    c = llm.complete(
        [{"role": "user", "content": "Will the sun rise tomorrow? Answer with JSON: rationale, key_evidence, p_yes_percent."}],
        json_schema=FORECAST_JSON_SCHEMA, max_tokens=400,
    )
    parsed = parse_forecast(c.text)
    assert 0.5 <= parsed.p_yes <= 1.0
    assert c.usage.input_tokens > 0 and c.usage.output_tokens > 0 and c.usage.calls == 1
