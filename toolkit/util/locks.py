"""The toolkit's one lock: one process at a time on a thing (a work tree, a release output folder, a build
root, a download cache entry).

The lock is an flock on a lock file: by default `.<name>.lock` beside the folder or file it guards, so
removing the guarded thing itself does not drop it; the download cache names its own (`locks/<key>.lock`).
The kernel releases an flock when its holder dies, even by SIGKILL: a stale lock cannot exist. The holder
writes its pid and command line into the file so a second process can say whom it waits for, and removes
the file when it is done.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sys
import time
from pathlib import Path

from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import TMP_MARK

_UNKNOWN = "another process"
_NAME_POLLS, _NAME_POLL_S = 20, 0.05


def lock_path(target: Path) -> Path:
    """The default lock file of a folder or file: `.<name>.lock` beside it."""
    target = Path(target)
    return target.parent / f".{target.name}.lock"


def _holder(fd: int) -> str:
    """'pid N (command)' of the process holding the lock, from the file it wrote and /proc."""
    try:
        info = json.loads(os.pread(fd, 1 << 16, 0).decode("utf-8", errors="replace") or "{}")
    except ValueError:
        info = {}
    pid = info.get("pid")
    if not isinstance(pid, int):
        return _UNKNOWN
    command = info.get("command") or ""
    try:
        # The live command line wins: the file may lag behind a holder that has just taken the lock.
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        command = " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part) or command
    except OSError:
        pass
    return f"pid {pid} ({command})" if command else f"pid {pid}"


def holder_of(target: Path | str, *, file: Path | None = None) -> str | None:
    """Who holds the lock on `target` now ('pid N (command)'), or None when nobody does. Takes nothing and
    creates nothing: what a dry run asks."""
    path = Path(file) if file is not None else lock_path(Path(target))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _holder(fd)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


class WorkLock:
    """Exclusive lock on `target`, a folder or a file (or, with `file` given, anything the messages can
    name: a URL); `wait=False` fails at once, naming the holder, instead of waiting.

    `file` is the lock file (default: `lock_path(target)`, beside the target). A process that waits says
    so, naming the holder and the target.
    """

    def __init__(self, target: Path | str, wait: bool = True, *, file: Path | None = None):
        self.target = target
        self.path = Path(file) if file is not None else lock_path(Path(target))
        self.wait = wait
        self._fd: int | None = None

    def acquire(self) -> WorkLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
            try:
                self._lock(fd)
                # The file may have been removed and recreated while we waited: then our lock guards nothing.
                if os.path.exists(self.path) and os.stat(self.path).st_ino == os.fstat(fd).st_ino:
                    break
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)
        self._fd = fd
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "command": " ".join(sys.argv)}).encode(), 0)
        return self

    def _lock(self, fd: int) -> None:
        # The holder writes its name just after it locks: give it a moment before saying "another process".
        for _ in range(_NAME_POLLS):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                holder = _holder(fd)
            if holder != _UNKNOWN:
                break
            time.sleep(_NAME_POLL_S)
        if not self.wait:
            raise ToolkitError(f"{self.target} is in use by {holder}",
                               hint="wait for it to finish, or run again without --no-wait to wait for it")
        log.info(f"waiting for {holder}, which holds the lock on {self.target}")
        fcntl.flock(fd, fcntl.LOCK_EX)

    def release(self) -> None:
        if self._fd is not None:
            # Removed while still locked, so no lock file is left behind: a process waiting on this
            # inode finds it gone from the path once it gets the lock, and starts over (see acquire).
            try:
                if os.stat(self.path).st_ino == os.fstat(self._fd).st_ino:
                    os.unlink(self.path)
            except OSError:
                pass
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> WorkLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def remove_stale_temporaries(folder: Path, names: tuple[str, ...] | None = None) -> None:
    """Temporary folders killed runs left in `folder` (only those of `names`, when given); call only while
    holding the lock that guards them."""
    if not Path(folder).is_dir():
        return
    prefixes = tuple(f".{name}{TMP_MARK}" for name in names) if names is not None else None
    for entry in Path(folder).iterdir():
        ours = entry.name.startswith(prefixes) if prefixes is not None else (
            entry.name.startswith(".") and TMP_MARK in entry.name)
        if ours and entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
