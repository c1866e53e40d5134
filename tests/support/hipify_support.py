"""Finding Debian's HIP toolchain for tests: skip with a reason locally, fail under CI=true."""

from __future__ import annotations

import os


HIP_TARGETS = ("gfx908", "gfx90a", "gfx940", "gfx1030")
from tests.support.tools import need


def require_hipcc() -> str:
    return need("hipcc", "hipcc libamdhip64-dev rocm-device-libs")


def hip_env() -> dict[str, str]:
    # CUDA is installed too: without HIP_PLATFORM=amd, hipcc hands the file to nvcc.
    return {**os.environ, "HIP_PLATFORM": "amd"}
