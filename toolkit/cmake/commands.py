"""Finding the build tools and spelling the CMake commands; no policy about what to build lives here."""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
from collections.abc import Collection
from pathlib import Path

from toolkit.util import argcheck, log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON
from toolkit.util.process import tool_version

MIN_CMAKE = (4, 2)


def _find_tool(module_name: str, dir_attr: str, exe: str, hint: str) -> Path:
    """The PyPI package's binary first: distributions often ship an older one on PATH (Debian: CMake 3.25)."""
    try:
        module = __import__(module_name)
        candidate = Path(getattr(module, dir_attr)) / exe
        if candidate.is_file():
            return candidate
    except ImportError:
        pass
    found = shutil.which(exe)
    if not found:
        raise ToolkitError(f"{exe} not found", hint=hint)
    return Path(found)


def find_cmake() -> Path:
    return _find_tool("cmake", "CMAKE_BIN_DIR", "cmake", "pip install 'cmake>=4.2' (the toolkit's dependency)")


def find_ninja() -> Path:
    return _find_tool("ninja", "BIN_DIR", "ninja", "pip install ninja (the toolkit's dependency)")


def check_cmake_version(cmake: Path) -> str:
    line = tool_version(cmake)
    parts = line.split()[-1].split(".") if line != "unknown" else []
    try:
        version = tuple(int(p) for p in parts[:2])
    except ValueError:
        version = ()
    if version and version < MIN_CMAKE:
        raise ToolkitError(
            f"{cmake} is {line}; this toolkit needs CMake >= {'.'.join(map(str, MIN_CMAKE))}",
            hint="pip install 'cmake>=4.2', or put a newer cmake first on PATH",
        )
    return line


def compiler_launcher() -> str | None:
    """ccache when installed, so rebuilds of unchanged objects cost nothing."""
    if os.environ.get("TOOLKIT_NO_CCACHE"):
        return None
    return shutil.which("ccache")


# The CMake lists the toolkit itself passes: their value holds ';' on purpose.
LIST_DEFINES = frozenset({"GPU_TARGETS", "CMAKE_PREFIX_PATH", "CMAKE_C_IMPLICIT_INCLUDE_DIRECTORIES",
                          "CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES"})


def configure_command(cmake: Path, source: Path, build: Path, generator: str, ninja: Path,
                      defines: dict[str, str], lists: Collection[str] = ()) -> list[str]:
    """The configure command line. Each define is checked (argcheck.cmake_defines: no newline, a ';' only in
    LIST_DEFINES and `lists`, the recipe's) and glued to its -D, so no value reads as an option of its own."""
    argcheck.cmake_defines({"CMAKE_MAKE_PROGRAM": str(ninja), **defines}, LIST_DEFINES | set(lists))
    cmd = [str(cmake), "-S", str(Path(source).absolute()), "-B", str(Path(build).absolute()), "-G", generator,
           f"-DCMAKE_MAKE_PROGRAM={ninja}"]
    cmd += [f"-D{key}={value}" for key, value in sorted(defines.items())]
    return cmd


def build_command(cmake: Path, build: Path, jobs: int) -> list[str]:
    # -v: Ninja prints every compiler and linker command line too.
    return [str(cmake), "--build", str(build), "--parallel", str(jobs)] + (["--verbose"] if log.is_verbose() else [])


@functools.cache
def tool_identity(tool: Path) -> str:
    """What a tool is, not where it lives: its version line and the sha256 of the real binary.

    Two virtual environments (or two nox sessions) holding the same CMake give the same identity, so
    switching between them does not reconfigure.
    """
    digest = hashlib.sha256()
    with open(Path(tool).resolve(), "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return f"{tool_version(Path(tool))} sha256:{digest.hexdigest()}"


def configure_fingerprint(cmd: list[str], tools: list[Path], build: Path) -> JSON:
    """The configure command for a stage fingerprint: each tool's path replaced by its identity.

    Whether the tools the existing cache names still exist counts too: a cache made by a CMake or Ninja
    that has since been deleted must be configured again with the ones found now.
    """
    names = {str(t): f"<{Path(t).name} {tool_identity(t)}>" for t in tools}
    spelled = []
    for arg in cmd:
        for path, identity in names.items():
            if arg == path or arg.endswith("=" + path):
                arg = arg[: len(arg) - len(path)] + identity
        spelled.append(arg)
    cache = read_cache(build)
    recorded = [cache[k] for k in ("CMAKE_COMMAND", "CMAKE_MAKE_PROGRAM") if cache.get(k)]
    return {"command": spelled, "cache_tools_exist": all(Path(p).exists() for p in recorded)}


def read_cache(build: Path) -> dict[str, str]:
    """CMakeCache.txt as {name: value}."""
    cache: dict[str, str] = {}
    path = build / "CMakeCache.txt"
    if not path.is_file():
        return cache
    for line in path.read_text(errors="replace").splitlines():
        if not line or line.startswith(("#", "//")) or "=" not in line:
            continue
        key, value = line.split("=", 1)
        cache[key.split(":", 1)[0]] = value
    return cache


def describe_tools() -> list[str]:
    """`tool: path (version)` for the tools a build may run, as they will be found."""
    lines = []
    for name, find in (("cmake", find_cmake), ("ninja", find_ninja)):
        try:
            path = str(find())
        except ToolkitError as exc:  # reported again, with its hint, by the stage that needs it
            lines.append(f"tool {name}: {exc}")
            continue
        lines.append(f"tool {name}: {path} ({tool_version(path)})")
    for name in ("patchelf", "auditwheel", "ccache"):
        found = shutil.which(name)
        lines.append(f"tool {name}: {found} ({tool_version(found)})" if found else f"tool {name}: not found")
    return lines
