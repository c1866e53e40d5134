"""Finding a HIP compiler for CMake's HIP language: a ROCm install, or Debian's packaged HIP.

Debian ships HIP without ROCm's layout: clang is clang++-15, the device libraries live under the
multiarch lib dir, and CUDA may be installed too, so HIP_PLATFORM must be pinned to amd or hipcc picks
nvcc. The result is a set of CMake defines, or the reason no compiler was found (the build says it
skips the GPU kernels and why).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

_DEBIAN_CLANG = Path("/usr/bin/clang++-15")
_DEBIAN_BITCODE = Path("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode")
_DEBIAN_VERSION = Path("/usr/share/hip/version")


@dataclass(frozen=True)
class HipToolchain:
    kind: str                 # "rocm" or "debian"
    compiler: Path
    version: str
    defines: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class NoHip:
    reason: str


def _read_version(path: Path) -> str:
    try:
        text = path.read_text()
    except OSError:
        return "unknown"
    parts = dict(re.findall(r"^(HIP_VERSION_(?:MAJOR|MINOR|PATCH))=(\S*)", text, re.M))
    if not parts:
        return "unknown"
    return ".".join(parts.get(f"HIP_VERSION_{k}", "0") for k in ("MAJOR", "MINOR", "PATCH"))


def find_hip(rocm_path: str | None = None) -> HipToolchain | NoHip:
    looked = []
    candidates = [rocm_path, os.environ.get("ROCM_PATH"), os.environ.get("HIP_PATH"), "/opt/rocm"]
    for root in filter(None, candidates):
        clang = Path(root) / "llvm" / "bin" / "clang++"
        looked.append(str(clang))
        if clang.is_file():
            version = _read_version(Path(root) / "share" / "hip" / "version")
            return HipToolchain("rocm", clang, version, {
                "CMAKE_HIP_COMPILER": str(clang),
                "CMAKE_HIP_PLATFORM": "amd",
                "CMAKE_PREFIX_PATH": str(root),
            }, {"HIP_PLATFORM": "amd", "ROCM_PATH": str(root)})
    looked.append(str(_DEBIAN_CLANG))
    if _DEBIAN_CLANG.is_file() and _DEBIAN_BITCODE.is_dir() and Path("/usr/bin/hipcc").is_file():
        return HipToolchain("debian", _DEBIAN_CLANG, _read_version(_DEBIAN_VERSION), {
            "CMAKE_HIP_COMPILER": str(_DEBIAN_CLANG),
            "CMAKE_HIP_PLATFORM": "amd",
            "CMAKE_HIP_FLAGS": f"--rocm-path=/usr --rocm-device-lib-path={_DEBIAN_BITCODE}",
            # Debian's hip-lang CMake config predates CMake 4's minimum policy version.
            "CMAKE_POLICY_VERSION_MINIMUM": "3.5",
        }, {"HIP_PLATFORM": "amd"})
    return NoHip("no HIP compiler found (looked for " + ", ".join(looked)
                 + "); install ROCm, or Debian's hipcc libamdhip64-dev rocm-device-libs, or pass --rocm-path")
