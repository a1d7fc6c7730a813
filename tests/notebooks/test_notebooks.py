"""The teaching notebooks: stored clean, and each one runs top to bottom offline without an error.

Execution uses nbclient with a private ``python3`` kernel spec that points at this interpreter
(``sys.executable``), so no ``ipykernel install`` step is needed and the kernel sees the same packages as
pytest. API-key variables are removed from the kernel's environment: the notebooks then pick the
embedded local model (no network), as on a laptop without a key. Each notebook runs with a fresh
temporary folder as its working directory (which must stay empty: notebooks write only to
``tempfile`` folders, redirected here through ``TMPDIR``).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = [
    "01_providers_and_tokens",
    "02_tools_and_evidence",
    "03_state_and_replay",
    "04_research_agent",
    "05_aggregation_math",
    "06_ensembles",
    "07_adversarial_debate",
    "08_supervisor_and_pipeline",
    "09_evaluation_and_leaderboard",
]
#: Notebooks that call the model auto_provider() picks (the embedded llama.cpp model without a key).
USES_MODEL = {"01_providers_and_tokens", "04_research_agent", "06_ensembles", "07_adversarial_debate", "08_supervisor_and_pipeline"}
#: Environment variables that would switch auto_provider() to a remote API.
PROVIDER_ENV = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "FORECAST_RECONCILE_PROVIDER")
CELL_TIMEOUT_S = 300


def _read(name: str):
    return nbformat.read(NOTEBOOK_DIR / f"{name}.ipynb", as_version=4)


def _images(nb) -> int:
    return sum(
        1
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if out.get("output_type") in ("display_data", "execute_result") and "image/png" in out.get("data", {})
    )


def test_the_nine_teaching_notebooks_are_stored_in_order():
    stored = sorted(p.stem for p in NOTEBOOK_DIR.glob("*.ipynb"))
    assert [s for s in stored if s in NOTEBOOKS] == NOTEBOOKS
    assert [s[:2] for s in stored[: len(NOTEBOOKS)]] == [f"{i:02d}" for i in range(1, 10)]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_is_stored_clean_with_intro_and_next_steps(name):
    nb = _read(name)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{name} has no code cells"
    dirty = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]
    assert dirty == [], f"{name}: cells {dirty} were saved with outputs; clear outputs before committing"
    assert nb.metadata["kernelspec"]["name"] == "python3"
    first, last = nb.cells[0], nb.cells[-1]
    assert first.cell_type == "markdown" and first.source.startswith(f"# {name[:2]} ·"), f"{name}: first cell must be the intro"
    assert last.cell_type == "markdown" and "## What to try next" in last.source, f"{name}: last cell must say what to try next"


@pytest.mark.notebook
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_offline_without_error(name, kernel_spec_manager, tmp_path, monkeypatch):
    from jupyter_client.manager import KernelManager
    from nbclient.exceptions import CellExecutionError

    for var in PROVIDER_ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    cwd, scratch = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir()
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))  # the notebooks' tempfile.mkdtemp() folders land here and are cleaned up
    nb = _read(name)
    km = KernelManager(kernel_name="python3", kernel_spec_manager=kernel_spec_manager)
    client = nbclient.NotebookClient(nb, km=km, timeout=CELL_TIMEOUT_S, resources={"metadata": {"path": str(cwd)}})
    t0 = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as exc:  # the message holds the failing cell and its traceback
        pytest.fail(f"{name} failed after {time.perf_counter() - t0:.0f} s:\n{exc}")
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
    assert _images(nb) >= 1, f"{name} drew no plot"
    if name in USES_MODEL:
        text = "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "stream")
        assert "local/smollm2" in text, f"{name} did not run on the embedded model"
    assert list(cwd.iterdir()) == [], f"{name} wrote into its working directory: {list(cwd.iterdir())}"
