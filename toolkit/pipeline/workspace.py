"""Where a build lives: one work tree per recipe and variant, under the build folder."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


def default_build_folder() -> Path:
    return Path(os.environ.get("TOOLKIT_BUILD_DIR", "build")).resolve()


@dataclass(frozen=True)
class Workspace:
    root: Path

    @classmethod
    def for_recipe(cls, build_folder: Path, recipe: str, variant: str) -> Workspace:
        return cls(Path(build_folder).resolve() / recipe / variant)

    @property
    def source(self) -> Path:
        """The patched (phase base) copy of the source tree the build compiles."""
        return self.root / "source"

    @property
    def hipified(self) -> Path:
        return self.root / "hipified"

    @property
    def hipified_patched(self) -> Path:
        """A copy of hipify's output with the series' `hipified` phase applied (hipify's cache stays valid)."""
        return self.root / "hipified-patched"

    @property
    def cmake(self) -> Path:
        return self.root / "cmake"

    @property
    def lib(self) -> Path:
        """Exactly the libraries of the last build, nothing stale."""
        return self.root / "lib"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def configure_record(self) -> Path:
        """The configure command the last configure ran, as it ran (a --fresh included): the provenance's."""
        return self.state / "configure-command.json"

    @property
    def tmp(self) -> Path:
        """TMPDIR of a configure or build step's tools, there while the step runs (derive.tool_env)."""
        return self.root / "tmp"

    @property
    def wheel_raw(self) -> Path:
        """The wheel as scikit-build-core made it, before repair."""
        return self.root / "wheel-raw"

    @property
    def wheelhouse(self) -> Path:
        return self.root / "wheelhouse"

    @property
    def build_info(self) -> Path:
        return self.root / "build-info.json"
