"""Helpers for the wheel-stage tests: real small libraries from C, and the real sample build."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from toolkit.wheel.settings import Component, SmokeSettings, WheelSettings

ROOT = Path(__file__).resolve().parent.parent
# Where samples/umbrella-ep and patches/amdgpu-ep live: this checkout, or (before the sample is merged
# into it) the checkout named by TOOLKIT_SAMPLE_ROOT.
SAMPLE_ROOT = Path(os.environ.get("TOOLKIT_SAMPLE_ROOT", ROOT))

EP_SOURCE = r"""
#include <stddef.h>
void* CreateEpFactories(const char* name, const void* api, const void* logger, void** factories,
                        size_t max_factories, size_t* num_factories) {
  (void)name; (void)api; (void)logger; (void)factories; (void)max_factories;
  *num_factories = 0;
  return NULL;
}
void* ReleaseEpFactory(void* factory) { (void)factory; return NULL; }
"""
VERSION_SCRIPT = "{ global: CreateEpFactories; ReleaseEpFactory; local: *; };\n"

SETTINGS = WheelSettings(
    version="0.1.0",
    components=(
        Component("amdgpu-ep", "AMDGPUExecutionProvider"),
        Component("migraphx-backend"),
        Component("hipdnn-backend", feature="hipdnn"),
    ),
    onnxruntime=">=1.24",
)

SMOKE = SmokeSettings(
    packages=("onnxruntime-ep-webgpu",),
    env={"AMDGPU_MIGRAPHX_EP_LIBRARY": "{library:onnxruntime_ep_webgpu}", "AMDGPU_EP_VERBOSE": "1"},
    expect_log=(
        r"^\[amdgpu-ep\] forwarded [1-9]\d* factor(y|ies) from .*/libmigraphx-backend\.so$",
        r"^\[migraphx-backend\] forwarded [1-9]\d* factor(y|ies) from .*/libonnxruntime_providers_webgpu\.so$",
        r"^\[amdgpu-ep\] released a factory of .*/libmigraphx-backend\.so",
    ),
)


def require_tool(available: bool, reason: str) -> None:
    """Skip with a printed reason, except under CI=true, where a missing tool is a failure."""
    if available:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: tests must not skip)")
    pytest.skip(reason)


def build_c_library(out: Path, extra_flags: list[str] = (), libs: list[str] = ()) -> Path:
    """A real plugin-EP-shaped shared library: two exported functions, a version script."""
    require_tool(shutil.which("gcc") is not None, "gcc is needed to build test libraries (apt-get install gcc)")
    work = out.parent / f".{out.name}.src"
    work.mkdir(parents=True, exist_ok=True)
    (work / "ep.c").write_text(EP_SOURCE)
    (work / "exports.map").write_text(VERSION_SCRIPT)
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["gcc", "-shared", "-fPIC", "-O2", f"-Wl,--version-script={work / 'exports.map'}", *extra_flags,
           "-o", str(out), str(work / "ep.c"), "-Wl,--no-as-needed", *libs]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(cmd)}:\n{done.stderr}"
    return out


def stand_in_lib_dir(folder: Path, hipdnn: bool = False, umbrella_flags: list[str] = (), umbrella_libs=()) -> Path:
    build_c_library(folder / "libamdgpu-ep.so", umbrella_flags, umbrella_libs)
    build_c_library(folder / "libmigraphx-backend.so")
    if hipdnn:
        build_c_library(folder / "libhipdnn-backend.so")
    return folder


def series_patches(series: Path) -> list[Path]:
    names = [line.split()[0] for line in series.read_text().splitlines() if line.strip() and not line.startswith("#")]
    return [series.parent / name for name in names]


def build_sample(work: Path, hipdnn: bool) -> Path:
    """Build the bundled sample, patched, with cmake directly; returns its lib folder.

    Kept small and alone so the lead can swap its body for the toolkit's pipeline call.
    """
    sample = SAMPLE_ROOT / "samples" / "umbrella-ep"
    require_tool(sample.is_dir(), f"sample tree not found at {sample} (set TOOLKIT_SAMPLE_ROOT before the merge)")
    try:
        import cmake
        import ninja
    except ImportError as exc:
        require_tool(False, f"PyPI cmake and ninja are needed to build the sample: {exc}")
    source = work / "source"
    shutil.copytree(sample, source)
    series = SAMPLE_ROOT / "patches" / "amdgpu-ep" / "series"
    if series.is_file():
        for patch in series_patches(series):
            done = subprocess.run(["patch", "-p1", "-s", "-i", str(patch)], cwd=source, capture_output=True, text=True)
            assert done.returncode == 0, f"{patch.name} does not apply:\n{done.stdout}{done.stderr}"
    lib = work / "lib"
    cmake_exe = os.path.join(cmake.CMAKE_BIN_DIR, "cmake")
    for cmd in (
        [cmake_exe, "-S", str(source), "-B", str(work / "cmake"), "-G", "Ninja",
         f"-DCMAKE_MAKE_PROGRAM={os.path.join(ninja.BIN_DIR, 'ninja')}", f"-DAMDGPU_EP_OUTPUT_DIR={lib}",
         "-DUSE_AMDGPU=ON", f"-DUSE_HIPDNN={'ON' if hipdnn else 'OFF'}"],
        [cmake_exe, "--build", str(work / "cmake")],
    ):
        done = subprocess.run(cmd, capture_output=True, text=True)
        assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}"
    return lib


def sample_build_info(hipdnn: bool) -> dict:
    series = SAMPLE_ROOT / "patches" / "amdgpu-ep" / "series"
    patches = [p.name for p in series_patches(series)] if series.is_file() else []
    return {"source_revision": "sample", "patches": patches, "features": {"hipdnn": hipdnn},
            "rocm_version": None, "gpu_targets": []}
