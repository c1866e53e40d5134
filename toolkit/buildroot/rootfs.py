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

from pathlib import Path

from toolkit.buildroot import make, session
from toolkit.container.rootfs import RootFS
from toolkit.recipe import packageset
from toolkit.util import log


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
