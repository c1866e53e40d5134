"""The fetchcontent stage: the recipe's [[fetchcontent]] dependencies this build needs, fetched, unpacked and
verified into build/<recipe>/<variant>/deps before the configure, which hands CMake the folders through the
dependency provider (toolkit/sources/fetchcontent.py). The configure's defines name those folders only, so working
them out (a dry run's plan among them) touches neither the network nor the cache."""

from __future__ import annotations

from pathlib import Path

from toolkit.pipeline.build import Build
from toolkit.pipeline.produced import Produced
from toolkit.pipeline.runner import Stage, StageSpec
from toolkit.sources.archive import with_lock_pins
from toolkit.sources.fetchcontent import dep_dir, prepare_dep, source_dir, write_provider_map
from toolkit.util.fsutil import JSON
from toolkit.util.redact import redact_url


def deps_root(b: Build) -> Path:
    return b.workspace.root / "deps"


def fetch_deps(b: Build) -> None:
    """Every dependency the build needs, verified in its folder (fetched and unpacked when it is not there yet)."""
    for dep in b.fetchcontent_deps():
        prepare_dep(dep, b.fetch, deps_root(b))


def write_map(b: Build) -> Path:
    """The provider's map of the build's dependencies: paths only, written by whatever configures next."""
    return write_provider_map(b.fetchcontent_deps(), deps_root(b), b.recipe.file)


def fetchcontent_stage(b: Build, produced: Produced) -> Stage:
    deps, dest = b.fetchcontent_deps(), deps_root(b)

    def inputs() -> JSON:
        # The pins as the recipe and its lock file give them: a new pin fetches again.
        pinned = [with_lock_pins(dep.archive, b.fetch) for dep in deps]
        return {"deps": [repr(dep) for dep in deps], "pins": [[p.url, p.sha256, p.content] for p in pinned]}

    def plan() -> list[str]:
        return [f"{dep.name}: {redact_url(dep.archive.url)} -> {source_dir(dest, dep)} (fetched, unpacked, verified)"
                for dep in deps]

    return Stage("fetchcontent", inputs, [dep_dir(dest, dep) for dep in deps], lambda: fetch_deps(b), plan)


STAGE = StageSpec("fetchcontent", "fetch, unpack and verify the recipe's [[fetchcontent]] dependencies into deps/ "
                  "for the configure's dependency provider",
                  applies=lambda b: bool(b.fetchcontent_deps()), make=fetchcontent_stage, part_of="configure")
