"""The source stage: the recipe's source tree brought into the work tree (build/<recipe>/<variant>/source), the
tree every later stage reads. It is every build's first stage, whether or not the recipe has patches: a
recipe that only hipifies and compile-checks needs the tree as much as one that patches it first."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from toolkit.pipeline.build import Build
from toolkit.pipeline.runner import Stage, StageSpec
from toolkit.util import log
from toolkit.util.fsutil import JSON, make_temp_dir, sync_tree

# .git (a folder, or a file in a git worktree) and hipify's per-file cache are not part of the tree the build reads.
SKIP = shutil.ignore_patterns(".git", ".hipify-cache.json")


def copy_into(tree: Path, out: Path, work_root: Path, edit: Callable[[Path], None] = lambda copy: None) -> list[Path]:
    """`tree` copied into a scratch folder of the work tree, changed there by `edit` (the patch stage applies its
    series), then synced into `out`; returns the files written. Sync rather than replace: unchanged files keep
    their mtimes, so ninja rebuilds nothing, and a failed edit leaves `out` as it was."""
    tmp = make_temp_dir(work_root, out.name)
    try:
        shutil.copytree(tree, tmp, symlinks=True, dirs_exist_ok=True, ignore=SKIP)
        edit(tmp)
        return sync_tree(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def source_stage(b: Build) -> Stage:
    tree, out = b.source_dir, b.workspace.source

    def inputs() -> JSON:
        return {"source": str(tree), "digest": b.source_digest()}

    def run() -> None:
        written = copy_into(tree, out, b.workspace.root)
        log.stage("source", f"{len(written)} file(s) copied or updated in {out}")

    def plan() -> list[str]:
        return [f"source {tree}", f"copy -> {out}"]

    return Stage("source", inputs, [out], run, plan)


STAGE = StageSpec("source", "bring the recipe's source into the work tree (build/<recipe>/<variant>/source); "
                  "every build runs it, named in a recipe's stages or not", make=source_stage)
