"""The source stage: the recipe's source tree brought into the work tree (build/<recipe>/<variant>/source), the
tree every later stage reads. It is every build's first stage, whether or not the recipe has patches: a
recipe that only hipifies and compile-checks needs the tree as much as one that patches it first."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from toolkit.pipeline.build import Build
from toolkit.pipeline.produced import Produced
from toolkit.pipeline.runner import Stage, StageSpec
from toolkit.util import log
from toolkit.util.fsutil import JSON, make_temp_dir, sync_tree, tree_digest

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


def source_stage(b: Build, produced: Produced) -> Stage:
    """The tree copied into the work tree; its digest (of the tree it copies) handed on in `produced`."""
    tree, out = b.source_dir, b.workspace.source

    def digest() -> str:
        # Hashing a real tree is not free: once a run, handed on to the build facts (and a release's provenance).
        if produced.source_digest is None:
            produced.source_digest = tree_digest(tree)
        return produced.source_digest

    def inputs() -> JSON:
        return {"source": str(tree), "digest": digest()}

    def run() -> None:
        written = copy_into(tree, out, b.workspace.root)
        log.stage("source", f"{len(written)} file(s) copied or updated in {out}")

    def plan() -> list[str]:
        return [f"source {tree}", f"copy -> {out}"]

    def done() -> None:
        digest()

    return Stage("source", inputs, [out], run, plan, done)


STAGE = StageSpec("source", "bring the recipe's source into the work tree (build/<recipe>/<variant>/source); "
                  "every build runs it, named in a recipe's stages or not", make=source_stage)
