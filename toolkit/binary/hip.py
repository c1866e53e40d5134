"""Finding a HIP compiler for CMake's HIP language: a ROCm install, or Debian's packaged HIP.

Debian ships HIP without ROCm's layout: the clang is one of Debian's versioned LLVMs (bookworm: clang++-15, sid:
clang 21 with HIP 6.4, experimental: clang 22 with HIP 7.2), its device libraries live under the multiarch lib
dir (bookworm) or the compiler's own resource dir (sid), and CUDA may be installed too, so HIP_PLATFORM must be
pinned to amd or hipcc picks nvcc. Debian's own tools say where things are: `hipconfig --hipclangpath` names the
clang, `hipconfig --version` the HIP version, the clang's `-print-resource-dir` where its device libraries may be.
The result is a set of CMake defines, or the reason no compiler was found (the build says it skips the GPU kernels
and why).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Callable
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
    debian = _debian_hip(looked)
    if debian is not None:
        return debian
    return NoHip("no HIP compiler found (looked for " + ", ".join(looked)
                 + "); install ROCm, or Debian's hipcc libamdhip64-dev rocm-device-libs, or pass --rocm-path")


def _debian_hip(looked: list[str]) -> HipToolchain | None:
    """Debian's HIP: the clang hipconfig names (else bookworm's clang++-15) and the device libraries it reads."""
    clang, version, bitcode = _debian_probe()
    looked.append(str(clang))
    if bitcode is None:
        return None
    return HipToolchain("debian", clang, version, {
        "CMAKE_HIP_COMPILER": str(clang),
        "CMAKE_HIP_PLATFORM": "amd",
        "CMAKE_HIP_FLAGS": f"--rocm-path=/usr --rocm-device-lib-path={bitcode}",
        # Debian's hip-lang CMake config predates CMake 4's minimum policy version.
        "CMAKE_POLICY_VERSION_MINIMUM": "3.5",
    }, {"HIP_PLATFORM": "amd"})


@functools.cache
def _debian_probe() -> tuple[Path, str, Path | None]:
    """(clang, HIP version, device library folder or None), asked of hipconfig and the clang once per process: a
    build asks for the HIP toolchain at several stages, and the answers do not change while it runs."""
    hipconfig = shutil.which("hipconfig") if Path("/usr/bin/hipcc").is_file() else None
    clang, version = _DEBIAN_CLANG, _read_version(_DEBIAN_VERSION)
    if hipconfig is not None:
        where = run([hipconfig, "--hipclangpath"], "asking hipconfig for its clang", check=False).stdout.strip()
        if where and (Path(where) / "clang++").is_file():
            clang = Path(where) / "clang++"
        said = run([hipconfig, "--version"], "asking hipconfig for the HIP version", check=False).stdout.strip()
        version = said.split("-", 1)[0] if re.match(r"^\d+\.\d+", said) else version
    return clang, version, _device_libraries(clang) if clang.is_file() else None


def _device_libraries(clang: Path) -> Path | None:
    """The folder of the ROCm device libraries (ockl.bc) `clang` compiles HIP with: under its resource dir (sid's
    rocm-device-libs-NN), else the multiarch one (bookworm's rocm-device-libs)."""
    proc = run([str(clang), "-print-resource-dir"], f"asking {clang} for its resource dir", check=False)
    resource = Path(proc.stdout.strip()) if proc.returncode == 0 and proc.stdout.strip() else None
    for folder in ([resource / "amdgcn" / "bitcode"] if resource else []) + [_DEBIAN_BITCODE]:
        if (folder / "ockl.bc").is_file():
            return folder
    return None


# Runs a compiler query (argv, what) without checking its exit status: on this machine, or inside a build root.
Runner = Callable[[list[str], str], subprocess.CompletedProcess[str]]


def _on_host(argv: list[str], what: str) -> subprocess.CompletedProcess[str]:
    return run(argv, what, check=False)


def unsupported_targets(toolchain: HipToolchain, targets: tuple[str, ...], runner: Runner = _on_host) -> list[str]:
    """The compiler's own verdict on each target ID (processor plus features such as `:xnack+`).

    The HIP compiler is asked to preprocess an empty HIP file for the target: it rejects an unknown
    processor or feature before touching any library, so this costs a few milliseconds a target and
    needs no table that would age with every ROCm release. Returns the compiler's error per bad target.
    """
    bad = []
    for target in targets:
        cmd = [str(toolchain.compiler), "-x", "hip", f"--offload-arch={target}", "-nogpulib", "-nogpuinc",
               "--cuda-device-only", "-E", os.devnull, "-o", os.devnull]
        proc = runner(cmd, f"asking {toolchain.compiler} about target {target}")
        if proc.returncode != 0:
            errors = [line for line in proc.stderr.splitlines() if "error" in line]
            bad.append(f"{target}: {(errors or proc.stderr.splitlines() or ['rejected'])[0].strip()}")
    return bad


def supported_processors(toolchain: HipToolchain, runner: Runner = _on_host) -> list[str]:
    """The AMD GPU processors the compiler lists (`--print-supported-cpus` for the amdgcn target)."""
    cmd = [str(toolchain.compiler), "--target=amdgcn-amd-amdhsa", "-nogpulib", "--print-supported-cpus"]
    proc = runner(cmd, f"asking {toolchain.compiler} for its processors")
    return [w for w in (proc.stdout + proc.stderr).split() if re.fullmatch(r"gfx[0-9a-f]+(-generic)?", w)]
