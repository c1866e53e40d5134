"""File helpers every stage shares: atomic writes, content hashes, tree sync that keeps mtimes.

Why atomic: an interrupted run must never leave a half-written file that a later run takes as whole.
Why sync instead of copy: rewriting an unchanged file bumps its mtime and makes ninja rebuild it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

_CHUNK = 1 << 20
# A JSON object, as a record, cache or report file holds it: its values are whatever JSON holds.
JSON = dict[str, Any]
# Marks a per-process temporary folder: `.<name>.tmp-<pid>-<random>`, removed by the next run that holds the lock.
TMP_MARK = ".tmp-"


def current_umask() -> int:
    """The process umask, read without changing it (os.umask can only be read by setting it, which races
    with threads creating files)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def atomic_write_bytes(path: Path, data: bytes, mode: int | None = None) -> None:
    """Write to a temporary file beside `path`, flush it to disk, then rename it into place.

    Without `mode` the file gets what open() would give it (0666 less the umask), not mkstemp's 0600.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode if mode is not None else 0o666 & ~current_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str, mode: int | None = None) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), mode)


def read_json(path: Path) -> object:
    """A record file's JSON, or None where it is missing or unreadable (a cache or stamp is then simply absent:
    they are written with atomic_write_text, so a reader never sees half of one)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def keyed_record(store: Path, key: str) -> Path:
    """Where a record kept by content key (a sha256 in hex) lives in a store folder of the toolkit cache: one small
    JSON file each, in a subfolder per the key's first two characters."""
    return Path(store) / key[:2] / f"{key}.json"


def iter_files(root: Path, skip_dirs: Iterable[str] = (".git",)) -> Iterator[Path]:
    """Every regular file and symlink under root, relative to it, in a stable order."""
    root = Path(root)
    skip = set(skip_dirs)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in skip)
        base = Path(dirpath).relative_to(root)
        for name in sorted(filenames):
            yield base / name


def tree_digest(root: Path, skip_dirs: Iterable[str] = (".git",),
                include: Callable[[str], bool] | None = None) -> str:
    """A hash of every file's relative path, mode bit for execution and content.

    `include` (a posix relative path -> bool) limits it to the files it accepts: with it, a subset of a
    tree and the whole tree digest alike over the files both hold.
    """
    digest = hashlib.sha256()
    root = Path(root)
    for rel in iter_files(root, skip_dirs):
        if include is not None and not include(rel.as_posix()):
            continue
        full = root / rel
        digest.update(rel.as_posix().encode() + b"\0")
        if full.is_symlink():
            digest.update(b"link:" + os.readlink(full).encode() + b"\0")
            continue
        digest.update(b"x" if os.access(full, os.X_OK) else b"-")
        digest.update(sha256_file(full).encode() + b"\n")
    return digest.hexdigest()


def sync_tree(src: Path, dest: Path, skip_dirs: Iterable[str] = (".git",)) -> list[Path]:
    """Make dest hold exactly src's files, rewriting only files whose content differs.

    Returns the relative paths written. Files in dest that src lacks are removed.
    """
    src, dest = Path(src), Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    wanted = set()
    written: list[Path] = []
    for rel in iter_files(src, skip_dirs):
        wanted.add(rel)
        s, d = src / rel, dest / rel
        if s.is_symlink():
            target = os.readlink(s)
            if d.is_symlink() and os.readlink(d) == target:
                continue
            d.parent.mkdir(parents=True, exist_ok=True)
            if d.exists() or d.is_symlink():
                d.unlink()
            os.symlink(target, d)
            written.append(rel)
            continue
        data = s.read_bytes()
        mode = os.stat(s).st_mode & 0o777
        if d.is_file() and not d.is_symlink() and d.read_bytes() == data:
            if os.stat(d).st_mode & 0o777 != mode:
                os.chmod(d, mode)
            continue
        if d.is_symlink():
            d.unlink()
        atomic_write_bytes(d, data, mode)
        written.append(rel)
    for rel in list(iter_files(dest, skip_dirs)):
        if rel not in wanted:
            (dest / rel).unlink()
    _prune_empty_dirs(dest)
    return written


def _prune_empty_dirs(root: Path) -> None:
    for dirpath, _dirnames, _filenames in os.walk(root, topdown=False):
        p = Path(dirpath)
        if p != root and not any(p.iterdir()):
            p.rmdir()


def give_umask_mode(path: Path) -> None:
    """Give a file made under another umask (a tool run with a fixed one) the mode open() would give it."""
    os.chmod(path, 0o666 & ~current_umask())


def make_temp_dir(parent: Path, name: str) -> Path:
    """A temporary folder of this process in `parent`, to be renamed or synced into `name` when complete.

    Its mode is what mkdir would give (0777 less the umask), not mkdtemp's 0700, since it becomes an output.
    """
    parent = Path(parent)
    parent.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix=f".{name}{TMP_MARK}{os.getpid()}-", dir=parent))
    os.chmod(path, 0o777 & ~current_umask())
    return path


def replace_dir(tmp: Path, dest: Path) -> None:
    """Move a finished temporary directory into place, removing what was there."""
    dest = Path(dest)
    if dest.exists():
        old = dest.with_name(f".{dest.name}.old{TMP_MARK}{os.getpid()}")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(dest, old)
        os.replace(tmp, dest)
        shutil.rmtree(old, ignore_errors=True)
    else:
        dest.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp, dest)


def tree_usage(root: Path) -> tuple[int, int]:
    """How many files a tree holds (links and other non-folders included) and their bytes (a link's own size):
    what removing it removes. What vanishes or cannot be read meanwhile is not counted."""
    files = size = 0
    folders = [Path(root)]
    while folders:
        try:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            folders.append(Path(entry.path))
                        else:
                            files, size = files + 1, size + entry.stat(follow_symlinks=False).st_size
                    except OSError:
                        continue
        except OSError:
            continue
    return files, size
