"""Both ROCm build roots, side by side: debian-sid-rocm (HIP 6.4) and debian-sid-rocm7 (HIP 7.2 from experimental,
MIGraphX 7.1.1 from sid, as Debian has them). Each has its HIP, hipcc and clang; CMake finds HIP, MIGraphX and ORT
in each; the bundled sample builds in each, its hip kernels compiled by that root's compiler for AMD targets."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.support.tools import ROOT
from toolkit.binary.elf import read_elf
from toolkit.buildroot import record, run_in_root

# root -> (HIP major.minor, clang major, HIP runtime soname)
from toolkit.recipe import packageset

# root -> (HIP major.minor, clang major, HIP runtime soname)
ROOTS = {"debian-sid-rocm": ("6.4", "21", "libamdhip64.so.6"), "debian-sid-rocm7": ("7.2", "22", "libamdhip64.so.7")}


@pytest.fixture(scope="module", params=sorted(ROOTS))
def root(request, sid_root, rocm7_root):
    return request.param, sid_root if request.param == "debian-sid-rocm" else rocm7_root


def test_hipcc_reports_the_roots_hip_and_clang(root):
    name, path = root
    hip, clang, _ = ROOTS[name]
    proc = run_in_root(path, ["hipcc", "--version"], capture=True)
    assert re.search(rf"^HIP version: {re.escape(hip)}\.", proc.stdout, re.M), proc.stdout
    assert re.search(rf"clang version {clang}\.", proc.stdout), proc.stdout


def test_rocm7_root_keeps_sids_migraphx_beside_hip_7(rocm7_root):
    installed = record.query(rocm7_root)
    assert not set(packageset.load("debian-sid-rocm7").packages) - set(installed)
    assert installed["libamdhip64-dev"].startswith("7.2.") and installed["hipcc"].startswith("7.2.")
    # MIGraphX 7.1.1, whose runtime links the HIP 6 runtime, which stays installed beside HIP 7's.
    assert installed["migraphx-dev"].startswith("7.1.1") and installed["libmigraphx-c3"].startswith("7.1.1")
    assert installed["libamdhip64-6"].startswith("6.4.") and installed["libamdhip64-7"].startswith("7.2.")
    needed = run_in_root(rocm7_root, ["sh", "-c", "readelf -d /usr/lib/x86_64-linux-gnu/libmigraphx_c.so.3 "
                                                  "/usr/lib/x86_64-linux-gnu/migraphx/lib/libmigraphx.so* "
                                                  "2>/dev/null | grep NEEDED || true"], capture=True).stdout
    assert "libamdhip64.so.7" not in needed


def test_cmake_finds_hip_migraphx_and_onnxruntime(root, tmp_path):
    name, path = root
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.25)\nproject(probe LANGUAGES CXX)\n"
        "find_package(hip REQUIRED)\nfind_package(migraphx REQUIRED)\nfind_package(onnxruntime REQUIRED)\n"
        'message(STATUS "probe: hip ${hip_VERSION} migraphx ${migraphx_VERSION} onnxruntime ${onnxruntime_VERSION}")\n')
    proc = run_in_root(path, ["cmake", "-S", str(tmp_path), "-B", str(tmp_path / "b"), "-G", "Ninja"],
                       binds=[tmp_path], capture=True, check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    hip = ROOTS[name][0]
    assert re.search(rf"probe: hip {re.escape(hip)}\.\S* migraphx 2\.\d+\S* onnxruntime 1\.27\.", proc.stdout), \
        proc.stdout[-2000:]


def test_sample_kernels_compile_with_the_roots_hip(root, tmp_path):
    """The sample in the root, its hipified kernels compiled for gfx90a and gfx942 by the root's clang (hipconfig
    names it): the MIGraphX backend carries both code objects and links the root's HIP runtime."""
    name, path = root
    env = {**os.environ, "TOOLKIT_BUILD_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "toolkit", "container", "--root", name, "build",
                           "--gpu-targets", "gfx90a,gfx942"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    hip, clang, soname = ROOTS[name]
    assert re.search(rf"GPU kernels from .* for gfx90a, gfx942 with debian HIP {re.escape(hip)}\.\d+ "
                     rf"\(/usr/lib/llvm-{clang}/bin/clang\+\+\)", proc.stdout + proc.stderr), proc.stdout[-3000:]
    assert "check: libmigraphx-backend.so: code objects for gfx90a, gfx942" in proc.stdout + proc.stderr
    backend = tmp_path / "amdgpu-ep" / "release" / "lib" / "libmigraphx-backend.so"
    assert soname in read_elf(backend).needed


REMOVED_IN_7 = """#include <hip/hip_runtime_api.h>
#include <miopen/miopen.h>
int fill(hipGraph_t graph, hipGraphNode_t* node, hipCtx_t ctx)
{
    HIP_MEMSET_NODE_PARAMS params = {};
    miopenDataType_t eight_bit = miopenFloat8;
    return hipDrvGraphAddMemsetNode(node, graph, nullptr, 0, &params, ctx) + eight_bit;
}
"""
API_RECIPE = """[recipe]
name = "removed-in-7"

[[outputs]]
library = "t"

[api_check]
libraries = ["hip", "miopen"]
"""


def test_api_check_reads_the_roots_headers_and_names_what_rocm_7_removed(root, tmp_path):
    """A tree that uses HIP 6's HIP_MEMSET_NODE_PARAMS and MIOpen 3.4's miopenFloat8, both gone in ROCm 7: the
    api-check stage in each root reads that root's headers; in the ROCm 7 root it stops the build naming both."""
    name, _ = root
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "unit.cc").write_text(REMOVED_IN_7)
    (tree / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.20)\nproject(t CXX)\n"
                                         "add_library(t MODULE unit.cc)\ninstall(TARGETS t LIBRARY DESTINATION lib)\n")
    recipe = tmp_path / "removed-in-7.toml"
    recipe.write_text(API_RECIPE)
    proc = subprocess.run([sys.executable, "-m", "toolkit", "container", "--root", name, "--bind", str(tmp_path),
                           "build", "--recipe", str(recipe), "--source", str(tree), "--build-dir", str(tmp_path / "b"),
                           "--until", "api-check"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    hip = ROOTS[name][0]
    assert re.search(rf"api-check: HIP {re.escape(hip)}\.\d+ \[libamdhip64-dev {re.escape(hip)}\.", out), out[-3000:]
    if name == "debian-sid-rocm":
        assert proc.returncode == 0, out[-3000:]
        assert "api-check: MIOpen 3.4.0 [libmiopen-dev 6.4." in out
        assert "api-check: 1 file(s): every hip, miopen API they call is declared" in out
        return
    assert proc.returncode == 2, out[-3000:]
    assert ("HIP API `HIP_MEMSET_NODE_PARAMS` (unit.cc:5) is not in the headers of HIP 7.2." in out
            and "; HIP 6 (HIP 7 removed it: hipDrvGraphAddMemsetNode takes a hipMemsetParams) has it" in out), out
    assert ("MIOpen API `miopenFloat8` (unit.cc:6) is not in the headers of MIOpen 3.5.1 (/usr/include/miopen); "
            "MIOpen 3.4 of ROCm 6 (ROCm 7's MIOpen renamed them miopenFloat8_fnuz and miopenBFloat8_fnuz) "
            "has it") in out
    # hipDrvGraphAddMemsetNode, hipGraph_t and the rest are in both HIPs: only the two removed names are missing.
    assert re.findall(r"^  \S+ API `(\w+)`", out, re.M) == ["HIP_MEMSET_NODE_PARAMS", "miopenFloat8"], out[-3000:]
    assert not list((tmp_path / "b").rglob("*.o")), "nothing may compile before the check"
