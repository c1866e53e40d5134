"""toolkit.util.locks.WorkLock, the toolkit's one lock: on a folder (lock file beside it) or with a lock file
of its own (the download cache's); a second process waits and names the holder, or with wait=False fails
at once naming it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from toolkit.sources.cache import Cache
from toolkit.util.errors import ToolkitError
from toolkit.util.locks import WorkLock, lock_path

ROOT = Path(__file__).resolve().parents[2]


def _other(target: str, file: str | None, wait: bool) -> subprocess.Popen:
    """A second process taking the same lock; prints 'got' once it holds it."""
    code = textwrap.dedent(f"""
        from toolkit.util.errors import ToolkitError
        from toolkit.util.locks import WorkLock
        try:
            with WorkLock({target!r}, wait={wait!r}, file={file!r}):
                print("got", flush=True)
        except ToolkitError as exc:
            print(f"error: {{exc}}", flush=True)
    """)
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_lock_file_beside_the_folder_is_gone_after_release(tmp_path):
    folder = tmp_path / "work"
    with WorkLock(folder) as lock:
        assert lock.path == lock_path(folder) == tmp_path / ".work.lock"
        assert lock.path.is_file()
    assert not lock.path.exists()
    assert list(tmp_path.iterdir()) == []


def test_second_process_with_no_wait_fails_at_once_naming_the_holder(tmp_path):
    folder = tmp_path / "work"
    with WorkLock(folder, wait=False):
        started = time.monotonic()
        out, err = _other(str(folder), None, wait=False).communicate(timeout=60)
        assert time.monotonic() - started < 30
    assert out.startswith(f"error: {folder} is in use by pid {os.getpid()} ("), out + err
    assert "without --no-wait" in out
    assert "got" not in out


def test_second_process_waits_naming_the_holder_then_gets_the_lock(tmp_path):
    lock_file = tmp_path / "locks" / "key.lock"
    url = "https://example.invalid/a.tar.gz"
    lock = WorkLock(url, file=lock_file).acquire()
    try:
        other = _other(url, str(lock_file), wait=True)
        line = other.stderr.readline()
        assert f"waiting for pid {os.getpid()} (" in line and f"which holds the lock on {url}" in line, line
        time.sleep(0.3)
        assert other.poll() is None, "the second process went on while the lock was held"
    finally:
        lock.release()
    out, err = other.communicate(timeout=60)
    assert other.returncode == 0 and out == "got\n", out + err
    assert not lock_file.exists()


def test_in_one_process_no_wait_names_this_process(tmp_path):
    with WorkLock(tmp_path / "x"):
        with pytest.raises(ToolkitError, match=f"{tmp_path / 'x'} is in use by pid {os.getpid()}"):
            WorkLock(tmp_path / "x", wait=False).acquire()


def test_the_download_cache_locks_with_the_same_lock(tmp_path):
    cache = Cache(tmp_path)
    lock = cache.lock("abc", "https://example.invalid/x")
    assert isinstance(lock, WorkLock) and lock.path == tmp_path / "locks" / "abc.lock"
    with lock:
        with pytest.raises(ToolkitError, match="https://example.invalid/x is in use by pid"):
            WorkLock("https://example.invalid/x", wait=False, file=tmp_path / "locks" / "abc.lock").acquire()
