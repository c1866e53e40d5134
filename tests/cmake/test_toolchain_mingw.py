"""The mingw toolchain (toolkit/cmake/mingw.py, toolchains.toml [mingw]): what CMake is told, the plan a dry run
prints on a machine without MinGW, and the error a real build gets there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.tools import ROOT
from tests.support.windows_support import inside
from toolkit.cmake.mingw import (
    NAMES_TEXT,
    SDK_HEADERS,
    casefold_dir,
    cxx_search_folders,
    names_file,
    runtime_search_command,
    toolchain_file_text,
)
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


NAMED = """cmake_minimum_required(VERSION 3.20)
project(named C)
add_library(plugin MODULE unit.c)
add_library(shared SHARED unit.c)
add_library(chosen SHARED unit.c)
set_target_properties(chosen PROPERTIES PREFIX "lib")
"""


def test_dlls_are_named_as_msvc_names_them_unless_the_tree_says_otherwise(windows_root: Path, tmp_path: Path) -> None:
    # CMake's MinGW platform files would name these libplugin.dll and libshared.dll; a tree written for Windows loads
    # and registers NAME.dll.
    pin = resolve("mingw").mingw
    assert pin is not None
    folders = cxx_search_folders(inside(windows_root, runtime_search_command(pin), [tmp_path]).stderr)
    toolchain = tmp_path / "toolchain" / "toolchain.cmake"
    toolchain.parent.mkdir()
    toolchain.write_text(toolchain_file_text(pin, "test", folders, casefold_dir(toolchain)))
    names_file(toolchain.parent).write_text(NAMES_TEXT)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "CMakeLists.txt").write_text(NAMED)
    (tmp_path / "src" / "unit.c").write_text("__declspec(dllexport) int answer(void) { return 42; }\n")
    configured = inside(windows_root, ["cmake", "-G", "Ninja", "-S", str(tmp_path / "src"), "-B",
                                       str(tmp_path / "out"), f"-DCMAKE_TOOLCHAIN_FILE={toolchain}"],
                        [tmp_path, SDK_HEADERS])
    assert configured.returncode == 0, configured.stdout + configured.stderr
    built = inside(windows_root, ["cmake", "--build", str(tmp_path / "out")], [tmp_path, SDK_HEADERS])
    assert built.returncode == 0, built.stdout + built.stderr
    assert sorted(p.name for p in (tmp_path / "out").glob("*.dll")) == ["libchosen.dll", "plugin.dll", "shared.dll"]
