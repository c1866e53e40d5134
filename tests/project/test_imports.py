"""No import cycle among the toolkit's modules, and no import the cycle test cannot see.

Every module of toolkit/ is read with `ast` (nothing is imported), every import statement counts, those
inside functions included: `import a.b` is an edge to a.b; `from a import b` is an edge to a.b when that
is a module, else to a (relative imports resolved against the importing module's package);
`importlib.import_module("a.b")` or `__import__("a.b")` with a literal name is an edge to a.b. Only edges
between toolkit modules are kept. Any strongly connected group of two or more modules (or a module
importing itself) fails the test, printed as one concrete cycle with the file:line of each import.

An import by a computed name would be an edge no one sees: the few there are import modules outside the
toolkit, listed in COMPUTED_IMPORTS with what they import.
"""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

import pytest

from tests.support.imports import import_call, import_edges, literal_name, resolve_relative, toolkit_modules
from tests.support.tools import ROOT

# The calls that import a module named at run time, by "path::function" (nested: "outer.inner"), each with
# the module outside the toolkit it imports.
COMPUTED_IMPORTS: dict[str, str] = {
    "toolkit/cmake/commands.py::_find_tool": "the PyPI packages cmake and ninja, for the folder of their binary",
    "toolkit/smoke/inside/smoke_check.py::resolve_placeholders": "the package a smoke `{library:MODULE}` names",
    "toolkit/smoke/inside/smoke_check.py::package_components": "the EP package the smoke test checks",
}


def import_calls(path: Path) -> list[tuple[str, ast.Call]]:
    """("function" (nested: "outer.inner"; "" at module level), call) of every import call in a file."""
    found: list[tuple[str, ast.Call]] = []

    def visit(node: ast.AST, where: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                visit(child, f"{where}.{child.name}" if where else child.name)
                continue
            call = import_call(child)
            if call is not None:
                found.append((where, call))
            visit(child, where)

    visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), "")
    return found


def computed_imports(modules: dict[str, Path], root: Path = ROOT) -> dict[str, int]:
    """"path::function" -> line of each import call whose module name is computed, not a literal."""
    found: dict[str, int] = {}
    for path in modules.values():
        for where, call in import_calls(path):
            if literal_name(call) is None:
                found.setdefault(f"{path.relative_to(root).as_posix()}::{where}", call.lineno)
    return found


