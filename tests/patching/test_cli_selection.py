"""`python -m toolkit patch check|apply|refresh` choose the patches the build's patch stage chooses on the same
tree: the series' revision conditions (if-tree-has, unless-tree-has) judged on TREE, each patch one leaves out
named with why, and with `--recipe` the features the build would enable. Real trees, real patches, the real
command line; what the build would choose comes from the engine itself (a dry run's Build)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.patches import AFTER, BASE, edited, hashes, make_patch, write_series, write_tree
from tests.support.real_umbrella_support import MIRROR
from tests.support.tools import ROOT, require_tool
from toolkit.pipeline.adapters import derive
from toolkit.pipeline.build import prepared
from toolkit.pipeline.options import BuildOptions

FIXED = edited(BASE, "int line30 = 30;\n", "int line30 = 30; /* fixed upstream */\n")
NEW = edited(BASE, "int line5 = 5;\n", "int line5 = 50;\n")


def toolkit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolkit", *args], capture_output=True, text=True, cwd=ROOT)


def checked(stdout: str) -> list[str]:
    """The patches an analysis judged (those a condition or a feature left out say `not applied`)."""
    return [line.split(":")[0] for line in stdout.splitlines()
            if not line.startswith(" ") and ": not applied: " not in line]


@pytest.fixture
def revisions(tmp_path):
    """A series for two revisions of one tree. 0002 changes src/new.cc, which only the new revision has
    (if-tree-has); 0003 fixes b.cc, which the new revision fixed its own way (unless-tree-has). Each would
    fail on the revision that does not need it."""
    old = {"src/a.cc": BASE, "src/b.cc": BASE}
    make_patch(tmp_path, "0001-a.patch", old, {**old, "src/a.cc": AFTER})
    make_patch(tmp_path, "0002-new-file.patch", {"src/new.cc": BASE}, {"src/new.cc": NEW})
    p3 = make_patch(tmp_path, "0003-fix-b.patch", {"src/b.cc": BASE}, {"src/b.cc": AFTER})
    series = write_series(p3.parent, [("0001-a.patch", "base", ""),
                                      ("0002-new-file.patch", "base", "if-tree-has=src/new.cc"),
                                      ("0003-fix-b.patch", "base", 'unless-tree-has="src/b.cc:fixed upstream"')])
    before = write_tree(tmp_path / "before", old)
    after = write_tree(tmp_path / "after", {"src/a.cc": BASE, "src/b.cc": FIXED, "src/new.cc": BASE})
    return series, before, after


def test_check_leaves_out_a_patch_whose_if_tree_has_is_false(revisions):
    series, before, _ = revisions
    proc = toolkit("patch", "check", str(series), str(before))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "0001-a.patch: applies cleanly",
        "0002-new-file.patch: not applied: not needed on this revision: the tree has no src/new.cc (if-tree-has)",
        "0003-fix-b.patch: applies cleanly",
    ]


def test_check_leaves_out_a_patch_whose_unless_tree_has_is_true(revisions):
    series, _, after = revisions
    proc = toolkit("patch", "check", str(series), str(after))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "0001-a.patch: applies cleanly",
        "0002-new-file.patch: applies cleanly",
        "0003-fix-b.patch: not applied: not needed on this revision: the tree has src/b.cc holding "
        "'fixed upstream' (unless-tree-has)",
    ]


def test_a_patch_whose_condition_holds_is_checked(revisions, tmp_path):
    """new.cc is there, so 0002 is judged, and it fails where the file drifted: exit 1."""
    series, before, _ = revisions
    drifted = write_tree(tmp_path / "drifted", {"src/a.cc": BASE, "src/b.cc": BASE,
                                                "src/new.cc": BASE.replace("int line5 = 5;", "int five;")})
    proc = toolkit("patch", "check", str(series), str(drifted))
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0] == "0001-a.patch: applies cleanly"
    assert "0002-new-file.patch: FAILS: src/new.cc hunk #1" in proc.stdout
    assert "0003-fix-b.patch: applies cleanly" in proc.stdout.splitlines()


def test_apply_and_refresh_leave_out_what_the_tree_does_not_need(revisions, tmp_path):
    series, before, _ = revisions
    copy = write_tree(tmp_path / "copy", {"src/a.cc": BASE, "src/b.cc": BASE})
    proc = toolkit("patch", "apply", str(series), str(copy))
    assert proc.returncode == 0, proc.stderr
    assert checked(proc.stdout) == ["0001-a.patch", "0003-fix-b.patch"]
    assert "0002-new-file.patch: not applied: not needed on this revision" in proc.stdout
    assert (copy / "src/a.cc").read_text() == AFTER and (copy / "src/b.cc").read_text() == AFTER
    assert not (copy / "src/new.cc").exists()
    # Refresh judges the conditions on PRISTINE: 0002 is left as it is, the edit goes into 0003.
    (copy / "src/b.cc").write_text(edited(AFTER, "int line2 = 2;\n", "int line2 = 22;\n"))
    kept = (series.parent / "0002-new-file.patch").read_bytes()
    proc = toolkit("patch", "refresh", str(series), str(before), str(copy))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["0001-a.patch: unchanged", "0003-fix-b.patch: rewritten (src/b.cc)"]
    assert "0002-new-file.patch: not applied: not needed on this revision" in proc.stderr
    assert (series.parent / "0002-new-file.patch").read_bytes() == kept
    fresh = write_tree(tmp_path / "fresh", {"src/a.cc": BASE, "src/b.cc": BASE})
    assert toolkit("patch", "apply", str(series), str(fresh)).returncode == 0
    assert hashes(fresh) == hashes(copy)


def test_refresh_numbers_a_new_patch_after_those_the_tree_does_not_need(revisions, tmp_path):
    """On the new revision 0003 is left out, yet a patch for edits no patch touched must not be a second 0003."""
    series, _, after = revisions
    copy = write_tree(tmp_path / "copy", {"src/a.cc": BASE, "src/b.cc": FIXED, "src/new.cc": BASE})
    assert toolkit("patch", "apply", str(series), str(copy)).returncode == 0
    (copy / "src/extra.cc").write_text("int extra;\n")
    proc = toolkit("patch", "refresh", str(series), str(after), str(copy))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "0004-refresh-changes.patch: added (src/extra.cc); say why it exists in " \
                                           "the series"
    text = series.read_text()
    assert "0003-fix-b.patch phase=base" in text and "\n0004-refresh-changes.patch phase=base" in text


# -- features from a recipe -------------------------------------------------------------------------------

RECIPE = """
[recipe]
name = "tiny"

