"""Shared test configuration. Tier 3 (live API) tests are skipped unless FORECAST_RECONCILE_LIVE=1."""

import os

import pytest


def pytest_collection_modifyitems(config, items):
    if os.environ.get("FORECAST_RECONCILE_LIVE") == "1":
        return
    skip_live = pytest.mark.skip(reason="live API test: set FORECAST_RECONCILE_LIVE=1 and an API key")
    for item in items:
        if "live" in item.keywords:
            item.add_marker(skip_live)
