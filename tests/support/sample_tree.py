"""Helpers for tests of the bundled sample tree: where it lives, its patch series, building it with CMake
(the tools the toolkit itself finds) or through the toolkit's whole pipeline."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.tools import ROOT, require_tool
from toolkit.patching import load_series
from toolkit.util.errors import ToolkitError

SAMPLE_DIR = ROOT / "samples" / "umbrella-ep"
SAMPLE_SERIES = ROOT / "patches" / "amdgpu-ep" / "series"


def cmake_and_ninja() -> tuple[str, str]:
    """The CMake (>= 4.2, checked) and Ninja the toolkit's stages use: PyPI's first, then PATH's."""
    from toolkit.cmake.commands import check_cmake_version, find_cmake, find_ninja

    try:
        cmake, ninja = find_cmake(), find_ninja()
        check_cmake_version(cmake)
    except ToolkitError as exc:
        require_tool(False, f"the sample needs CMake >= 4.2 and Ninja: {exc.message}"
                           + (f" ({exc.hint})" if exc.hint else ""))
    return str(cmake), str(ninja)


def series_patches(series: Path = SAMPLE_SERIES) -> list[Path]:
    """The patch files a series names, in order, as the toolkit's series loader reads them."""
    return [entry.path for entry in load_series(series).entries]


def ort_prefix() -> Path:
    """ORT's C API headers as the sample recipe pins them (Debian's libonnxruntime-dev), via the shared cache."""
    from toolkit.recipe.load import PROJECT_ROOT, find_recipe, load_recipe
    from toolkit.sources.components import fetch_ort
    from toolkit.sources.context import FetchContext

    recipe = load_recipe(find_recipe("amdgpu-ep", PROJECT_ROOT))
    return fetch_ort(recipe.ort, FetchContext.create(recipe.file))


def configure_and_build(source: Path, build: Path, lib: Path, defines: list[str]) -> None:
    """Configure and build `source` with CMake directly (no toolkit stages), libraries into `lib`."""
    from toolkit.cmake.commands import configure_command

    cmake, ninja = cmake_and_ninja()
    configure = configure_command(Path(cmake), source, build, "Ninja", Path(ninja),
                                  {"AMDGPU_EP_OUTPUT_DIR": str(lib), "CMAKE_PREFIX_PATH": str(ort_prefix())})
    for command in (configure + defines, [cmake, "--build", str(build)]):
        done = subprocess.run(command, capture_output=True, text=True)
        assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}"


def build_sample(work: Path, hipdnn: bool = False) -> Path:
    """Builds the bundled sample through the toolkit's pipeline (patched, USE_AMDGPU=ON); returns lib/."""
    from toolkit.pipeline.options import BuildOptions
    from toolkit.pipeline.stages import build_then

    return build_then(BuildOptions(build_folder=work, with_features=("hipdnn",) if hipdnn else ()),
                      lambda build, _: build.workspace.lib)
