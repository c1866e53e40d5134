"""Finding the build tools and spelling the CMake commands; no policy about what to build lives here."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from toolkit.errors import ToolkitError

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


def tool_version(tool: Path) -> str:
    out = subprocess.run([str(tool), "--version"], capture_output=True, text=True, check=False).stdout
    return out.splitlines()[0].strip() if out else "unknown"


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


def configure_command(cmake: Path, source: Path, build: Path, generator: str, ninja: Path,
                      defines: dict[str, str]) -> list[str]:
    cmd = [str(cmake), "-S", str(source), "-B", str(build), "-G", generator,
           f"-DCMAKE_MAKE_PROGRAM={ninja}"]
    cmd += [f"-D{key}={value}" for key, value in sorted(defines.items())]
    return cmd


def build_command(cmake: Path, build: Path, jobs: int) -> list[str]:
    return [str(cmake), "--build", str(build), "--parallel", str(jobs)]


def read_cache(build: Path) -> dict[str, str]:
    """CMakeCache.txt as {name: value}."""
    cache = {}
    path = build / "CMakeCache.txt"
    if not path.is_file():
        return cache
    for line in path.read_text(errors="replace").splitlines():
        if not line or line.startswith(("#", "//")) or "=" not in line:
            continue
        key, value = line.split("=", 1)
        cache[key.split(":", 1)[0]] = value
    return cache
