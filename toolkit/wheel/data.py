"""The wheel stage's data files (library name patterns, templates), read from the installed package."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources


def read_text(*parts: str) -> str:
    node = resources.files("toolkit.wheel")
    for part in parts:
        node = node.joinpath(part)
    return node.read_text(encoding="utf-8")


@cache
def libraries() -> dict:
    return json.loads(read_text("data", "libraries.json"))


def rocm_excludes() -> tuple[str, ...]:
    """fnmatch patterns (auditwheel --exclude) for every ROCm soname: lib<NAME>.so and lib<NAME>.so.*."""
    return tuple(p for name in libraries()["rocm_names"] for p in (f"lib{name}.so", f"lib{name}.so.*"))


def system_libraries() -> tuple[str, ...]:
    return tuple(libraries()["system"])


def ep_entry_points() -> tuple[str, ...]:
    return tuple(libraries()["ep_entry_points"])
