"""What the project's shape tests count as an import, read with `ast` (nothing is imported): the import
statements, and the calls of `importlib.import_module` and `__import__`, whose module counts when its name is
written as a string literal (a computed name is reported by the import test instead, so no import can hide)."""

from __future__ import annotations

import ast

IMPORT_FUNCTIONS = ("import_module", "__import__")


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
