"""ROCm/hip-ep's session fixtures: the ROCm 7 build root with the toolkit's venv, and ONE build of the recipe (mock
runtime, wheel included) shared by every test here. The first build on a machine takes about half an hour on 2
cores; ccache (in the toolkit cache) makes every later one, from any clone, take a few minutes."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from tests.support.hip_ep_support import BUILD_DIR, ROOT_NAME, WHEEL_BUILD, WORK_TREE, build_args, toolkit
from tests.support.real_umbrella_support import MIRROR, toolkit_python
from tests.support.tools import require_tool


@pytest.fixture(scope="session")
def hipep(rocm7_root):
    """The ROCm 7 root (LLVM/MLIR 22 in its hipep package group) and hip-ep built there: tests using it are
    marked `buildroot` through rocm7_root."""
    rocm_root = rocm7_root
    require_tool(MIRROR.is_dir(), f"the upstream mirror {MIRROR} is not there")
    python = toolkit_python(rocm_root, ROOT_NAME)
    dry = toolkit(rocm_root, python, build_args(BUILD_DIR, "--wheel", "--dry-run"))
    assert dry.returncode == 0, dry.stdout + dry.stderr
    started = time.monotonic()
    proc = toolkit(rocm_root, python, WHEEL_BUILD)
    log = proc.stdout + proc.stderr
    print(f"hip-ep build + wheel in {ROOT_NAME}: {time.monotonic() - started:.0f} s")
    assert proc.returncode == 0, log[-6000:]
    return SimpleNamespace(root=rocm_root, python=python, dry=dry.stdout, log=log, ws=WORK_TREE)
