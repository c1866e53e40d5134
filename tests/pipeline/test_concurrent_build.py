"""Two builds at once in one work tree: the second waits for the first (or fails at once with --no-wait),
and whatever the interleaving, the next plain build finds a complete, correct tree."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.release_wheels import builder, two_entries
from tests.support.tools import ROOT
from toolkit.binary.elf import read_elf
from toolkit.util.fsutil import tree_digest

ENTRY_POINTS = ["CreateEpFactories", "ReleaseEpFactory"]
ROUNDS = 20


def start(*args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "toolkit", *args], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def toolkit(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.fixture(scope="module")
def patched_digest(tmp_path_factory) -> str:
    """The digest of the sample as the series leaves it with the default features (patched here, apart)."""
    tree = tmp_path_factory.mktemp("expected") / "umbrella-ep"
    shutil.copytree(ROOT / "samples" / "umbrella-ep", tree)
    proc = toolkit("patch", "apply", str(ROOT / "patches" / "amdgpu-ep" / "series"), str(tree), "--phase", "base")
    assert proc.returncode == 0, proc.stderr
    return tree_digest(tree)


def assert_complete(work: Path, patched_digest: str) -> None:
    assert tree_digest(work / "source") == patched_digest
    libs = sorted(p.name for p in (work / "lib").iterdir())
    assert libs == ["libamdgpu-ep.so", "libmigraphx-backend.so"]
    for name in libs:
        assert sorted(read_elf(work / "lib" / name).defined) == ENTRY_POINTS, name


def test_two_builds_at_once_wait_for_each_other(tmp_path, patched_digest):
    root = tmp_path / "b"
    work = root / "amdgpu-ep" / "release"
    waited = 0
    for round_ in range(ROUNDS):
        # --force makes both runs rewrite the whole work tree (patch copy, configure, collect) every round.
        a = start("build", "--build-dir", str(root), "--force")
        b = start("build", "--build-dir", str(root), "--force")
        runs = {a.pid: a.communicate(timeout=120), b.pid: b.communicate(timeout=120)}
        for proc, other in ((a, b), (b, a)):
            out, err = runs[proc.pid]
            assert proc.returncode == 0, f"round {round_}: pid {proc.pid} failed:\n{err}"
            assert "Traceback" not in err, err
            if "waiting for" in err:
                assert f"pid {other.pid}" in err, err
                waited += 1
        after = toolkit("build", "--build-dir", str(root))
        assert after.returncode == 0, f"round {round_}: the plain build after failed:\n{after.stderr}"
        assert_complete(work, patched_digest)
    # Both start at once and the sample takes about a second: most rounds overlap.
    assert waited > 0
    # Temporary folders belong to a process and are gone once it is.
    assert [p.name for p in work.iterdir() if "tmp" in p.name] == []


def test_no_wait_fails_at_once_naming_the_holder(tmp_path):
    from toolkit.util.locks import WorkLock

    root = tmp_path / "b"
    work = root / "amdgpu-ep" / "release"
    with WorkLock(work, wait=False):
        started = time.monotonic()
        proc = toolkit("build", "--build-dir", str(root), "--no-wait")
        assert time.monotonic() - started < 30
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"error: {work} is in use by pid {os.getpid()}" in proc.stderr
    # The holder's command line, so the user knows what to wait for.
    assert "pytest" in proc.stderr or Path(sys.argv[0]).name in proc.stderr
    assert "without --no-wait" in proc.stderr
    assert not (work / "lib").exists()


def test_second_build_waits_then_runs(tmp_path, patched_digest):
    from toolkit.util.locks import WorkLock

    root = tmp_path / "b"
    work = root / "amdgpu-ep" / "release"
    # What a killed run left behind: its own temporary folder, removed by the next run holding the lock.
    stale = work / ".source.tmp-1-abcd"
    (stale / "src").mkdir(parents=True)
    lock = WorkLock(work, wait=False)
    lock.acquire()
    try:
        proc = start("build", "--build-dir", str(root))
        deadline = time.monotonic() + 60
        line = ""
        while "waiting for" not in line and time.monotonic() < deadline:
            line = proc.stderr.readline()
            assert line or proc.poll() is None, "the build ended instead of waiting"
        assert f"waiting for pid {os.getpid()}" in line, line
        assert str(work) in line
        time.sleep(0.5)
        assert proc.poll() is None, "the build went on while the lock was held"
        assert not (work / "lib").exists()
    finally:
        lock.release()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert_complete(work, patched_digest)
    assert not stale.exists()


def test_release_output_folder_is_locked(release_libs, tmp_path):
    from toolkit.release.orchestrator import run_release
    from toolkit.util.errors import ToolkitError
    from toolkit.util.locks import WorkLock

    out = tmp_path / "dist"
    with WorkLock(out, wait=False):
        with pytest.raises(ToolkitError, match=f"{out} is in use by pid {os.getpid()}"):
            run_release(two_entries(), builder(release_libs), out, toolchain={}, no_wait=True)
    assert not out.exists()
    # A killed release's staging folder goes; another output folder's stays.
    ours, theirs = tmp_path / ".dist.staging.tmp-1-abcd", tmp_path / ".dist2.staging.tmp-1-abcd"
    ours.mkdir()
    theirs.mkdir()
    run_release(two_entries(), builder(release_libs), out, toolchain={}, no_wait=True)
    assert (out / "SHA256SUMS").is_file()
    assert not ours.exists() and theirs.exists()
