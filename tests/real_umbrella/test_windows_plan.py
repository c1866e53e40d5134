"""AMD's real umbrella for Windows (--toolchain mingw): the plan of its DirectX EP build, printed by a dry run on any
machine. What a Windows build of this tree is made of: the DirectX EP alone (the umbrella core needs AMD's HIP SDK for
Windows), NuGet's packages replaced by pinned FetchContent dependencies, ORT's Windows DLL, a protoc for this machine,
and the Windows patches."""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

from tests.support.real_umbrella_support import MIRROR
from tests.support.tools import ROOT


def dry_run(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolkit", "build", "--recipe", "umbrella-ep-real", "--toolchain",
                           "mingw", "--mirror", f"file://{MIRROR}", "--dry-run", "--build-dir", str(tmp_path), *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_the_windows_plan_builds_the_directx_ep_from_pinned_sources(tmp_path: Path) -> None:
    plan = dry_run(tmp_path)
    assert plan.returncode == 0, plan.stderr
    said = plan.stdout + plan.stderr
    assert "features: amdgpu=off, migraphx=off, dml=on, hipdnn=off" in said
    # NuGet's packages, each a pinned FetchContent dependency served by the provider.
    for name, url in (("wil", "github.com/microsoft/wil/archive/refs/tags/v1.0.230411.1.tar.gz"),
                      ("directml", "onnxruntime_directml-1.24.4-cp312-cp312-win_amd64.whl"),
                      ("d3dx12", "DirectX-Headers/archive/refs/tags/v1.619.1.zip"),
                      ("boost", "boostorg/mp11/archive/refs/tags/boost-1.90.0.tar.gz"),
                      ("eigen", "eigen-5.0.1.zip")):
        line = next((ln for ln in said.splitlines() if f"  {name} -> " in ln), "")
        assert url in line, (name, said)
    assert "nuget" not in said.lower()
    deb = "debian:pool/main/o/onnxruntime/libonnxruntime-dev_1.27.1+dfsg-1_amd64.deb"
    assert f"ORT 1.27.1 release package {deb}" in said
    protoc = tmp_path / "umbrella-ep-real" / "release" / "host" / "protobuf" / "protoc"
    assert f"define ONNX_CUSTOM_PROTOC_EXECUTABLE={protoc}" in said
    assert "host tool: protoc of protobuf, built for this machine first, given as ONNX_CUSTOM_PROTOC_EXECUTABLE" in said
    assert "define USE_DML=ON" in said and "define USE_AMDGPU=OFF" in said
    assert "patch: series" in said and "(phase base, features: dml)" in said
    assert "check: directx-ep.dll must export exactly CreateEpFactories, ReleaseEpFactory" in said
    assert "toolchain clang-22 for x86_64-w64-mingw32ucrt" in said


def test_the_umbrella_core_is_refused_for_windows_with_the_reason(tmp_path: Path) -> None:
    refused = dry_run(tmp_path, "--with-amdgpu")
    assert refused.returncode != 0
    errors = [line for line in refused.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: feature 'amdgpu' is not available on windows (recipe "
                      f"{ROOT / 'recipes' / 'umbrella-ep-real.toml'}, features.amdgpu.platforms = ['linux'])"], \
        refused.stderr
    assert "Traceback" not in refused.stderr


def test_the_windows_patches_apply_to_the_pinned_tree(tmp_path: Path) -> None:
    archive = (MIRROR / "github.com/onnxruntime/onnxruntime-ep-amdgpu/archive"
               / "a2ea3b25f420c5eb8d25edc366fbc17d6de4fe22.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path, filter="data")
    tree = next(tmp_path.iterdir())
    checked = subprocess.run([sys.executable, "-m", "toolkit", "patch", "--recipe", "umbrella-ep-real", "--toolchain",
                              "mingw", "check", str(tree)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "features dml," in checked.stderr
    for patch in ("0007-directx-cmake-without-nuget-for-mingw", "0008-directx-sources-for-clang-mingw",
                  "0009-shared-utilities-for-clang-mingw", "0010-mlas-aligned-buffer-on-windows",
                  "0011-mlas-gnu-assembler-kernels-for-mingw", "0012-directx-pragma-libraries-for-mingw",
                  "0013-directx-ort-api-from-the-caller"):
        assert f"{patch}.patch: applies cleanly" in checked.stdout, checked.stdout
    assert "0001-probe-migraphx-apis.patch: not applied: needs when=migraphx" in checked.stdout
