"""The teaching notebooks: stored clean, built as lessons, and each one runs top to bottom offline.

Structure (every notebook, :func:`test_notebook_is_a_lesson`): the first cell is the title with
"Learning objectives" and "Prerequisites"; later come "Takeaways" and "What this does not show", then
"Exercises" (2-4, each asking the learner to predict before running) and "Solutions" (one "Solution N"
per exercise, each with a code cell that computes it), and the last cell says what comes next. No code
line is longer than 100 characters, and no cell is stored with outputs.

Execution uses nbclient with a private ``python3`` kernel spec that points at this interpreter
(``sys.executable``), so no ``ipykernel install`` step is needed and the kernel sees the same packages as
pytest. API-key variables are removed from the kernel's environment: the notebooks then pick the
embedded local model (no network), as on a laptop without a key. Each notebook runs with a fresh
temporary folder as its working directory (which must stay empty: notebooks write only to
``tempfile`` folders, redirected here through ``TMPDIR``). Notebook 10 runs in ``test_nb10.py``.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
#: Every teaching notebook, in course order.
ALL_NOTEBOOKS = [
    "01_providers_and_tokens",
    "02_tools_and_evidence",
    "03_state_and_replay",
    "04_research_agent",
    "05_aggregation_math",
    "06_ensembles",
    "07_adversarial_debate",
    "08_supervisor_and_pipeline",
    "09_evaluation_and_leaderboard",
    "10_framework_comparison",
    "11_evaluation_pitfalls",
    "12_cost_versus_quality",
]
#: Executed here (notebook 10 needs the framework extras and has its own test).
NOTEBOOKS = [n for n in ALL_NOTEBOOKS if not n.startswith("10_")]
#: Notebooks that call the model auto_provider() picks (the embedded llama.cpp model without a key).
USES_MODEL = {"01_providers_and_tokens", "04_research_agent", "06_ensembles", "07_adversarial_debate",
              "08_supervisor_and_pipeline"}
#: Environment variables that would switch auto_provider() to a remote API.
PROVIDER_ENV = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "FORECAST_RECONCILE_PROVIDER")
CELL_TIMEOUT_S = 300
MAX_CODE_LINE = 100


def _read(name: str):
    return nbformat.read(NOTEBOOK_DIR / f"{name}.ipynb", as_version=4)


def _images(nb) -> int:
    return sum(
        1
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if out.get("output_type") in ("display_data", "execute_result") and "image/png" in out.get("data", {})
    )


def _heading_index(nb, heading: str) -> int:
    """Index of the first markdown cell with a line that is exactly ``heading``; -1 if none."""
    for i, c in enumerate(nb.cells):
        if c.cell_type == "markdown" and heading in c.source.splitlines():
            return i
    return -1


def test_the_teaching_notebooks_are_stored_in_order():
    stored = sorted(p.stem for p in NOTEBOOK_DIR.glob("*.ipynb"))
    assert stored == ALL_NOTEBOOKS
    assert [s[:2] for s in stored] == [f"{i:02d}" for i in range(1, len(ALL_NOTEBOOKS) + 1)]


@pytest.mark.parametrize("name", ALL_NOTEBOOKS)
def test_notebook_is_a_lesson(name):
    nb = _read(name)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{name} has no code cells"
    dirty = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]
    assert dirty == [], f"{name}: cells {dirty} were saved with outputs; clear outputs before committing"
    assert nb.metadata["kernelspec"]["name"] == "python3"
    long = [(i, line) for i, c in enumerate(nb.cells) if c.cell_type == "code"
            for line in c.source.splitlines() if len(line) > MAX_CODE_LINE]
    assert long == [], f"{name}: code lines over {MAX_CODE_LINE} characters (cell, line): {long}"

    first, last = nb.cells[0], nb.cells[-1]
    assert first.cell_type == "markdown" and first.source.startswith(f"# {name[:2]} ·"), f"{name}: first cell must be the title"
    for heading in ("## Learning objectives", "## Prerequisites"):
        assert heading in first.source.splitlines(), f"{name}: the first cell lacks {heading!r}"
    objectives = first.source.split("## Learning objectives", 1)[1].split("## Prerequisites", 1)[0]
    assert len(re.findall(r"^\d+\. ", objectives, flags=re.M)) >= 3, f"{name}: list at least 3 numbered objectives"

    order = {h: _heading_index(nb, h) for h in
             ("## Takeaways", "## What this does not show", "## Exercises", "## Solutions")}
    assert all(i > 0 for i in order.values()), f"{name}: missing sections {[h for h, i in order.items() if i <= 0]}"
    assert list(order.values()) == sorted(order.values()), f"{name}: sections out of order {order}"

    exercises = nb.cells[order["## Exercises"]].source
    numbers = [int(n) for n in re.findall(r"^\*\*Exercise (\d+)\.\*\*", exercises, flags=re.M)]
    assert 2 <= len(numbers) <= 4 and numbers == list(range(1, len(numbers) + 1)), f"{name}: exercises {numbers}"
    for k, part in enumerate(re.split(r"^\*\*Exercise \d+\.\*\*", exercises, flags=re.M)[1:], start=1):
        assert "*Predict*" in part, f"{name}: exercise {k} does not ask the learner to predict first"

    after = nb.cells[order["## Solutions"]:]
    starts = [i for i, c in enumerate(after) if c.cell_type == "markdown" and re.match(r"### Solution \d+\b", c.source)]
    assert [int(re.match(r"### Solution (\d+)", after[i].source).group(1)) for i in starts] == numbers, \
        f"{name}: need one '### Solution N' per exercise"
    for k, (a, b) in enumerate(zip(starts, starts[1:] + [len(after)]), start=1):
        assert any(c.cell_type == "code" for c in after[a:b]), f"{name}: solution {k} has no code cell that computes it"
    assert last.cell_type == "markdown" and last.source.startswith("## Next"), f"{name}: last cell must be '## Next'"


def _stream_text(nb) -> str:
    return "".join(o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "stream")


def check_nb11_leak_and_guard(text: str) -> None:
    """NB11's exercise: the "resolved early" flag buys a clear Brier gain over the crowd out of sample, and
    the guarded harness cannot have it (the flag is not derivable from what agents see; the audit is clean)."""
    leak = re.search(r"LEAK: crowd Brier (\d\.\d+) -> (\d\.\d+) with the flag on (\d+) later questions "
                     r"\(paired difference (-?\d\.\d+), 95% CI (-?\d\.\d+) \.\. (-?\d\.\d+)\)", text)
    assert leak, "NB11 did not print its LEAK line"
    before, after, n, delta, low, high = (float(g) for g in leak.groups())
    assert n >= 500 and before - after >= 0.01 and high < 0, leak.group(0)
    guard = re.search(r"GUARD: resolution_date visible to agents: False; early flag derivable: False; "
                      r"audit findings in (\d+) prompts of (\d+) questions: (\d+)", text)
    assert guard, "NB11 did not print its GUARD line"
    prompts, questions, findings = (int(g) for g in guard.groups())
    assert prompts > questions > 0 and findings == 0, guard.group(0)


#: Checks of a notebook's printed output beyond "it ran".
OUTPUT_CHECKS = {"11_evaluation_pitfalls": check_nb11_leak_and_guard}


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
    text = _stream_text(nb)
    if name in USES_MODEL:
        assert "local/smollm2" in text, f"{name} did not run on the embedded model"
    if name in OUTPUT_CHECKS:
        OUTPUT_CHECKS[name](text)
    assert list(cwd.iterdir()) == [], f"{name} wrote into its working directory: {list(cwd.iterdir())}"


def test_the_nb11_check_needs_the_leak_and_a_clean_guard():
    leak = ("LEAK: crowd Brier 0.1335 -> 0.1163 with the flag on 627 later questions "
            "(paired difference -0.0172, 95% CI -0.0266 .. -0.0075)\n")
    guard = ("GUARD: resolution_date visible to agents: False; early flag derivable: False; "
             "audit findings in 192 prompts of 24 questions: 0\n")
    check_nb11_leak_and_guard(leak + guard)
    for bad in (leak.replace("0.1163", "0.1330") + guard,             # no real gain
                leak.replace("-0.0075)", "0.0010)") + guard,          # interval reaches 0
                leak + guard.replace("questions: 0", "questions: 2"),  # the audit found hindsight
                leak + guard.replace("derivable: False", "derivable: True"),
                guard, leak):
        with pytest.raises(AssertionError):
            check_nb11_leak_and_guard(bad)


#: Recorded runs the notebooks read (notebooks/data): small enough for the repository.
RECORDED_RUNS_MAX_BYTES = 400_000


def test_recorded_runs_are_small_scorable_and_say_where_they_came_from():
    import json

    data = NOTEBOOK_DIR / "data"
    files = [p for p in data.rglob("*") if p.is_file()]
    total = sum(p.stat().st_size for p in files)
    assert total <= RECORDED_RUNS_MAX_BYTES, f"notebooks/data holds {total} bytes"
    runs = sorted(p.parent for p in data.glob("*/manifest.json"))
    assert runs, "no recorded run under notebooks/data"
    readme = (data / "README.md").read_text()
    for run in runs:
        manifest = json.loads((run / "manifest.json").read_text())
        assert manifest["run_id"] == run.name and run.name in readme
        assert len(manifest["git"]["commit"]) == 40 and manifest["git"]["dirty"] is False
        assert manifest["git"]["commit"][:7] in readme, f"README does not name {run.name}'s commit"
        records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
        assert [r["question_id"] for r in records] == manifest["question_ids"]
        assert all(r["status"] == "ok" and r["outcome"] in (0, 1) and r["ledger"] for r in records)
        # trimmed as the README says: no prompts or raw answers kept
        assert all(r["trace"]["recorded_calls"] == [] == r["trace"]["recorded_searches"] for r in records)
