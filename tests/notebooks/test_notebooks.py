"""The teaching notebooks: stored clean, built as lessons, each one runs top to bottom offline, and so do
their solutions.

Structure (every lesson, :func:`test_notebook_is_a_lesson`): the first cell is the title with
"Learning objectives" and "Prerequisites"; later come "Takeaways" and "What this does not show", then
"Exercises" and the last cell says what comes next. The exercises section opens with a pointer to the
solutions notebook and a cell importing the notebook's checks (``benchmarks.teaching.exercises``); then
2-4 exercises, each a "### Exercise N" cell asking the learner to predict first, an answer cell holding a
placeholder (``answer_N = None``, a dict of ``None``, or a function that raises ``NotImplementedError``) and
a check cell calling one of the imported checks with that answer. No code line is longer than 100
characters, and no cell is stored with outputs.

Solutions (``notebooks/solutions/NN_solutions.ipynb``, :func:`test_solutions_follow_their_lesson`): the
title, a cell running the lesson's code (``run_lesson``), the lesson's import cell, then per exercise a
"### Solution N" cell, a cell that computes the answer (no placeholder), the lesson's check cell unchanged
and an explanation.

Execution uses nbclient with a private ``python3`` kernel spec that points at this interpreter
(``sys.executable``), so no ``ipykernel install`` step is needed and the kernel sees the same packages as
pytest. API-key variables are removed from the kernel's environment: the notebooks then pick the
embedded local model (no network), as on a laptop without a key. Each notebook runs with a fresh
temporary folder as its working directory (which must stay empty: notebooks write only to
``tempfile`` folders, redirected here through ``TMPDIR``). A lesson's check cells must each say "not
answered yet", its solutions' check cells "right". Notebooks 10 and 14 and their solutions run in ``test_nb10.py``
and ``test_nb14.py``.
"""
from __future__ import annotations

import ast
import os
import re
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
SOLUTION_DIR = NOTEBOOK_DIR / "solutions"
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
    "13_human_panels",
    "14_pooling_distributions",
    "15_diversity_against_deliberation",
]
#: Executed here (notebook 10 needs the framework extras and 14 runs in its own test, ``test_nb14.py``).
NOTEBOOKS = [n for n in ALL_NOTEBOOKS if not n.startswith(("10_", "14_"))]
#: Notebooks that call the model auto_provider() picks (the embedded llama.cpp model without a key).
USES_MODEL = {"01_providers_and_tokens", "04_research_agent", "06_ensembles", "07_adversarial_debate",
              "08_supervisor_and_pipeline"}
#: Environment variables that would switch auto_provider() to a remote API.
PROVIDER_ENV = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "FORECAST_RECONCILE_PROVIDER")
CELL_TIMEOUT_S = 300
MAX_CODE_LINE = 100
#: Where the grader's checks live; every lesson imports its own module of them.
CHECKS_PACKAGE = "benchmarks.teaching.exercises"


def read_lesson(name: str):
    return nbformat.read(NOTEBOOK_DIR / f"{name}.ipynb", as_version=4)


def solutions_path(name: str) -> Path:
    return SOLUTION_DIR / f"{name[:2]}_solutions.ipynb"


def count_images(nb) -> int:
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
    assert sorted(p.name for p in SOLUTION_DIR.glob("*.ipynb")) == [solutions_path(n).name for n in ALL_NOTEBOOKS]


def _stored_clean(nb, name: str) -> None:
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, f"{name} has no code cells"
    dirty = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and (c.outputs or c.execution_count is not None)]
    assert dirty == [], f"{name}: cells {dirty} were saved with outputs; clear outputs before committing"
    assert nb.metadata["kernelspec"]["name"] == "python3"
    long = [(i, line) for i, c in enumerate(nb.cells) if c.cell_type == "code"
            for line in c.source.splitlines() if len(line) > MAX_CODE_LINE]
    assert long == [], f"{name}: code lines over {MAX_CODE_LINE} characters (cell, line): {long}"


def _placeholder(node: ast.expr) -> bool:
    """``None``, or a dict whose every value is ``None``."""
    if isinstance(node, ast.Constant):
        return node.value is None
    return isinstance(node, ast.Dict) and bool(node.values) and all(_placeholder(v) for v in node.values)


def _raises_not_implemented(fn: ast.FunctionDef) -> bool:
    return any(isinstance(n, ast.Raise) and n.exc is not None and "NotImplementedError" in ast.unparse(n.exc)
               for n in ast.walk(fn))


