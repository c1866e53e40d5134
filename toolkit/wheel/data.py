"""The wheel stage's data files (library name patterns, templates), read from the installed package."""

from __future__ import annotations

import fnmatch
import json
from functools import cache
from importlib import resources
from typing import Any

from toolkit.recipe.core import library_file
from toolkit.util.fsutil import JSON


def read_text(*parts: str) -> str:
    node = resources.files("toolkit.wheel")
    for part in parts:
        node = node.joinpath(part)
    return node.read_text(encoding="utf-8")


@cache
def libraries() -> JSON:
    data: JSON = json.loads(read_text("data", "libraries.json"))
    return data


def rocm_excludes() -> tuple[str, ...]:
    """fnmatch patterns (auditwheel --exclude) for every ROCm soname: lib<NAME>.so and lib<NAME>.so.*."""
    return tuple(p for name in libraries()["rocm_names"] for p in (library_file(name), f"{library_file(name)}.*"))


def system_libraries() -> tuple[str, ...]:
    return tuple(libraries()["system"])


def ep_entry_points() -> tuple[str, ...]:
    return tuple(libraries()["ep_entry_points"])


@cache
def _runtime_sources() -> JSON:
    data: JSON = json.loads(read_text("data", "runtime_sources.json"))
    return data


def install_source(soname: str) -> dict[str, Any]:
    """What provides `soname` (runtime_sources.json's first match, {version} filled in): what it is, the ROCm release
    (or upstream) and where that comes from, and its Debian package with the suites that have it. The self-check puts
    it in words for the machine it runs on (templates/advice.py: install_words), naming the Debian package only where
    the machine's distribution has it."""
    version = soname.rsplit(".so.", 1)[1].split(".")[0] if ".so." in soname else ""
    data = _runtime_sources()
    for entry in data["libraries"]:
        if fnmatch.fnmatchcase(soname, entry["soname"]):
            out: dict[str, Any] = {key: str(value).replace("{version}", version) for key, value in entry.items()
                                   if key != "soname"}
            if "debian" in out:
                out["debian_suites"] = list(data["debian_suites"].get(out["debian"], []))
            return out
    return {"install": f"the package that provides {soname}"}


def onnxruntime_flavours() -> list[dict[str, str]]:
    """ONNX Runtime distributions with the plugin EP API (each provides the `onnxruntime` module)."""
    return list(_runtime_sources()["onnxruntime"])
