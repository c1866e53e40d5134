"""The packages as layers: a package imports only the packages below it in tests/project/package_order.toml.

Every import counts (module level, inside a function, under TYPE_CHECKING, an import_module with a literal name),
read with the same walker as the cycle test (tests/project/test_imports.py). toolkit/__init__.py is the package
`toolkit`; toolkit/__main__.py belongs to `cli`.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from tests.support.imports import import_edges, toolkit_modules
from tests.support.tools import ROOT

ORDER_FILE = Path(__file__).with_name("package_order.toml")


def declared_order() -> list[str]:
    return list(tomllib.loads(ORDER_FILE.read_text(encoding="utf-8"))["order"])


def package_of(module: str) -> str:
    parts = module.split(".")
    if parts == ["toolkit"]:
        return "toolkit"
    return "cli" if parts[1] == "__main__" else parts[1]


def upward_imports(edges: dict[str, dict[str, int]], order: list[str]) -> list[tuple[str, str, int]]:
    """(importer, imported, line) of every import from a package to one at or above it in `order`."""
    rank = {name: i for i, name in enumerate(order)}
    return sorted((a, b, line) for a, targets in edges.items() for b, line in targets.items()
                  if package_of(a) != package_of(b) and rank[package_of(b)] > rank[package_of(a)])


def test_every_package_is_in_the_order_once():
    order = declared_order()
    packages = {package_of(m) for m in toolkit_modules()}
    assert len(order) == len(set(order)), f"named twice in {ORDER_FILE.name}: {order}"
    assert sorted(packages - set(order)) == [], f"packages missing from {ORDER_FILE.name}: place each in the order"
    assert sorted(set(order) - packages) == [], f"{ORDER_FILE.name} names packages that are gone"


def test_no_package_imports_one_above_it():
    modules = toolkit_modules()
    found = upward_imports(import_edges(modules), declared_order())
    lines = [f"{modules[a].relative_to(ROOT)}:{line}: {package_of(a)} imports {b} ({package_of(b)} is above it)"
             for a, b, line in found]
    assert not lines, (f"{len(lines)} import(s) against the package order of {ORDER_FILE.name} (move the code to "
                       "the package it belongs to, or the imported code down):\n" + "\n".join(lines))


def test_an_upward_import_is_found_at_function_level_too(tmp_path):
    """The check itself, on a made-up package: b below a; b importing a inside a function is reported."""
    package = tmp_path / "toolkit"
    (package / "a").mkdir(parents=True)
    (package / "b").mkdir()
    for folder in (package, package / "a", package / "b"):
        (folder / "__init__.py").write_text("")
    (package / "a" / "x.py").write_text("from toolkit.b import y\n")
    (package / "b" / "y.py").write_text("def later():\n    from toolkit.a import x\n    return x\n")
    edges = import_edges(toolkit_modules(package, tmp_path))
    assert upward_imports(edges, ["toolkit", "b", "a"]) == [("toolkit.b.y", "toolkit.a.x", 2)]
    assert upward_imports(edges, ["toolkit", "a", "b"]) == [("toolkit.a.x", "toolkit.b.y", 1)]