def _answer(source: str, k: int, *, solved: bool) -> str:
    """The name an answer cell defines for exercise ``k``: ``answer_k`` assigned a placeholder, or one
    function whose body raises ``NotImplementedError``; ``solved``: the same names, with no placeholder."""
    tree = ast.parse(source)
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    assigned = [n for n in ast.walk(tree) if isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == f"answer_{k}" for t in n.targets)]
    if assigned:
        value = assigned[-1].value
        assert solved != _placeholder(value), f"answer_{k} = {ast.unparse(value)[:60]}: " + (
            "a solution computes the answer" if solved else "an answer cell holds a placeholder (None) until answered")
        return f"answer_{k}"
    stubs = [f for f in functions if solved or _raises_not_implemented(f)]
    assert len(stubs) >= 1, f"exercise {k}: the answer cell defines neither answer_{k} nor a function to write"
    name = stubs[-1].name if solved else stubs[0].name
    if solved:
        assert not _raises_not_implemented(stubs[-1]), f"solution {k}: {name} still raises NotImplementedError"
    return name


def _check_call(source: str) -> tuple[str, str]:
    """(check function, first argument) of a check cell: one call ``check_...(answer, ...)``, maybe awaited."""
    tree = ast.parse(source)
    assert len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr), f"a check cell is one call: {source!r}"
    call = tree.body[0].value
    call = call.value if isinstance(call, ast.Await) else call
    assert isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id.startswith("check_"), source
    assert call.args and isinstance(call.args[0], ast.Name), f"a check's first argument is the answer: {source!r}"
    return call.func.id, call.args[0].id


def _imported_checks(source: str) -> tuple[str, set[str]]:
    """(module, names) of the exercises' import cell."""
    tree = ast.parse(source)
    assert len(tree.body) == 1 and isinstance(tree.body[0], ast.ImportFrom), f"the checks' import cell: {source!r}"
    node = tree.body[0]
    assert node.module.startswith(CHECKS_PACKAGE + "."), node.module
    return node.module, {a.name for a in node.names}


