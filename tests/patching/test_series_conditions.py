"""Series entries that say on which revisions they are needed (if-tree-has / unless-tree-has): read and checked
like every other field, kept when a series is rewritten, and obeyed by the build's patch stage, so one recipe
builds a revision that needs the patch and one where upstream made the fix its own way."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tools import ROOT
from toolkit.patching import SeriesError, load_series
from toolkit.patching.series import rewrite_series

PATCH = "--- a/tiny.c\n+++ b/tiny.c\n@@ -1 +1 @@\n-int tiny(void) { return 1; }\n+int tiny(void) { return 2; }\n"


def _series(folder: Path, fields: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "0001-two.patch").write_text(PATCH)
    sha = hashlib.sha256(PATCH.encode()).hexdigest()
    path = folder / "series"
    path.write_text(f"# tiny() must return 2.\n0001-two.patch phase=base sha256={sha} {fields}\n")
    return path


def test_conditions_are_read_judged_on_the_tree_and_kept_by_a_rewrite(tmp_path):
    series = load_series(_series(tmp_path / "p", 'unless-tree-has="tiny.c:fixed upstream" if-tree-has=tiny.c'))
    entry = series.entries[0]
    assert [(c.field, c.path, c.text) for c in entry.conditions] == [
        ("if-tree-has", "tiny.c", None), ("unless-tree-has", "tiny.c", "fixed upstream")]
    old, new, empty = tmp_path / "old", tmp_path / "new", tmp_path / "empty"
    for tree, text in ((old, "int tiny(void) { return 1; }\n"),
                       (new, "int tiny(void) { return 2; } /* fixed upstream */\n")):
        tree.mkdir()
        (tree / "tiny.c").write_text(text)
    empty.mkdir()
    assert series.for_tree(old)[0].entries == (entry,)
    assert series.for_tree(new)[1] == [(entry, "not needed on this revision: the tree has tiny.c holding "
                                               "'fixed upstream' (unless-tree-has)")]
    assert series.for_tree(empty)[1][0][1] == "not needed on this revision: the tree has no tiny.c (if-tree-has)"
    text = rewrite_series(series, {"0001-two.patch": "a" * 64}, set(), [])
    assert text.splitlines()[-1] == ("0001-two.patch phase=base sha256=" + "a" * 64
                                     + " if-tree-has=tiny.c unless-tree-has='tiny.c:fixed upstream'")
    (tmp_path / "p" / "series").write_text(text)
    assert load_series(tmp_path / "p" / "series").entries[0].conditions == entry.conditions


@pytest.mark.parametrize("fields, message", [
    ("if-tree-has=../x", "if-tree-has='../x' must be PATH or PATH:TEXT, PATH relative to the tree without '..'"),
    ("unless-tree-has=a.c:", "unless-tree-has='a.c:' must be PATH or PATH:TEXT"),
    ('unless-tree-has="a.c:open', "cannot split the entry into fields (No closing quotation)"),
])
def test_a_bad_condition_names_the_series_line(tmp_path, fields, message):
    with pytest.raises(SeriesError) as info:
        load_series(_series(tmp_path, fields))
    assert info.value.message.startswith(f"{tmp_path / 'series'}:2: ")
    assert message in info.value.message


RECIPE = """[recipe]
name = "tiny"

[build]
output_dir_define = "TINY_OUTPUT_DIR"

[[outputs]]
library = "tiny"

[patches]
series = "p/series"
"""
CMAKE = """cmake_minimum_required(VERSION 3.20)
project(tiny C)
add_library(tiny SHARED tiny.c)
set_target_properties(tiny PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${TINY_OUTPUT_DIR})
"""


def test_the_patch_stage_skips_a_patch_the_revision_does_not_need(tmp_path):
    recipe = tmp_path / "tiny.toml"
    recipe.write_text(RECIPE)
    _series(tmp_path / "p", 'unless-tree-has="tiny.c:fixed upstream"')
    revisions = {"old": "int tiny(void) { return 1; }\n", "new": "int tiny(void) { return 2; } /* fixed upstream */\n"}
    for name, text in revisions.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "CMakeLists.txt").write_text(CMAKE)
        (tmp_path / name / "tiny.c").write_text(text)

    def build(revision: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "toolkit", "build", "--recipe", str(recipe), "--source",
                               str(tmp_path / revision), "--variant", revision, "--build-dir", str(tmp_path / "b")],
                              cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})

    old = build("old")
    assert old.returncode == 0, old.stderr[-3000:]
    assert "0001-two.patch: applies cleanly" in old.stderr
    assert (tmp_path / "b/tiny/old/source/tiny.c").read_text() == "int tiny(void) { return 2; }\n"
    new = build("new")
    assert new.returncode == 0, new.stderr[-3000:]
    assert ("patch 0001-two.patch: not needed on this revision: the tree has tiny.c holding 'fixed upstream' "
            "(unless-tree-has)") in new.stderr
    assert (tmp_path / "b/tiny/new/source/tiny.c").read_text() == revisions["new"]
    # Without the condition the same revision is refused: the patch does not apply there.
    _series(tmp_path / "p", "")
    refused = build("new")
    assert refused.returncode == 2 and "0001-two.patch: FAILS" in refused.stderr


def test_the_real_series_serves_revisions_before_and_after_the_nchw_option(tmp_path):
    """recipes/umbrella-ep-real's series guards set_advance_backend_option in the form each revision writes
    it: 0005 where the tree sets convolution_layout (the pinned commit), 0006 where it does not yet."""
    from tests.support.tools import need, require_tool
    from toolkit import patching

    need("git")
    repo = ROOT.parent / "shared" / "upstream" / "mirror" / "github.com/onnxruntime/onnxruntime-ep-amdgpu.git"
    require_tool(repo.is_dir(), f"the shared upstream mirror is not at {repo}")
    series = load_series(ROOT / "patches" / "umbrella-ep-real" / "series")
    for rev, needs, skips in (("a2ea3b25", "0005", "0006"), ("a2ea3b25~3", "0006", "0005")):
        tree = tmp_path / rev
        tree.mkdir()
        subprocess.run(f"git -C {repo} archive {rev} | tar -x -C {tree}", shell=True, check=True)
        kept, skipped = series.for_tree(tree)
        assert [e.name[:4] for e, _ in skipped] == [skips]
        analyses = patching.analyze(kept, tree, "base", ["amdgpu", "migraphx", "hipdnn"])
        assert all(a.ok for a in analyses), patching.format_report(analyses)
        assert any(a.entry.name.startswith(needs) and a.status in ("clean", "offset") for a in analyses)
