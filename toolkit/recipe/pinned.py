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
from dataclasses import dataclass, field, replace
from pathlib import Path

from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from toolkit.util import argcheck
from toolkit.util.fsutil import iter_files, tree_digest
from toolkit.util.globs import bad_glob, glob_match
from toolkit.util.redact import public_url, redact_url, shorten
from toolkit.util.tomlfields import doc, problem
from toolkit.util.tomlread import Site

DEBIAN_SCHEME = "debian:"
# A wheel by its file name, from the package index pip is configured with (toolkit/sources/pypi.py).
PYPI_SCHEME = "pypi:"

_URL = re.compile(r"^(https?|file)://")
_VERSION = re.compile(r"\d+(?:\.\d+)+")


def version_of(text: str | None) -> str | None:
    """The last dotted number in a URL's path or a tag: the version it names (what a release's provenance records
    of a dependency, and what bump compares dependencies by: upstream/dep_changes.py)."""
    if not text:
        return None
    found = _VERSION.findall(text.split("?", 1)[0])
    return found[-1] if found else None


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


def _sha256(value: str, site: Site) -> None:
    if not argcheck.is_sha256(value):
        raise site.error(f"expected 64 lowercase hex digits, got {value!r}")


def check_subdir(value: str, site: Site) -> None:
    """A folder inside an unpacked tree: relative, no `..`."""
    if value.startswith("/") or ".." in Path(value).parts:
        raise site.error(f"expected a relative path inside the tree, got {value!r}")


def _some_globs(paths: tuple[str, ...], site: Site) -> None:
    if not paths:
        raise site.error("list at least one glob, or leave 'paths' out to pin the whole tree")


def _glob(pattern: str, site: Site) -> None:
    why = bad_glob(pattern)
    if why:
        raise site.error(f"{why}, got {pattern!r}")


def _not_negative(value: int, site: Site) -> None:
    if value < 0:
        raise site.error(f"expected 0 or more, got {value}")


def require_pin(archive: PinnedArchive, site: Site) -> None:
    """For a table whose archive must carry its own pin (no lock file stands in for it): sha256 or content."""
    if archive.sha256 is None and archive.content is None:
        raise site.key("url").error(f"{redact_url(archive.url)} needs a pin: give 'sha256' (the archive's) or "
                                    "'content' (the unpacked tree's digest)")


@dataclass(frozen=True)
class PinnedArchive:
    # Its keys are those of the table that holds it (toolkit/util/tomlfields.py: inline), which may say more of
    # what each means there.
    url: str = field(metadata=doc("Its archive.", check=problem(url_problem)))
    sha256: str | None = field(default=None, metadata=doc("The archive's sha256.", check=_sha256))
    content: str | None = field(default=None, metadata=doc("The digest of the unpacked tree.", check=_sha256))
    paths: tuple[str, ...] = field(default=(), metadata=doc("Globs `content` covers.", each=_glob,
                                                            check=_some_globs))
    strip_components: int | None = field(default=None, metadata=doc(
        "Leading path components dropped when unpacking.", check=_not_negative))
    subdir: str | None = field(default=None, metadata=doc("The folder of the unpacked tree that is wanted.",
                                                          check=check_subdir))

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