def lesson_exercises(nb, name: str) -> tuple[str, list[tuple[str, str, str]]]:
    """The lesson's exercises: (import cell source, [(exercise text, answer cell, check cell)]); asserts the
    layout of the module docstring on the way."""
    start = _heading_index(nb, "## Exercises")
    intro, imports, *rest = nb.cells[start:-1]
    assert f"solutions/{name[:2]}_solutions.ipynb" in intro.source, f"{name}: the exercises must point to their solutions"
    assert imports.cell_type == "code", f"{name}: the exercises start with the cell importing their checks"
    assert len(rest) % 3 == 0, f"{name}: each exercise is a text, an answer cell and a check cell"
    out = []
    for k in range(1, len(rest) // 3 + 1):
        text, answer, check = rest[3 * k - 3: 3 * k]
        assert text.cell_type == "markdown" and text.source.startswith(f"### Exercise {k}\n"), f"{name}: exercise {k}"
        assert answer.cell_type == check.cell_type == "code", f"{name}: exercise {k} needs an answer and a check cell"
        out.append((text.source, answer.source, check.source))
    return imports.source, out


@pytest.mark.parametrize("name", ALL_NOTEBOOKS)
def test_notebook_is_a_lesson(name):
    nb = read_lesson(name)
    _stored_clean(nb, name)

    first, last = nb.cells[0], nb.cells[-1]
    assert first.cell_type == "markdown" and first.source.startswith(f"# {name[:2]} ·"), f"{name}: first cell must be the title"
    for heading in ("## Learning objectives", "## Prerequisites"):
        assert heading in first.source.splitlines(), f"{name}: the first cell lacks {heading!r}"
    objectives = first.source.split("## Learning objectives", 1)[1].split("## Prerequisites", 1)[0]
    assert len(re.findall(r"^\d+\. ", objectives, flags=re.M)) >= 3, f"{name}: list at least 3 numbered objectives"

    order = {h: _heading_index(nb, h) for h in ("## Takeaways", "## What this does not show", "## Exercises")}
    assert all(i > 0 for i in order.values()), f"{name}: missing sections {[h for h, i in order.items() if i <= 0]}"
    assert list(order.values()) == sorted(order.values()), f"{name}: sections out of order {order}"
    assert _heading_index(nb, "## Solutions") == -1, f"{name}: solutions live in {solutions_path(name).name}"
    assert last.cell_type == "markdown" and last.source.startswith("## Next"), f"{name}: last cell must be '## Next'"

    imports, exercises = lesson_exercises(nb, name)
    assert 2 <= len(exercises) <= 4, f"{name}: {len(exercises)} exercises"
    _, imported = _imported_checks(imports)
    used = []
    for k, (text, answer, check) in enumerate(exercises, start=1):
        assert "*Predict*" in text, f"{name}: exercise {k} does not ask the learner to predict first"
        defined = _answer(answer, k, solved=False)
        function, argument = _check_call(check)
        assert argument == defined, f"{name}: exercise {k}'s check grades {argument}, the answer cell defines {defined}"
        used.append(function)
    assert sorted(used) == sorted(imported), f"{name}: each imported check grades one exercise ({used} vs {imported})"


@pytest.mark.parametrize("name", ALL_NOTEBOOKS)
def test_solutions_follow_their_lesson(name):
    nb = nbformat.read(solutions_path(name), as_version=4)
    _stored_clean(nb, solutions_path(name).name)
    imports, exercises = lesson_exercises(read_lesson(name), name)
    title, run, imports_again, *rest = nb.cells
    assert title.cell_type == "markdown" and title.source.startswith(f"# {name[:2]} · Solutions")
    assert f'await run_lesson("{name}", globals())' in run.source, "the solutions first run the lesson's code"
    assert imports_again.source == imports, "the solutions import the lesson's checks"
    for k, (_, answer, check) in enumerate(exercises, start=1):
        heading, solution, check_again, explanation = rest[4 * k - 4: 4 * k]
        assert heading.cell_type == "markdown" and heading.source.startswith(f"### Solution {k}\n"), f"solution {k}"
        assert _answer(solution.source, k, solved=True) == _answer(answer, k, solved=False), f"solution {k}"
        assert check_again.source == check, f"solution {k} must run the lesson's check cell unchanged"
        assert explanation.cell_type == "markdown" and len(explanation.source.split()) >= 10, f"solution {k} explains"
    assert len(rest) == 4 * len(exercises) + 1 and rest[-1].cell_type == "markdown", "one solution per exercise"


#: A check cell's verdict (:class:`benchmarks.teaching.grading.Verdict`), as the cell shows it.
VERDICT = re.compile(r"^Exercise (\d+): (right|wrong|not answered yet)\.", re.M)


def _output_text(cell) -> str:
    return "".join(o.get("text", "") if o.get("output_type") == "stream" else o.get("data", {}).get("text/plain", "")
                   for o in cell.get("outputs", []))


def check_verdicts(nb, checks: list[str], expected: str) -> None:
    """Each check cell (``checks``, in exercise order) shows exactly one verdict, for its own exercise, and
    it is ``expected``."""
    cells = [c for c in nb.cells if c.cell_type == "code" and c.source in checks]
    assert [c.source for c in cells] == checks, "every check cell ran once, in order"
    for k, cell in enumerate(cells, start=1):
        found = VERDICT.findall(_output_text(cell))
        assert found == [(str(k), expected)], f"exercise {k}: {_output_text(cell)[:600]!r}"


def execute_notebook(path: Path, kernel_spec_manager, tmp_path, monkeypatch):
    """Run the notebook at ``path`` in an empty working folder; the executed notebook and its stdout."""
    from jupyter_client.manager import KernelManager
    from nbclient.exceptions import CellExecutionError

    for var in PROVIDER_ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    cwd, scratch = tmp_path / "cwd", tmp_path / "tmp"
    cwd.mkdir()
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))  # the notebooks' tempfile.mkdtemp() folders land here and are cleaned up
    nb = nbformat.read(path, as_version=4)
    km = KernelManager(kernel_name="python3", kernel_spec_manager=kernel_spec_manager)
    client = nbclient.NotebookClient(nb, km=km, timeout=CELL_TIMEOUT_S, resources={"metadata": {"path": str(cwd)}})
    t0 = time.perf_counter()
    try:
        client.execute()
    except CellExecutionError as exc:  # the message holds the failing cell and its traceback
        pytest.fail(f"{path.name} failed after {time.perf_counter() - t0:.0f} s:\n{exc}")
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
    assert list(cwd.iterdir()) == [], f"{path.name} wrote into its working directory: {list(cwd.iterdir())}"
    return nb, _stream_text(nb)


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


#: Checks of a notebook's printed output beyond "it ran", by notebook file name.
OUTPUT_CHECKS = {"11_solutions.ipynb": check_nb11_leak_and_guard}


@pytest.mark.notebook
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_offline_without_error(name, kernel_spec_manager, tmp_path, monkeypatch):
    nb, text = execute_notebook(NOTEBOOK_DIR / f"{name}.ipynb", kernel_spec_manager, tmp_path, monkeypatch)
    assert count_images(nb) >= 1, f"{name} drew no plot"
    if name in USES_MODEL:
        assert "local/smollm2" in text, f"{name} did not run on the embedded model"
    check_verdicts(nb, [check for _, _, check in lesson_exercises(read_lesson(name), name)[1]], "not answered yet")


@pytest.mark.notebook
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_solutions_notebook_runs_and_every_check_says_right(name, kernel_spec_manager, tmp_path, monkeypatch):
    path = solutions_path(name)
    nb, text = execute_notebook(path, kernel_spec_manager, tmp_path, monkeypatch)
    check_verdicts(nb, [check for _, _, check in lesson_exercises(read_lesson(name), name)[1]], "right")
    if path.name in OUTPUT_CHECKS:
        OUTPUT_CHECKS[path.name](text)


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
