"""Executes notebooks/10_framework_comparison.ipynb with the scripted provider (the embedded-model cell is
opt-in via FORECAST_RECONCILE_NB10_LOCAL=1)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

NB = Path(__file__).resolve().parents[2] / "notebooks" / "10_framework_comparison.ipynb"


@pytest.mark.notebook
def test_nb10_executes_and_reports_identical_results(kernel_spec_manager):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("langgraph")
    pytest.importorskip("agents")
    nb = nbformat.read(NB, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "store the notebook without outputs"
    env_backup = os.environ.pop("FORECAST_RECONCILE_NB10_LOCAL", None)
    try:
        from jupyter_client.manager import KernelManager

        km = KernelManager(kernel_name="python3", kernel_spec_manager=kernel_spec_manager)
        nbclient.NotebookClient(nb, km=km, timeout=300, resources={"metadata": {"path": str(NB.parents[1])}}).execute()
    finally:
        if env_backup is not None:
            os.environ["FORECAST_RECONCILE_NB10_LOCAL"] = env_backup
    text = "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "openai-agents  identical requests: True   identical ledger: True" in text
    assert "| langgraph" in text and "max_abs_dp" in text
