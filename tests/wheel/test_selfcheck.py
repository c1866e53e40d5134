"""The self-check every wheel ships (`python -m onnxruntime_ep_amdgpu`, `check()`): on a rocm6 wheel whose umbrella
really links libamdhip64.so.6 (a stand-in HIP runtime built here with that soname), installed in fresh venvs
as a user gets it: without ROCm on the loader's path, with it on LD_LIBRARY_PATH, with it only under a ROCm
folder the loader does not search, and beside PyPI's onnxruntime at the floor and the newest of its range."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.selfcheck_support import (
    NO_ORT,
    hip_not_found,
    ort_range_ends,
    other_variant,
    run_python,
    run_selfcheck,
    venv_with,
    verdict,
)
from tests.support.wheel_support import build_c_library, shared_library
from toolkit.recipe.smoke import SmokeSettings
from toolkit.recipe.wheel import Component, WheelSettings
from toolkit.smoke.run import run_smoke
from toolkit.wheel.build import build_wheel

SETTINGS = WheelSettings(
    version="0.3.0",
    components=(Component("amdgpu-ep", "AMDGPUExecutionProvider", runpath=("$ORIGIN",),
                          runtime="ONNX Runtime >= 1.24 and HIP"),
                Component("migraphx-backend", runtime="HIP and an AMD GPU"),
                Component("hip-backend", runtime="AMD's libhipgpu.so", dlopens=("libhipgpu.so",),
                          runpath=("$ORIGIN", "$ORIGIN/../onnxruntime_ep_hip"))),
    distribution="onnxruntime-ep-amdgpu",
    rocm_variants=(("rocm6", "libamdhip64.so.6"), ("rocm7", "libamdhip64.so.7")),
)
NOT_FOUND = hip_not_found("6")
FACTS = {"source_revision": "upstream@sha256:" + "a" * 64,
         "upstream_commit": "a2ea3b25f420c5eb8d25edc366fbc17d6de4fe22",
         "hip_version": "6.4.43484", "rocm_version": "HIP 6.4.43484 (/usr/include/hip/hip_version.h)"}


@pytest.fixture(scope="module")
def rocm6(tmp_path_factory):
    """(wheel, folder of the stand-in libamdhip64.so.6): the umbrella and the backend link it by soname."""
    work = tmp_path_factory.mktemp("rocm6")
    hip = work / "rocm" / "lib"
    shared_library(hip, "libamdhip64.so.6")
    libs = work / "lib"
    link = [f"-L{hip}", "-l:libamdhip64.so.6"]
    build_c_library(libs / "libamdgpu-ep.so", libs=link)
    build_c_library(libs / "libmigraphx-backend.so", libs=link)
    build_c_library(libs / "libhip-backend.so")
    return build_wheel(SETTINGS, libs, FACTS, work / "dist"), hip


def test_without_rocm_it_names_the_hip_library_and_the_rocm7_extra(rocm6, tmp_path):
    wheel, _ = rocm6
    assert wheel.name.startswith("onnxruntime_ep_amdgpu_rocm6-0.3.0-")
    python = venv_with(tmp_path / "venv", wheel)
    done = run_selfcheck(python, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert verdict(done) == NOT_FOUND
    out = done.stdout
    assert "onnxruntime-ep-amdgpu-rocm6 0.3.0 (ROCm variant: rocm6)" in out
    assert "upstream commit a2ea3b25f420c5eb8d25edc366fbc17d6de4fe22" in out
    assert "built against: HIP 6.4.43484" in out
    assert ("libamdhip64.so.6 (needed by libamdgpu-ep.so, libmigraphx-backend.so): NOT FOUND; does not load: "
            "libamdhip64.so.6: cannot open shared object file") in out
    assert "libamdgpu-ep.so (EP AMDGPUExecutionProvider): does not load: libamdhip64.so.6: cannot open" in out
    assert "onnxruntime: not installed" in out
    assert ("ORT registration of AMDGPUExecutionProvider: not tried: onnxruntime is not installed; the EP needs "
            "onnxruntime>=1.24") in out
    # Every missing piece with what to do, the verdict's first.
    assert "what to do:\n  - needs ROCm 6 (libamdhip64.so.6 not found): install ROCm 6's HIP runtime" in out
    assert f"  - {NO_ORT.removeprefix('not ready: ').replace('. What to do: ', ': ')}" in out
    # check() returns the same facts; -q prints the verdict alone.
    facts = json.loads(run_selfcheck(python, "--json", cwd=tmp_path).stdout)
    assert facts["ready"] is False and facts["missing"] == NOT_FOUND.removeprefix("not ready: ")
    # HIP and ORT (the libraries that do not load for want of HIP need nothing more), then the hip backend's EP.
    assert [(p["what"].split()[0], p["blocking"]) for p in facts["todo"]] == [("needs", True), ("no", True),
                                                                              ("libhipgpu.so", False)]
    assert [lib["soname"] for lib in facts["rocm_libraries"]] == ["libamdhip64.so.6"]
    assert facts["build"]["rocm_libraries"] == ["libamdhip64.so.6"] and facts["variant"] == "rocm6"
    quiet = run_selfcheck(python, "-q", cwd=tmp_path)
    assert (quiet.returncode, quiet.stdout) == (1, NOT_FOUND + "\n")
    code = "import onnxruntime_ep_amdgpu as ep; f = ep.check(); print(f['ready'], ep.get_build_info()['rocm_variant'])"
    assert run_python(python, code, cwd=tmp_path).stdout == "False rocm6\n"
    # A command line like any other: --help exits 0 naming the package, an unknown option exits 2 naming it.
    helped = run_selfcheck(python, "--help", cwd=tmp_path)
    assert helped.returncode == 0 and helped.stdout.startswith("usage: python -m onnxruntime_ep_amdgpu [-h]")
    assert "<package>" not in helped.stdout and "--json" in helped.stdout
    bad = run_selfcheck(python, "--nope", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.splitlines()[-1] == \
        "python -m onnxruntime_ep_amdgpu: error: unrecognized arguments: --nope"


def test_rocm_on_ld_library_path_is_found_there_and_the_next_piece_is_named(rocm6, tmp_path):
    wheel, hip = rocm6
    python = venv_with(tmp_path / "venv", wheel)
    done = run_selfcheck(python, env={"LD_LIBRARY_PATH": str(hip)}, cwd=tmp_path)
    assert done.returncode == 1
    assert f"libamdhip64.so.6 (needed by libamdgpu-ep.so, libmigraphx-backend.so): found {hip}/libamdhip64.so.6 " \
           f"(LD_LIBRARY_PATH); loads" in done.stdout
    assert "libmigraphx-backend.so (backend): loads" in done.stdout
    assert verdict(done) == NO_ORT
    # The library the hip backend loads at run time is looked for and, missing, listed with where it comes from.
    assert "  libhipgpu.so (loaded at run time by libhip-backend.so): NOT FOUND" in done.stdout
    assert "  - libhipgpu.so not found (loaded by libhip-backend.so at run time) (optional): install the HIP EP" \
        in done.stdout
    hip_ep = shared_library(tmp_path / "hip-ep", "libhipgpu.so").parent
    found = run_selfcheck(python, env={"LD_LIBRARY_PATH": f"{hip}:{hip_ep}"}, cwd=tmp_path)
    assert f"  libhipgpu.so (loaded at run time by libhip-backend.so): found {hip_ep}/libhipgpu.so (LD_LIBRARY_PATH)" \
        in found.stdout and "(optional)" not in found.stdout


def test_the_hip_ep_wheel_installed_beside_it_is_found_where_the_hip_backend_looks(rocm6, tmp_path):
    """onnxruntime-ep-hip (recipe hip-ep) installs its package folder beside this wheel's in site-packages: the
    hip backend's RUNPATH entry $ORIGIN/../onnxruntime_ep_hip finds libhipgpu.so there, no LD_LIBRARY_PATH."""
    wheel, hip = rocm6
    python = venv_with(tmp_path / "venv", wheel)
    site = Path(subprocess.run([str(python), "-c", "import onnxruntime_ep_amdgpu, os; "
                                "print(os.path.dirname(os.path.dirname(onnxruntime_ep_amdgpu.__file__)))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    sibling = shared_library(site / "onnxruntime_ep_hip", "libhipgpu.so")
    done = run_selfcheck(python, env={"LD_LIBRARY_PATH": str(hip)}, cwd=tmp_path)
    assert f"  libhipgpu.so (loaded at run time by libhip-backend.so): found {sibling} (RUNPATH)" in done.stdout


def test_rocm_in_a_folder_the_loader_does_not_search_is_pointed_at(rocm6, tmp_path):
    wheel, hip = rocm6
    python = venv_with(tmp_path / "venv", wheel)
    done = run_selfcheck(python, env={"ROCM_PATH": str(hip.parent)}, cwd=tmp_path)
    assert done.returncode == 1
    assert verdict(done) == (f"not ready: needs ROCm 6 (libamdhip64.so.6 in {hip}, which the loader does not search). "
                             f"What to do: add {hip} to LD_LIBRARY_PATH, or write it into a file in /etc/ld.so.conf.d "
                             f"and run ldconfig; {other_variant('6')}")


@pytest.mark.network  # PyPI's onnxruntime at the floor and the newest of the wheel's range
def test_beside_pypi_onnxruntime_floor_and_newest_the_registration_error_is_the_one_it_names(rocm6, wheelhouse,
                                                                                               tmp_path):
    wheel, hip = rocm6
    versions = ort_range_ends(SETTINGS.onnxruntime, tmp_path / "probe")
    assert versions[0].startswith("1.24.") and len(versions) == 2, versions
    register = ("import onnxruntime as ort, onnxruntime_ep_amdgpu as ep\n"
                "ort.register_execution_provider_library(ep.get_ep_name(), ep.get_library_path())\n"
                "print(len([d for d in ort.get_ep_devices() if d.ep_name == ep.get_ep_name()]))\n")
    for version in versions:
        wheelhouse.fetch(f"onnxruntime=={version}")
        python = wheelhouse.venv(tmp_path / f"venv-{version}", f"onnxruntime=={version}", wheel)
        done = run_selfcheck(python, cwd=tmp_path)
        assert done.returncode == 1 and verdict(done) == NOT_FOUND, done.stdout
        assert f"onnxruntime: onnxruntime {version}; supported >=1.24: yes" in done.stdout
        # ORT's own error is the loader's line about the library the self-check named.
        failed = run_python(python, register, cwd=tmp_path)
        assert failed.returncode == 1 and "libamdhip64.so.6: cannot open shared object file" in failed.stderr
        # With the library on the loader's path ORT registers it: zero devices, and the self-check says why.
        ok = run_python(python, register, env={"LD_LIBRARY_PATH": str(hip)}, cwd=tmp_path)
        assert (ok.returncode, ok.stdout) == (0, "0\n"), ok.stderr
        done = run_selfcheck(python, env={"LD_LIBRARY_PATH": str(hip)}, cwd=tmp_path)
        assert done.returncode == 1 and verdict(done).startswith("not ready: no AMD GPU here ("), done.stdout
        assert "ORT registration of AMDGPUExecutionProvider: registered, 0 device(s)" in done.stdout


@pytest.mark.network  # the smoke venv installs onnxruntime, onnx and numpy from PyPI
def test_smoke_outside_rocm_passes_because_the_self_check_explains_the_failed_registration(rocm6, tmp_path, capfd):
    wheel, _ = rocm6
    assert run_smoke([wheel], SmokeSettings(), work_dir=tmp_path / "smoke") == 0
    out = "".join(capfd.readouterr())
    assert NOT_FOUND in out
    assert ("PASS registering AMDGPUExecutionProvider fails as the self-check says "
            f"({NOT_FOUND})") in out
    assert "PASS self-check exit 1 agrees with ORT (0 device(s) offered)" in out and "SMOKE PASS" in out
    shutil.rmtree(tmp_path / "smoke", ignore_errors=True)
