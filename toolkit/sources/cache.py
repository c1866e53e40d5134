"""The shared download cache: one folder per machine, safe for builds running side by side.

Layout (under toolkit.util.cachedir.default_cache_dir()):
    downloads/<sha256>/<file name>   verified files only, renamed into place after the check, and hashed
                                     again on every use (download.fetch), so a file changed on disk is
                                     dropped and fetched again instead of trusted
    partial/<key>.part               bytes of an interrupted download, kept so the next try resumes
    git/<url hash>/<commit>/         checked-out git trees (with submodules), complete ones only
    locks/<key>.lock                 lock files (toolkit.util.locks): one process downloads, the others wait
                                     (naming it) and reuse
Beside them, kept by other stages: ccache/ (every build's compiler cache), compile-check/ (each unit's compile
result, toolkit.compile_check.run), zig/, roots/ (toolkit.buildroot).
Files are content-addressed by sha256, so two recipes naming the same archive share one copy.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from toolkit.util.cachedir import default_cache_dir
from toolkit.util.locks import WorkLock
from toolkit.util.redact import public_url


def url_key(url: str) -> str:
    """A short key for a URL's cache entries, the same with or without its credentials (never derived from them)."""
    return hashlib.sha256(public_url(url).encode("utf-8")).hexdigest()[:24]


def file_name_for(url: str) -> str:
    """A safe file name for what a URL serves: its last path segment (a `pypi:` wheel's file name), else
    'download'."""
    path = url.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    name = path.rsplit("/", 1)[-1] if "/" in path else path.split(":", 1)[1] if path.startswith("pypi:") else ""
    name = re.sub(r"[^A-Za-z0-9._+-]", "_", name)
    return name if name and name not in (".", "..") else "download"


@dataclass(frozen=True)
class Cache:
    root: Path

    @classmethod
    def default(cls) -> Cache:
        return cls(default_cache_dir())

    def download_path(self, sha256: str, url: str) -> Path:
        return self.root / "downloads" / sha256 / file_name_for(url)

    def find_download(self, sha256: str) -> Path | None:
        """The verified file for a checksum, whatever URL it came from."""
        folder = self.root / "downloads" / sha256
        if not folder.is_dir():
            return None
        files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
        return files[0] if files else None

    def partial_path(self, key: str) -> Path:
        return self.root / "partial" / f"{key}.part"

    def git_path(self, url: str, commit: str) -> Path:
        return self.root / "git" / url_key(url) / commit

    def lock(self, key: str, target: str) -> WorkLock:
        """A lock shared by every process using this cache folder; hold it while touching `key`. `target` is
        what a waiting process names (a URL, a folder)."""
        return WorkLock(target, file=self.root / "locks" / f"{key}.lock")
