"""Shared fixtures. `sample_libs` builds the bundled sample tree, patched, once per session and variant."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Callable

import pytest

from tests.sample_tree import SAMPLE_DIR, configure_and_build, series_patches


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
    defines = ["-DUSE_AMDGPU=ON", f"-DUSE_HIPDNN={'ON' if hipdnn else 'OFF'}"]
    configure_and_build(source, tmp_path / "cmake", lib, defines)
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
