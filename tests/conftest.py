"""Shared test configuration. Tier 3 (live API) tests are skipped unless FORECAST_RECONCILE_LIVE=1."""

import os
import shutil
import tempfile

import pytest

# The embedded model's converted weights (agent_providers.gguf_weights) go to a folder of this session, not
# the user's cache; subprocesses (notebooks, the CLI) inherit it. Converted once per session (about 1 s).
_WEIGHTS_DIR = None
if "FORECAST_RECONCILE_MODEL_CACHE" not in os.environ:
    _WEIGHTS_DIR = tempfile.mkdtemp(prefix="fr-test-weights-")
    os.environ["FORECAST_RECONCILE_MODEL_CACHE"] = _WEIGHTS_DIR


def pytest_unconfigure(config):
    if _WEIGHTS_DIR is not None:
        shutil.rmtree(_WEIGHTS_DIR, ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    if os.environ.get("FORECAST_RECONCILE_LIVE") == "1":
        return
    skip_live = pytest.mark.skip(reason="live API test: set FORECAST_RECONCILE_LIVE=1 and an API key")
    for item in items:
        # the marker, not the keyword: keywords also hold the path's folder names (a checkout in .../live/)
        if item.get_closest_marker("live") is not None:
            item.add_marker(skip_live)
