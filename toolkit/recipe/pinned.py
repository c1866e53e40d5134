"""One pinned archive: a URL and the pins that verify it, read from a recipe table in one place.

Every archive a recipe names ([source] url, [[fetchcontent]], [[ort.package]], [[compile_check.dep]]) is
a PinnedArchive, written with the same keys:

    url = "https://github.com/onnx/onnx/archive/refs/tags/v1.17.0.tar.gz"
    sha256 = "<64 hex>"              # the archive's bytes
    content = "<64 hex>"             # the unpacked tree's digest (toolkit.util.fsutil.tree_digest) ...
    paths = ["include/**", ...]      # ... taken over only the files these globs match
    strip_components = 1             # leading folders dropped (default: a single top-level folder)
    subdir = "usr"                   # the folder of the unpacked tree that is wanted

`url` is http(s)://, file:// or `debian:<path>`: a file of the Debian archive (`debian:pool/main/...`),
fetched from the Debian mirror this machine uses (toolkit.util.debian_mirror), so no recipe names a
mirror's host. `sha256` pins upstream's bytes. `content` pins what GitHub's tag archive and a mirror's
re-packed archive of the same tag share: the unpacked tree. With `paths` it covers only the files a
recipe reads, which a mirror's subset archive and upstream's whole archive share. Either pin (or both) is
verified before anything uses the tree; `nox -s lock` writes the missing one into the lock file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from toolkit.util import argcheck
from toolkit.util.fsutil import iter_files, tree_digest
from toolkit.util.globs import bad_glob, glob_match
from toolkit.util.redact import public_url, redact_url, shorten
from toolkit.util.tomlread import Table

DEBIAN_SCHEME = "debian:"
# A wheel by its file name, from the package index pip is configured with (toolkit/sources/pypi.py).
PYPI_SCHEME = "pypi:"

# What the keys PinnedArchive.from_table reads mean, for the tables that hold an archive's keys among their own:
# each table declares them (toolkit/recipe/schema.py's recipe_table), overriding the meanings its use changes.
ARCHIVE_KEYS = {
    "url": "Its archive.",
    "sha256": "The archive's sha256.",
    "content": "The digest of the unpacked tree.",
    "paths": "Globs `content` covers.",
    "strip_components": "Leading path components dropped when unpacking.",
}

_URL = re.compile(r"^(https?|file)://")


def url_problem(url: str) -> str | None:
    """Why `url` cannot name an archive in a recipe (None when it can): http(s)://, file:// or
    debian:<relative path>, with no credential in it (a recipe is committed, printed and locked: credentials
    come from ~/.netrc or the environment)."""
    shown = shorten(redact_url(url))
    if url.startswith(DEBIAN_SCHEME):
        rest = url[len(DEBIAN_SCHEME):]
        if not rest or rest.startswith("/") or ".." in rest.split("/"):
            return f"expected debian:<path in the Debian archive> such as 'debian:pool/main/...', got {shown!r}"
        return None
    if url.startswith(PYPI_SCHEME):
        try:
            parse_wheel_filename(url[len(PYPI_SCHEME):])
        except InvalidWheelFilename:
            return f"expected pypi:<a wheel's file name> such as 'pypi:pkg-1.0-py3-none-any.whl', got {shown!r}"
        return None
    if not _URL.match(url):
        return (f"expected an http(s):// or file:// URL, or debian:<pool path> (or pypi:<wheel file name>), "
                f"got {shown!r}")
    if public_url(url) != url:
        return (f"{shown!r} carries a credential (user, password or token); a recipe holds none: put it in "
                "~/.netrc (machine HOST login USER password TOKEN), or serve the file from a --mirror")
    return None


def read_sha256(t: Table, key: str = "sha256") -> str | None:
    value: str | None = t.str(key, None)
    if value is not None and not argcheck.is_sha256(value):
        raise t.error(key, f"expected 64 lowercase hex digits, got {value!r}")
    return value


def read_subdir(t: Table) -> str | None:
    value: str | None = t.str("subdir", None)
    if value is not None and (value.startswith("/") or ".." in Path(value).parts):
        raise t.error("subdir", f"expected a relative path inside the tree, got {value!r}")
    return value


@dataclass(frozen=True)
class PinnedArchive:
    url: str
    sha256: str | None = None
    content: str | None = None
    paths: tuple[str, ...] = ()
    strip_components: int | None = None
    subdir: str | None = None

    @property
    def is_debian(self) -> bool:
        return self.url.startswith(DEBIAN_SCHEME)

    def with_pins(self, sha256: str | None, content: str | None) -> PinnedArchive:
        """This archive with the pins a lock file adds (the recipe's own win)."""
        return replace(self, sha256=self.sha256 or sha256, content=self.content or content)

    def describe_pins(self) -> str:
        pins = []
        if self.sha256:
            pins.append(f"sha256 {self.sha256[:12]}...")
        if self.content:
            over = f" of {len(self.paths)} path glob(s)" if self.paths else ""
            pins.append(f"content {self.content[:12]}...{over}")
        return ", ".join(pins) or "UNPINNED"

    def digest(self, tree: Path) -> str:
        """The content digest of an unpacked tree: every file, or the files `paths` match."""
        if not self.paths:
            return tree_digest(tree)
        return tree_digest(tree, include=lambda rel: any(glob_match(p, rel) for p in self.paths))

    def unmatched_paths(self, tree: Path) -> list[str]:
        """The `paths` globs no file of the tree matches (a wrong glob, or a tree missing those files)."""
        left = list(self.paths)
        for rel in iter_files(tree):
            if not left:
                break
            left = [p for p in left if not glob_match(p, rel.as_posix())]
        return left

    @classmethod
    def from_table(cls, t: Table, *, subdir: bool = True, require_pin: bool = False) -> PinnedArchive:
        """Read url, sha256, content, paths, strip_components (and subdir) from `t`; the caller reads its own
        keys and calls t.done(). require_pin: the table itself must give sha256 or content."""
        url = t.str("url")
        problem = url_problem(url)
        if problem:
            raise t.error("url", problem)
        sha256 = read_sha256(t)
        content = read_sha256(t, "content")
        paths = tuple(t.str_list("paths", []))
        if t.has("paths") and not paths:
            raise t.error("paths", "list at least one glob, or leave 'paths' out to pin the whole tree")
        for i, pattern in enumerate(paths):
            why = bad_glob(pattern)
            if why:
                raise t.error(f"paths[{i}]", f"{why}, got {pattern!r}")
        strip = t.int("strip_components", None)
        if strip is not None and strip < 0:
            raise t.error("strip_components", f"expected 0 or more, got {strip}")
        if require_pin and sha256 is None and content is None:
            raise t.error("url", f"{redact_url(url)} needs a pin: give 'sha256' (the archive's) or 'content' (the "
                                 "unpacked tree's digest)")
        return cls(url=url, sha256=sha256, content=content, paths=paths, strip_components=strip,
                   subdir=read_subdir(t) if subdir else None)
