"""Applying real patches (made by GNU diff and git) to real trees: every case of the analysis.

Each case asserts the exact analysis line, the message, the resulting bytes, and after any failure that
the tree is byte for byte what it was (hash of every file, .git included). GNU patch is run in dry-run
mode on the same inputs to show it agrees with the analysis where the two tools should agree.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.patches import AFTER, BASE, edited, hashes, make_patch, write_series, write_tree
from tests.support.tools import need
from toolkit.patching import PatchError, analyze, apply_series, load_series, patched_contents
from toolkit.patching import apply as apply_mod
from toolkit.patching.analysis import JOURNAL


def _need(tool: str) -> None:
    need(tool)


def gnu_dry_run(patch: Path, tree: Path, *extra: str) -> subprocess.CompletedProcess:
    _need("patch")
    return subprocess.run(["patch", "-p1", "--dry-run", "-f", *extra, "-i", str(patch), "-d", str(tree)],
                          capture_output=True, text=True)


@pytest.fixture
def one(tmp_path):
    """A two-hunk patch to src/a.cc, its series, and a fresh tree to apply it to."""
    patch = make_patch(tmp_path, "0001-fix.patch", {"src/a.cc": BASE}, {"src/a.cc": AFTER})
    series = write_series(patch.parent, [("0001-fix.patch", "base", "")])

    def tree(content: str | bytes = BASE, extra: dict | None = None) -> Path:
        root = tmp_path / "tree"
        shutil.rmtree(root, ignore_errors=True)
        return write_tree(root, {"src/a.cc": content, **(extra or {})})
    return load_series(series), patch, tree


def failing_apply(series, tree: Path, **kw) -> str:
    before = hashes(tree)
    with pytest.raises(PatchError) as info:
        apply_series(series, tree, "base", **kw)
    assert hashes(tree) == before, "a failed apply changed the tree"
    return str(info.value)


def test_clean(one):
    series, patch, tree = one
    root = tree()
    [a] = analyze(series, root, "base")
    assert a.line == "0001-fix.patch: applies cleanly"
    assert a.ok and a.details == []
    proc = gnu_dry_run(patch, root)
    assert proc.returncode == 0 and "offset" not in proc.stdout and "fuzz" not in proc.stdout
    assert patched_contents(series, root, "base") == {"src/a.cc": AFTER.encode()}
    assert sorted(hashes(root)) == ["src/a.cc"] and (root / "src/a.cc").read_text() == BASE
    [a] = apply_series(series, root, "base")
    assert a.status == "clean" and str(a) == "0001-fix.patch: applies cleanly"
    assert (root / "src/a.cc").read_text() == AFTER
    assert not (root / JOURNAL).exists()
    assert sorted(hashes(root)) == ["src/a.cc"]  # no temporary files left


def test_offset(one):
    series, patch, tree = one
    root = tree("// one\n// two\n// three\n" + BASE)
    [a] = analyze(series, root, "base")
    assert a.line == "0001-fix.patch: applies with offset +3 (src/a.cc hunk #1), +3 (src/a.cc hunk #2)"
    proc = gnu_dry_run(patch, root)
    assert "Hunk #1 succeeded at 10 (offset 3 lines)" in proc.stdout
    assert "Hunk #2 succeeded at 30 (offset 3 lines)" in proc.stdout
    apply_series(series, root, "base")
    assert (root / "src/a.cc").read_text() == "// one\n// two\n// three\n" + AFTER


def test_negative_offset(one):
    series, _, tree = one
    root = tree(BASE.replace("int line1 = 1;\nint line2 = 2;\n", ""))
    [a] = analyze(series, root, "base")
    assert a.line == "0001-fix.patch: applies with offset -2 (src/a.cc hunk #1), -2 (src/a.cc hunk #2)"


def test_fuzz(one):
    series, patch, tree = one
    drifted = edited(BASE, "int line7 = 7;\n", "int line7 = 7; // drifted\n")
    root = tree(drifted)
    [a] = analyze(series, root, "base")
    assert a.line == "0001-fix.patch: applies with fuzz 1 (src/a.cc hunk #1)"
    proc = gnu_dry_run(patch, root)
    assert "Hunk #1 succeeded at 7 with fuzz 1." in proc.stdout
    # With fuzz forbidden the same patch fails, saying why, and nothing is written.
    message = failing_apply(series, root, max_fuzz=0)
    assert "0001-fix.patch: FAILS: src/a.cc hunk #1 @@ -7,7 +7,7 @@" in message
    assert "it would apply with fuzz 1 at line 8, but at most fuzz 0 is allowed" in message
    apply_series(series, root, "base")
    assert (root / "src/a.cc").read_text() == edited(AFTER, "int line7 = 7;\n", "int line7 = 7; // drifted\n")


def test_already_applied(one):
    series, patch, tree = one
    root = tree(AFTER)
    before = hashes(root)
    [a] = analyze(series, root, "base")
    assert a.line == "0001-fix.patch: already applied, skipping"
    assert gnu_dry_run(patch, root).returncode != 0
    assert gnu_dry_run(patch, root, "-R").returncode == 0  # GNU patch agrees: it reverses cleanly
    [a] = apply_series(series, root, "base")
    assert a.status == "applied" and a.ok
    assert hashes(root) == before


def test_partly_applied(one):
    series, _, tree = one
    root = tree(edited(BASE, "int line10 = 10;\n", "int line10 = 100;\n"))
    [a] = analyze(series, root, "base")
    assert a.line == ("0001-fix.patch: FAILS: partly applied: src/a.cc hunk #1 already in the tree, "
                      "src/a.cc hunk #2 not")
    assert a.details[-1].startswith("what to do: the tree holds part of this patch. Start again from a "
                                    "pristine copy of the source")
    message = failing_apply(series, root)
    assert str(series.entries[0].path) in message


def test_context_drifted(one):
    series, patch, tree = one
    drifted = edited(BASE, "int line30 = 30;\n", "int line30 = 31;\n")
    root = tree(drifted)
    [a] = analyze(series, root, "base")
    assert a.line == "0001-fix.patch: FAILS: src/a.cc hunk #2 @@ -27,7 +27,7 @@"
    assert a.details == [
        f"patch file: {patch}",
        "src/a.cc hunk #2 @@ -27,7 +27,7 @@ (line 13 of the patch) does not apply",
        f"source file: {root / 'src/a.cc'}",
        "the hunk expected (lines 27-33 of the original):",
        "    int line27 = 27;",
        "    int line28 = 28;",
        "    int line29 = 29;",
        "  - int line30 = 30;",
        "    int line31 = 31;",
        "    int line32 = 32;",
        "    int line33 = 33;",
        "found near there (lines 27-33 of src/a.cc):",
        "    27| int line27 = 27;",
        "    28| int line28 = 28;",
        "    29| int line29 = 29;",
        "  ! 30| int line30 = 31;",
        "    31| int line31 = 31;",
        "    32| int line32 = 32;",
        "    33| int line33 = 33;",
        "first difference at line 30: expected 'int line30 = 30;', found 'int line30 = 31;'",
        "what to do: the source changed under this patch. Refresh it: on a copy of the pristine source run "
        "`.nox/toolkit/bin/python -m toolkit patch apply --partial --recipe NAME COPY` (with the build's "
        "--with/--without, so the same patches are chosen), make this hunk's change by hand, then run "
        "`.nox/toolkit/bin/python -m toolkit patch refresh --recipe NAME PRISTINE COPY` with the same options (in a "
        "recipe's work tree: `nox -s patch -- --refresh`), which rewrites the patch and its checksum. If upstream "
        "already made this change, drop the patch from the series.",
    ]
    assert "Hunk #2 FAILED at 27." in gnu_dry_run(patch, root).stdout
    with pytest.raises(PatchError):
        patched_contents(series, root, "base")
    message = failing_apply(series, root)
    # The error names the patch file and the source file, for `nox -s build` to show as is.
    assert message.startswith(f"patch series {series.path} (phase base) does not apply to {root}: "
                              f"1 of 1 patches fail ({patch}); the tree was not changed\n")
    assert f"source file: {root / 'src/a.cc'}" in message


def test_file_renamed(one):
    series, _, tree = one
    root = tree()
    (root / "src/legacy").mkdir()
    os.rename(root / "src/a.cc", root / "src/legacy/a.cc")
    [a] = analyze(series, root, "base")
    assert a.line == "0001-fix.patch: FAILS: src/a.cc: file not found (renamed or deleted in this source?)"
    assert "a file with that name exists at: src/legacy/a.cc" in a.details
    assert a.details[-1] == ("what to do: if the file moved, fix the paths in the patch and refresh it; "
                             "if the code is gone upstream, drop the patch from the series")
    message = failing_apply(series, root)
    assert f"source file: {root / 'src/a.cc'} (missing)" in message


def test_file_missing(one):
    series, _, tree = one
    root = tree(extra={"README": "x\n"})
    (root / "src/a.cc").unlink()
    [a] = analyze(series, root, "base")
    assert a.line == "0001-fix.patch: FAILS: src/a.cc: file not found (renamed or deleted in this source?)"
    assert not any(d.startswith("a file with that name") for d in a.details)
    failing_apply(series, root)


def test_changed_patch_file_is_a_checksum_error(one):
    series, patch, tree = one
    root = tree()
    patch.write_bytes(patch.read_bytes().replace(b"+int line10 = 100;", b"+int line10 = 101;"))
    actual = hashlib.sha256(patch.read_bytes()).hexdigest()
    [a] = analyze(series, root, "base")
    assert a.line == "0001-fix.patch: CHECKSUM MISMATCH: the patch file changed"
    assert a.details[0] == (f"sha256 of {patch} is {actual}, but {series.path}:2 records "
                            f"{series.entries[0].sha256}: the patch file changed since the series was written")
    assert a.details[1].startswith("what to do: if the change is intended, run `nox -s patch -- --refresh`")
    message = failing_apply(series, root)
    assert str(patch) in message


def test_crlf_file_with_lf_patch_keeps_crlf(one):
    series, patch, tree = one
    root = tree(BASE.replace("\n", "\r\n").encode())
    [a] = analyze(series, root, "base")
    assert a.line == ("0001-fix.patch: applies cleanly [src/a.cc: CRLF file, LF patch: the file keeps its "
                      "CRLF line endings]")
    # GNU patch, by contrast, refuses this without --binary tricks: the case is ours to decide.
    assert gnu_dry_run(patch, root).returncode != 0
    apply_series(series, root, "base")
    assert (root / "src/a.cc").read_bytes() == AFTER.replace("\n", "\r\n").encode()


def test_crlf_patch_on_crlf_file(tmp_path):
    before = {"win.c": BASE.replace("\n", "\r\n").encode()}
    after = {"win.c": AFTER.replace("\n", "\r\n").encode()}
    patch = make_patch(tmp_path, "0001-crlf.patch", before, after)
    assert b"\r\n" in patch.read_bytes()
    series = load_series(write_series(patch.parent, [("0001-crlf.patch", "base", "")]))
    root = write_tree(tmp_path / "tree", before)
    [a] = analyze(series, root, "base")
    assert a.line == "0001-crlf.patch: applies cleanly"
    assert gnu_dry_run(patch, root).returncode == 0
    apply_series(series, root, "base")
    assert (root / "win.c").read_bytes() == after["win.c"]
    # And the CRLF patch on an LF copy of the file keeps LF.
    lf = write_tree(tmp_path / "lf", {"win.c": BASE})
    [a] = analyze(series, lf, "base")
    assert a.line == "0001-crlf.patch: applies cleanly [win.c: LF file, CRLF patch: the file keeps its LF line endings]"
    apply_series(series, lf, "base")
    assert (lf / "win.c").read_text() == AFTER


def test_whitespace_is_content(one):
    series, _, tree = one
    root = tree(edited(BASE, "int line30 = 30;\n", "int line30 = 30; \n"))
    [a] = analyze(series, root, "base")
    assert a.line == "0001-fix.patch: FAILS: src/a.cc hunk #2 @@ -27,7 +27,7 @@"
    assert "first difference at line 30: expected 'int line30 = 30;', found 'int line30 = 30; '" in a.details


def test_create_delete_mode_and_no_newline(tmp_path):
    before = {"keep.txt": "a\nb\nno newline", "gone.txt": "bye\n"}
    after = {"keep.txt": "a\nB\nno newline either", "new/dir/tool.sh": "#!/bin/sh\necho hi\n"}
    patch = make_patch(tmp_path, "0001-files.patch", before, after)
    series = load_series(write_series(patch.parent, [("0001-files.patch", "base", "")]))
    root = write_tree(tmp_path / "tree", before)
    [a] = analyze(series, root, "base")
    assert a.line == "0001-files.patch: applies cleanly"
    apply_series(series, root, "base")
    assert (root / "keep.txt").read_bytes() == b"a\nB\nno newline either"
    assert (root / "new/dir/tool.sh").read_text() == after["new/dir/tool.sh"]
    assert not (root / "gone.txt").exists()
    [a] = analyze(series, root, "base")
    assert a.line == "0001-files.patch: already applied, skipping"


def test_git_patch_with_modes_on_a_git_tree(tmp_path):
    """A `git format-patch` patch (mail header, new file mode 100755, rename) on a real git checkout."""
    _need("git")
    repo = write_tree(tmp_path / "repo", {"src/a.cc": BASE, "old_name.txt": "same\n"})
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}

    def git(*args: str, cwd: Path = repo) -> str:
        return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "base")
    (repo / "src/a.cc").write_text(AFTER)
    (repo / "run.sh").write_text("#!/bin/sh\nexit 0\n")
    (repo / "run.sh").chmod(0o755)
    git("mv", "old_name.txt", "new_name.txt")
    git("add", "-A")
    git("commit", "-qm", "Change things\n\nA message that must survive refresh.")
    patch_dir = tmp_path / "patches"
    patch_dir.mkdir()
    git("format-patch", "-1", "-M", "-o", str(patch_dir))
    [made] = patch_dir.glob("*.patch")
    made.rename(patch_dir / "0001-change.patch")
    assert b"rename from old_name.txt" in (patch_dir / "0001-change.patch").read_bytes()
    series = load_series(write_series(patch_dir, [("0001-change.patch", "base", "")]))
    git("checkout", "-q", "HEAD~1")
    git_before = hashes(repo / ".git")
    # git itself agrees the patch applies here.
    git("apply", "--check", str(patch_dir / "0001-change.patch"))
    [a] = analyze(series, repo, "base")
    assert a.line == "0001-change.patch: applies cleanly"
    apply_series(series, repo, "base")
    assert (repo / "src/a.cc").read_text() == AFTER
    assert (repo / "new_name.txt").read_text() == "same\n" and not (repo / "old_name.txt").exists()
    assert os.access(repo / "run.sh", os.X_OK)
    assert hashes(repo / ".git") == git_before  # .git is never touched
    assert sorted(git("status", "--porcelain", "--untracked-files=all").splitlines()) == [
        " D old_name.txt", " M src/a.cc", "?? new_name.txt", "?? run.sh"]
    [a] = analyze(series, repo, "base")
    assert a.line == "0001-change.patch: already applied, skipping"


def test_all_or_nothing_across_patches(tmp_path):
    """Patch 1 would apply, patch 2 fails: nothing is written, and the error names patch 2 and its file."""
    p1 = make_patch(tmp_path, "0001-ok.patch", {"a.txt": BASE}, {"a.txt": AFTER})
    p2 = make_patch(tmp_path, "0002-bad.patch", {"b.txt": BASE}, {"b.txt": AFTER})
    series = load_series(write_series(p1.parent, [("0001-ok.patch", "base", ""), ("0002-bad.patch", "base", "")]))
    root = write_tree(tmp_path / "tree", {"a.txt": BASE, "b.txt": BASE.replace("int line10 = 10;", "int ten;")})
    message = failing_apply(series, root)
    assert message.splitlines()[:2] == [
        f"patch series {series.path} (phase base) does not apply to {root}: 1 of 2 patches fail ({p2}); "
        f"the tree was not changed",
        "0001-ok.patch: applies cleanly"]
    assert "0002-bad.patch: FAILS: b.txt hunk #1 @@ -7,7 +7,7 @@" in message
    assert f"source file: {root / 'b.txt'}" in message
    assert (root / "a.txt").read_text() == BASE


def test_patches_that_build_on_each_other(tmp_path):
    """Patch 2 changes lines patch 1 added: checked in order, in memory; re-running skips both."""
    mid = edited(BASE, "int line10 = 10;\n", "int line10 = 100;\n")
    final = edited(mid, "int line10 = 100;\n", "int line10 = 1000;\n")
    make_patch(tmp_path, "0001-a.patch", {"f.c": BASE}, {"f.c": mid})
    p2 = make_patch(tmp_path, "0002-b.patch", {"f.c": mid}, {"f.c": final})
    series = load_series(write_series(p2.parent, [("0001-a.patch", "base", ""), ("0002-b.patch", "base", "")]))
    root = write_tree(tmp_path / "tree", {"f.c": BASE})
    assert [a.line for a in analyze(series, root, "base")] == ["0001-a.patch: applies cleanly",
                                                                "0002-b.patch: applies cleanly"]
    apply_series(series, root, "base")
    assert (root / "f.c").read_text() == final
    assert [a.line for a in analyze(series, root, "base")] == ["0001-a.patch: already applied, skipping",
                                                                "0002-b.patch: already applied, skipping"]
    # When patch 1 drifts, patch 2 fails too, and its report says it may only be a consequence.
    drifted = write_tree(tmp_path / "drifted", {"f.c": BASE.replace("int line9 = 9;", "int nine;")})
    first, second = analyze(series, drifted, "base", max_fuzz=0)
    assert first.line == "0001-a.patch: FAILS: f.c hunk #1 @@ -7,7 +7,7 @@"
    assert second.line == "0002-b.patch: FAILS: f.c hunk #1 @@ -7,7 +7,7 @@"
    assert second.details[1] == ("note: 0001-a.patch failed before it and changes the same files; this failure "
                                 "may go once that one is fixed")


def test_phases_and_features(tmp_path):
    make_patch(tmp_path, "0001-base.patch", {"a.txt": BASE}, {"a.txt": AFTER})
    make_patch(tmp_path, "0002-hip.patch", {"b.txt": BASE}, {"b.txt": AFTER})
    p3 = make_patch(tmp_path, "0003-hipdnn.patch", {"c.txt": BASE}, {"c.txt": AFTER})
    series = load_series(write_series(p3.parent, [("0001-base.patch", "base", ""),
                                                  ("0002-hip.patch", "hipified", ""),
                                                  ("0003-hipdnn.patch", "hipified", "when=hipdnn")]))
    root = write_tree(tmp_path / "tree", {"a.txt": BASE, "b.txt": BASE, "c.txt": BASE})
    assert [a.line for a in analyze(series, root, "base")] == ["0001-base.patch: applies cleanly"]
    assert [a.line for a in analyze(series, root, "hipified")] == [
        "0002-hip.patch: applies cleanly", "0003-hipdnn.patch: not applied: needs when=hipdnn"]
    apply_series(series, root, "hipified")
    assert [(root / f).read_text() == AFTER for f in ("a.txt", "b.txt", "c.txt")] == [False, True, False]
    apply_series(series, root, "hipified", ["hipdnn"])
    assert (root / "c.txt").read_text() == AFTER


def test_strip_level_zero_is_detected(tmp_path):
    patch_dir = tmp_path / "patches"
    patch_dir.mkdir()
    (patch_dir / "0001-p0.patch").write_text(
        "--- src/x.txt\n+++ src/x.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n")
    series = load_series(write_series(patch_dir, [("0001-p0.patch", "base", "")]))
    root = write_tree(tmp_path / "tree", {"src/x.txt": "one\ntwo\n"})
    [a] = analyze(series, root, "base")
    assert a.line == "0001-p0.patch: applies cleanly [strip level 0]"
    apply_series(series, root, "base")
    assert (root / "src/x.txt").read_text() == "one\nTWO\n"


def test_a_well_formed_patch_on_a_tree_it_was_not_written_for_fails_on_the_tree_not_as_malformed(tmp_path):
    """Issue 35, item 9: the patch changes CMakeLists.txt at the top and two deeper ones; a different project has
    only a top CMakeLists.txt, which strip level 3 would find twice. The patch parses: the tree is what is wrong."""
    before = {"CMakeLists.txt": BASE, "src/one/CMakeLists.txt": BASE, "src/two/CMakeLists.txt": BASE}
    patch = make_patch(tmp_path, "0001-all.patch", before, {k: AFTER for k in before})
    series = load_series(write_series(patch.parent, [("0001-all.patch", "base", "")]))
    root = write_tree(tmp_path / "other", {"CMakeLists.txt": "project(other)\n"})
    [a] = analyze(series, root, "base")
    assert a.line == "0001-all.patch: FAILS: CMakeLists.txt hunk #1 @@ -7,7 +7,7 @@", a.line
    message = failing_apply(series, root)
    assert "MALFORMED" not in message and "regenerate the patch" not in message
    assert "src/one/CMakeLists.txt: file not found" in message


def test_malformed_patch(tmp_path):
    patch_dir = tmp_path / "patches"
    patch_dir.mkdir()
    (patch_dir / "0001-cut.patch").write_text("--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n one\n-two\n")
    series = load_series(write_series(patch_dir, [("0001-cut.patch", "base", "")]))
    root = write_tree(tmp_path / "tree", {"x": "one\ntwo\nthree\n"})
    [a] = analyze(series, root, "base")
    assert a.line == (f"0001-cut.patch: MALFORMED: {patch_dir / '0001-cut.patch'}: line 5: hunk at line 3 "
                      f"ends early: 1 old and 2 new lines missing (a truncated or hand-edited patch?)")
    failing_apply(series, root)


def test_path_escaping_the_tree_is_refused(tmp_path):
    patch_dir = tmp_path / "patches"
    patch_dir.mkdir()
    (patch_dir / "0001-evil.patch").write_text("--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n")
    series = load_series(write_series(patch_dir, [("0001-evil.patch", "base", "")]))
    root = write_tree(tmp_path / "tree", {"y": "a\n"})
    (tmp_path / "x").write_text("a\n")
    [a] = analyze(series, root, "base")
    assert a.status == "malformed" and "leaves the tree" in a.line
    failing_apply(series, root)
    assert (tmp_path / "x").read_text() == "a\n"


def test_interrupted_commit_is_rolled_forward(one, monkeypatch):
    series, _, tree = one
    root = tree(extra={"src/b.cc": BASE})
    make_patch(series.directory.parent, "0002-b.patch", {"src/b.cc": BASE}, {"src/b.cc": AFTER})
    series = load_series(write_series(series.directory, [("0001-fix.patch", "base", ""), ("0002-b.patch", "base", "")]))
    real_replace = os.replace
    calls = []

    def crash_on_second(src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise KeyboardInterrupt("simulated crash between two renames")
        real_replace(src, dst)
    monkeypatch.setattr(apply_mod.os, "replace", crash_on_second)
    with pytest.raises(KeyboardInterrupt):
        apply_series(series, root, "base")
    monkeypatch.setattr(apply_mod.os, "replace", real_replace)
    assert (root / JOURNAL).exists()
    with pytest.raises(PatchError, match="an earlier apply was interrupted"):
        analyze(series, root, "base")
    apply_series(series, root, "base")
    assert (root / "src/a.cc").read_text() == AFTER and (root / "src/b.cc").read_text() == AFTER
    assert sorted(hashes(root)) == ["src/a.cc", "src/b.cc"]


def test_interrupted_staging_is_rolled_back(one, monkeypatch):
    series, _, tree = one
    root = tree()
    before = hashes(root)

    real_fsync = os.fsync
    calls = []

    def crash(fd):
        calls.append(fd)
        if len(calls) == 2:  # the journal's fsync passes, the first staged file's does not
            raise KeyboardInterrupt("simulated crash while staging")
        real_fsync(fd)
    monkeypatch.setattr(apply_mod.os, "fsync", crash)
    with pytest.raises(KeyboardInterrupt):
        apply_series(series, root, "base")
    monkeypatch.undo()
    assert (root / JOURNAL).exists()
    assert apply_mod.recover(root) == "rolled back"
    assert hashes(root) == before


def test_changed_patch_file_of_a_disabled_patch_is_still_an_error(tmp_path):
    p = make_patch(tmp_path, "0001-h.patch", {"a": BASE}, {"a": AFTER})
    series = load_series(write_series(p.parent, [("0001-h.patch", "base", "when=hipdnn")]))
    root = write_tree(tmp_path / "tree", {"a": BASE})
    assert [a.line for a in analyze(series, root, "base")] == ["0001-h.patch: not applied: needs when=hipdnn"]
    p.write_bytes(p.read_bytes() + b" \n")
    assert [a.line for a in analyze(series, root, "base")] == [
        "0001-h.patch: CHECKSUM MISMATCH: the patch file changed"]
    failing_apply(series, root)
