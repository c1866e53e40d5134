"""What a Windows DLL may import, and what must not be in it for two builds to give the same bytes.

A plugin EP DLL is loaded into any process that has ONNX Runtime: it may import Windows' own DLLs, the DLLs
built beside it and the ones its wheel carries (DirectML.dll), and nothing else. Which DLLs are Windows' own is
data (data/windows_dlls.toml)."""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Iterable
from pathlib import Path

from toolkit.binary.pe import PeFacts
from toolkit.util.tomlread import load_toml

DATA = Path(__file__).resolve().parent / "data" / "windows_dlls.toml"


@functools.cache
def _lists() -> dict[str, tuple[str, ...]]:
    table = load_toml(DATA)
    lists = {key: tuple(name.lower() for name in table.str_list(key)) for key in ("system", "mingw_runtime",
                                                                                  "legacy_crt")}
    table.done()
    return lists


# The loader's names for sets of Windows' functions; not files.
API_SETS = ("api-ms-win-", "ext-ms-win-")


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(name.lower(), p) for p in patterns)


# Why each kind of import is wrong, and what to do.
REASONS = {
    "mingw_runtime": "MinGW's runtime DLL: link it in statically, -static",
    "legacy_crt": "the legacy CRT: something was built for MSVCRT, not UCRT",
    "unknown": "neither Windows' own, nor built beside it, nor carried by its wheel",
}


def classify_import(name: str, own: Iterable[str]) -> str | None:
    """Which kind of wrong import `name` is (a key of REASONS), or None where it may be imported."""
    lists = _lists()
    if _matches(name, lists["mingw_runtime"]):
        return "mingw_runtime"
    if _matches(name, lists["legacy_crt"]):
        return "legacy_crt"
    if _matches(name, lists["system"]) or name.lower() in {n.lower() for n in own}:
        return None
    return "unknown"


def import_problems(facts: PeFacts, own: Iterable[str], kinds: Iterable[str] = tuple(REASONS)) -> list[str]:
    """One phrase per import of the given kinds the DLL may not have: `own` are the DLLs built beside it or carried
    by its wheel."""
    own, kinds = list(own), set(kinds)
    found = ((name, classify_import(name, own)) for name in facts.imports)
    return [f"{name} ({REASONS[kind]})" for name, kind in found if kind in kinds]


def reproducibility_problems(facts: PeFacts) -> list[str]:
    problems = []
    if facts.timestamp:
        problems.append(f"its header carries a link time ({facts.timestamp}): link with -Wl,--no-insert-timestamp")
    if facts.debug_entries:
        problems.append(f"it has {facts.debug_entries} debug directory entr(ies), which carry a time and a .pdb path")
    return problems


def system_imports(facts: PeFacts) -> tuple[str, ...]:
    """Windows' own DLLs a DLL imports, as files the loader looks for: the API sets (api-ms-win-*, ext-ms-win-*) are
    names it resolves, which no file has."""
    system = [p for p in _lists()["system"] if not p.startswith(API_SETS)]
    return tuple(name for name in facts.imports if _matches(name, system))


def describe_imports(imports: Iterable[str]) -> str:
    """The import list for a log line, the Universal CRT's many API-set DLLs counted rather than listed."""
    crt = [name for name in imports if name.lower().startswith("api-ms-win-crt-")]
    rest = [name for name in imports if name not in crt]
    return ", ".join(rest + ([f"the UCRT ({len(crt)} api-ms-win-crt-* sets)"] if crt else [])) or "nothing"
