"""ROCm/hip-ep (6f334726) built by the toolkit inside the ROCm 7 build root against Debian's LLVM/MLIR 22, ORT 1.27.1
and protobuf 3.21.12, its downloads served by the dependency provider from the shared mirror, the network cut off:
what the libraries export, link and find, ONNX Runtime running models through its MLIR pipeline on the mock
runtime's CPU device, and the wheel with its self-check. ONE build per session (tests/hip_ep/conftest.py).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.support.hip_ep_models import attention, matmul_relu
from tests.support.hip_ep_support import BUILD_DIR, SESSION_SCRIPT, build_args, session, toolkit
from tests.support.selfcheck_support import ort_range_ends
from tests.support.tools import ROOT
from toolkit.binary.elf import read_elf
from toolkit.buildroot import run_in_root
from toolkit.pipeline.adapters.check import export_mismatch
from toolkit.recipe.load import load_recipe
from toolkit.sources.fetchcontent import read_report

LIBS = {"libhipgpu.so", "libhip-compiler.so"}


def test_libraries_export_the_plugin_entry_points_find_each_other_and_carry_their_own_llvm(hipep):
    lib = hipep.ws / "lib"
    assert {p.name for p in lib.glob("*.so")} == LIBS
    ep, compiler = read_elf(lib / "libhipgpu.so"), read_elf(lib / "libhip-compiler.so")
    # ONNX Runtime's plugin entry points alone (patch 0004): never LLVM's symbols (ROCm's comgr would bind its own
    # llvm:: references to them), protobuf's or morphizen's.
    [declared] = [o.exports for o in load_recipe(ROOT / "recipes" / "hip-ep.toml").outputs if o.library == "hipgpu"]
    assert export_mismatch(list(ep.defined), declared) == ([], [])
    assert sorted(ep.defined) == ["CreateEpFactories", "ReleaseEpFactory"]
    # Never unloaded (-z nodelete): protobuf outlives a dlclose, and a second load would register morphizen's .proto
    # files again and abort (the sessions below open it the way ORT does).
    flags = subprocess.run(["readelf", "-d", str(lib / "libhipgpu.so")], capture_output=True, text=True).stdout
    assert re.search(r"\(FLAGS_1\)\s+Flags:.*\bNODELETE\b", flags), flags
    assert not [s for s in (*ep.defined, *compiler.defined) if s.startswith(("_ZN4llvm", "_ZN4mlir"))]
    assert sorted(compiler.defined) == ["hip_compile_with_fs", "hip_get_version"]
    # libhipgpu.so dlopens libhip-compiler.so by bare name: it is found beside it, through $ORIGIN alone.
    assert ep.runpath == ("$ORIGIN",) and compiler.runpath == ("$ORIGIN",)
    # LLVM and MLIR are linked statically (patch 0001), their symbols local: neither library needs the machine's
    # libLLVM or libMLIR, so no other LLVM in the process can bind to theirs or they to it.
    assert not [n for n in (*ep.needed, *compiler.needed) if n.startswith(("libLLVM", "libMLIR"))], (ep.needed,
                                                                                                    compiler.needed)
    # The mock runtime links no ROCm library.
    assert not [n for n in (*ep.needed, *compiler.needed) if n.startswith(("libamdhip64", "libMIOpen", "libhipblas"))]
    info = json.loads((hipep.ws / "build-info.json").read_text())
    assert info["defines"]["BUILD_MOCK_RUNTIME"] == "ON" and info["features"] == ["mock"]


def test_dry_run_names_what_cmake_asks_the_provider_for(hipep):
    announced = re.search(r"CMake will ask the dependency provider for: (.*)", hipep.dry).group(1)
    assert set(announced.split(", ")) == {"cpptrace", "hash-library", "glog", "flatbuffers", "microsoft.gsl"}
    asked = read_report(hipep.ws / "cmake")
    assert set(announced.split(", ")) == set(asked["fetchcontent"])
    # GSL is answered with the pin at find_package too (serves_find_package): never sid's GSL 4.2.
    assert "Microsoft.GSL" in asked["find_package"]
    cache = (hipep.ws / "cmake" / "CMakeCache.txt").read_text()
    assert "Microsoft.GSL_DIR:PATH=/usr" not in cache
    # LLVM, protobuf and ORT come from the root: no download of them, and no FetchContent stand-in.
    assert "llvm-project" not in hipep.dry and "TheRock" not in hipep.log


def test_onnxruntime_runs_models_through_the_mlir_pipeline_on_the_cpu_device(hipep, tmp_path):
    models = [matmul_relu(tmp_path / "matmul_relu.onnx"), attention(tmp_path / "attention.onnx")]
    proc = session(hipep.root, hipep.ws / "lib" / "libhipgpu.so", models)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    report = json.loads(next(line for line in proc.stdout.splitlines() if line.startswith("HIPEP "))[6:])
    assert report["ort"].startswith("1.27")
    [device] = report["devices"]
    # Registered under hip-ep's EP name, which ORT names the device after.
    assert device["ep"] == "hipgpu" and device["vendor"] == "AMD" and device["type"].endswith("CPU"), device
    # CPU fallback disabled: creating each session proves hip-ep took every node; each ran once.
    shapes = {Path(s["model"]).name: (s["providers"][0], s["outputs"]) for s in report["sessions"]}
    assert shapes == {"matmul_relu.onnx": (device["ep"], [[2, 4]]), "attention.onnx": (device["ep"], [[1, 8, 16]])}
    # The mock runtime said what the compiled models called (it computes nothing: no values are compared): the
    # attention block's layer norm, projections, multi-head attention and residual add all ran on hip-ep.
    for call in ("wrap_layer_normalization(", "wrap_hipblasLtMatmul(M=8, N=16, K=16", "wrap_multi_head_attention(",
                 "wrap_miopenOpTensor(op=add", "wrap_hipblasLtMatmul(M=2, N=4, K=3"):
        assert f"[MOCK] {call}" in out, call


def test_without_its_compiler_beside_it_a_session_fails_naming_it(hipep, tmp_path):
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy2(hipep.ws / "lib" / "libhipgpu.so", alone)
    model = matmul_relu(tmp_path / "m.onnx")
    proc = session(hipep.root, alone / "libhipgpu.so", [model])
    assert proc.returncode != 0
    assert "hip-compiler" in proc.stdout + proc.stderr


def test_wheel_bundles_what_it_links_leaves_rocm_out_and_says_test_build(hipep, tmp_path):
    [wheel] = (hipep.ws / "wheelhouse").glob("*.whl")
    # sid's glibc 2.43 symbols (libm's float functions in libhip-compiler.so) are newer than auditwheel's newest
    # policy: the toolkit computes the PEP 600 tag from them (toolkit/wheel/glibc_tag.py).
    assert wheel.name == "onnxruntime_ep_hip-0.4.0-py3-none-manylinux_2_43_x86_64.whl"
    # auditwheel's own view: GLIBC_2.43 is what constrains it, past every policy it has.
    shown = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(wheel)], capture_output=True, text=True)
    said = " ".join((shown.stdout + shown.stderr).split())
    assert shown.returncode == 0 and 'consistent with the following platform tag: "linux_x86_64"' in said, said
    assert "GLIBC_2.43" in said, said
    names = zipfile.ZipFile(wheel).namelist()
    assert {"onnxruntime_ep_hip/libhipgpu.so", "onnxruntime_ep_hip/libhip-compiler.so"} <= set(names)
    bundled = [n.rsplit("/", 1)[1] for n in names if n.startswith("onnxruntime_ep_hip.libs/")]
    assert any(n.startswith("libprotobuf-") for n in bundled), bundled
    # ROCm stays external; LLVM is inside the two libraries, not a library of its own.
    assert not any(n.startswith(("libLLVM", "libMLIR", "libamdhip64", "libhsa-runtime", "libamd_comgr"))
                   for n in bundled), bundled
    # What the libraries hold of other projects comes with its license: the fetched dependencies', and LLVM's and
    # MLIR's, whose archives the linker took from the root (its own record of what it read names them).
    info = next(n.split("/", 1)[0] for n in names if n.endswith(".dist-info/METADATA"))
    licenses = {n.split("/licenses/", 1)[1] for n in names if n.startswith(f"{info}/licenses/")}
    assert {"linked/LLVM/copyright", "linked/LLVM/Apache-2.0", "linked/MLIR/copyright", "linked/glog/COPYING",
            "linked/flatbuffers/LICENSE", "linked/cpptrace/LICENSE", "linked/hash-library/LICENSE",
            "bundled/libdwarf.so.1/LGPL-2.1"} <= licenses, licenses
    notice = zipfile.ZipFile(wheel).read(f"{info}/licenses/linked/LLVM/NOTICE").decode()
    assert notice.startswith("LLVM is linked statically into libhip-compiler.so, libhipgpu.so: "), notice
    assert "Debian's llvm-22-dev" in notice, notice
    metadata = zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode()
    [expression] = [line for line in metadata.splitlines() if line.startswith("License-Expression: ")]
    assert expression.startswith("License-Expression: MIT AND ") and "Apache-2.0 WITH LLVM-exception" in expression
    assert "LGPL-2.1-only" in expression and "(" not in expression.replace("(BSD-3-Clause OR GPL-2.0-only)", "")
    # Installed in a fresh venv inside the root (Debian's onnxruntime 1.27.1 visible), its self-check says this is
    # a test build and gives no ready verdict.
    venv = tmp_path / "venv"
    script = (f"python3 -m venv --system-site-packages {venv} && {venv}/bin/pip install -q --no-index --no-deps "
              f"{wheel} && MORPHIZEN_EP_ENABLE_CPU_DEVICE=1 {venv}/bin/python -m onnxruntime_ep_hip")
    proc = run_in_root(hipep.root, ["sh", "-c", script], binds=[tmp_path, wheel.parent], network=False, check=False,
                       capture=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "TEST BUILD: mock: the mock runtime runs no GPU code" in out
    assert "this is a test build (feature mock" in out


def test_the_real_runtime_configures_against_the_roots_rocm_7(hipep):
    """--without-mock: HIP, MIOpen and hipBLASLt 7.2.4 from the root, the GPU kernels for the recipe's targets with
    the root's clang 22. Configure only here (the full build is the one the closing note measured)."""
    # --force: the configure runs (and says what it found) even where an earlier real build left it up to date.
    proc = toolkit(hipep.root, hipep.python, build_args(BUILD_DIR, "--without-mock", "--variant", "real",
                                                        "--until", "configure", "--force"))
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-4000:]
    assert "Building REAL runtime with HIP/MIOpen/hipBLASLt" in log
    assert "[custom_kernels] Using HIP_ARCHITECTURES: gfx942;gfx1100" in log
    cache = (BUILD_DIR / "hip-ep" / "real" / "cmake" / "CMakeCache.txt").read_text()
    assert "BUILD_MOCK_RUNTIME:BOOL=OFF" in cache
    # FILEPATH when CMake's HIP language took it on a first configure, UNINITIALIZED when given to a cached one.
    assert re.search(r"^CMAKE_HIP_COMPILER:[A-Z]+=/usr/lib/llvm-22/bin/clang\+\+$", cache, re.M)


