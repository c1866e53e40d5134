"""ROCm/hip-ep (recipe hip-ep) built by the toolkit inside the ROCm 7 build root, shared by tests/hip_ep and
benchmarks/hip_ep_build.py: the build command, where its work tree is, and running a Python inside the root.

The build folder is the one `nox -s container -- --root debian-sid-rocm7 build --recipe hip-ep ...` uses, so a build
made by hand (or by an earlier test run) is reused, and ccache (in the toolkit cache) makes a fresh clone's build
cheap once any build has run on the machine.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.support.real_umbrella_support import BUILD, MIRROR, PROJECT, binds, toolkit_env
from toolkit.buildroot import run_in_root

ROOT_NAME = "debian-sid-rocm7"
BUILD_DIR = BUILD / "roots" / ROOT_NAME
WORK_TREE = BUILD_DIR / "hip-ep" / "release"
SESSION_SCRIPT = Path(__file__).resolve().with_name("hip_ep_session.py")
"""Run by the root's python3 (Debian's onnxruntime 1.27.1): registers libhipgpu.so and runs models on it."""


def build_args(build_dir: Path = BUILD_DIR, *extra: str) -> list[str]:
    return ["build", "--recipe", "hip-ep", "--mirror", MIRROR.as_uri(), "--offline", "--build-dir", str(build_dir),
            "--jobs", str(os.cpu_count() or 2), *extra]


WHEEL_BUILD = build_args(BUILD_DIR, "--wheel")
"""The build every hip-ep test shares (tests/hip_ep/conftest.py, and the background build of
tests/support/prebuild.py)."""


def toolkit(root: Path, python: Path, args: list[str], env: dict[str, str] | None = None,
            timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    """python -m toolkit ARGS inside the root, without network."""
    return run_in_root(root, [str(python), "-m", "toolkit", *args], binds=binds(), cwd=PROJECT,
                       env={**toolkit_env(python), **(env or {})}, network=False, check=False, capture=True,
                       timeout=timeout)


def session(root: Path, library: Path, models: list[Path], *extra_binds: Path,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """hip_ep_session.py with the root's python3 and onnxruntime: the CPU device on, no LD_LIBRARY_PATH."""
    folders = {PROJECT, library.parent, *(m.parent for m in models), *extra_binds}
    return run_in_root(root, ["python3", str(SESSION_SCRIPT), str(library), *map(str, models)],
                       binds=sorted(folders), env={"MORPHIZEN_EP_ENABLE_CPU_DEVICE": "1", **(env or {})},
                       network=False, check=False, capture=True, timeout=600)
