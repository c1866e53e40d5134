"""A build root's folder run by podman as a container's filesystem, without an image.

`podman run --rootfs ROOT:O` mounts the root read-only under an overlay whose writes the engine discards when the
container ends: the container sees exactly what the root's image (toolkit/buildroot/image.py) would hold, but
nothing is copied. An image costs the root's size again in the engine's storage, plus as much again in a
temporary file while `podman import` reads it (two ROCm roots: about 25 GB and two minutes); a machine that runs
both releases then runs out of disk where the roots alone fit. Docker has no such option and runs the image.

The toolkit's venv for the root is reached at its own path, as in the image: through the cache mount when it lies
in the mounted cache, else bound read-only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from toolkit.buildroot import make, packageset, sandbox, session
from toolkit.util import log


def root_env(name: str, venv: Path) -> dict[str, str]:
    """The environment of a container of build root `name`, of its folder or (image.py) of its image: the root's
    toolkit venv first on PATH, so `python3 -m toolkit` inside runs the mounted project with its dependencies."""
    return {"PATH": f"{venv}/bin:{sandbox.PATH}", "LANG": "C.UTF-8", "HOME": "/root", "TOOLKIT_IN_IMAGE": name}


@dataclass(frozen=True)
class RootFS:
    name: str          # the package set's name
    path: Path         # the root's folder
    venv: Path         # the toolkit's venv for it

    def env(self) -> dict[str, str]:
        return root_env(self.name, self.venv)

    def __str__(self) -> str:
        return f"build root {self.name} ({self.path})"


def ensure(name: str, project: Path, *, dry_run: bool = False) -> RootFS:
    """Root `name` and its toolkit venv, made when missing (a dry run makes nothing and names what it would use)."""
    spec = packageset.load(name)
    if dry_run:
        root = make.root_path(spec)
        venv = session.toolkit_venv(root, project, spec.from_root) if (root / "usr").is_dir() else None
        made = RootFS(spec.name, root, venv or session.venvs_dir() / "<made with the root>")
        print(f"root: {made} run by podman as the container's filesystem (--rootfs, overlay), venv {made.venv}"
              + ("" if venv else "; the root or its venv is not made yet: a run makes them"))
        return made
    root = make.ensure_root(name)
    venv = session.toolkit_python(root, project, spec.from_root).parent.parent
    log.stage("root", f"{spec.name}: {root} runs as the container's filesystem (no image)")
    return RootFS(spec.name, root, venv)
