"""Executes notebooks/10_framework_comparison.ipynb and its solutions with the scripted provider (the
embedded-model cell is opt-in via FORECAST_RECONCILE_NB10_LOCAL=1): the lesson's checks say "not answered
yet", the solutions' checks "right"."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

NB = Path(__file__).resolve().parents[2] / "notebooks" / "10_framework_comparison.ipynb"
SOLUTIONS = NB.parent / "solutions" / "10_solutions.ipynb"
#: A check cell's verdict (benchmarks.teaching.grading.Verdict) as the cell shows it.
VERDICT = re.compile(r"^Exercise (\d+): (right|wrong|not answered yet)\.", re.M)


def _execute(path: Path, kernel_spec_manager, cwd: Path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("langgraph")
    pytest.importorskip("agents")
    nb = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "store the notebook without outputs"
    env_backup = os.environ.pop("FORECAST_RECONCILE_NB10_LOCAL", None)
    try:
        from jupyter_client.manager import KernelManager

        km = KernelManager(kernel_name="python3", kernel_spec_manager=kernel_spec_manager)
        nbclient.NotebookClient(nb, km=km, timeout=300, resources={"metadata": {"path": str(cwd)}}).execute()
    finally:
        if env_backup is not None:
            os.environ["FORECAST_RECONCILE_NB10_LOCAL"] = env_backup
    return "\n".join(o.get("text", "") if o.get("output_type") == "stream" else o.get("data", {}).get("text/plain", "")
                     for c in nb.cells if c.cell_type == "code" for o in c.outputs)


@pytest.mark.notebook
def test_nb10_executes_and_reports_identical_results(kernel_spec_manager):
    text = _execute(NB, kernel_spec_manager, NB.parents[1])
    assert "openai-agents  identical requests: True   identical ledger: True" in text
    assert "| langgraph" in text and "max_abs_dp" in text
    assert VERDICT.findall(text) == [(str(k), "not answered yet") for k in (1, 2, 3)]


@pytest.mark.notebook
def test_nb10_solutions_say_right(kernel_spec_manager, tmp_path):
    text = _execute(SOLUTIONS, kernel_spec_manager, tmp_path)
    assert VERDICT.findall(text) == [(str(k), "right") for k in (1, 2, 3)]
    assert list(tmp_path.iterdir()) == []
