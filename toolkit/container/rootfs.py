"""A folder run by podman as a container's filesystem (`--rootfs`), without an image: what the engine needs to
know of it. Making the folder (a build root) is toolkit/buildroot/rootfs.py's concern.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# Debian's default PATH, the one a build root's commands run with.
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def root_env(name: str, venv: Path) -> dict[str, str]:
    """The environment of a container of build root `name`, of its folder or (toolkit/buildroot/image.py) of its
    image: the root's toolkit venv first on PATH, so `python3 -m toolkit` inside runs the mounted project with its
    dependencies."""
    return {"PATH": f"{venv}/bin:{SYSTEM_PATH}", "LANG": "C.UTF-8", "HOME": "/root", "TOOLKIT_IN_IMAGE": name}


@dataclass(frozen=True)
class RootFS:
    name: str          # the package set's name
    path: Path         # the root's folder
    venv: Path         # the toolkit's venv for it

    def env(self) -> dict[str, str]:
        return root_env(self.name, self.venv)

    def __str__(self) -> str:
        return f"build root {self.name} ({self.path})"
