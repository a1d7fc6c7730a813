"""run_lesson: a lesson's code before its exercises runs in the caller's namespace, top-level await and
magics as in Jupyter, output out of sight; a failing cell is named."""

from __future__ import annotations

import asyncio

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from benchmarks.teaching.lessons import LessonCellError, lesson_code_cells, run_lesson


def _lesson(tmp_path, *cells):
    path = tmp_path / "99_lesson.ipynb"
    nbformat.write(new_notebook(cells=list(cells)), path)
    return path


def test_run_lesson_runs_the_code_before_the_exercises_in_the_namespace(tmp_path, capsys):
    path = _lesson(
        tmp_path,
        new_markdown_cell("# 99 · A lesson"),
        new_code_cell("%matplotlib inline\nimport asyncio\nimport matplotlib.pyplot as plt\nx = 2"),
        new_code_cell("async def twice(v):\n    await asyncio.sleep(0)\n    return 2 * v\n\ny = await twice(x)\n"
                      "print('seen only in the run', y)\nplt.plot([1, 2])\nplt.show()\ndisplay('a table')\ny"),
        new_markdown_cell("## Exercises\n\nPredict."),
        new_code_cell("raise AssertionError('an exercise cell must not run')"),
    )
    namespace: dict = {}
    run = asyncio.run(run_lesson(path, namespace))
    assert namespace["x"] == 2 and namespace["y"] == 4 and "display" not in namespace
    assert run.cells == 2 and run.notebook == "99_lesson.ipynb" and run.output == "seen only in the run 4\n"
    assert str(run).startswith("ran the 2 code cells of 99_lesson.ipynb before its exercises in ")
    assert capsys.readouterr().out == ""
    import matplotlib.pyplot as plt

    assert plt.get_fignums() == []


def test_a_failing_lesson_cell_is_named(tmp_path):
    path = _lesson(tmp_path, new_code_cell("a = 1"), new_code_cell("b = a / 0"), new_markdown_cell("## Exercises"))
    with pytest.raises(LessonCellError, match=r"99_lesson.ipynb, code cell 2: ZeroDivisionError") as info:
        asyncio.run(run_lesson(path, {}))
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_a_lesson_needs_its_exercises_heading_and_must_exist(tmp_path):
    with pytest.raises(ValueError, match="no '## Exercises' heading"):
        lesson_code_cells(_lesson(tmp_path, new_code_cell("a = 1")))
    with pytest.raises(FileNotFoundError, match="no lesson notebook"):
        lesson_code_cells("99_no_such_lesson")


def test_the_bundled_lessons_are_found_by_name():
    cells = lesson_code_cells("05_aggregation_math")
    assert cells[0].startswith("%matplotlib inline") and not any("check_" in c for c in cells)
