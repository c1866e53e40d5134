"""Shared fixtures. `sample_libs` builds the bundled sample tree, patched, once per session and variant."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from toolkit.engine.options import BuildOptions
from toolkit.engine.pipeline import run_build


def build_sample(tmp_path: Path, hipdnn: bool) -> Path:
    """Builds the bundled sample through the toolkit's pipeline (patched, USE_AMDGPU=ON); returns lib/."""
    options = BuildOptions(build_root=tmp_path, with_features=("hipdnn",) if hipdnn else ())
    build, _ = run_build(options)
    return build.workspace.lib


@pytest.fixture(scope="session")
def sample_libs(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """`sample_libs(hipdnn=False)`: the lib folder of a patched sample build, built once per session."""
    built: dict[bool, Path] = {}

    def get(hipdnn: bool = False) -> Path:
        if hipdnn not in built:
            built[hipdnn] = build_sample(tmp_path_factory.mktemp("hipdnn" if hipdnn else "default"), hipdnn)
        return built[hipdnn]

    return get
