"""Refresh round trips, and the `python -m toolkit patch` commands run as a user runs them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.patches import AFTER, BASE, edited, hashes, make_patch, write_series, write_tree
from tests.support.tools import ROOT
from toolkit.patching import PatchError, analyze, apply_series, load_series, refresh_series

TWO = {"src/a.cc": BASE, "src/b.cc": BASE, "README": "readme\n"}
MID = edited(BASE, "int line20 = 20;\n", "int line20 = 200;\n")


@pytest.fixture
def project(tmp_path):
    """Two patches: 0001 changes a.cc and b.cc, 0002 changes a.cc again (both touch a.cc)."""
    make_patch(tmp_path, "0001-first.patch", TWO, {**TWO, "src/a.cc": MID, "src/b.cc": AFTER})
    p2 = make_patch(tmp_path, "0002-second.patch", {"src/a.cc": MID},
                    {"src/a.cc": edited(MID, "int line35 = 35;\n", "int line35 = 350;\n")})
    series_path = write_series(p2.parent, [("0001-first.patch", "base", ""), ("0002-second.patch", "base", "")])
    pristine = write_tree(tmp_path / "pristine", TWO)
    work = tmp_path / "work"
    shutil.copytree(pristine, work)
    apply_series(load_series(series_path), work, "base")
    return series_path, pristine, work


def snapshot(patch_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(patch_dir.iterdir())}


def test_refresh_without_edits_changes_nothing(project):
    series_path, pristine, work = project
    before = snapshot(series_path.parent)
    result = refresh_series(load_series(series_path), pristine, work, "base")
    assert result.statuses == [("0001-first.patch", "unchanged"), ("0002-second.patch", "unchanged")]
    assert result.written == []
    assert snapshot(series_path.parent) == before


def test_refresh_folds_edits_into_the_right_patches(project, tmp_path):
    series_path, pristine, work = project
    # b.cc belongs to 0001 only; a.cc's last patch is 0002; README no patch touches.
    (work / "src/b.cc").write_text(edited(AFTER, "int line2 = 2;\n", "int line2 = 22;\n"))
    (work / "src/a.cc").write_text(edited((work / "src/a.cc").read_text(), "int line38 = 38;\n", ""))
    (work / "README").write_text("readme, edited\n")
    (work / "NEW.md").write_text("new\n")
    second_before = (series_path.parent / "0002-second.patch").read_bytes()
    result = refresh_series(load_series(series_path), pristine, work, "base")
    assert result.statuses == [
        ("0001-first.patch", "rewritten (src/a.cc, src/b.cc)"),
        ("0002-second.patch", "rewritten (src/a.cc)"),
        ("0003-refresh-changes.patch", "added (NEW.md, README); say why it exists in the series"),
    ]
    assert (series_path.parent / "0002-second.patch").read_bytes() != second_before
    series = load_series(series_path)  # the rewritten series is valid: checksums, why-comments
    assert [e.name for e in series.entries] == ["0001-first.patch", "0002-second.patch", "0003-refresh-changes.patch"]
    assert series.entries[2].why.startswith("Added by refresh: edits to NEW.md, README, which no patch touched.")
    fresh = tmp_path / "fresh"
    shutil.copytree(pristine, fresh)
    assert [a.line for a in apply_series(series, fresh, "base")] == [
        "0001-first.patch: applies cleanly", "0002-second.patch: applies cleanly",
        "0003-refresh-changes.patch: applies cleanly"]
    assert hashes(fresh) == hashes(work)
    # GNU patch applies the regenerated patches too.
    gnu = tmp_path / "gnu"
    shutil.copytree(pristine, gnu)
    for entry in series.entries:
        subprocess.run(["patch", "-p1", "-s", "-i", str(entry.path), "-d", str(gnu)], check=True)
    assert hashes(gnu) == hashes(work)


def test_refresh_an_edited_patched_file_round_trips(project, tmp_path):
    series_path, pristine, work = project
    (work / "src/b.cc").write_text(edited(AFTER, "int line2 = 2;\n", "int line2 = 22;\n"))
    refresh_series(load_series(series_path), pristine, work, "base")
    before = snapshot(series_path.parent)
    # A second refresh of the same edit is a no-op: the series is a fixed point.
    assert refresh_series(load_series(series_path), pristine, work, "base").written == []
    assert snapshot(series_path.parent) == before


def test_refresh_keeps_format_patch_message(tmp_path):
    patch_dir = tmp_path / "patches"
    patch_dir.mkdir()
    header = b"From 0 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] Keep me\n\nWhy this matters.\n---\n"
    (patch_dir / "0001-x.patch").write_bytes(header + b"--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
                                               b"-- \n2.39.2\n")
    series_path = write_series(patch_dir, [("0001-x.patch", "base", "")])
    pristine = write_tree(tmp_path / "pristine", {"x": "one\ntwo\n"})
    work = write_tree(tmp_path / "work", {"x": "one\nTWO!\n"})
    result = refresh_series(load_series(series_path), pristine, work, "base")
    assert result.statuses == [("0001-x.patch", "rewritten (x)")]
    assert (patch_dir / "0001-x.patch").read_bytes() == header + (
        b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO!\n")


def test_refresh_drops_a_patch_whose_change_is_gone(project, tmp_path):
    series_path, pristine, work = project
    (work / "src/a.cc").write_text(MID)  # undo 0002 by hand
    result = refresh_series(load_series(series_path), pristine, work, "base")
    assert result.statuses == [("0001-first.patch", "unchanged"),
                               ("0002-second.patch", "dropped from the series: the edited tree no longer has "
                                                     "any of its changes")]
    assert [e.name for e in load_series(series_path).entries] == ["0001-first.patch"]
    fresh = tmp_path / "fresh"
    shutil.copytree(pristine, fresh)
    apply_series(load_series(series_path), fresh, "base")
    assert hashes(fresh) == hashes(work)


def test_refresh_refuses_to_split_a_failing_patch(tmp_path):
    make_patch(tmp_path, "0001-a.patch", {"f": BASE}, {"f": MID})
    p2 = make_patch(tmp_path, "0002-b.patch", {"f": MID}, {"f": edited(MID, "int line35 = 35;\n", "x\n")})
    series_path = write_series(p2.parent, [("0001-a.patch", "base", ""), ("0002-b.patch", "base", "")])
    pristine = write_tree(tmp_path / "pristine", {"f": BASE.replace("int line20 = 20;", "int twenty;")})
    work = write_tree(tmp_path / "work", {"f": "anything\n"})
    before = snapshot(p2.parent)
    with pytest.raises(PatchError, match=r"cannot refresh .*0001-a.patch: it does not apply to .*/pristine/f, "
                                         r"and the later patch .*0002-b.patch changes that file too"):
        refresh_series(load_series(series_path), pristine, work, "base")
    assert snapshot(p2.parent) == before


# -- the command line -------------------------------------------------------------------------------------

def toolkit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolkit", *args], capture_output=True, text=True,
                          cwd=ROOT)


def test_cli_check_apply_refresh(project, tmp_path):
    series_path, pristine, work = project
    tree = tmp_path / "cli"
    shutil.copytree(pristine, tree)
    proc = toolkit("patch", "check", str(series_path), str(tree))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "0001-first.patch: applies cleanly\n0002-second.patch: applies cleanly\n"
    proc = toolkit("patch", "apply", str(series_path), str(tree), "--phase", "base")
    assert proc.returncode == 0, proc.stderr
    assert hashes(tree) == hashes(work)
    proc = toolkit("patch", "check", str(series_path), str(tree))
    assert proc.stdout.splitlines() == ["0001-first.patch: already applied, skipping",
                                        "0002-second.patch: already applied, skipping"]
    # Drift: check exits 1 for CI; apply exits 2 with the analysis, and changes nothing.
    drifted = tmp_path / "drifted"
    shutil.copytree(pristine, drifted)
    (drifted / "src/b.cc").write_text(BASE.replace("int line30 = 30;", "int line30 = -30;"))
    before = hashes(drifted)
    proc = toolkit("patch", "check", str(series_path), str(drifted))
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0] == "0001-first.patch: FAILS: src/b.cc hunk #2 @@ -27,7 +27,7 @@"
    proc = toolkit("patch", "apply", str(series_path), str(drifted))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: patch series {series_path} (phase all) does not apply to {drifted}")
    assert f"source file: {drifted / 'src/b.cc'}" in proc.stderr
    assert hashes(drifted) == before
    # Refresh from the CLI: fix the drifted tree by hand, then regenerate.
    (work / "src/b.cc").write_text(edited(AFTER, "int line2 = 2;\n", "int line2 = 22;\n"))
    proc = toolkit("patch", "refresh", str(series_path), str(pristine), str(work), "--dry-run")
    assert proc.returncode == 0 and "0001-first.patch: rewritten (src/a.cc, src/b.cc)" in proc.stdout
    assert analyze(load_series(series_path), pristine, "base")[0].line == "0001-first.patch: applies cleanly"
    proc = toolkit("patch", "refresh", str(series_path), str(pristine), str(work))
    assert proc.returncode == 0, proc.stderr
    assert "[toolkit] wrote" in proc.stderr


def test_cli_series_error_exits_2(tmp_path):
    (tmp_path / "series").write_text("0001-a.patch phase=base\n")
    proc = toolkit("patch", "check", str(tmp_path / "series"), str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {tmp_path / 'series'}:1: patch '0001-a.patch' has no comment")


def test_cli_features(tmp_path):
    p = make_patch(tmp_path, "0001-h.patch", {"a": BASE}, {"a": AFTER})
    series_path = write_series(p.parent, [("0001-h.patch", "hipified", "when=hipdnn")])
    tree = write_tree(tmp_path / "t", {"a": BASE})
    proc = toolkit("patch", "apply", str(series_path), str(tree), "--phase", "hipified")
    assert proc.stdout == "0001-h.patch: not applied: needs when=hipdnn\n"
    proc = toolkit("patch", "apply", str(series_path), str(tree), "--with", "hipdnn")
    assert proc.stdout == "0001-h.patch: applies cleanly\n" and (tree / "a").read_text() == AFTER


def test_refresh_workflow_after_upstream_drift(project, tmp_path):
    """Upstream moved on: 0001's hunk on b.cc no longer applies. Follow the 'what to do' of the
    analysis: apply --partial on a copy, finish the change by hand, refresh, and the new series
    applies cleanly to the new source."""
    series_path, _, _ = project
    upstream = write_tree(tmp_path / "upstream", {**TWO, "src/b.cc": BASE.replace("int line30 = 30;",
                                                                                  "int line30 = 30 /* v2 */;")})
    copy = tmp_path / "copy"
    shutil.copytree(upstream, copy)
    proc = toolkit("patch", "apply", "--partial", str(series_path), str(copy))
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0] == "0001-first.patch: FAILS: src/b.cc hunk #2 @@ -27,7 +27,7 @@"
    assert "is now partly patched (--partial)" in proc.stderr
    # Hunk #1 of b.cc and both patches' a.cc hunks are in; hunk #2 of b.cc is ours to redo by hand.
    text = (copy / "src/b.cc").read_text()
    assert "int line10 = 100;" in text and "int line30 = 30 /* v2 */;" in text
    (copy / "src/b.cc").write_text(text.replace("int line30 = 30 /* v2 */;", "long line30 = 30 /* v2 */;"))
    proc = toolkit("patch", "refresh", str(series_path), str(upstream), str(copy))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["0001-first.patch: rewritten (src/a.cc, src/b.cc)",
                                        "0002-second.patch: unchanged"]
    fresh = tmp_path / "fresh"
    shutil.copytree(upstream, fresh)
    proc = toolkit("patch", "apply", str(series_path), str(fresh))
    assert proc.returncode == 0, proc.stderr
    assert hashes(fresh) == hashes(copy)
