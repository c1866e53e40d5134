"""What the repair and the self-check call what they see, on a wheel shaped as hip-ep's: an EP, and a compiler it
loads that links LLVM, which the recipe's [wheel] excludes leave external. LLVM is not ROCm, and the compiler is
no backend. Real libraries built here with gcc, a real repair, the shipped self-check run from the repaired wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

from tests.support.wheel_support import build_c_library, shared_library
from toolkit.recipe.wheel import Component, WheelSettings
from toolkit.wheel.build import build_wheel
from toolkit.wheel.repair import repair_wheel

SETTINGS = WheelSettings(
    version="0.4.0",
    components=(Component("hipgpu", "hipgpu", runpath=("$ORIGIN",), loads=("hip-compiler",)),
                Component("hip-compiler", plugin=False, runpath=("$ORIGIN",))),
    distribution="onnxruntime-ep-hip", import_package="onnxruntime_ep_hip",
    excludes=("libLLVM.so.*",), platform="linux")
INFO = {"source_revision": "0123abc", "patches": [], "features": [], "rocm_version": None, "gpu_targets": []}


def test_llvm_left_external_is_not_called_rocm_and_the_compiler_not_a_backend(tmp_path, monkeypatch, capfd):
    llvm = tmp_path / "llvm"
    shared_library(llvm, "libLLVM.so.22.1")
    libs = tmp_path / "lib"
    build_c_library(libs / "libhipgpu.so")
    build_c_library(libs / "libhip-compiler.so", [f"-L{llvm}"], ["-l:libLLVM.so.22.1"])
    wheel = build_wheel(SETTINGS, libs, INFO, tmp_path / "dist")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(llvm))
    capfd.readouterr()
    result = repair_wheel(wheel, tmp_path / "repaired", SETTINGS.excludes, SETTINGS.components, platform="linux")
    said = capfd.readouterr().err
    assert "left external (not ROCm: the recipe's [wheel] excludes): libLLVM.so.22.1" in said
    assert "left external (ROCm)" not in said
    assert {n.soname: n.reason for n in result.needs}["libLLVM.so.22.1"] == (
        "not ROCm: the recipe's [wheel] excludes (libLLVM.so.*)")

    with zipfile.ZipFile(result.wheel) as archive:
        archive.extractall(tmp_path / "site")
        metadata = next(archive.read(n).decode() for n in archive.namelist() if n.endswith("/METADATA"))
    assert "- `libhip-compiler.so` (a library the EP loads, not an EP)" in metadata
    check = subprocess.run([sys.executable, "-m", "onnxruntime_ep_hip"], capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(tmp_path / "site")}, cwd=tmp_path)
    assert "  libhip-compiler.so (a library the EP loads, not an EP): loads" in check.stdout, check.stderr
    assert "(backend)" not in check.stdout
