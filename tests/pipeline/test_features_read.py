"""A Build reads the features' spellings from what the work tree's copy declares now: a stage that rewrites the
copy (source, patch) has nothing to tell the Build, since the answer is kept with the option files it was read
from and read again when they differ."""

from __future__ import annotations

import shutil

from toolkit.pipeline.build import prepared
from toolkit.pipeline.options import BuildOptions

RECIPE = """
[recipe]
name = "tiny"

[features.backend]
default = true
[[features.backend.spelling]]
define = "USE_BACKEND"
[[features.backend.spelling]]
define = "USE_BACKEND_OLD"

[[outputs]]
library = "tiny"
"""


def declaring(option: str) -> str:
    return f'project(tiny C)\noption({option} "the backend" ON)\n'


def test_features_follow_the_copy_without_being_told(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "CMakeLists.txt").write_text(declaring("USE_BACKEND_OLD"))
    recipe = tmp_path / "tiny.toml"
    recipe.write_text(RECIPE)
    with prepared(BuildOptions(recipe=str(recipe), source=str(tree), build_folder=tmp_path / "build",
                               dry_run=True)) as b:
        pass  # a dry run: the work tree is not locked, and the build stays readable after the block

    def spelling() -> str:
        return b.resolved_features()["backend"].spelling.define

    assert spelling() == "USE_BACKEND_OLD"   # no copy yet: the source itself
    copy = b.workspace.source
    shutil.copytree(tree, copy)
    (copy / "CMakeLists.txt").write_text(declaring("USE_BACKEND"))
    assert spelling() == "USE_BACKEND"       # the copy, as a patch stage left it
    (copy / "CMakeLists.txt").write_text(declaring("USE_BACKEND_OLD"))
    assert spelling() == "USE_BACKEND_OLD"   # rewritten again: read again
    assert b.resolved_features() == b.resolved_features()   # unchanged: the same answer (read again, no memo)
