"""The survey's configure (`python -m toolkit survey`, toolkit/upstream/survey.py): the patched tree configured into
<work tree>/survey, fresh each time, with the build's defines and the dependency provider in survey mode. It runs
after the stages up to patch with the work tree still locked (stages.build_then), and hands what it configured to
the survey's reader under the same lock: another build of the tree would copy the source again, and another
survey would remove the folder."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from toolkit.pipeline.adapters.configure import tree_configure_command
from toolkit.pipeline.adapters.fetchcontent import fetch_deps, write_map
from toolkit.pipeline.build import Build
from toolkit.pipeline.produced import Produced
from toolkit.sources.fetchcontent import REPORT_NAME
from toolkit.sources.provider_survey import survey_define
from toolkit.util import log
from toolkit.util.process import run

if TYPE_CHECKING:
    from toolkit.recipe.load import Recipe

T = TypeVar("T")


@dataclass(frozen=True)
class Configured:
    """The survey's configure, done, and what the survey reads beside its folder."""
    recipe: Recipe
    source: str                                  # where the tree came from, described
    features: list[str]                          # the features on
    tree: Path                                   # the patched tree
    binary: Path                                 # the configure's folder
    log: Path                                    # the configure's output
    ok: bool
    output: str
    expected: list[tuple[str, tuple[str, ...]]]  # the libraries the recipe expects, with their exports
    api_libraries: tuple[str, ...] | None        # those [api_check] names; None without one


def configure(b: Build, produced: Produced, read: Callable[[Configured], T]) -> T | None:
    """Configure the tree for the survey and return `read` of it; None in a dry run, which prints the plan. It runs
    after the patch stage (`produced` is the stages' up to it), so it fetches the FetchContent dependencies itself."""
    ws = b.workspace
    binary = ws.root / "survey"
    log_file = ws.root / "logs" / "survey.log"
    cmd = tree_configure_command(b, binary, {**survey_define(binary), "CMAKE_EXPORT_COMPILE_COMMANDS": "ON",
                                             "TOOLKIT_PROVIDER_REPORT": (binary / REPORT_NAME).as_posix()})
    if b.options.dry_run:
        log.stage("survey", "would run: a configure with the dependency provider in survey mode")
        for line in [f"toolchain {b.toolchain().describe()}", f"fresh CMake folder {binary} (removed first)",
                     "$ " + " ".join(cmd), f"its output -> {log_file}"]:
            print(f"  survey: {line}")
        return None
    fetch_deps(b)
    write_map(b)
    # Fresh: FetchContent and the CMake cache remember earlier answers, which would hide requests.
    shutil.rmtree(binary, ignore_errors=True)
    # The configure's compilers are the recipe's toolchain (zig's wrappers are written, not installed).
    b.toolchain().prepare(b.toolchain_dir, b.fetch.cache.root)
    log.stage("survey", "$ " + " ".join(cmd))
    proc = run(cmd, "survey configure", check=False)
    log_file.parent.mkdir(parents=True, exist_ok=True)
    log_file.write_text(proc.stdout + proc.stderr, encoding="utf-8")
    api_check = b.recipe.api_check
    return read(Configured(b.recipe, b.source.describe(), sorted(b.enabled()), ws.source, binary, log_file,
                           proc.returncode == 0, proc.stdout + proc.stderr, b.expected(),
                           tuple(api_check.libraries) if api_check else None))
