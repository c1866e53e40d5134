"""Shared fixtures. `sample_libs` builds the bundled sample tree, patched, once per session and variant."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DIR = ROOT / "samples" / "umbrella-ep"
SAMPLE_SERIES = ROOT / "patches" / "amdgpu-ep" / "series"


def require_tool(available: bool, reason: str) -> None:
    """Skip with a printed reason, except under CI=true, where a missing tool is a failure."""
    if available:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: tests must not skip)")
    pytest.skip(reason)


def cmake_and_ninja() -> tuple[str, str]:
    """PyPI's cmake and ninja: the sample needs CMake >= 4.2, newer than Debian's /usr/bin/cmake."""
    try:
        import cmake
        import ninja
    except ImportError as exc:
        require_tool(False, f"PyPI cmake and ninja are needed to build the sample: {exc}")
    return os.path.join(cmake.CMAKE_BIN_DIR, "cmake"), os.path.join(ninja.BIN_DIR, "ninja")


def series_patches(series: Path = SAMPLE_SERIES) -> list[Path]:
    """The patch files a series names, in order (comment and blank lines skipped)."""
    names = [line.split()[0] for line in series.read_text().splitlines() if line.strip() and not line.startswith("#")]
    return [series.parent / name for name in names]


def configure_and_build(source: Path, build: Path, lib: Path, defines: list[str]) -> None:
    cmake, ninja = cmake_and_ninja()
    configure = [cmake, "-S", str(source), "-B", str(build), "-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}",
                 f"-DAMDGPU_EP_OUTPUT_DIR={lib}", *defines]
    for command in (configure, [cmake, "--build", str(build)]):
        done = subprocess.run(command, capture_output=True, text=True)
        assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}"


def build_sample(tmp_path: Path, hipdnn: bool) -> Path:
    """Builds the patched sample with USE_AMDGPU=ON (and USE_HIPDNN=ON if asked); returns its lib folder.

    Kept small and on its own so that it can be replaced by a call into the toolkit's pipeline.
    """
    source = tmp_path / "source"
    shutil.copytree(SAMPLE_DIR, source)
    for patch in series_patches():
        done = subprocess.run(["patch", "-p1", "-s", "-i", str(patch)], cwd=source, capture_output=True, text=True)
        assert done.returncode == 0, f"{patch.name} does not apply:\n{done.stdout}{done.stderr}"
    lib = tmp_path / "lib"
    configure_and_build(source, tmp_path / "cmake", lib, ["-DUSE_AMDGPU=ON", f"-DUSE_HIPDNN={'ON' if hipdnn else 'OFF'}"])
    return lib


@pytest.fixture(scope="session")
def sample_libs(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """`sample_libs(hipdnn=False)`: the lib folder of a patched sample build, built once per session."""
    built: dict[bool, Path] = {}

    def get(hipdnn: bool = False) -> Path:
        if hipdnn not in built:
            built[hipdnn] = build_sample(tmp_path_factory.mktemp("hipdnn" if hipdnn else "default"), hipdnn)
        return built[hipdnn]

    return get
