"""Helpers for tests of the bundled sample tree: where it lives, its patch series, building it with CMake."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.tools import require_tool

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DIR = ROOT / "samples" / "umbrella-ep"
SAMPLE_SERIES = ROOT / "patches" / "amdgpu-ep" / "series"



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
    lines = series.read_text().splitlines()
    names = [line.split()[0] for line in lines if line.strip() and not line.startswith("#")]
    return [series.parent / name for name in names]


def ort_prefix() -> Path:
    """ORT's C API headers as the sample recipe pins them (Debian's libonnxruntime-dev), via the shared cache."""
    from toolkit.recipe.load import PROJECT_ROOT, find_recipe, load_recipe
    from toolkit.sources import FetchContext, fetch_ort

    recipe = load_recipe(find_recipe("amdgpu-ep", PROJECT_ROOT))
    return fetch_ort(recipe.extra["ort"], FetchContext.create(recipe.file))


def configure_and_build(source: Path, build: Path, lib: Path, defines: list[str]) -> None:
    cmake, ninja = cmake_and_ninja()
    configure = [cmake, "-S", str(source), "-B", str(build), "-G", "Ninja",
                 f"-DCMAKE_MAKE_PROGRAM={ninja}", f"-DAMDGPU_EP_OUTPUT_DIR={lib}",
                 f"-DCMAKE_PREFIX_PATH={ort_prefix()}", *defines]
    for command in (configure, [cmake, "--build", str(build)]):
        done = subprocess.run(command, capture_output=True, text=True)
        assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}"
