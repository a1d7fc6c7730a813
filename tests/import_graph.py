"""The import graph of ``benchmarks/``: modules, imports (with where they sit), cycles and levels.

Read from the source (``ast``), nothing is imported, so it reads any checkout: ``tests/test_architecture.py``
checks the current tree with it, and ``tests/architecture_metrics.py`` measures this tree or another one.

Definitions
-----------
* An **import** of a module is every ``import`` / ``from ... import`` statement naming a ``benchmarks`` module,
  resolved to the module it loads: ``from benchmarks.viewer import trace`` is ``benchmarks.viewer.trace`` (a
  module), ``from benchmarks.viewer import render_page`` is ``benchmarks.viewer`` (a name of the package).
  One edge per (importing module, imported module).
* An import is **lazy** when it sits inside a function body (``where == "function"``) or under
  ``if TYPE_CHECKING:`` (``where == "type_checking"``); else ``where == "module"``.
* A **unit** is a direct child of ``benchmarks/``: a module at its root (``benchmarks/cli.py``) or a
  sub-package with everything in it (``benchmarks/viewer/``).
* A **cycle** is a strongly connected component of more than one module of the module graph (lazy imports
  included: they run too).
* **Levels** is the number of modules (units) on the longest import chain once every cycle is condensed to one
  node.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "benchmarks"


@dataclass(frozen=True)
class Import:
    """One import of a ``benchmarks`` module by another."""

    source: str
    target: str
    line: int
    where: str
    """"module", "function" or "type_checking"."""


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules(root: Path, package: str = PACKAGE) -> dict[str, Path]:
    """``{module name: path}`` of every module of ``package`` under ``root``."""
    return {module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _resolve(name: str, known: set[str]) -> str | None:
    """The longest known module ``name`` starts with (``a.b.c`` -> ``a.b`` when ``c`` is a name in ``a.b``)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        candidate = ".".join(parts[:i])
        if candidate in known:
            return candidate
    return None


def statement_imports(path: Path, this: str, known: set[str], package: str = PACKAGE) -> list[Import]:
    """Every import of a module of ``package`` in the module ``this`` at ``path``: one per statement and
    imported module, in source order (see the module doc)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    out: list[Import] = []

    def walk(node: ast.AST, where: str) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = this.split(".") if is_package else this.split(".")[:-1]
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [f"{base}.{a.name}" for a in node.names]
            resolved = {r for t in targets if t.split(".")[0] == package
                        and (r := _resolve(t, known)) not in (None, this, package)}
            out.extend(Import(this, r, node.lineno, where) for r in sorted(resolved))
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            where = "function"
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test) and where == "module":
                for sub in child.body:
                    walk(sub, "type_checking")
                for sub in child.orelse:
                    walk(sub, where)
            else:
                walk(child, where)

    walk(tree, "module")
    return out


def all_imports(root: Path, package: str = PACKAGE) -> tuple[dict[str, Path], list[Import]]:
    """The modules of ``package`` and every import statement between them (:func:`statement_imports`)."""
    modules = package_modules(root, package)
    known = set(modules)
    return modules, [i for name, path in modules.items() for i in statement_imports(path, name, known, package)]


def edges(imports: list[Import]) -> list[tuple[str, str]]:
    """One ``(importing module, imported module)`` pair per edge, in first-seen order."""
    return list(dict.fromkeys((i.source, i.target) for i in imports))


def unit_of(module: str, package: str = PACKAGE) -> str:
    """The unit of ``module``: ``benchmarks.<its first name>``."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def graph(edges: list[tuple[str, str]], nodes: set[str]) -> dict[str, set[str]]:
    g: dict[str, set[str]] = {n: set() for n in nodes}
    for a, b in edges:
        if a != b:
            g.setdefault(a, set()).add(b)
            g.setdefault(b, set())
    return g


def strongly_connected(g: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of ``g`` (each sorted; components in no set order)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            strong(v)
    return out


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node, largest first."""
    return sorted((c for c in strongly_connected(g) if len(c) > 1), key=lambda c: (-len(c), c))


def levels(g: dict[str, set[str]]) -> int:
    """Nodes on the longest chain of ``g`` once each cycle is condensed to one node."""
    comps = strongly_connected(g)
    comp_of = {v: i for i, c in enumerate(comps) for v in c}
    dag: dict[int, set[int]] = {i: set() for i in range(len(comps))}
    for a, targets in g.items():
        for b in targets:
            if comp_of[a] != comp_of[b]:
                dag[comp_of[a]].add(comp_of[b])
    depth: dict[int, int] = {}

    def height(c: int) -> int:
        if c not in depth:
            depth[c] = 1 + max((height(d) for d in dag[c]), default=0)
        return depth[c]

    return max((height(c) for c in dag), default=0)