[features.migraphx]
summary = "on by default"
default = true
define = "USE_MIGRAPHX"

[features.hipdnn]
summary = "off by default"
default = false
define = "USE_HIPDNN"

[patches]
series = "patches/series"

[[outputs]]
library = "tiny"
"""


@pytest.fixture
def recipe(tmp_path):
    """0001 when=migraphx (on by default), 0002 when=hipdnn (off), 0003 when=!migraphx, 0004 always but only
    where the tree has src/new.cc."""
    tree = write_tree(tmp_path / "tree", {f"src/{n}.cc": BASE for n in "abc"})
    for number, name in enumerate("abc", start=1):
        make_patch(tmp_path, f"000{number}-{name}.patch", {f"src/{name}.cc": BASE}, {f"src/{name}.cc": AFTER})
    p4 = make_patch(tmp_path, "0004-new.patch", {"src/new.cc": BASE}, {"src/new.cc": NEW})
    write_series(p4.parent, [("0001-a.patch", "base", "when=migraphx"), ("0002-b.patch", "base", "when=hipdnn"),
                             ("0003-c.patch", "base", "when=!migraphx"),
                             ("0004-new.patch", "base", "if-tree-has=src/new.cc")])
    path = tmp_path / "tiny.toml"
    path.write_text(RECIPE)
    return path, tree


def build_selection(recipe: Path, tree: Path, build_folder: Path, with_: tuple[str, ...] = (),
                    without: tuple[str, ...] = ()) -> list[str]:
    """The patches the build's patch stage would apply to `tree` (`build --source TREE --dry-run`)."""
    with prepared(BuildOptions(recipe=str(recipe), source=str(tree), with_features=with_,
                               without_features=without, build_folder=build_folder, dry_run=True)) as b:
        return [e.name for e in derive.active_patches(b, "base")]


