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

from toolkit.util.process import run

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


def unsupported_targets(toolchain: HipToolchain, targets: tuple[str, ...]) -> list[str]:
    """The compiler's own verdict on each target ID (processor plus features such as `:xnack+`).

    The HIP compiler is asked to preprocess an empty HIP file for the target: it rejects an unknown
    processor or feature before touching any library, so this costs a few milliseconds a target and
    needs no table that would age with every ROCm release. Returns the compiler's error per bad target.
    """
    bad = []
    for target in targets:
        cmd = [str(toolchain.compiler), "-x", "hip", f"--offload-arch={target}", "-nogpulib", "-nogpuinc",
               "--cuda-device-only", "-E", "-", "-o", os.devnull]
        proc = run(cmd, f"asking {toolchain.compiler} about target {target}", input="", check=False)
        if proc.returncode != 0:
            errors = [line for line in proc.stderr.splitlines() if "error" in line]
            bad.append(f"{target}: {(errors or proc.stderr.splitlines() or ['rejected'])[0].strip()}")
    return bad


def supported_processors(toolchain: HipToolchain) -> list[str]:
    """The AMD GPU processors the compiler lists (`--print-supported-cpus` for the amdgcn target)."""
    cmd = [str(toolchain.compiler), "--target=amdgcn-amd-amdhsa", "-nogpulib", "--print-supported-cpus"]
    proc = run(cmd, f"asking {toolchain.compiler} for its processors", check=False)
    return [w for w in (proc.stdout + proc.stderr).split() if re.fullmatch(r"gfx[0-9a-f]+(-generic)?", w)]
