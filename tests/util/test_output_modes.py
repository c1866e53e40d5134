"""Outputs honour the user's umask: a release folder, its SHA256SUMS, provenance and SBOMs, and a work
tree's state and libraries get the modes `mkdir` and `open` would give them, not mkstemp's 0600/0700."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.release_wheels import builder, two_entries
from tests.support.tools import ROOT
from toolkit.release.orchestrator import run_release
from toolkit.util.fsutil import atomic_write_text

UMASKS = [0o022, 0o002]


@pytest.fixture
def umask(request):
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def modes(top: Path) -> dict[str, int]:
    """Permission bits of top and everything under it (links skipped: their mode means nothing)."""
    found = {".": stat.S_IMODE(top.stat().st_mode)}
    for path in top.rglob("*"):
        if not path.is_symlink():
            found[path.relative_to(top).as_posix()] = stat.S_IMODE(path.stat().st_mode)
    return found


def assert_umask_modes(top: Path, mask: int) -> None:
    for rel, mode in modes(top).items():
        full = top / rel
        if full.is_dir():
            assert mode == 0o777 & ~mask, f"{full}: {mode:o}"
        else:
            # Plain files 0666, executables (shared libraries) 0777, less the umask.
            assert mode in (0o666 & ~mask, 0o777 & ~mask), f"{full}: {mode:o}"


@pytest.mark.parametrize("umask", UMASKS, indirect=True)
def test_shared_helpers_honour_umask(tmp_path, umask):
    from toolkit.util.fsutil import make_temp_dir

    atomic_write_text(tmp_path / "f.txt", "x")
    assert stat.S_IMODE((tmp_path / "f.txt").stat().st_mode) == 0o666 & ~umask
    atomic_write_text(tmp_path / "g.sh", "x", mode=0o755)
    assert stat.S_IMODE((tmp_path / "g.sh").stat().st_mode) == 0o755
    folder = make_temp_dir(tmp_path, "out")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o777 & ~umask
    assert folder.name.startswith(f".out.tmp-{os.getpid()}-")


@pytest.mark.parametrize("umask", UMASKS, indirect=True)
def test_release_folder_honours_umask(release_libs, tmp_path, umask):
    out = tmp_path / "dist"
    result = run_release(two_entries(), builder(release_libs), out, toolchain={})
    names = {p.name for p in out.iterdir()}
    assert {"SHA256SUMS", "provenance.json"} <= names and len(result.sboms) == 2
    assert_umask_modes(out, umask)


@pytest.mark.parametrize("umask", UMASKS, indirect=True)
def test_work_tree_honours_umask(tmp_path, umask):
    proc = subprocess.run([sys.executable, "-m", "toolkit", "build", "--build-dir", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    work = tmp_path / "amdgpu-ep" / "release"
    for part in ("state", "lib", "build-info.json"):
        assert_umask_modes(work / part, umask)
    # The patched copy keeps each source file's own mode; its folders are ours.
    for folder in [work / "source", *(p for p in (work / "source").rglob("*") if p.is_dir())]:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o777 & ~umask, folder
