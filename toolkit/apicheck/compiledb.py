"""The sources a configured tree will compile, from CMake's compile_commands.json: the tree's translation
units, the tree's own headers they include (followed through quoted and angle includes that resolve inside
the tree), the include folders the compiler searches, in its order, and the macros the commands define."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.apicheck import cxxscan
from toolkit.util.errors import ToolkitError

COMPILE_DB = "compile_commands.json"
# What the compiler searches after the -I folders (Debian's multiarch folder included).
SYSTEM_INCLUDE_DIRS = (Path("/usr/local/include"), Path("/usr/include/x86_64-linux-gnu"), Path("/usr/include"))
_UNIT_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".c++")
_INCLUDE_FLAGS = ("-I", "-isystem", "-idirafter", "-iquote")


@dataclass
class TreeFiles:
    tree: Path
    paths: list[Path] = field(default_factory=list)  # units and the tree headers they include
    include_dirs: list[Path] = field(default_factory=list)
    defines: set[str] = field(default_factory=set)  # macros the compile commands define (-DNAME[=...])

    def texts(self) -> Iterator[tuple[str, str]]:
        for path in self.paths:
            yield path.relative_to(self.tree).as_posix(), path.read_text(encoding="utf-8", errors="replace")


def read(binary_dir: Path, tree: Path) -> TreeFiles:
    """The tree's units in `binary_dir`'s compile_commands.json, with their tree headers and include folders."""
    db = Path(binary_dir) / COMPILE_DB
    if not db.is_file():
        raise ToolkitError(f"{db} not found: the API check reads what CMake will compile from it",
                           hint="configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON (the configure stage does so "
                                "for recipes with [api_check])")
    tree = Path(tree).resolve()
    files = TreeFiles(tree)
    units: list[Path] = []
    for entry in json.loads(db.read_text(encoding="utf-8")):
        unit = (Path(entry["directory"]) / entry["file"]).resolve()
        if unit.suffix not in _UNIT_SUFFIXES or not _inside(unit, tree):
            continue  # the FetchContent dependencies' own units are theirs, not the tree's
        units.append(unit)
        argv = entry.get("arguments") or shlex.split(entry["command"])
        files.defines |= defines(argv)
        for directory in include_dirs(argv, Path(entry["directory"])):
            if directory not in files.include_dirs:
                files.include_dirs.append(directory)
    files.paths = _with_headers(sorted(set(units)), tree, files.include_dirs)
    return files


def include_dirs(argv: list[str], cwd: Path) -> list[Path]:
    out = []
    for i, arg in enumerate(argv):
        for flag in _INCLUDE_FLAGS:
            if arg == flag and i + 1 < len(argv):
                out.append((cwd / argv[i + 1]).resolve())
            elif arg.startswith(flag) and len(arg) > len(flag) and not arg.startswith(flag + "prefix"):
                rest = arg[len(flag):]
                if rest.startswith(("/", ".")) or flag == "-I":
                    out.append((cwd / rest).resolve())
    return out


def defines(argv: list[str]) -> set[str]:
    names = set()
    for i, arg in enumerate(argv):
        value = argv[i + 1] if arg == "-D" and i + 1 < len(argv) else arg[2:] if arg.startswith("-D") else None
        if value:
            names.add(value.split("=", 1)[0].split("(", 1)[0])
    return names


def _with_headers(units: list[Path], tree: Path, dirs: list[Path]) -> list[Path]:
    """The units plus every header inside the tree they reach through #include."""
    seen: dict[Path, None] = dict.fromkeys(units)
    pending = list(units)
    while pending:
        current = pending.pop()
        try:
            text = current.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for kind, name in cxxscan.includes(text):
            candidates = ([current.parent] if kind == '"' else []) + dirs
            for base in candidates:
                found = (base / name).resolve()
                if found.is_file():
                    if _inside(found, tree) and found not in seen:
                        seen[found] = None
                        pending.append(found)
                    break
    return list(seen)


def _inside(path: Path, tree: Path) -> bool:
    return path == tree or tree in path.parents
