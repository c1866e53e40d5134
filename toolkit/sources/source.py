"""Materialize a recipe's [source]: a local path as is, a pinned archive verified and unpacked, a git commit.

A stamp beside the destination (.<dest>.source.json) records what was unpacked there, so a second build
with the same source does no work, and a changed source replaces the tree whole.
"""

from __future__ import annotations

from pathlib import Path

from toolkit.recipe.sources import SourceSettings
from toolkit.sources.archive import stamp_matches, stamp_path, unpack_pinned, write_stamp
from toolkit.sources.context import FetchContext
from toolkit.sources.git import copy_checkout, fetch_git
from toolkit.util.errors import ToolkitError

STAMP = "source"


def _inside(root: Path, subdir: str | None, what: str) -> Path:
    if subdir is None:
        return root
    path = root / subdir
    if not path.is_dir():
        raise ToolkitError(f"{what}: subdir '{subdir}' does not exist in {root}",
                           hint="fix 'subdir' in the recipe (it is relative to the top of the source tree)")
    return path


def resolve_source(settings: SourceSettings, ctx: FetchContext, dest_dir: Path) -> Path:
    """The folder holding the source tree: settings.path itself, or dest_dir filled from an archive or git."""
    what = f"source ({settings.describe()})"
    if settings.path is not None:
        if not settings.path.is_dir():
            raise ToolkitError(f"{what}: no such folder", hint="fix [source] path, or pass --source PATH|URL")
        return _inside(settings.path, settings.subdir, what)
    dest_dir = Path(dest_dir)
    if settings.archive is not None:
        unpack_pinned(settings.archive, ctx, dest_dir, "source", kind=STAMP)
        return _inside(dest_dir, settings.subdir, what)
    assert settings.git is not None and settings.commit is not None
    identity = {"git": settings.git, "commit": settings.commit, "submodules": settings.submodules}
    if not stamp_matches(dest_dir, STAMP, identity):
        checkout = fetch_git(settings.git, settings.commit, ctx.cache, settings.submodules, ctx.offline, ctx.mirrors,
                             ctx.insecure_mirror)
        stamp_path(dest_dir, STAMP).unlink(missing_ok=True)
        copy_checkout(checkout, dest_dir)
        write_stamp(dest_dir, STAMP, identity)
    return _inside(dest_dir, settings.subdir, what)
