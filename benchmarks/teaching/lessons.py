"""Run a lesson notebook's code up to its exercises, so that a solutions notebook works on the same data.

A solutions notebook (``notebooks/solutions/NN_solutions.ipynb``) starts with
``await run_lesson("NN_name", globals())``: the lesson's code cells before its ``## Exercises`` heading
run in the solutions notebook's namespace, in order, exactly as written (the same questions, the same
runs, the same model calls), with their printed output, tables and figures kept out of sight. The
exercises' check cells then find every name they use, as they do in the lesson. The lesson stays the one
owner of its code: nothing is copied into the solutions.

Cells run as IPython would run them: top-level ``await`` is allowed (the cell is compiled with
``ast.PyCF_ALLOW_TOP_LEVEL_AWAIT`` and awaited in the running event loop), and line magics (``%matplotlib
inline``) are skipped; they only set up the display.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import io
import json
import time
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["EXERCISES_HEADING", "LessonCellError", "LessonRun", "NOTEBOOK_DIR", "lesson_code_cells", "run_lesson"]

#: The teaching notebooks' folder (``notebooks/`` next to the packages).
NOTEBOOK_DIR = Path(__file__).resolve().parents[2] / "notebooks"
#: The markdown line that ends a lesson's teaching part.
EXERCISES_HEADING = "## Exercises"


class LessonCellError(RuntimeError):
    """A lesson cell raised while a solutions notebook ran the lesson; the message names the notebook and cell."""


@dataclass(frozen=True)
class LessonRun:
    """What :func:`run_lesson` ran.

    Attributes
    ----------
    notebook : str
        The lesson's file name.
    cells : int
        Code cells run (those before the exercises).
    seconds : float
        Wall time of the run, in seconds.
    output : str
        Everything the cells printed (kept out of the solutions notebook; here to read when needed).
    """

    notebook: str
    cells: int
    seconds: float
    output: str

    def __str__(self) -> str:
        return f"ran the {self.cells} code cells of {self.notebook} before its exercises in {self.seconds:.1f} s"

    __repr__ = __str__


def _path(notebook: str | Path) -> Path:
    p = Path(notebook)
    if p.suffix != ".ipynb":
        p = p.with_name(p.name + ".ipynb")
    if not p.is_file() and not p.is_absolute():
        p = NOTEBOOK_DIR / p.name
    if not p.is_file():
        raise FileNotFoundError(f"no lesson notebook {notebook!r} (looked for {p})")
    return p


def _text(source: Any) -> str:
    return "".join(source) if isinstance(source, list) else str(source)


def lesson_code_cells(notebook: str | Path) -> list[str]:
    """The sources of a lesson's code cells before its ``## Exercises`` heading, in order.

    Parameters
    ----------
    notebook : str or Path
        A notebook file, or a lesson's name in :data:`NOTEBOOK_DIR` (``"05_aggregation_math"``).

    Raises
    ------
    FileNotFoundError
        If there is no such notebook.
    ValueError
        If the notebook has no ``## Exercises`` heading (then it has no exercises to solve).
    """
    path = _path(notebook)
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    out = []
    for cell in cells:
        source = _text(cell.get("source", ""))
        if cell.get("cell_type") == "markdown" and EXERCISES_HEADING in source.splitlines():
            return out
        if cell.get("cell_type") == "code":
            out.append(source)
    raise ValueError(f"{path}: no {EXERCISES_HEADING!r} heading")


def _without_magics(source: str) -> str:
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


@contextlib.contextmanager
def _out_of_sight(namespace: MutableMapping[str, Any], printed: io.StringIO) -> Iterator[None]:
    """Printed text into ``printed``; ``display()`` and ``plt.show()`` do nothing; figures are closed."""
    import matplotlib.pyplot as plt

    had_display, old_display = "display" in namespace, namespace.get("display")
    old_show = plt.show
    namespace["display"] = lambda *args, **kwargs: None
    plt.show = lambda *args, **kwargs: None
    try:
        with contextlib.redirect_stdout(printed):
            yield
    finally:
        plt.show = old_show
        plt.close("all")
        if had_display:
            namespace["display"] = old_display
        else:
            namespace.pop("display", None)


async def run_lesson(notebook: str | Path, namespace: dict[str, Any]) -> LessonRun:
    """Run a lesson's code cells before its exercises in ``namespace``, output out of sight.

    Parameters
    ----------
    notebook : str or Path
        The lesson, e.g. ``"05_aggregation_math"`` (found in :data:`NOTEBOOK_DIR`) or a path.
    namespace : dict
        Where the cells run; a solutions notebook passes ``globals()``, so the names the lesson defines
        are then its own.

    Returns
    -------
    LessonRun
        The number of cells run, the wall time in seconds and the printed output.

    Raises
    ------
    FileNotFoundError, ValueError
        As :func:`lesson_code_cells`.
    LessonCellError
        If a cell raises; the message names the notebook, the cell (counted from 1 among the code cells)
        and the error, which is chained.
    """
    path = _path(notebook)
    sources = lesson_code_cells(path)
    printed = io.StringIO()
    start = time.perf_counter()
    with _out_of_sight(namespace, printed):
        for i, source in enumerate(sources, start=1):
            try:
                code = compile(_without_magics(source), f"<{path.name}, code cell {i}>", "exec",
                               flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
                result = eval(code, namespace)  # noqa: S307 -- the lesson's own code, as Jupyter would run it
                if inspect.iscoroutine(result):
                    await result
            except Exception as exc:
                raise LessonCellError(f"{path.name}, code cell {i}: {type(exc).__name__}: {exc}") from exc
    return LessonRun(path.name, len(sources), time.perf_counter() - start, printed.getvalue())