def test_the_wheel_runs_models_with_pypis_lowest_and_newest_onnxruntime_of_its_range(hipep, wheelhouse, tmp_path):
    """The repaired wheel (protobuf, libdwarf and zstd bundled) in a fresh venv in the root, beside PyPI's onnxruntime
    at the floor of its [wheel] onnxruntime range (1.27.0) and at the newest (1.32.0 when written), instead of
    Debian's: the library it names runs both models with each."""
    [wheel] = (hipep.ws / "wheelhouse").glob("*.whl")
    settings = load_recipe(ROOT / "recipes" / "hip-ep.toml").wheel
    assert settings is not None
    version = "import sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}')"
    python = run_in_root(hipep.root, ["python3", "-c", version], capture=True).stdout.strip()
    models = [matmul_relu(tmp_path / "matmul_relu.onnx"), attention(tmp_path / "attention.onnx")]
    versions = ort_range_ends(settings.onnxruntime, tmp_path / "probe")
    assert versions[0] == "1.27.0" and len(versions) == 2, versions
    for ort in versions:
        folder = wheelhouse.fetch(f"onnxruntime=={ort}", python_version=python)
        venv = tmp_path / f"venv-{ort}"
        # --ignore-installed: Debian's onnxruntime, visible through the system site packages, is "1.27" == 1.27.0 to
        # pip.
        script = (f"python3 -m venv --system-site-packages {venv} && {venv}/bin/python -m pip install -q --no-index "
                  f"--no-deps --ignore-installed --find-links {folder} onnxruntime=={ort} {wheel} && "
                  f"lib=$({venv}/bin/python -c 'import onnxruntime_ep_hip as m; print(m.get_library_path())') && "
                  f"MORPHIZEN_EP_ENABLE_CPU_DEVICE=1 {venv}/bin/python {SESSION_SCRIPT} \"$lib\" {models[0]} "
                  f"{models[1]}")
        proc = run_in_root(hipep.root, ["sh", "-c", script],
                           binds=[tmp_path, folder, wheel.parent, SESSION_SCRIPT.parent], network=False, check=False,
                           capture=True, timeout=900)
        assert proc.returncode == 0, (ort, (proc.stdout + proc.stderr)[-6000:])
        report = json.loads(next(line for line in proc.stdout.splitlines() if line.startswith("HIPEP "))[6:])
        assert report["ort"] == ort
        assert [s["outputs"] for s in report["sessions"]] == [[[2, 4]], [[1, 8, 16]]], ort


