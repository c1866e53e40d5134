"""The wheel stage: the built libraries packaged with scikit-build-core into build/<recipe>/<variant>/wheel-raw
(repair.py repairs it into wheelhouse/)."""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.cmake.link_inputs import archives_linked
from toolkit.pipeline.adapters.fetchcontent import deps_root
from toolkit.pipeline.build import Build
from toolkit.pipeline.produced import Produced
from toolkit.pipeline.runner import Stage, StageSpec
from toolkit.sources.fetchcontent import source_dir
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON
from toolkit.wheel.build import build_wheel
from toolkit.wheel.data import read_text
from toolkit.wheel.licenses import tree_license_files
from toolkit.wheel.linked_licenses import LinkedNotices, linked_notices

if TYPE_CHECKING:
    from toolkit.recipe.wheel import WheelSettings

TEMPLATES = ("CMakeLists.txt.in", "package_init.py", "package_main.py", "selfcheck.py")


def wheel_settings(b: Build) -> WheelSettings:
    settings = b.recipe.wheel
    if settings is None:  # the stage applies only where the recipe has one (has_wheel)
        raise ToolkitError(f"recipe {b.recipe.name} has no [wheel] section ({b.recipe.file})")
    if b.options.local_version:
        settings = dataclasses.replace(settings, version=f"{settings.version}+{b.options.local_version}")
    # A named feature's build is a distribution of its own (the plan says so); the ROCm variant is added once the
    # libraries are built (build_wheel).
    return settings.for_features(b.enabled())


def templates_digest() -> str:
    digest = hashlib.sha256()
    for name in sorted(TEMPLATES):
        digest.update(name.encode() + b"\0" + read_text("templates", name).encode() + b"\0")
    return digest.hexdigest()


def license_tree(b: Build) -> Path:
    """The tree whose license files the wheel carries: the patched copy the build compiled, once it exists."""
    return b.workspace.source if b.workspace.source.is_dir() else b.source_dir


def dep_dirs(b: Build) -> dict[str, Path]:
    """The build's fetched dependencies by name (the fetchcontent stage's folders)."""
    return {dep.name: source_dir(deps_root(b), dep) for dep in b.fetchcontent_deps()}


def linked(b: Build, settings: WheelSettings, dirs: dict[str, Path]) -> LinkedNotices:
    """The notices of other projects' code in the libraries: the fetched dependencies (in `dirs`), and the static
    archives of the build machine that the linker read for each library the wheel packages."""
    # A library the wheel carries with its own license (DirectML.dll) is not the tree's link.
    files = [c.file(b.toolchain().platform) for c in settings.components_for(frozenset(b.enabled()))
             if not c.license_files]
    archives = archives_linked(b.workspace.cmake, files, b.workspace.root)
    unrecorded = sorted(name for name, found in archives.items() if found is None)
    if unrecorded:
        log.info(f"wheel: no record of the linker's inputs for {', '.join(unrecorded)} (CMake 3.27 or newer with "
                 "GNU ld or lld keeps one), so no static archive of this machine is looked for in them")
    return linked_notices([(dep, dirs[dep.name]) for dep in b.fetchcontent_deps()], archives)


def licenses_digest(tree: Path) -> str:
    digest = hashlib.sha256()
    for name in tree_license_files(tree):
        digest.update(name.encode() + b"\0" + (tree / name).read_bytes() + b"\0")
    return digest.hexdigest()


def wheel_stage(b: Build, produced: Produced) -> Stage:
    settings = wheel_settings(b)
    ws = b.workspace

    def run() -> None:
        shutil.rmtree(ws.wheel_raw, ignore_errors=True)
        dirs = dep_dirs(b)
        build_wheel(settings, ws.lib, produced.configure("wheel").facts, ws.wheel_raw, env=b.env,
                    source_dir=license_tree(b), dep_dirs=dirs, linked=linked(b, settings, dirs))

    # The templates are what the wheel's Python is made of (its self-check included), the tree's license files
    # what its licenses are: a change of either rebuilds the wheel.
    def inputs() -> JSON:
        return {"facts": produced.configure("wheel").facts, "settings": repr(settings), "templates": templates_digest(),
                "licenses": licenses_digest(license_tree(b)), "dependencies": repr(b.fetchcontent_deps())}

    return Stage("wheel", inputs, [ws.wheel_raw], run,
                 lambda: [f"scikit-build-core wheel {settings.distribution} {settings.version} from {ws.lib} "
                          f"-> {ws.wheel_raw}"])


def has_wheel(b: Build) -> bool:
    return b.recipe.wheel is not None


STAGE = StageSpec("wheel", "package lib/ as a py3-none wheel with scikit-build-core (--wheel)",
                  applies=has_wheel, make=wheel_stage, packaging=True)
