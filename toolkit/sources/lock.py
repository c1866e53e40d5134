"""Lock files: the sha256 of every URL a recipe leaves unpinned, written by `nox -s lock`.

recipes/<name>.lock.toml sits next to recipes/<name>.toml. A checksum written in the recipe itself wins
over the lock; the lock only fills the gaps, so upstream URLs can be listed by hand and pinned by a
machine that can reach them. Release builds refuse any URL that neither pins.

Keys are URLs without credentials (toolkit.util.redact.public_url): no userinfo, credential-like query
values written as ***. A URL given with `user:TOKEN@` (a --source on the command line) is looked up by that
same public form, so the token never reaches the file, and a lock file holding a credential is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.recipe.pinned import PinnedArchive
from toolkit.recipe.sources import FetchContentDep, OrtPackage, SourceSettings
from toolkit.sources.cache import Cache
from toolkit.sources.download import DownloadOptions, fetch_unpinned_from
from toolkit.util import log
from toolkit.util.errors import RecipeError, ToolkitError
from toolkit.util.fsutil import atomic_write_text
from toolkit.util.redact import public_url, redact_url
from toolkit.util.tomlread import load_toml

LOCK_VERSION = 1


def lock_path_for(recipe: Path) -> Path:
    recipe = Path(recipe)
    return recipe.with_name(f"{recipe.stem}.lock.toml")


@dataclass(frozen=True)
class LockFile:
    path: Path
    pins: dict[str, str] = field(default_factory=dict)
    # URL -> digest of the unpacked tree (FetchContent dependencies: one pin for upstream's and a mirror's archive)
    contents: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> LockFile:
        path = Path(path)
        if not path.is_file():
            return cls(path, {})
        root = load_toml(path)
        version = root.int("version")
        if version != LOCK_VERSION:
            raise root.error("version", f"this toolkit reads lock version {LOCK_VERSION}, got {version}")
        pins = root.str_map("sha256", {})
        contents = root.str_map("content", {})
        for table, values in (("sha256", pins), ("content", contents)):
            for url, sha in values.items():
                shown = redact_url(url)
                if public_url(url) != url:
                    raise RecipeError(f"{path}: key '{table}.\"{shown}\"': a lock key holds no credential "
                                      "(user, password or token)",
                                      hint="delete the line and run `nox -s lock` again: credentials come from "
                                      "~/.netrc or the environment")
                if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
                    raise RecipeError(f"{path}: key '{table}.\"{shown}\"': expected 64 lowercase hex digits, got "
                                      f"{redact_url(sha)[:80]!r}")
        root.done()
        return cls(path, pins, contents)

    @classmethod
    def for_recipe(cls, recipe: Path) -> LockFile:
        return cls.load(lock_path_for(recipe))

    def get(self, url: str) -> str | None:
        return self.pins.get(public_url(url))

    def get_content(self, url: str) -> str | None:
        return self.contents.get(public_url(url))


def write_lock(path: Path, recipe_name: str, pins: dict[str, str], contents: dict[str, str] | None = None) -> None:
    lines = [
        f"# Written by `nox -s lock` for {recipe_name}: the sha256 of each URL that recipe leaves unpinned.",
        "# Review changes like code: a new checksum means different bytes from that URL.",
        f"version = {LOCK_VERSION}",
        "",
        "[sha256]",
    ]
    # JSON string escapes are valid TOML basic-string escapes.
    pins = {public_url(url): sha for url, sha in pins.items()}
    lines += [f"{json.dumps(url)} = {json.dumps(sha)}" for url, sha in sorted(pins.items())]
    contents = {public_url(url): sha for url, sha in (contents or {}).items()}
    if contents:
        lines += ["", "# FetchContent dependencies: sha256 of the unpacked tree "
                      "(toolkit.util.fsutil.tree_digest), which",
                  "# GitHub's tag archive and a mirror's re-packed archive of the same tag share.", "[content]"]
        lines += [f"{json.dumps(url)} = {json.dumps(sha)}" for url, sha in sorted(contents.items())]
    atomic_write_text(path, "\n".join(lines) + "\n")


@dataclass(frozen=True)
class Pinnable:
    """An archive a recipe names, where (dotted key), and how the lock pins it when the recipe does not."""

    where: str
    archive: PinnedArchive
    # Pinned by the digest of the unpacked tree (FetchContent dependencies, and any archive with `paths`),
    # which a mirror's re-packed archive shares, rather than by the archive's sha256.
    by_content: bool = False

    @property
    def url(self) -> str:
        return self.archive.url

    def pinned_by_recipe(self) -> bool:
        return self.archive.sha256 is not None or self.archive.content is not None


def pinnables(source: SourceSettings | None, deps: Iterable[FetchContentDep] = (),
              packages: Iterable[OrtPackage] = ()) -> list[Pinnable]:
    """The archive downloads among a source, FetchContent dependencies and ORT packages."""
    out: list[Pinnable] = []
    if source is not None and source.archive is not None:
        out.append(Pinnable("source", source.archive, bool(source.archive.paths)))
    out += [Pinnable(f"fetchcontent {d.name}", d.archive, True) for d in deps]
    out += [Pinnable(f"ort.package {p.platform}", p.archive, bool(p.archive.paths)) for p in packages]
    return out


def recipe_urls(recipe: Path) -> list[Pinnable]:
    """Every archive download in a recipe's [source], [[fetchcontent]] and [[ort.package]] sections
    ([[compile_check.dep]] archives are pinned in the recipe itself). The recipe is read whole (load_recipe), as
    every command reads it: a recipe another command refuses is refused here too."""
    from toolkit.recipe.load import load_recipe

    read = load_recipe(recipe)
    return pinnables(read.source, read.fetchcontent, read.ort.packages if read.ort is not None else ())


def build_downloads(source: SourceSettings | None, deps: Iterable[FetchContentDep], ort: OrtPackage | None) -> list[
        Pinnable]:
    """What one build downloads: its source's archive, the FetchContent dependencies of its features and the ORT
    package it builds against (None: an ORT install was named)."""
    return pinnables(source, deps, [ort] if ort is not None else [])


def unpinned(items: list[Pinnable], lock: LockFile) -> list[Pinnable]:
    return [i for i in items if not i.pinned_by_recipe() and lock.get(i.url) is None
            and not (i.by_content and lock.get_content(i.url))]


def require_pinned(items: list[Pinnable], lock: LockFile, recipe: Path) -> None:
    """Release builds: every archive must have a sha256 or content digest, from the recipe or the lock file."""
    missing = unpinned(items, lock)
    if missing:
        listed = "\n".join(f"  {m.where}: {redact_url(m.url)}" for m in missing)
        raise ToolkitError(
            f"{recipe}: release builds need a sha256 (or a content digest) for every archive they fetch; "
            f"{len(missing)} have none in the recipe or in {lock.path.name}:\n{listed}",
            hint=f"run `nox -s lock -- --recipe {recipe}` on a machine with network access and commit "
            f"{lock.path.name}",
        )


@dataclass(frozen=True)
class LockResult:
    path: Path
    added: dict[str, str]
    kept: dict[str, str]
    removed: list[str]
    unpinned: dict[str, str] = field(default_factory=dict)   # url -> where the recipe names it: could not be read
    origins: dict[str, str] = field(default_factory=dict)    # url -> where its bytes came from (mirror, upstream)


def lock_recipe(recipe: Path, cache: Cache, mirrors: tuple[str, ...] = (), refresh: bool = False,
                options: DownloadOptions = DownloadOptions(), offline: bool = False) -> LockResult:
    """Download each URL with no checksum yet (once, through the cache) and write its sha256 to the lock.

    refresh=True downloads and re-pins every unpinned URL, even those already in the lock. Entries for URLs
    the recipe no longer names, or now pins itself, are dropped.
    """
    recipe = Path(recipe).resolve()
    path = lock_path_for(recipe)
    old = LockFile.load(path)
    pins: dict[str, str] = {}
    added: dict[str, str] = {}
    kept: dict[str, str] = {}
    contents: dict[str, str] = {}
    unpinned: dict[str, str] = {}
    origins: dict[str, str] = {}
    for item in recipe_urls(recipe):
        if item.pinned_by_recipe():
            continue  # the recipe pins it itself
        key = public_url(item.url)
        if item.by_content:
            known = old.get_content(key)
            if known is not None and not refresh:
                contents[key] = kept[key] = known
                continue
            try:
                contents[key], origins[key] = _content_digest(item, cache, mirrors, options, offline)
            except ToolkitError as exc:
                # One unreachable dependency (a Windows-only one, say) must not block pinning the rest;
                # builds that need it refuse it unpinned, naming it.
                log.warn(f"lock: {item.where}: left unpinned: {exc.message}")
                unpinned[key] = item.where
            continue
        if key in pins:
            continue
        known = old.get(key)
        if known is not None and not refresh:
            pins[key] = kept[key] = known
            continue
        _, digest, origins[key] = fetch_unpinned_from(item.url, cache, mirrors, options, offline=offline)
        log.info(f"lock: {item.where}: pinned {redact_url(item.url)} (from {origins[key]})")
        pins[key] = added[key] = digest
    removed = sorted((set(old.pins) - set(pins)) | (set(old.contents) - set(contents)))
    added.update({u: c for u, c in contents.items() if old.get_content(u) != c})
    # No empty lock file: one is written only when there is something pinned, or a change to record.
    if pins != old.pins or contents != old.contents or ((pins or contents) and not path.exists()):
        write_lock(path, recipe.name, pins, contents)
    return LockResult(path, added, kept, removed, unpinned, origins)


def _content_digest(item: Pinnable, cache: Cache, mirrors: tuple[str, ...], options: DownloadOptions,
                    offline: bool) -> tuple[str, str]:
    """Download (through mirrors first), unpack into a temporary folder and digest the tree (or its `paths`);
    returns the digest and where the archive came from. Offline, only a local mirror's copy is read."""
    import shutil
    import tempfile

    from toolkit.sources.extract import extract_archive

    archive, _, where = fetch_unpinned_from(item.url, cache, mirrors, options, offline=offline)
    log.info(f"lock: {item.where}: digesting the content of {redact_url(item.url)} (from {where})")
    tmp = Path(tempfile.mkdtemp(prefix=".lock-content."))
    try:
        tree = extract_archive(archive, tmp / "tree", item.archive.strip_components)
        missing = item.archive.unmatched_paths(tree)
        if missing:
            raise ToolkitError(f"lock: {item.where}: {redact_url(item.url)} unpacks to a tree where these `paths` "
                               f"match no file: {', '.join(missing)}", hint="fix the globs in the recipe")
        return item.archive.digest(tree), where
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
