"""Fixtures shared by the benchmark tests."""

import pytest

from tests.benchmarks.viewer_run import make_viewer_run


@pytest.fixture(scope="session")
def viewer_run(tmp_path_factory):
    """One scripted run with its report page (see :mod:`tests.benchmarks.viewer_run`)."""
    return make_viewer_run(tmp_path_factory.mktemp("viewer-runs"))


@pytest.fixture(scope="session")
def numeric_report(tmp_path_factory):
    """A scripted run of the 12 numeric questions of ``fixtures/questions_numeric.csv`` and its report: ``(questions,
    report folder)``. Run in a thread of its own: a browser test's Playwright holds an event loop in this thread,
    which the run's ``asyncio.run`` cannot share."""
    from concurrent.futures import ThreadPoolExecutor

    from benchmarks.report import write_report
    from tests.benchmarks.test_kinds_harness import NUM_FILE, run_kind

    root = tmp_path_factory.mktemp("numeric-view")
    with ThreadPoolExecutor(max_workers=1) as pool:
        qs, run_dir, _ = pool.submit(run_kind, root, "numeric", NUM_FILE).result()
    write_report([run_dir], root / "rep", n_resamples=50)
    return qs, root / "rep"
