"""Collecting a build's libraries from the tree's own install rules, and checking what they link.

A tree without an output-folder option (AMD's real tree) says what it ships through `install()`: `cmake
--install` into a fresh staging prefix puts each library where its rules say, and the build takes exactly the
recipe's outputs from there, never from a guessed folder.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from toolkit.binary.library import read_library
from toolkit.pipeline.build import Build
from toolkit.recipe.features import output_wanted
from toolkit.util import log
from toolkit.util.errors import ToolkitError


def install_staging(b: Build, cmake: Path, run: Callable[[list[str], str], None]) -> Path:
    """`cmake --install` into a fresh staging prefix: the tree's install rules say what it ships."""
    staging = b.workspace.root / "install"
    shutil.rmtree(staging, ignore_errors=True)
    run([str(cmake), "--install", str(b.workspace.cmake), "--prefix", str(staging)], "install")
    return staging


def installed(staging: Path, file_name: str) -> Path:
    found = sorted(p for p in staging.rglob(file_name) if p.is_file())
    if len(found) > 1:
        raise ToolkitError(f"the install rules put {file_name} in {len(found)} places: "
                           + ", ".join(str(p) for p in found))
    return found[0] if found else staging / file_name


def check_needed(b: Build) -> None:
    """Libraries an output must list as NEEDED (recipe [[outputs]] needs)."""
    for output in b.recipe.outputs:
        feature = b.resolved_features()[output.feature] if output.feature is not None else None
        if not output.needs or not output_wanted(output, b.resolved_features()):
            continue
        name = output.library or (feature.spelling.library if feature is not None else None)
        if name is None:
            raise ToolkitError(f"{b.recipe.file}: an [[outputs]] entry with needs names no library",
                               hint="give it library = \"NAME\", or a feature whose spelling names one")
        path = b.workspace.lib / b.library_file(name)
        needed = list(read_library(path).needed)
        missing = [n for n in output.needs if n not in needed]
        if missing:
            raise ToolkitError(f"{path} does not need {', '.join(missing)} (NEEDED: {', '.join(needed) or 'none'})",
                               hint="check how the tree links it, or the 'needs' of its [[outputs]] "
                                    f"in {b.recipe.file}")
        log.stage("check", f"{path.name}: NEEDED includes {', '.join(output.needs)}")
