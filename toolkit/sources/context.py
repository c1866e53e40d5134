"""How one build fetches things: which cache, mirrors, lock file, offline or not, release or not.

Every fetch of a URL goes through FetchContext.fetch_url, so the pinning rule holds everywhere: the
recipe's sha256, else the lock file's; an unpinned URL is refused in release builds and downloaded with a
warning otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from toolkit.sources.cache import Cache
from toolkit.sources.download import DownloadOptions, fetch, fetch_unpinned
from toolkit.sources.lock import LockFile
from toolkit.sources.mirrors import check_mirrors, mirrors_from_env
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.redact import public_url, redact_url


@dataclass(frozen=True)
class FetchContext:
    cache: Cache
    offline: bool = False
    mirrors: tuple[str, ...] = ()
    lock: LockFile | None = None
    release: bool = False
    options: DownloadOptions = field(default_factory=DownloadOptions)

    @classmethod
    def create(cls, recipe: Path | None = None, offline: bool = False, mirrors: list[str] | None = None,
               release: bool = False, cache: Cache | None = None, insecure_mirror: bool = False) -> FetchContext:
        """The usual context: default cache, --mirror values then $TOOLKIT_MIRRORS (a file:// one must exist),
        the recipe's lock file; `insecure_mirror` (--insecure-mirror) lets plain-http mirrors serve https URLs."""
        lock = LockFile.for_recipe(recipe) if recipe is not None else None
        all_mirrors = tuple(mirrors or ()) + tuple(m for m in mirrors_from_env() if m not in (mirrors or ()))
        check_mirrors(all_mirrors)
        return cls(cache or Cache.default(), offline, all_mirrors, lock, release,
                   DownloadOptions(insecure_mirror=insecure_mirror))

    @property
    def insecure_mirror(self) -> bool:
        return self.options.insecure_mirror

    def sha256_for(self, url: str, recipe_sha256: str | None) -> str | None:
        if recipe_sha256 is not None:
            return recipe_sha256
        return self.lock.get(url) if self.lock is not None else None

    def fetch_url(self, url: str, recipe_sha256: str | None, what: str) -> Path:
        sha = self.sha256_for(url, recipe_sha256)
        if sha is not None:
            return fetch(url, sha, self.cache, self.mirrors, self.offline, self.options)
        shown = redact_url(url)
        lock_name = self.lock.path.name if self.lock is not None else "the lock file"
        if self.release:
            raise ToolkitError(
                f"{what}: {shown} has no sha256 in the recipe or {lock_name}; release builds refuse unpinned sources",
                hint="run `nox -s lock` on a machine with network access and commit the lock file",
            )
        if self.offline:
            raise ToolkitError(
                f"offline: {what}: {shown} has no sha256 in the recipe or {lock_name}, so the cache cannot be searched",
                hint="run `nox -s lock` once with network access",
            )
        path, digest = fetch_unpinned(url, self.cache, self.mirrors, self.options)
        recipe = self.lock.path.name.removesuffix(".lock.toml") if self.lock is not None else "NAME"
        how = (f"pass --source '{public_url(url)}#sha256={digest}', or for a recipe's own URL "
               if what == "source" else "")
        log.warn(f"{what}: {shown} is not pinned (got sha256 {digest}); to pin it, {how}run "
                 f"`nox -s lock -- --recipe {recipe}` (or write sha256 = \"{digest}\" beside the url in the recipe)")
        return path