@pytest.mark.parametrize(("flags", "with_", "without", "expected"), [
    ((), (), (), ["0001-a.patch"]),
    (("--with-hipdnn",), ("hipdnn",), (), ["0001-a.patch", "0002-b.patch"]),
    (("--with", "hipdnn", "--without", "migraphx"), ("hipdnn",), ("migraphx",), ["0002-b.patch", "0003-c.patch"]),
])
def test_recipe_features_choose_the_patches_the_build_chooses(recipe, tmp_path, flags, with_, without, expected):
    path, tree = recipe
    proc = toolkit("patch", "check", "--recipe", str(path), *flags, str(tree))  # SERIES: the recipe's
    assert proc.returncode == 0, proc.stderr
    assert checked(proc.stdout) == expected
    assert checked(proc.stdout) == build_selection(path, tree, tmp_path / "build", with_, without)
    assert "0004-new.patch: not applied: not needed on this revision: the tree has no src/new.cc" in proc.stdout
    # --recipe and the features may come before the ACTION too, as the recipe mode takes them.
    before = toolkit("patch", "--recipe", str(path), *flags, "check", str(tree))
    assert before.returncode == 0, before.stderr
    assert before.stdout == proc.stdout


def test_recipe_errors_are_one_line(recipe, tmp_path):
    path, tree = recipe
    series = path.parent / "patches" / "series"
    proc = toolkit("patch", "check", "--recipe", str(path), "--with", "nope", str(tree))
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: unknown feature 'nope' for recipe 'tiny'")
    proc = toolkit("patch", "check", "--without", "migraphx", str(series), str(tree))
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: patch check: --without migraphx needs --recipe")
    proc = toolkit("patch", "check", str(tree))
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: patch check: no SERIES given\n  hint: pass the series file")


def test_partial_apply_names_the_refresh_that_chooses_the_same_patches(recipe, tmp_path):
    path, tree = recipe
    (tree / "src/b.cc").write_text(BASE.replace("int line30 = 30;", "int thirty;"))
    proc = toolkit("patch", "apply", "--partial", "--recipe", str(path), "--with-hipdnn", str(tree))
    assert proc.returncode == 1
    assert (f"run `.nox/toolkit/bin/python -m toolkit patch refresh --recipe {path} --with-hipdnn PRISTINE "
            f"{tree}`") in proc.stderr


# -- AMD's real tree ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("flags", "expected"), [
    ((), ["0001", "0002", "0004", "0005"]),
    (("--with-hipdnn",), ["0001", "0002", "0003", "0004", "0005"]),
])
def test_real_tree_check_chooses_the_patches_the_build_applies(tmp_path, flags, expected):
    """The pinned umbrella tree has the NCHW option, so 0006 (for older revisions) is left out, as the build
    leaves it out; before the fix the command checked it and reported it FAILS."""
    from toolkit.sources.extract import extract_archive

    archive = MIRROR / ("github.com/onnxruntime/onnxruntime-ep-amdgpu/archive/"
                        "a2ea3b25f420c5eb8d25edc366fbc17d6de4fe22.tar.gz")
    require_tool(archive.is_file(), f"the upstream mirror does not hold {archive}")
    tree = extract_archive(archive, tmp_path / "amdgpu-ep")
    proc = toolkit("patch", "check", "--recipe", "umbrella-ep-real", *flags, str(tree))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [name[:4] for name in checked(proc.stdout)] == expected
    recipe = ROOT / "recipes" / "umbrella-ep-real.toml"
    with_ = tuple(f.removeprefix("--with-") for f in flags)
    assert checked(proc.stdout) == build_selection(recipe, tree, tmp_path / "build", with_)
    assert ("0006-guard-advance-backend-option-before-nchw.patch: not applied: not needed on this revision: the "
            "tree has src/migraphx/mgx_ep.cc holding 'convolution_layout' (unless-tree-has)") in proc.stdout
