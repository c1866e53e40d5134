"""AMD's real umbrella EP tree (a2ea3b25) built by the toolkit inside the Debian sid build root: real HIP,
MIGraphX and ORT, the FetchContent dependencies served by the provider from the shared mirror, the network
cut off (bwrap --unshare-net) for every toolkit command. ONE full build per session (hip backend on, ccache in
the toolkit cache dir) is shared by all tests here; the default feature set is checked configure-only.
"""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from pathlib import Path

from tests.support.real_umbrella_support import LIBS, SMOKE_SCRIPT, inside, toolkit
from toolkit.binary.elf import read_elf
from toolkit.sources.fetchcontent import read_report
from toolkit.wheel.data import rocm_excludes


def test_libraries_from_install_rules_with_declared_exports_and_needed(real_build):
    lib = real_build.ws / "lib"
    assert {p.name for p in lib.glob("*.so")} == LIBS
    exports = {name: sorted(read_elf(lib / name).defined) for name in LIBS}
    assert exports["libamdgpu-ep.so"] == ["CreateEpFactories", "ReleaseEpFactory"]
    assert exports["libhip-backend.so"] == ["CreateEpFactories", "ReleaseEpFactory"]
    assert exports["libmigraphx-backend.so"] == ["CreateEpFactories", "GetBackendTelemetry", "ReleaseEpFactory"]
    assert "libmigraphx_c.so.3" in read_elf(lib / "libmigraphx-backend.so").needed
    # Collected from `cmake --install` (the tree installs to bin/), not from a guessed folder.
    assert {p.name for p in (real_build.ws / "install" / "bin").glob("*.so")} == LIBS
    # The umbrella finds its bare-name backends beside it (patch 0002).
    assert read_elf(lib / "libamdgpu-ep.so").runpath == ("$ORIGIN",)
    info = json.loads((real_build.ws / "build-info.json").read_text())
    assert info["defines"]["USE_HIP"] == "ON" and info["defines"]["USE_MIGRAPHX"] == "ON"
    # The check stage verified the recipe's declared need, where this run built (a reused build runs no stage).
    if "[toolkit] check: running (" in real_build.log:
        assert "check: libmigraphx-backend.so: NEEDED includes libmigraphx_c.so.3" in real_build.log
    else:
        assert "stages run: none (everything up to date)" in real_build.log, real_build.log[-2000:]


def test_libraries_link_the_hip_of_their_root_and_never_another(sid, real_build):
    """rocm6 links libamdhip64.so.6, rocm7 .so.7 (ROCm 7's root keeps MIGraphX 7.1.1, whose own library links HIP 6:
    that one is MIGraphX's dependency, never one of ours)."""
    for name in LIBS:
        hips = [n for n in read_elf(real_build.ws / "lib" / name).needed if n.startswith("libamdhip64.so")]
        assert hips in ([], [sid.hip]), (name, hips)
    assert [sid.hip] == [n for n in read_elf(real_build.ws / "lib" / "libmigraphx-backend.so").needed
                         if n.startswith("libamdhip64.so")]
    major = sid.variant.removeprefix("rocm")
    version = inside(sid, ["sh", "-c", "grep -h '^#define HIP_VERSION_MAJOR' /usr/include/hip/hip_version.h"],
                     capture=True).stdout.split()[-1]
    assert version == major, (sid.name, version)
    # The api-check stage (and `bump --root NAME`, which runs it) read the APIs in this root's HIP headers.
    hip = json.loads((real_build.ws / "api-check.json").read_text())["libraries"]["hip"]
    assert hip["version"].startswith(f"{major}.") and hip["package"].startswith(f"libamdhip64-dev {major}."), hip


def test_dry_run_lists_what_cmake_asked_the_provider_for(real_build):
    announced = re.search(r"CMake will ask the dependency provider for: (.*)", real_build.dry).group(1)
    asked = read_report(real_build.ws / "cmake")
    assert set(announced.split(", ")) == set(asked["fetchcontent"])
    # Nested (protobuf asks for absl) included; the DML-only declarations CMake never evaluates, excluded.
    assert "absl" in asked["fetchcontent"] and not {"eigen", "d3dx12", "boost"} & set(asked["fetchcontent"])
    # protobuf's find_package(absl) is disabled: the pinned abseil is built, not Debian's libabsl-dev.
    assert {"onnxruntime", "hip", "migraphx"} <= set(asked["find_package"])
    cache = (real_build.ws / "cmake" / "CMakeCache.txt").read_text()
    assert "absl_DIR:PATH=/usr" not in cache and "CMAKE_DISABLE_FIND_PACKAGE_absl" not in cache


