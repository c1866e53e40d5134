"""A local bare repository that a copy left without its empty folders, read through a shadow repository.

git takes a folder for a repository only when it has HEAD, objects/ and refs/. A bare repository whose branches
are all in packed-refs has an empty refs/ tree, and copies that keep files but not empty folders (an artifact
store, some sync tools, a read-only snapshot) drop it: git then says "does not appear to be a git repository"
although every object and ref is there. Such a mirror is read through a shadow in the toolkit cache: a bare
repository of its own, with the mirror's HEAD and packed-refs and the mirror's objects as its alternates, so
nothing is copied or written where the mirror is. The shadow is made again when the mirror's refs change.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from toolkit.util import log
from toolkit.util.process import run_git

_REF_FILES = ("HEAD", "packed-refs")


def lacks_refs(path: Path) -> bool:
    """A folder with a bare repository's HEAD and objects/ but no refs/ folder."""
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and not (path / "refs").exists()


def readable(path: Path, cache_root: Path) -> Path:
    """`path` itself, or for a bare repository without refs/ the shadow that reads it (made once per refs)."""
    if not lacks_refs(path):
        return path
    path = path.resolve()
    refs = b"".join((path / name).read_bytes() for name in _REF_FILES if (path / name).is_file())
    key = hashlib.sha256(str(path).encode() + b"\0" + refs).hexdigest()[:16]
    shadow = cache_root / "git-shadows" / f"{path.name}-{key}"
    if shadow.is_dir():
        return shadow
    shadow.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{shadow.name}.", dir=shadow.parent))
    try:
        run_git(["init", "-q", "--bare"], (str(tmp),), f"git mirror {path}: making its shadow repository",
                cwd=shadow.parent)
        for name in _REF_FILES:
            if (path / name).is_file():
                shutil.copyfile(path / name, tmp / name)
        (tmp / "objects" / "info").mkdir(parents=True, exist_ok=True)
        (tmp / "objects" / "info" / "alternates").write_text(f"{path / 'objects'}\n")
        try:
            os.replace(tmp, shadow)
        except OSError:
            if not shadow.is_dir():  # else another process made the same shadow first
                raise
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    log.info(f"git: {path} has no refs/ folder (a copy dropped it); read through {shadow}")
    return shadow


def readable_url(url: str, cache_root: Path) -> str:
    """`url`, or for a local repository (file:// or a plain path) that lacks refs/, the file:// URL of its shadow."""
    path = Path(url[len("file://"):]) if url.startswith("file://") else Path(url) if "://" not in url else None
    if path is None or not lacks_refs(path):
        return url
    return f"file://{readable(path, cache_root)}"
