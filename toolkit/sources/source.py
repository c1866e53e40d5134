"""Materialize a recipe's [source]: a local path as is, a URL archive verified and unpacked, a git commit.

A stamp beside the destination (.<dest>.source.json) records what was unpacked there, so a second build
with the same source does no work, and a changed source replaces the tree whole.
"""

from __future__ import annotations

import json
from pathlib import Path

from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import atomic_write_text
from toolkit.sources.context import FetchContext
from toolkit.sources.extract import extract_archive
from toolkit.sources.git import copy_checkout, fetch_git
from toolkit.sources.settings import SourceSettings


def _stamp_path(dest: Path) -> Path:
    return dest.parent / f".{dest.name}.source.json"


def _stamp_matches(dest: Path, identity: dict) -> bool:
    stamp = _stamp_path(dest)
    if not dest.is_dir() or not stamp.is_file():
        return False
    try:
        return json.loads(stamp.read_text(encoding="utf-8")) == identity
    except (OSError, json.JSONDecodeError):
        return False


def _write_stamp(dest: Path, identity: dict) -> None:
    atomic_write_text(_stamp_path(dest), json.dumps(identity, sort_keys=True) + "\n")


def unpack_once(archive: Path, dest: Path, strip_components: int | None, what: str) -> Path:
    """Extract archive into dest unless the stamp says this exact archive is already there."""
    # The cache keeps files under downloads/<sha256>/, so the folder name is the verified checksum.
    identity = {"sha256": archive.parent.name, "strip_components": strip_components}
    if _stamp_matches(dest, identity):
        return dest
    log.info(f"{what}: unpacking {archive.name} into {dest}")
    _stamp_path(dest).unlink(missing_ok=True)
    extract_archive(archive, dest, strip_components)
    _write_stamp(dest, identity)
    return dest


def _inside(root: Path, subdir: str | None, what: str) -> Path:
    if subdir is None:
        return root
    path = root / subdir
    if not path.is_dir():
        raise ToolkitError(f"{what}: subdir '{subdir}' does not exist in {root}",
                           hint="fix 'subdir' in the recipe (it is relative to the top of the source tree)")
    return path


def resolve_source(settings: SourceSettings, ctx: FetchContext, dest_dir: Path) -> Path:
    """The folder holding the source tree: settings.path itself, or dest_dir filled from a URL or git."""
    what = f"source ({settings.describe()})"
    if settings.path is not None:
        if not settings.path.is_dir():
            raise ToolkitError(f"{what}: no such folder", hint="fix [source] path, or pass --source PATH|URL")
        return _inside(settings.path, settings.subdir, what)
    dest_dir = Path(dest_dir)
    if settings.url is not None:
        archive = ctx.fetch_url(settings.url, settings.sha256, "source")
        unpack_once(archive, dest_dir, settings.strip_components, "source")
        return _inside(dest_dir, settings.subdir, what)
    assert settings.git is not None and settings.commit is not None
    identity = {"git": settings.git, "commit": settings.commit, "submodules": settings.submodules}
    if not _stamp_matches(dest_dir, identity):
        checkout = fetch_git(settings.git, settings.commit, ctx.cache, settings.submodules, ctx.offline, ctx.mirrors)
        _stamp_path(dest_dir).unlink(missing_ok=True)
        copy_checkout(checkout, dest_dir)
        _write_stamp(dest_dir, identity)
    return _inside(dest_dir, settings.subdir, what)
