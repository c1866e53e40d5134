"""Helpers for the wheel-stage tests: real small libraries from C, and the real sample build."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


from tests.sample_tree import series_patches
from tests.tools import require_tool
from toolkit.wheel.settings import Component, SmokeSettings, WheelSettings

ROOT = Path(__file__).resolve().parent.parent

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


def build_sample(work: Path, hipdnn: bool) -> Path:
    """Build the bundled sample through the toolkit's pipeline (patched, USE_AMDGPU=ON); returns lib/."""
    from toolkit.engine.options import BuildOptions
    from toolkit.engine.pipeline import run_build

    build, _ = run_build(BuildOptions(build_root=work, with_features=("hipdnn",) if hipdnn else ()))
    return build.workspace.lib


def sample_build_info(hipdnn: bool) -> dict:
    patches = [p.name for p in series_patches()]
    return {"source_revision": "sample", "patches": patches, "features": {"hipdnn": hipdnn},
            "rocm_version": None, "gpu_targets": []}
