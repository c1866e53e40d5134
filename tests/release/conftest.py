"""The release tests' session fixtures: the build roots a release runs in (podman runs each root's folder as the
container's filesystem: toolkit/buildroot/rootfs.py), made once per test session."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def release_roots(sid_root, rocm7_root) -> tuple[Path, Path]:
    """Both ROCm roots, made; marked `buildroot`."""
    return sid_root, rocm7_root
