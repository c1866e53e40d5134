"""Fetch, unpack and verify one PinnedArchive: how every archive a recipe names becomes a folder.

    unpack_pinned(archive, ctx, dest, what) -> dest

The pins are the recipe's, else the lock file's. With a sha256 the archive comes through the verified
download cache (mirrors first). With a content pin (and no sha256, or a sha256 that no reachable copy
matches, as a mirror's re-packed or subset archive does not) any archive of the URL is taken, a mirror's
first, and its unpacked tree's digest (over `paths`, when the pin has them) must equal the pin. The tree
is unpacked into a temporary folder beside dest and renamed into place only once verified. An archive
verified for a content pin is recorded in the cache (content/<digest>.json -> its sha256), so later and
offline runs take it from there. A stamp beside dest (.<dest>.<kind>.json) records what is unpacked:
the same pins again do nothing, other pins replace the tree whole. An archive nothing pins goes through
FetchContext.fetch_url: a warning naming the checksum to pin, refused in release and offline builds.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

from toolkit.recipe.pinned import PinnedArchive
from toolkit.sources.context import FetchContext
from toolkit.sources.download import fetch_unpinned, mirror_url
from toolkit.sources.extract import extract_archive
from toolkit.util import log
from toolkit.util.debian_mirror import resolve_url
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON, atomic_write_text, read_json, replace_dir
from toolkit.util.redact import public_url, redact_url


def stamp_path(dest: Path, kind: str) -> Path:
    return dest.parent / f".{dest.name}.{kind}.json"


def stamp_matches(dest: Path, kind: str, identity: JSON) -> bool:
    stamp = stamp_path(dest, kind)
    if not dest.is_dir() or not stamp.is_file():
        return False
    return read_json(stamp) == identity


def write_stamp(dest: Path, kind: str, identity: JSON) -> None:
    atomic_write_text(stamp_path(dest, kind), json.dumps(identity, sort_keys=True) + "\n")


def with_lock_pins(archive: PinnedArchive, ctx: FetchContext) -> PinnedArchive:
    """The archive with the lock file's pins filling what the recipe leaves out."""
    content = ctx.lock.get_content(archive.url) if ctx.lock is not None else None
    return archive.with_pins(ctx.sha256_for(archive.url, archive.sha256), content)


def known_archive(ctx: FetchContext, content: str) -> str | None:
    """The sha256 of an archive already verified to unpack to `content` (recorded in the cache)."""
    index = ctx.cache.root / "content" / f"{content}.json"
    try:
        sha256: str = json.loads(index.read_text())["sha256"]
        return sha256
    except (OSError, ValueError, KeyError):
        return None


def _remember_archive(ctx: FetchContext, content: str, sha256: str) -> None:
    index = ctx.cache.root / "content" / f"{content}.json"
    index.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(index, json.dumps({"sha256": sha256}) + "\n")


def is_cached(archive: PinnedArchive, ctx: FetchContext) -> bool:
    """Whether the cache already holds an archive that satisfies these pins (for the dry run)."""
    pinned = with_lock_pins(archive, ctx)
    known = pinned.sha256 or (known_archive(ctx, pinned.content) if pinned.content else None)
    return known is not None and ctx.cache.find_download(known) is not None


def unpack_pinned(archive: PinnedArchive, ctx: FetchContext, dest: Path, what: str, kind: str = "pinned") -> Path:
    """Unpack the verified archive into dest (all or nothing) unless the stamp says it is there; returns dest."""
    dest = Path(dest)
    pinned = with_lock_pins(archive, ctx)
    if pinned.sha256 is None and pinned.content is None:
        # Nothing pins it: fetch_url warns with the checksum to pin (or refuses: release, offline).
        pinned = replace(pinned, sha256=ctx.fetch_url(archive.url, None, what).parent.name)
    identity = {"url": public_url(pinned.url), "sha256": pinned.sha256, "content": pinned.content,
                "paths": list(pinned.paths), "strip_components": pinned.strip_components}
    if stamp_matches(dest, kind, identity):
        return dest
    file = _fetch(pinned, ctx, what)
    dest.parent.mkdir(parents=True, exist_ok=True)
    stamp_path(dest, kind).unlink(missing_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".verify", dir=dest.parent))
    try:
        log.info(f"{what}: unpacking {file.name} into {dest}")
        tree = extract_archive(file, tmp / "tree", pinned.strip_components)
        if pinned.content is not None:
            found = pinned.digest(tree)
            if found != pinned.content:
                raise _content_mismatch(pinned, tree, file, found, what)
            _remember_archive(ctx, pinned.content, file.parent.name)
        replace_dir(tree, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    write_stamp(dest, kind, identity)
    log.info(f"{what}: verified {pinned.describe_pins()} in {dest}")
    return dest


def _fetch(pinned: PinnedArchive, ctx: FetchContext, what: str) -> Path:
    if pinned.sha256 is not None:
        try:
            return ctx.fetch_url(pinned.url, pinned.sha256, what)
        except ToolkitError:
            # A mirror's re-packed or subset archive has other bytes than upstream's: the content pin decides.
            if pinned.content is None:
                raise
    known = known_archive(ctx, pinned.content) if pinned.content else None
    file = ctx.cache.find_download(known) if known else None
    return file if file is not None else _download_any(pinned.url, ctx, what)


def _download_any(url: str, ctx: FetchContext, what: str) -> Path:
    """An archive of url whose bytes nothing pins: from a mirror first (a file:// one even offline)."""
    local = [m for m in ctx.mirrors if m.startswith("file://")]
    shown_local = [redact_url(m) for m in local]
    if ctx.offline:
        for base in local:
            try:
                candidate = mirror_url(base, resolve_url(url))
            except ToolkitError:  # a debian: URL, and no Debian mirror to say where a mirror keeps it
                candidate = None
            if candidate and Path(candidate[len("file://"):]).is_file():
                return fetch_unpinned(candidate, ctx.cache, (), ctx.options)[0]
        raise ToolkitError(
            f"offline: {what}: {redact_url(url)} is not in the download cache nor in a local mirror "
            f"({', '.join(shown_local) or 'none given'})",
            hint="pass --mirror file://<mirror> holding it, or run once with network access",
        )
    return fetch_unpinned(url, ctx.cache, ctx.mirrors, ctx.options)[0]


def _content_mismatch(pinned: PinnedArchive, tree: Path, file: Path, found: str, what: str) -> ToolkitError:
    over = ""
    if pinned.paths:
        over = f" (the digest of the files its {len(pinned.paths)} `paths` globs match"
        missing = pinned.unmatched_paths(tree)
        over += f"; these match no file: {', '.join(missing)})" if missing else ")"
    return ToolkitError(
        f"{what}: {file.name} (sha256 {file.parent.name[:12]}..., from {redact_url(pinned.url)} or its mirror) "
        "unpacks to "
        f"content {found}, but the pin is {pinned.content}{over}",
        hint="a different tree than the one pinned: check the mirror, or re-pin (the recipe's `content`, or "
        "`nox -s lock`) if the new version is intended",
    )
