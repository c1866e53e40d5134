"""A patch series never writes outside the tree, even through a symlink the tree itself holds.

Canaries outside the tree (a file and its folder) are compared by bytes, mode and mtime before and after.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.patches import make_patch, write_series
from toolkit.patching import PatchError, analyze, apply_series, load_series, patched_contents

OLD = 1_000_000_000


def _state(root: Path) -> dict[str, tuple]:
    out = {}
    for path in [root, *sorted(root.rglob("*"))]:
        st = os.lstat(path)
        data = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        out[str(path.relative_to(root))] = (st.st_mode, st.st_mtime_ns, data)
    return out


@pytest.fixture
def setup(tmp_path):
    """tree/lnk -> outside/dir (absolute), outside/dir/victim.txt; a patch editing lnk/victim.txt."""
    victim = "line 1\nline 2\nline 3\n"
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "dir" / "victim.txt").write_text(victim)
    os.chmod(outside / "dir" / "victim.txt", 0o600)
    for p in (outside / "dir" / "victim.txt", outside / "dir", outside):
        os.utime(p, (OLD, OLD))
    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "ok.c").write_text("int ok;\n")
    os.symlink(outside / "dir", tree / "lnk")
    patch_dir = tmp_path / "patches"
    make_patch(tmp_path, "0001-edit-through-link.patch", {"lnk/victim.txt": victim},
               {"lnk/victim.txt": victim.replace("line 2", "owned")})
    make_patch(tmp_path, "0002-new-file-through-link.patch", {}, {"lnk/new.txt": "new\n"})
    make_patch(tmp_path, "0000-fine.patch", {"src/ok.c": "int ok;\n"}, {"src/ok.c": "int ok = 1;\n"})
    return tmp_path, outside, tree, patch_dir


@pytest.mark.parametrize("patch", ["0001-edit-through-link.patch", "0002-new-file-through-link.patch"])
def test_patch_through_tree_symlink_is_refused(setup, patch):
    tmp_path, outside, tree, patch_dir = setup
    series = load_series(write_series(patch_dir, [("0000-fine.patch", "base", ""), (patch, "base", "")]))
    before, tree_before = _state(outside), _state(tree)
    for run in (lambda: apply_series(series, tree), lambda: analyze(series, tree),
                lambda: patched_contents(series, tree)):
        with pytest.raises(PatchError) as err:
            run()
        text = str(err.value)
        assert patch in text and "lnk/" in text and "outside the tree" in text
        assert _state(outside) == before and _state(tree) == tree_before


def test_cli_apply_through_symlink_is_an_error_line(setup):
    tmp_path, outside, tree, patch_dir = setup
    series = write_series(patch_dir, [("0001-edit-through-link.patch", "base", "")])
    before = _state(outside)
    proc = subprocess.run([sys.executable, "-m", "toolkit", "patch", "apply", str(series), str(tree)],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "error:" in proc.stderr and "0001-edit-through-link.patch" in proc.stderr
    assert "lnk/victim.txt" in proc.stderr and str(outside / "dir" / "victim.txt") in proc.stderr
    assert _state(outside) == before


def test_symlink_that_stays_inside_the_tree_still_patches(setup):
    tmp_path, outside, tree, patch_dir = setup
    os.symlink("src", tree / "alias")
    make_patch(tmp_path, "0003-through-inner-link.patch", {"alias/ok.c": "int ok;\n"},
               {"alias/ok.c": "int ok = 2;\n"})
    series = load_series(write_series(patch_dir, [("0003-through-inner-link.patch", "base", "")]))
    before = _state(outside)
    apply_series(series, tree)
    assert (tree / "src" / "ok.c").read_text() == "int ok = 2;\n"
    assert _state(outside) == before


def _mode_patch(patch_dir: Path, name: str, header: str, path: str = "src/new.c", body: str = "int n;") -> Path:
    patch_dir.mkdir(parents=True, exist_ok=True)
    text = (f"diff --git a/{path} b/{path}\n{header}\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+{body}\n")
    (patch_dir / name).write_text(text)
    return patch_dir / name


@pytest.mark.parametrize("header", ["new file mode 104755", "new file mode 102755", "new file mode 101644",
                                    "new file mode 120000", "new file mode 020644", "new file mode 060644"])
def test_patch_modes_other_than_644_and_755_are_refused_naming_patch_and_file(tmp_path, header):
    """setuid/setgid/sticky, a symlink, character and block devices: never applied, one error line. The link's
    target is a canary outside the tree: it must stay as it is and never be reached through the tree."""
    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "ok.c").write_text("int ok;\n")
    canary = tmp_path / "outside" / "canary.txt"
    canary.parent.mkdir()
    canary.write_text("CANARY-4c1f\n")
    patch_dir = tmp_path / "patches"
    _mode_patch(patch_dir, "0001-mode.patch", header, body=str(canary))
    series = write_series(patch_dir, [("0001-mode.patch", "base", "")])
    before, outside = _state(tree), _state(canary.parent)
    for _ in range(2):   # a second try must not say "already applied"
        proc = subprocess.run([sys.executable, "-m", "toolkit", "patch", "apply", str(series), str(tree)],
                              capture_output=True, text=True)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert "0001-mode.patch" in proc.stderr and "src/new.c" in proc.stderr
        assert f"mode {header.split()[-1].lstrip('0')} for src/new.c is refused" in proc.stderr
        assert "already applied" not in proc.stderr and "CANARY-4c1f" not in proc.stderr
        assert _state(tree) == before and not (tree / "src" / "new.c").exists()
        assert _state(canary.parent) == outside


def test_mode_change_to_setuid_on_an_existing_file_is_refused(tmp_path):
    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "ok.c").write_text("int ok;\n")
    patch_dir = tmp_path / "patches"
    patch_dir.mkdir()
    (patch_dir / "0001-chmod.patch").write_text("diff --git a/src/ok.c b/src/ok.c\nold mode 100644\nnew mode 104755\n")
    series = load_series(write_series(patch_dir, [("0001-chmod.patch", "base", "")]))
    before = _state(tree)
    with pytest.raises(PatchError) as err:
        apply_series(series, tree)
    assert "0001-chmod.patch" in str(err.value) and "mode 104755 for src/ok.c is refused" in str(err.value)
    assert _state(tree) == before


def test_plain_and_executable_modes_still_apply(tmp_path):
    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    patch_dir = tmp_path / "patches"
    _mode_patch(patch_dir, "0001-exec.patch", "new file mode 100755", "src/run.sh", "echo hi")
    _mode_patch(patch_dir, "0002-plain.patch", "new file mode 100644", "src/new.c")
    apply_series(load_series(write_series(patch_dir, [("0001-exec.patch", "base", ""),
                                                      ("0002-plain.patch", "base", "")])), tree)
    assert os.stat(tree / "src" / "run.sh").st_mode & 0o7777 == 0o755
    assert os.stat(tree / "src" / "new.c").st_mode & 0o7777 == 0o644
