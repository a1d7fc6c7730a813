"""Fixtures shared by the benchmark tests."""

import pytest

from tests.benchmarks.viewer_run import make_viewer_run


@pytest.fixture(scope="session")
def viewer_run(tmp_path_factory):
    """One scripted run with its report page (see :mod:`tests.benchmarks.viewer_run`)."""
    return make_viewer_run(tmp_path_factory.mktemp("viewer-runs"))
