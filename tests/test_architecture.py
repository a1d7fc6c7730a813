"""The code's own rules, checked on the source of every shipped module (the packages and ``benchmarks/perf``).

1. **Imports point one way** (DEVELOPERS.md): ``agent_schemas`` is a leaf; providers and tools know nothing
   of agents; tools know nothing of providers (a provider may read the bundled data through its one owner,
   ``agent_tools.datasets``: the simulator does); specialists never import ``agent_research``; only ``benchmarks`` imports
   ``benchmarks``; shipped code never imports ``tests``. Every import counts, also one inside a function.

2. **No module calls another's private names.** A name with one leading underscore belongs to the module
   that defines it (a ``def``/``class``, an assignment such as ``self._lock = ...`` or ``_CACHE = ...``, or
   an import alias such as ``import warnings as _warnings``). A module may not import such a name from
   another module (``from m import _name``), nor reach it as an attribute (``x._name``) unless it defines
   that name itself (then ``x`` is one of its own objects, e.g. ``clone._map_providers``). Allowed:
   ``self._name`` and ``cls._name`` (a class's own or inherited protected member), dunder names
   (``__init__``), and namedtuple methods (``_asdict``, ``_replace``, ``_fields``, ``_make``), which are
   public API despite the underscore. Whatever another module needs gets a public name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.import_graph import all_imports, cycles, edges, graph

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agent_schemas", "agent_providers", "agent_tools", "agent_specialists", "agent_research", "benchmarks")
#: The project packages each package may import (itself included).
MAY_IMPORT: dict[str, set[str]] = {
    "agent_schemas": {"agent_schemas"},
    "agent_providers": {"agent_schemas", "agent_tools", "agent_providers"},
    "agent_tools": {"agent_schemas", "agent_tools"},
    "agent_specialists": {"agent_schemas", "agent_providers", "agent_tools", "agent_specialists"},
    "agent_research": {"agent_schemas", "agent_providers", "agent_tools", "agent_specialists", "agent_research"},
    "benchmarks": set(PACKAGES),
}
PUBLIC_UNDERSCORE = {"_asdict", "_replace", "_fields", "_make"}
#: The wings of ``benchmarks`` (its sub-packages and ``cli.py``), lowest layer first: ``wing: (layer, the other wings
#: it may import)``. Rules (tests below): no import cycle; nothing points up (a wing imports only wings of a lower
#: layer, and only those listed); the readers (``run_folder``, ``report``, ``viewer``, ``panels``) never import the engine
#: (``harness``); no ``benchmarks`` import inside a function or under ``TYPE_CHECKING`` (:data:`LAZY_ALLOWED`).
WINGS: dict[str, tuple[int, set[str]]] = {
    "run_folder": (0, set()),                      # the file format: names, QuestionRecord, durable I/O, load_run, shards
    "scoring": (0, set()),                         # proper scores, calibration, bootstrap, ranking on one question set
    "questions": (0, set()),                       # loaders of question sets, and browsing them
    "protocol": (1, {"questions", "scoring"}),     # methods, baselines, clusters, leakage audit, model cutoffs, fitted methods
    "viewer": (2, {"run_folder", "scoring", "questions", "protocol"}),  # page, plots, trace views, terminal table
    "report": (3, {"run_folder", "scoring", "questions", "protocol", "viewer"}),  # leaderboards and reports of runs
    "harness": (3, {"run_folder", "scoring", "questions", "protocol"}),  # the engine that runs questions
    "teaching": (3, {"run_folder", "scoring", "questions", "protocol"}),  # notebook exercises' graders, class split
    # panels of forecasters read (score's file reader), pooled and compared; the engine runs them as given members
    "panels": (4, {"run_folder", "scoring", "questions", "protocol", "report"}),
    # forecast hubs read (hubverse folders, the bundled FluSight panel), pooled and scored as the hubs score
    "hubs": (1, {"scoring"}),
    # grids of ordinary runs (the engine) compared as one leaderboard (the reports): experiment diversity
    "experiments": (4, {"run_folder", "scoring", "questions", "protocol", "report", "harness"}),
    "cli": (5, {"run_folder", "scoring", "questions", "protocol", "viewer", "report", "harness", "teaching", "panels", "hubs",
                "experiments"}),
    "perf": (6, {"run_folder", "scoring", "questions", "protocol", "viewer", "report", "harness", "teaching", "panels", "hubs", "cli",
                 "experiments"}),
}


def shipped_modules() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(tree: ast.AST, this: str) -> list[tuple[int, str]]:
    """``(line, module)`` of every import; relative imports resolved against ``this``."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(this.split(".")[: -node.level] + ([base] if base else []))
            out.append((node.lineno, base))
    return sorted(out)


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name not in PUBLIC_UNDERSCORE