def test_its_llvm_is_private_beside_the_systems_llvm_and_where_llvm_22_is_not_installed(hipep, sid_root, tmp_path):
    """In the ROCm 7 root, Debian's libLLVM.so.22.1 and ROCm's comgr (which links it) are loaded first, with
    RTLD_GLOBAL, as MIOpen brings them into a process: both models run and the process exits cleanly (with the
    system's LLVM shared, or a renamed copy of it in the wheel, it aborted at exit: double free). In the ROCm 6 root,
    which has LLVM 21 and no LLVM 22, the wheel installs and runs both models beside comgr's LLVM 21."""
    models = [matmul_relu(tmp_path / "matmul_relu.onnx"), attention(tmp_path / "attention.onnx")]
    proc = session(hipep.root, hipep.ws / "lib" / "libhipgpu.so", models,
                   env={"HIPEP_PRELOAD": "libLLVM.so.22.1:libamd_comgr.so.3"})
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:]
    report = json.loads(next(line for line in proc.stdout.splitlines() if line.startswith("HIPEP "))[6:])
    assert [s["outputs"] for s in report["sessions"]] == [[[2, 4]], [[1, 8, 16]]]
    assert [Path(p).name for p in report["llvm"]] == ["libLLVM.so.22.1"], report["llvm"]
    print("beside Debian's LLVM 22 and comgr (ROCm 7 root):", json.dumps(report))

    assert not list((sid_root / "usr" / "lib").glob("*/libLLVM.so.22*")) and not (sid_root / "usr/lib/llvm-22").exists()
    [wheel] = (hipep.ws / "wheelhouse").glob("*.whl")
    venv = tmp_path / "venv"
    script = (f"python3 -m venv --system-site-packages {venv} && {venv}/bin/pip install -q --no-index --no-deps "
              f"{wheel} && lib=$({venv}/bin/python -c 'import onnxruntime_ep_hip as m; print(m.get_library_path())') "
              f"&& {venv}/bin/python {SESSION_SCRIPT} \"$lib\" {models[0]} {models[1]}")
    proc = run_in_root(sid_root, ["sh", "-c", script], binds=[tmp_path, wheel.parent, SESSION_SCRIPT.parent],
                       env={"MORPHIZEN_EP_ENABLE_CPU_DEVICE": "1", "HIPEP_PRELOAD": "libamd_comgr.so.3"},
                       network=False, check=False, capture=True, timeout=900)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:]
    report = json.loads(next(line for line in proc.stdout.splitlines() if line.startswith("HIPEP "))[6:])
    assert report["ort"].startswith("1.27") and report["devices"], report
    assert [s["outputs"] for s in report["sessions"]] == [[[2, 4]], [[1, 8, 16]]]
    assert [Path(p).name for p in report["llvm"]] == ["libLLVM.so.21.1"], report["llvm"]
    print("without LLVM 22 (ROCm 6 root):", json.dumps(report))
