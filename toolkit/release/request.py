"""What `release` and `container` are asked to do, as typed values: the command line parses into these, and
make_release.py and container_session.py act on them. Standard library only, as `release --print-matrix` and
`container` are (they run inside a bare build image too)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.pipeline.options import BuildOptions
from toolkit.recipe.load import load_recipe
from toolkit.recipe.release import ReleaseSettings
from toolkit.release import matrix


@dataclass(frozen=True)
class ReleaseRequest:
    recipe: Path                          # the recipe file, with its [release] section
    only: tuple[str, ...] = ()            # the entries to build (--only); none: every entry
    out: Path | None = None               # None: $TOOLKIT_OUT_DIR, else <build folder>/<recipe>/dist
    dry_run: bool = False                 # print the plan; build nothing
    no_wait: bool = False                 # fail at once when the output folder or a work tree is held
    facts_out: Path | None = None         # also write each entry's build facts as JSON here
    # The build options the release passes on to each entry's build (pipeline.options.RELEASE_PASSED); the others
    # stay at their defaults, each entry setting its own.
    build: BuildOptions = field(default_factory=BuildOptions)

    def entries(self) -> list[matrix.Entry]:
        """The matrix entries this release builds, in matrix order."""
        return matrix.select(matrix.plan_matrix(load_settings(self.recipe)), list(self.only) or None)


@dataclass(frozen=True)
class ContainerRequest:
    session: str                          # the session to run inside (a nox session, or a toolkit command)
    session_args: tuple[str, ...] = ()
    recipe: Path | None = None            # whose [release.container] gives the defaults
    engine: str | None = None             # podman or docker (None: $TOOLKIT_CONTAINER_ENGINE, podman, docker)
    image: str | None = None
    runner: str | None = None             # nox or toolkit (None: the recipe's, else nox)
    source: Path | None = None            # mounted at /work/source
    cache: Path | None = None             # mounted at /cache (None: the toolkit cache)
    out: Path | None = None               # mounted at /work/out
    build_folder: Path | None = None         # mounted at /work/build (None: ./build)
    network: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)   # --env KEY=VALUE for the session
    root: str | None = None               # run in this build root itself instead of an image
    binds: tuple[Path, ...] = ()          # with root: more host folders bound at the same path
    dry_run: bool = False                 # print the engine's command instead of running it
    # How `python -m toolkit COMMAND` parses its arguments: a session's own are read with it (None: not read).
    command_parser: Callable[[str], argparse.ArgumentParser] | None = None


def load_settings(recipe: Path | None) -> ReleaseSettings:
    """The recipe's [release] section, the recipe read whole (load_recipe) as every command reads it; the defaults
    without a recipe or a section."""
    if recipe is None:
        return ReleaseSettings()
    return load_recipe(recipe).release or ReleaseSettings()
