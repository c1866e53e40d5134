"""Build options as one typed value, resolved from the command line before anything runs."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class BuildOptions:
    recipe: str = "amdgpu-ep"
    variant: str = "release"
    with_features: tuple[str, ...] = ()
    without_features: tuple[str, ...] = ()
    jobs: int = field(default_factory=lambda: os.cpu_count() or 2)
    dry_run: bool = False
    force: bool = False
    source: str | None = None
    build_root: Path | None = None
    gpu_targets: tuple[str, ...] = ()
    offline: bool = False
    mirrors: tuple[str, ...] = ()
    ort_home: Path | None = None
    rocm_path: Path | None = None
    migraphx_home: Path | None = None
    # A local version label for the wheel (release matrix entries must not share a wheel name).
    local_version: str | None = None
    # Fail at once instead of waiting when another process holds the work tree's lock.
    no_wait: bool = False
