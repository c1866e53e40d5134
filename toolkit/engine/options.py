"""Build options as one typed value, resolved from the command line before anything runs."""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.util.errors import ToolkitError

# A variant is one folder under build/<recipe>/: a plain name, never a path that could leave it.
_VARIANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")


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
    # The hipify engine instead of the recipe's [hipify] engine (builtin, hipify-perl).
    hipify_engine: str | None = None
    # Fail at once instead of waiting when another process holds the work tree's lock.
    no_wait: bool = False
    # The C/C++ toolchain instead of the recipe's [build] toolchain (system, zig).
    toolchain: str | None = None
    # The glibc floor the zig toolchain builds for, instead of the recipe's [build] glibc_floor.
    glibc_floor: str | None = None

    def __post_init__(self) -> None:
        check_variant(self.variant)
        if self.jobs < 1:
            raise ToolkitError(f"--jobs {self.jobs}: must be at least 1", hint="leave it out to use every core")


def check_variant(variant: str) -> str:
    if not _VARIANT.fullmatch(variant):
        raise ToolkitError(f"--variant {variant!r}: a variant is a plain folder name under build/<recipe>/",
                           hint="use letters, digits, '.', '_', '+' or '-', starting with a letter or digit "
                                "(no '/', no '..')")
    return variant


def positive_int(value: str) -> int:
    """argparse type for --jobs: a whole number >= 1."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number
