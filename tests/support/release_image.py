"""The real tree's release in the build root's image (tests/release/test_real_release.py and
tests/buildroot/test_image.py): making the image once, running one release entry in a fresh podman container
with its own build folder."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.support.buildroot_support import SID_ROOT
from tests.support.real_umbrella_support import MIRROR
from tests.support.tools import ROOT, need

RECIPE = "umbrella-ep-real"
# The entries the tests release, one per ROCm variant: hip backend on, as the real tree's session builds
# (tests/real_umbrella/conftest.py), whose ccache entries they then hit.
# The plain builds: the meta-package installs them (a --with-hipdnn build is a distribution of its own, which the
# meta-package does not name).
ENTRY = "rocm6-glibc2.28"
ENTRIES = (ENTRY, "rocm7-glibc2.28")


def toolkit_cli(*args: str, timeout: float = 3600, env: dict | None = None) -> subprocess.CompletedProcess:
    """`python -m toolkit ARGS` from the project root, output captured (the caller checks the exit code)."""
    return subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, timeout=timeout)


def make_image() -> tuple[str, float]:
    """`root image debian-sid-rocm`: the image's tag and how long the command took."""
    need("podman", "podman runc")
    need("runc", "runc")
    started = time.monotonic()
    proc = toolkit_cli("root", "image", SID_ROOT)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stdout.strip().splitlines()[-1], time.monotonic() - started


def release_on_host(build_dir: Path, epoch: int) -> tuple[Path, float, str]:
    """ENTRIES released by one `release` on the host, which builds each in a fresh container of its ROCm root's
    image without network (offline), `build_dir` its build folder, SOURCE_DATE_EPOCH=`epoch`: the dist folder,
    the seconds it took and the log."""
    started = time.monotonic()
    proc = toolkit_cli("release", "--recipe", RECIPE, *(a for e in ENTRIES for a in ("--only", e)),
                       "--mirror", MIRROR.as_uri(), "--offline", "--build-dir", str(build_dir),
                       env={"SOURCE_DATE_EPOCH": str(epoch)})
    seconds = time.monotonic() - started
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-6000:]
    return build_dir / RECIPE / "dist", seconds, log


def release_in_container(build_dir: Path, epoch: int) -> tuple[Path, float, str]:
    """One release entry of the real tree in a fresh container without network, `build_dir` mounted as its build
    folder, SOURCE_DATE_EPOCH=`epoch` (what the release would take, fixed: a commit made while the test runs would
    change it): the dist folder, the seconds it took and the log."""
    started = time.monotonic()
    proc = toolkit_cli("container", "--network", "none", "--build-dir", str(build_dir), "release",
                       "--recipe", RECIPE, "--only", ENTRY, "--mirror", MIRROR.as_uri(), "--offline",
                       env={"SOURCE_DATE_EPOCH": str(epoch)})
    seconds = time.monotonic() - started
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-6000:]
    return build_dir / RECIPE / "dist", seconds, log
