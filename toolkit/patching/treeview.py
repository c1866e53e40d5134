"""A directory as `relative path -> bytes`, with in-memory changes laid over it.

Analysis, apply and refresh judge patch N on the tree patch N-1 leaves without writing anything:
each step works on a copy of the view, and the disk is read once per file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

SKIP_DIRS = (".git", ".hg", ".svn")


class TreeView:
    """A directory as `relative path -> bytes`, with in-memory changes laid over it."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.changes: dict[str, bytes | None] = {}
        self.modes: dict[str, int] = {}
        self._cache: dict[str, bytes | None] = {}
        self._names: dict[str, list[str]] | None = None

    def copy(self) -> TreeView:
        other = TreeView(self.root)
        other.changes = dict(self.changes)
        other.modes = dict(self.modes)
        other._cache = self._cache  # disk content is shared; it does not change during an analysis
        other._names = self._names
        return other

    def read(self, rel: str) -> bytes | None:
        if rel in self.changes:
            return self.changes[rel]
        if rel not in self._cache:
            path = self.root / rel
            self._cache[rel] = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        return self._cache[rel]

    def mode(self, rel: str) -> int:
        if rel in self.modes:
            return self.modes[rel]
        try:
            return 0o100000 | stat.S_IMODE(os.stat(self.root / rel).st_mode)
        except FileNotFoundError:
            return 0o100644

    def write(self, rel: str, data: bytes | None, mode: int | None = None) -> None:
        self.changes[rel] = data
        if mode is not None:
            self.modes[rel] = mode

    def same_name(self, rel: str) -> list[str]:
        """Other files in the tree with the same base name (where a renamed file may have gone)."""
        if self._names is None:
            self._names = {}
            for dirpath, dirnames, filenames in os.walk(self.root):
                dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
                base = Path(dirpath).relative_to(self.root)
                for name in sorted(filenames):
                    self._names.setdefault(name, []).append((base / name).as_posix())
        name = PurePosixPath(rel).name
        found = [p for p in self._names.get(name, []) if p != rel and self.read(p) is not None]
        found += [p for p, d in self.changes.items() if d is not None and PurePosixPath(p).name == name
                  and p != rel and p not in found]
        return sorted(found)
