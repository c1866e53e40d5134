"""What the project's shape tests count as an import, read with `ast` (nothing is imported): the import
statements, and the calls of `importlib.import_module` and `__import__`, whose module counts when its name is
written as a string literal (a computed name is reported by the import test instead, so no import can hide)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.tools import ROOT

IMPORT_FUNCTIONS = ("import_module", "__import__")
PACKAGE = ROOT / "toolkit"


def import_call(node: ast.AST) -> ast.Call | None:
    """`node` when it calls import_module or __import__, however it was reached (`importlib.import_module`,
    `from importlib import import_module`, an alias of importlib)."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    return node if name in IMPORT_FUNCTIONS else None


def literal_name(call: ast.Call) -> str | None:
    """The module an import call names as an absolute string literal; None when computed or relative (a
    relative name depends on a `package` argument, which is as good as computed here)."""
    arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "name"), None)
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value and not arg.value.startswith("."):
        return arg.value
    return None


def imported_names(node: ast.AST) -> list[str]:
    """The names one node imports: `import a.b` -> a.b; `from a import b` -> a and a.b (b may be a module or
    not); `import_module("a.b")` -> a.b. Nothing for any other node, or an import call with a computed name."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        return [node.module or ""] + [f"{node.module}.{alias.name}" for alias in node.names]
    call = import_call(node)
    literal = literal_name(call) if call is not None else None
    return [literal] if literal is not None else []


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def toolkit_modules(package: Path = PACKAGE, root: Path = ROOT) -> dict[str, Path]:
    return {module_name(p, root): p for p in sorted(package.rglob("*.py"))}


def resolve_relative(module: str, is_package: bool, level: int, target: str | None) -> str:
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join([*base, *([target] if target else [])])


def import_edges(modules: dict[str, Path]) -> dict[str, dict[str, int]]:
    """module -> {imported toolkit module: line of the first import of it}."""
    edges: dict[str, dict[str, int]] = {name: {} for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                source = node.module if node.level == 0 else resolve_relative(
                    name, path.name == "__init__.py", node.level, node.module)
                for alias in node.names:
                    candidate = f"{source}.{alias.name}"
                    targets.append(candidate if candidate in modules else source)
            elif (call := import_call(node)) is not None and (literal := literal_name(call)) is not None:
                targets = [literal]
            for target in targets:
                if target in modules:
                    edges[name].setdefault(target, node.lineno)
    return edges
