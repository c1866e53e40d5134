"""The mingw toolchain (toolkit/cmake/mingw.py, toolchains.toml [mingw]): what CMake is told, the plan a dry run
prints on a machine without MinGW, and the error a real build gets there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.tools import ROOT
from toolkit.cmake.mingw import SDK_HEADERS, toolchain_file_text
from toolkit.cmake.toolchain import resolve
from toolkit.recipe.core import library_file
from toolkit.wheel.buildinfo import BuildInfo


def test_mingw_targets_windows_with_ucrt_and_links_the_runtime_in(tmp_path: Path) -> None:
    tc = resolve("mingw")
    assert tc.mingw is not None
    assert (tc.platform, tc.mingw.wheel_platform, tc.target) == ("windows", "win_amd64", "x86_64-w64-mingw32ucrt")
    assert tc.identity()["crt"] == "ucrt"
    # What the wheel stage reads: the platform follows from the toolchain the build facts record.
    assert BuildInfo("tree@sha256:0", toolchain=tc.identity()).platform == "windows"
    assert BuildInfo("tree@sha256:0", toolchain={"name": "zig"}).platform == "linux"
    defines = tc.defines(tmp_path)
    assert defines["CMAKE_TOOLCHAIN_FILE"] == str(tmp_path / "mingw-x86_64-w64-mingw32ucrt" / "toolchain.cmake")
    assert defines["CMAKE_CXX_COMPILER"].endswith("clang++-22")
    assert tc.mingw is not None
    folders = ["/usr/lib/gcc/x86_64-w64-mingw32ucrt/16/include/c++"]
    text = toolchain_file_text(tc.mingw, tc.describe(), folders, tmp_path / "casefold")
    assert "set(CMAKE_SYSTEM_NAME Windows)" in text
    assert "set(CMAKE_CXX_COMPILER_TARGET x86_64-w64-mingw32ucrt)" in text
    assert 'set(CMAKE_MODULE_LINKER_FLAGS_INIT "-static -pthread -Wl,--no-insert-timestamp")' in text
    # clang takes MinGW-w64's libstdc++ alone, speaks the MSVC dialect, and finds the SDK pieces MinGW-w64 lacks.
    assert "-nostdinc++ -isystem /usr/lib/gcc/x86_64-w64-mingw32ucrt/16/include/c++ -fms-extensions" in text
    assert "-include toolkit_mingw_sdk.h" in text
    assert f"set(CMAKE_CXX_STANDARD_INCLUDE_DIRECTORIES {tmp_path / 'casefold'} {SDK_HEADERS})" in text
    assert (SDK_HEADERS / "toolkit_mingw_sdk.h").is_file() and (SDK_HEADERS / "wrl" / "implements.h").is_file()
    assert library_file("amdgpu-ep", tc.platform) == "amdgpu-ep.dll"
    assert library_file("amdgpu-ep") == "libamdgpu-ep.so"


def toolkit(*args: str, path: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": path, "HOME": "/tmp", "LANG": "C.UTF-8"}
    return subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_dry_run_plans_a_windows_build_and_a_real_one_names_the_root(tmp_path: Path) -> None:
    # PATH without MinGW's compilers, as on a machine that has none.
    bin_dir = Path(sys.executable).parent
    plan = toolkit("build", "--toolchain", "mingw", "--dry-run", "--build-dir", str(tmp_path), path=str(bin_dir))
    assert plan.returncode == 0, plan.stderr
    assert "features: amdgpu=on, migraphx=on, dml=on, hipdnn=off" in plan.stderr
    said = plan.stdout + plan.stderr
    assert ("toolchain clang-22 for x86_64-w64-mingw32ucrt with MinGW-w64's UCRT runtime "
            "(x86_64-w64-mingw32ucrt-g++'s libstdc++, linked in statically), for win_amd64") in said
    assert "directx-backend.dll must export exactly CreateEpFactories, ReleaseEpFactory" in said
    real = toolkit("build", "--toolchain", "mingw", "--build-dir", str(tmp_path), path=f"{bin_dir}:/usr/bin:/bin")
    assert real.returncode != 0
    lines = [line for line in real.stderr.splitlines() if line.startswith("error:")]
    assert lines == ["error: the mingw toolchain needs clang-22, clang++-22, x86_64-w64-mingw32ucrt-g++, llvm-ml-22, "
                     "which this machine does not have"], real.stderr
    assert "nox -s container -- --root debian-sid-windows build --toolchain mingw" in real.stderr
    assert "Traceback" not in real.stderr
