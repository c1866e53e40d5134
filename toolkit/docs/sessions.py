"""The nox sessions, read from noxfile.py without importing it: name, the command each runs, its docstring."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Session:
    name: str
    runs: tuple[str, ...]   # the command line it runs, before the session's `-- ARGS`
    doc: str


def _name(node: ast.FunctionDef) -> str | None:
    for deco in node.decorator_list:
        call = deco if isinstance(deco, ast.Call) else None
        func = call.func if call else deco
        if isinstance(func, ast.Attribute) and func.attr == "session":
            for kw in call.keywords if call else ():
                if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                    return str(kw.value.value)
            return node.name
    return None


def _runs(node: ast.FunctionDef) -> tuple[str, ...]:
    commands = []
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        if not isinstance(call.func, ast.Name):
            continue
        args = [str(a.value) for a in call.args[1:] if isinstance(a, ast.Constant)]
        if call.func.id == "_toolkit":
            commands.append(" ".join(["python -m toolkit", *args]))
        elif call.func.id == "_run":
            commands.append(" ".join(["python", *args]))
    return tuple(commands)


def sessions(noxfile: Path) -> list[Session]:
    found = []
    for node in ast.parse(noxfile.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef) and (name := _name(node)) is not None:
            found.append(Session(name, _runs(node), " ".join((ast.get_docstring(node) or "").split())))
    return found
