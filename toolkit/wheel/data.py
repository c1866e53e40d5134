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
    return tuple(libraries()["rocm"])


def system_libraries() -> tuple[str, ...]:
    return tuple(libraries()["system"])


def ep_entry_points() -> tuple[str, ...]:
    return tuple(libraries()["ep_entry_points"])


def rocm_runpath_prefixes() -> tuple[str, ...]:
    return tuple(libraries()["rocm_runpath_prefixes"])
