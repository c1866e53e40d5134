"""Finding Debian's HIP toolchain for tests: skip with a reason locally, fail under CI=true."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile

from tests.support.tools import need, require_tool
from toolkit.binary.hip import HipToolchain, find_hip

HIP_TARGETS = ("gfx908", "gfx90a", "gfx940", "gfx1030")


def require_hipcc() -> str:
    return need("hipcc", "hipcc libamdhip64-dev rocm-device-libs")


def hip_env() -> dict[str, str]:
    """The environment hipcc runs in, as the toolkit's own HIP finder sets it (HIP_PLATFORM=amd: CUDA is
    installed too, and without it hipcc hands the file to nvcc)."""
    hip = find_hip()
    require_tool(isinstance(hip, HipToolchain), getattr(hip, "reason", "no HIP compiler"))
    return {**os.environ, **hip.env, "TMPDIR": _hipcc_tmp()}


@functools.cache
def _hipcc_tmp() -> str:
    """A TMPDIR for the tests' hipcc, removed at exit: HIP's clang driver leaves two empty folders there per
    compile (the toolkit's own builds use their work tree's tmp/)."""
    folder = tempfile.mkdtemp(prefix="hipcc-tmp-")
    atexit.register(shutil.rmtree, folder, True)
    return folder