def strongly_connected(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively; groups in a stable order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                groups.append(sorted(group))
    return groups


def shortest_cycle(group: list[str], edges: dict[str, dict[str, int]]) -> list[str]:
    """A shortest cycle through the group's first module, staying inside the group."""
    start, members = group[0], set(group)
    previous: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(edges[node]):
            if child not in members:
                continue
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return [start, *reversed(path[:-1]), start] if len(path) > 1 else [start, start]
            if child not in previous:
                previous[child] = node
                queue.append(child)
    return [start, start]


def describe(cycle: list[str], edges: dict[str, dict[str, int]], modules: dict[str, Path]) -> str:
    steps = [f"  {a} -> {b}   ({modules[a].relative_to(ROOT)}:{edges[a][b]})"
             for a, b in zip(cycle, cycle[1:], strict=False)]
    return " -> ".join(cycle) + "\n" + "\n".join(steps)


def import_cycles() -> list[str]:
    modules = toolkit_modules()
    edges = import_edges(modules)
    cycles = []
    for group in strongly_connected(edges):
        if len(group) > 1 or group[0] in edges[group[0]]:
            cycles.append(describe(shortest_cycle(group, edges), edges, modules)
                          + (f"\n  (one cycle of the group {', '.join(group)})" if len(group) > 2 else ""))
    return cycles


def test_edges_follow_from_imports_and_functions_too():
    """The walker itself, on the toolkit as it is: a function-level import counts, `from pkg import mod`
    is an edge to the module, `from pkg import name` to the package."""
    modules = toolkit_modules()
    edges = import_edges(modules)
    assert "toolkit.cli.main" in modules and "toolkit.pipeline.stages" in modules
    assert "toolkit.util.errors" in edges["toolkit.cli.main"]          # from toolkit.util.errors import ToolkitError
    assert "toolkit.util.log" in edges["toolkit.cli.main"]             # from toolkit.util import log
    assert "toolkit.util" not in edges["toolkit.cli.main"]
    assert "toolkit" in edges["toolkit.cli.main"]                      # from toolkit import __version__
    assert "toolkit.util.cachedir" in edges["toolkit.buildroot.sandbox"]  # imported inside cache_dir()


def test_lazy_and_literal_dynamic_imports_are_edges_on_a_made_up_package(tmp_path):
    """A cycle made of a function-level import and an import_module with a literal name is found; a computed
    name is no edge, and is reported where it is."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def later():\n    from pkg import b\n    return b\n")
    (package / "b.py").write_text("import importlib\n\n\ndef load():\n"
                                  "    return importlib.import_module('pkg.c')\n")
    (package / "c.py").write_text("from importlib import import_module\n\n__import__('pkg.a')\n\n\n"
                                  "def pick(name):\n    return import_module(name)\n")
    modules = toolkit_modules(package, tmp_path)
    edges = import_edges(modules)
    assert edges["pkg.a"] == {"pkg.b": 2} and edges["pkg.b"] == {"pkg.c": 5} and edges["pkg.c"] == {"pkg.a": 3}
    assert ["pkg.a", "pkg.b", "pkg.c"] in strongly_connected(edges)
    assert computed_imports(modules, tmp_path) == {"pkg/c.py::pick": 7}


def test_no_module_is_imported_by_a_computed_name():
    """Every import call with a computed name is listed in COMPUTED_IMPORTS (a module outside the toolkit), and
    every listed one is still there."""
    found = computed_imports(toolkit_modules())
    unlisted = [f"{where} (line {line})" for where, line in sorted(found.items()) if where not in COMPUTED_IMPORTS]
    assert not unlisted, ("imports by a computed name, an edge the cycle test cannot see: import the module by "
                          f"name (a toolkit module), or list it in COMPUTED_IMPORTS (one outside): {unlisted}")
    gone = sorted(set(COMPUTED_IMPORTS) - set(found))
    assert not gone, f"COMPUTED_IMPORTS lists calls that are gone: {gone}"


def test_literal_import_calls_name_existing_toolkit_modules():
    """A literal name under toolkit. that is no module would be an edge the walker drops."""
    modules = toolkit_modules()
    unknown = [f"{path.relative_to(ROOT)}:{call.lineno} {name}" for path in modules.values()
               for _, call in import_calls(path)
               if (name := literal_name(call)) and name.split(".")[0] == "toolkit" and name not in modules]
    assert not unknown, unknown



# The wheel's templates import each other by the names they get inside a wheel (_selfcheck, _report, ...).
WHEEL_SIDE = "toolkit.wheel.templates"


def test_every_import_of_a_toolkit_module_names_one_that_exists():
    """An import statement left behind by a rename would be an edge the walker drops (and, under TYPE_CHECKING,
    a name mypy types as Any): every toolkit module an import statement names must exist."""
    modules = toolkit_modules()
    stale = []
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level and name.startswith(WHEEL_SIDE):
                    continue
                targets = [node.module if node.level == 0 else resolve_relative(
                    name, path.name == "__init__.py", node.level, node.module)]
            else:
                continue
            stale += [f"{path.relative_to(ROOT)}:{node.lineno} {t}" for t in targets
                      if t and t.split(".")[0] == "toolkit" and t not in modules]
    assert not stale, stale

def test_cycle_finder_on_a_made_up_graph():
    """a -> b -> c -> a and d -> d are cycles; e -> a is not part of one."""
    edges = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3, "d": 4}, "d": {"d": 5}, "e": {"a": 6}}
    groups = strongly_connected(edges)
    assert sorted(groups) == [["a", "b", "c"], ["d"], ["e"]]
    assert shortest_cycle(["a", "b", "c"], edges) == ["a", "b", "c", "a"]
    assert shortest_cycle(["d"], edges) == ["d", "d"]


def test_no_import_cycles():
    cycles = import_cycles()
    if cycles:
        pytest.fail(f"{len(cycles)} import cycle(s) among toolkit's modules:\n" + "\n".join(cycles), pytrace=False)
