"""The api-check stage: after configure and before the compile, the MIGraphX, HIP and ORT APIs the tree's
units call are looked up in the headers the compile will use. A name no header declares fails the build here,
naming the API, where the tree uses it, the version at hand and (from data) the release that has it, instead
of a `was not declared` deep in the compile. Only recipes with [api_check] have the stage."""

from __future__ import annotations

import json
from pathlib import Path

from toolkit.apicheck import apis, compiledb, cxxscan
from toolkit.pipeline.build import Build
from toolkit.pipeline.runner import Stage, StageSpec
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON, atomic_write_text, sha256_file


def cmake_texts(tree: Path) -> list[str]:
    """Every CMakeLists.txt and *.cmake of the tree: where its probes (check_* calls) are."""
    return [p.read_text(encoding="utf-8", errors="replace") for p in sorted(tree.rglob("*"))
            if p.is_file() and (p.name == "CMakeLists.txt" or p.suffix == ".cmake") and ".git" not in p.parts]


def libraries(b: Build) -> list[str]:
    """The libraries the recipe's [api_check] names."""
    settings = b.recipe.api_check
    if settings is None:  # the stage, and bump's survey, ask only where the recipe has one
        raise ToolkitError(f"recipe {b.recipe.name} has no [api_check] section ({b.recipe.file})")
    return list(settings.libraries)


def run_check(b: Build, binary_dir: Path, tree: Path) -> apis.ApiCheck:
    return apis.check(compiledb.read(binary_dir, tree), libraries(b), cmake_texts(tree))


def api_check_stage(b: Build) -> Stage:
    ws = b.workspace
    report = ws.root / "api-check.json"

    def inputs() -> JSON:
        db = ws.cmake / compiledb.COMPILE_DB
        return {"libraries": libraries(b), "data": sha256_file(apis.DATA),
                "checker": [sha256_file(Path(str(m.__file__))) for m in (apis, compiledb, cxxscan)],
                "compile_commands": sha256_file(db) if db.is_file() else None}

    def run() -> None:
        result = run_check(b, ws.cmake, ws.source)
        atomic_write_text(report, json.dumps(result.to_json(), indent=2) + "\n")
        for facts in result.libraries.values():
            log.stage("api-check", facts.describe())
        for m in result.guarded:
            log.stage("api-check", f"guarded by {m.guard}: {m.line(result.found_in(m.library))}")
        if result.missing:
            raise result.error(f"the source tree {b.source.describe()}")
        log.stage("api-check", f"{result.files} file(s): every {', '.join(libraries(b))} "
                               f"API they call is declared")

    def plan() -> list[str]:
        return [f"check {', '.join(libraries(b))} API uses of "
                f"{ws.cmake / compiledb.COMPILE_DB} against the headers the compile uses -> {report}"]

    return Stage("api-check", inputs, [report], run, plan)


STAGE = StageSpec("api-check", "the MIGraphX/HIP/ORT APIs the tree calls are declared by the headers it compiles "
                               "with ([api_check]): an up-front error otherwise",
                  applies=lambda b: b.recipe.api_check is not None, make=lambda b, produced: api_check_stage(b))