def own_private_names(tree: ast.AST) -> set[str]:
    """The private names a module defines (see the module docstring)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return {n for n in names if is_private(n)}


def private_name_uses(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, what)`` of every use of another module's private name in ``tree``."""
    own = own_private_names(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += [(node.lineno, f"from {node.module} import {a.name}") for a in node.names if is_private(a.name)]
        elif isinstance(node, ast.Attribute) and is_private(node.attr) and node.attr not in own:
            owner = node.value.id if isinstance(node.value, ast.Name) else None
            if owner not in ("self", "cls"):
                found.append((node.lineno, f"{ast.unparse(node.value)}.{node.attr}"))
    return found


MODULES = shipped_modules()


def test_the_checks_see_every_package():
    names = {module_name(p) for p in MODULES}
    assert {"agent_schemas", "agent_research.pipeline", "benchmarks.scoring.tables", "benchmarks.questions.bundled"} <= names
    assert any(p.parts[-2] == "perf" for p in MODULES)


#: The perf scripts are measurements of the repository, excluded from the wheel (pyproject's ``exclude``): they may
#: use the repository's test doubles, and nothing else of ``tests``.
UNSHIPPED = {"benchmarks.perf": ("tests.doubles",)}


def forbidden_imports(this: str, imports: list[tuple[int, str]]) -> list[str]:
    """The imports of module ``this`` against the package table (:data:`MAY_IMPORT`) or into ``tests``."""
    allowed = MAY_IMPORT[this.split(".")[0]]
    doubles = next((ok for prefix, ok in UNSHIPPED.items() if this == prefix or this.startswith(prefix + ".")), ())
    return [f"line {line}: {mod}" for line, mod in imports
            if (mod.split(".")[0] == "tests" and not any(mod == d or mod.startswith(d + ".") for d in doubles))
            or (mod.split(".")[0] in PACKAGES and mod.split(".")[0] not in allowed)]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_one_way(path):
    this = module_name(path)
    bad = forbidden_imports(this, imported_modules(ast.parse(path.read_text(encoding="utf-8")), this))
    assert bad == [], f"{this} imports against the direction: {bad}"


def test_only_the_unshipped_perf_scripts_may_use_the_test_doubles():
    doubles = [(1, "tests.doubles.fake_api"), (2, "tests.helpers")]
    assert forbidden_imports("benchmarks.perf.scale", doubles) == ["line 2: tests.helpers"]
    assert forbidden_imports("benchmarks.harness.frameworks", doubles) == ["line 1: tests.doubles.fake_api",
                                                                          "line 2: tests.helpers"]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_uses_another_modules_private_names(path):
    uses = private_name_uses(ast.parse(path.read_text(encoding="utf-8")))
    assert uses == [], f"{module_name(path)} uses private names of other modules: {uses}"


def test_the_private_name_rule_catches_both_forms_and_allows_own_names():
    src = (
        "from agent_providers.base import _finish\n"
        "import agent_research.forecaster as f\n"
        "class A:\n"
        "    def __init__(self):\n"
        "        self._lock = 1\n"
        "    def copy(self, other):\n"
        "        return other._lock, self._peer, cls._x, f._dedupe([]), other.__class__, t._asdict()\n"
    )
    uses = private_name_uses(ast.parse(src))
    assert [what for _, what in uses] == ["from agent_providers.base import _finish", "f._dedupe"]


def test_the_import_rule_catches_a_reversed_import():
    tree = ast.parse("def f():\n    from agent_research import ForecastPipeline\nfrom . import prompts\n")
    assert imported_modules(tree, "agent_specialists.debate") == [(2, "agent_research"), (3, "agent_specialists")]


# --- the wings of benchmarks (WINGS above) ---------------------------------------------------------------------------

#: Files whose ``benchmarks`` imports may sit inside functions: the command line imports each command's code when
#: the command runs (start-up time: ``forecast-reconcile --help`` loads no engine), and the perf scripts import
#: the code they measure in their child processes, after setting ``sys.path`` to the checkout they measure.
LAZY_ALLOWED = ("benchmarks/cli.py", "benchmarks/perf/")
#: The wings that read runs; none of them imports the engine (``harness``).
READERS = ("run_folder", "report", "viewer", "panels")


def wing_of(module: str) -> str:
    return module.split(".")[1] if module.count(".") else module


def wing_violations(root: Path) -> list[str]:
    """Every import between two wings that the table does not allow, and every module in no wing."""
    modules, imports = all_imports(root)
    bad = [f"{m}: in no wing of WINGS" for m in modules if m != "benchmarks" and wing_of(m) not in WINGS]
    for i in imports:
        a, b = wing_of(i.source), wing_of(i.target)
        if a != b and a in WINGS and b not in WINGS[a][1]:
            layer = WINGS[b][0] if b in WINGS else None
            how = ("not a wing" if layer is None else "up" if layer > WINGS[a][0] else "sideways" if layer == WINGS[a][0]
                   else "not listed")
            bad.append(f"{modules[i.source].relative_to(root).as_posix()}:{i.line} imports {i.target} ({a} -> {b}: {how})")
    return bad


def import_cycles(root: Path) -> list[list[str]]:
    modules, imports = all_imports(root)
    return cycles(graph(edges(imports), set(modules)))


def lazy_violations(root: Path) -> list[str]:
    """``benchmarks`` imports inside a function or under ``TYPE_CHECKING`` outside :data:`LAZY_ALLOWED`."""
    modules, imports = all_imports(root)
    out = []
    for i in imports:
        path = modules[i.source].relative_to(root).as_posix()
        if i.where != "module" and not path.startswith(LAZY_ALLOWED):
            out.append(f"{path}:{i.line} imports {i.target} ({i.where})")
    return out


def test_the_wing_table_points_one_way():
    for wing, (layer, may) in WINGS.items():
        assert wing not in may, wing
        assert all(WINGS[other][0] < layer for other in may), f"{wing} may import a wing of its own layer or above: {may}"
    for reader in READERS:
        assert "harness" not in WINGS[reader][1], f"{reader} is a reader: it may not import the engine"


def test_benchmarks_imports_follow_the_wing_table():
    """Nothing points up, readers never import the engine, every module is in a wing (a lazy import counts too)."""
    assert wing_violations(ROOT) == []


def test_benchmarks_has_no_import_cycle():
    assert import_cycles(ROOT) == []


def test_no_benchmarks_import_hides_in_a_function():
    """Imports of ``benchmarks`` modules sit at the top of the module (none dodges a cycle), except in
    :data:`LAZY_ALLOWED`; optional third-party imports (Ray, rich, DuckDuckGo) may stay lazy."""
    assert lazy_violations(ROOT) == []


def test_the_wing_checks_see_what_they_check(tmp_path):
    """The three checks on a made-up tree: a reader importing the engine, a cycle, and an import in a function."""
    pkg = tmp_path / "benchmarks"
    for wing in ("run_folder", "harness", "report"):
        (pkg / wing).mkdir(parents=True)
        (pkg / wing / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "run_folder" / "a.py").write_text("from benchmarks.harness import b\n")
    (pkg / "harness" / "b.py").write_text("import benchmarks.run_folder.a\n")
    (pkg / "report" / "c.py").write_text("def f():\n    from benchmarks.harness.b import x\n")
    assert sorted(wing_violations(tmp_path)) == [
        "benchmarks/report/c.py:2 imports benchmarks.harness.b (report -> harness: sideways)",
        "benchmarks/run_folder/a.py:1 imports benchmarks.harness.b (run_folder -> harness: up)"]
    assert import_cycles(tmp_path) == [["benchmarks.harness.b", "benchmarks.run_folder.a"]]
    assert lazy_violations(tmp_path) == ["benchmarks/report/c.py:2 imports benchmarks.harness.b (function)"]