def test_default_features_configure_only_leaves_hip_off(sid, real_build):
    proc = toolkit(sid, "build", *sid.common, "--variant", "default", "--until", "configure")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    cmake = sid.build / "umbrella-ep-real" / "default" / "cmake"
    cache = (cmake / "CMakeCache.txt").read_text()
    assert "USE_HIP:BOOL=OFF" in cache and "USE_MIGRAPHX:BOOL=ON" in cache
    assert "libhip-backend.so" not in (cmake / "build.ninja").read_text()
    assert read_report(cmake)["fetchcontent"] == read_report(real_build.ws / "cmake")["fetchcontent"]


def test_wheel_has_no_rocm_files_and_its_tag_is_the_roots_glibc(sid, real_build):
    wheels = sorted((real_build.ws / "wheelhouse").glob("*.whl"))
    assert len(wheels) == 1
    names = zipfile.ZipFile(wheels[0]).namelist()
    shared = sorted(Path(n).name for n in names if ".so" in Path(n).name)
    assert set(shared) == LIBS, shared
    from fnmatch import fnmatch
    assert not [n for n in names if any(fnmatch(Path(n).name, p) for p in rocm_excludes())]
    # The fetched dependencies compiled into its libraries come with their licenses (a recipe entry names each).
    info = next(n.split("/", 1)[0] for n in names if n.endswith(".dist-info/METADATA"))
    deps = ("absl", "protobuf", "onnx", "fmt", "flatbuffers")
    assert {f"{info}/licenses/linked/{dep}/LICENSE" for dep in deps} <= set(names), names
    metadata = zipfile.ZipFile(wheels[0]).read(f"{info}/METADATA").decode()
    [expression] = [line.split(": ", 1)[1] for line in metadata.splitlines() if line.startswith("License-Expression:")]
    assert set(expression.split(" AND ")) == {"MIT", "Zlib", "Apache-2.0", "BSD-3-Clause", "BSL-1.0"}, expression
    # What it needs and does not carry, the SBOM names as external ROCm components.
    from toolkit.release.sbom import external_libraries, wheel_sbom
    sbom = wheel_sbom(wheels[0])
    assert {"libmigraphx_c.so.3", sid.hip} <= set(external_libraries(sbom, "rocm"))
    assert "libc.so.6" in external_libraries(sbom, "system")
    # The tag auditwheel computed inside the root: the glibc symbol versions the libraries use, which the
    # root's glibc bounds (the recipe's zig toolchain keeps them at 2.28: tests/real_umbrella/test_toolchain.py).
    glibc = inside(sid, ["ldd", "--version"], capture=True).stdout.splitlines()[0].split()[-1]
    tag = re.search(r"[-.]manylinux_2_(\d+)_x86_64\.whl$", wheels[0].name)
    assert tag is not None, wheels[0].name
    assert int(tag.group(1)) <= int(glibc.split(".")[1]), (wheels[0].name, glibc)


def test_wheel_registers_in_fresh_venv_and_loads_backends_from_inside_it(sid, real_build):
    wheel = sorted((real_build.ws / "wheelhouse").glob("*.whl"))[0]
    venv = sid.build / "smoke-venv"
    shutil.rmtree(venv, ignore_errors=True)
    # Debian's python3-onnxruntime 1.27.1 through --system-site-packages; the wheel itself, no index.
    inside(sid, ["python3", "-m", "venv", "--system-site-packages", str(venv)], network=False)
    inside(sid, [str(venv / "bin/pip"), "install", "-q", "--no-deps", "--no-index", str(wheel)], network=False)
    proc = inside(sid, [str(venv / "bin/python"), str(SMOKE_SCRIPT)], env={"ORT_AMDGPU_TRACE_ROUTING": "1"},
                  network=False, check=False, capture=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    print(json.dumps(seen, indent=1), proc.stderr, sep="\n")
    site = seen["package_dir"]
    assert tuple(int(x) for x in seen["onnxruntime"].split(".")[:2]) >= (1, 27)
    assert seen["registered"] == f"{site}/libamdgpu-ep.so" and seen["ep_names"] == ["AMDGPUExecutionProvider"]
    loaded = seen["loaded"]
    assert f"{site}/libamdgpu-ep.so" in loaded and f"{site}/libmigraphx-backend.so" in loaded
    assert any(p.endswith("/libmigraphx_c.so.3.0") or p.endswith("/libmigraphx_c.so.3") for p in loaded)
    assert any("/libamdhip64.so" in p for p in loaded)
    # The hip backend is built, libhipgpu.so is nowhere: the umbrella registers anyway and names what it lacks.
    assert "hip backend unavailable" in proc.stderr and "libhipgpu.so" in proc.stderr
    assert seen["amd_devices"] == 0 and "no AMD GPU device here" in seen["note"]
    assert all(d["ep"] != "AMDGPUExecutionProvider" for d in seen["devices"])
    assert seen["session_options"] == {"ep.amdgpuexecutionprovider.profile": "migraphx",
                                       "ep.migraphx.fp16_enable": "1"}
    assert seen["session_providers"] == ["CPUExecutionProvider"] and seen["result"] == [1.5, -2.0]
