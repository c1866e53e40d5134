"""The build stage: Ninja builds the configured tree, and exactly the recipe's libraries are collected into
lib/ (from the tree's output folder or its install rules), with build-info.json beside them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from toolkit.binary.elf import read_elf
from toolkit.binary.patchelf import set_runpath
from toolkit.cmake.commands import build_command, find_cmake, read_cache
from toolkit.pipeline.adapters import derive
from toolkit.pipeline.adapters.outputs import install_staging, installed
from toolkit.pipeline.build import Build
from toolkit.pipeline.produced import Configured, Produced
from toolkit.pipeline.runner import Stage, StageSpec
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON, atomic_write_text, make_temp_dir, sync_tree
from toolkit.util.process import run_tool


def build_stage(b: Build, produced: Produced) -> Stage:
    ws = b.workspace
    cmake = find_cmake()

    def outputs() -> list[Path]:
        return [ws.lib / b.library_file(name) for name, _ in b.expected()]

    def run() -> None:
        # `cmake --install` too runs in the build's environment: install scripts read SOURCE_DATE_EPOCH
        # (string(TIMESTAMP)) and the release's other reproducibility settings.
        with derive.tool_env(b) as env:
            run_tool(build_command(cmake, ws.cmake, b.options.jobs), "build", env, ws.root / "logs")
            collect = make_temp_dir(ws.root, "lib")
            try:
                collect_libraries(b, cmake, collect, env)
                sync_tree(collect, ws.lib)
            finally:
                shutil.rmtree(collect, ignore_errors=True)
        write_build_info(b, produced.configure("build"))

    def plan() -> list[str]:
        return ["$ " + " ".join(build_command(cmake, ws.cmake, b.options.jobs))] + [
            f"output {p}" for p in outputs()]

    def inputs() -> JSON:
        return {"outputs": [p.name for p in outputs()], "build": repr(b.recipe.build)}

    return Stage("build", inputs, [*outputs(), ws.build_info], run, plan)


def collect_libraries(b: Build, cmake: Path, into: Path, env: dict[str, str]) -> None:
    """Copy exactly the expected libraries into `into`, from the output folder or the install rules."""
    ws = b.workspace
    install = b.recipe.build.collect == "install"
    staging = ws.cmake / "out"
    if install:
        staging = install_staging(b, cmake, lambda cmd, what: run_tool(cmd, what, env, ws.root / "logs"))
    for name, _ in b.expected():
        built = installed(staging, b.library_file(name)) if install else staging / b.library_file(name)
        if not built.is_file():
            raise ToolkitError(
                f"the build did not produce {b.library_file(name)} (looked in {staging})",
                hint=f"check the outputs of {b.recipe.file} against the source tree's CMake targets",
            )
        shutil.copy2(built, into / built.name)
        if b.recipe.build.strip_runpath and b.toolchain().platform == "linux":  # a DLL has no RUNPATH
            strip_build_runpath(into / built.name)


def write_build_info(b: Build, configured: Configured) -> None:
    """build-info.json: what the wheel records (the build facts), plus the CMake defines and libraries."""
    cache = read_cache(b.workspace.cmake)
    info = {
        "recipe": b.recipe.name,
        "variant": b.options.variant,
        "source": str(b.source_dir),
        **configured.facts,
        "defines": {k: cache[k] for k in sorted(configured.defines) if k in cache},
        "libraries": [b.library_file(n) for n, _ in b.expected()],
    }
    atomic_write_text(b.workspace.build_info, json.dumps(info, indent=2, sort_keys=True) + "\n")


def strip_build_runpath(lib: Path) -> None:
    """Drop RUNPATH entries that point into the build machine (clang's HIP link adds <rocm>/lib)."""
    facts = read_elf(lib)
    paths = facts.runpath or facts.rpath
    keep = [p for p in paths if p.startswith("$ORIGIN")]
    if list(paths) == keep:
        return
    set_runpath(lib, keep)
    log.stage("build", f"{lib.name}: removed build-machine RUNPATH {':'.join(p for p in paths if p not in keep)}")


STAGE = StageSpec("build", "Ninja builds the tree; exactly the recipe's libraries are collected into lib/",
                  make=build_stage)
