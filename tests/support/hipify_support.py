"""Finding Debian's HIP toolchain for tests: skip with a reason locally, fail under CI=true."""

from __future__ import annotations

import os

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
    return {**os.environ, **hip.env}
