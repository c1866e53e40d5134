"""Finding Debian's HIP toolchain for tests: skip with a reason locally, fail under CI=true."""

from __future__ import annotations

import os
import shutil

import pytest

HIP_TARGETS = ("gfx908", "gfx90a", "gfx940", "gfx1030")


def require_hipcc() -> str:
    hipcc = shutil.which("hipcc")
    if hipcc is None:
        message = "hipcc not found: apt-get install -y hipcc libamdhip64-dev rocm-device-libs"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return hipcc


def hip_env() -> dict[str, str]:
    # CUDA is installed too: without HIP_PLATFORM=amd, hipcc hands the file to nvcc.
    return {**os.environ, "HIP_PLATFORM": "amd"}
