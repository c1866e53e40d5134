"""`python -m toolkit fetch` and `python -m toolkit lock`: the sources layer on the command line."""

from __future__ import annotations

import argparse
import re
import shutil
from pathlib import Path

from toolkit import log
from toolkit.errors import ToolkitError
from toolkit.fsutil import atomic_write_bytes


def register(subparsers) -> None:
    p = subparsers.add_parser("fetch", help="download a file through the verified cache; unpack archives",
                              description="Download URL through the shared cache, verify its sha256, and unpack "
                              "it into DEST if it is an archive (tar.gz, tar.xz, tar.bz2, zip), else copy it there.")
    p.add_argument("url", help="the URL to download (http, https or file)")
    p.add_argument("--sha256", required=True, help="expected sha256 (64 hex digits)")
    p.add_argument("--dest", required=True, type=Path, help="folder to unpack (or copy) into")
    p.add_argument("--strip-components", type=int, default=None,
                   help="leading path parts to drop (default: a single top-level folder)")
    _common(p)
    p.set_defaults(func=_fetch)

    p = subparsers.add_parser("lock", help="pin every unpinned URL of a recipe into <recipe>.lock.toml",
                              description="Download each URL in RECIPE that has no sha256 yet (once, through the "
                              "cache) and write its sha256 into the lock file next to the recipe.")
    p.add_argument("recipe", type=Path, help="the recipe file whose URLs to pin")
    p.add_argument("--refresh", action="store_true", help="download and re-pin URLs the lock already pins")
    _common(p)
    p.set_defaults(func=_lock)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mirror", action="append", default=[], metavar="BASE",
                   help="mirror base URL, tried before upstream, in order (also $TOOLKIT_MIRRORS)")
    p.add_argument("--offline", action="store_true", help="use the cache only; fail naming what is missing")
    p.add_argument("--cache-dir", type=Path, default=None, help="cache folder (default $TOOLKIT_CACHE_DIR or "
                   "the platform's user cache)")


def _mirrors(args) -> tuple[str, ...]:
    from toolkit.sources.download import mirrors_from_env

    return tuple(args.mirror) + tuple(m for m in mirrors_from_env() if m not in args.mirror)


def _cache(args):
    from toolkit.sources.cache import Cache

    return Cache(args.cache_dir.resolve()) if args.cache_dir else Cache.default()


def _fetch(args) -> int:
    from toolkit.sources.cache import file_name_for
    from toolkit.sources.download import fetch
    from toolkit.sources.extract import extract_archive, is_archive

    sha = args.sha256.lower()
    if not re.fullmatch(r"[0-9a-f]{64}", sha):
        raise ToolkitError(f"--sha256 {args.sha256}: expected 64 hex digits")
    path = fetch(args.url, sha, _cache(args), _mirrors(args), args.offline)
    dest: Path = args.dest
    if is_archive(file_name_for(args.url)) or is_archive(path.name):
        extract_archive(path, dest, args.strip_components)
        log.info(f"unpacked {args.url} into {dest}")
        print(dest)
    else:
        target = dest / file_name_for(args.url)
        with open(path, "rb") as handle:
            atomic_write_bytes(target, handle.read())
        shutil.copymode(path, target)
        log.info(f"copied {args.url} to {target}")
        print(target)
    return 0


def _lock(args) -> int:
    from toolkit.sources.lock import lock_recipe

    if args.offline:
        raise ToolkitError("lock needs network access to download unpinned URLs; drop --offline")
    result = lock_recipe(args.recipe, _cache(args), _mirrors(args), refresh=args.refresh)
    for url, sha in result.added.items():
        print(f"pinned {sha}  {url}")
    for url in result.removed:
        print(f"dropped {url} (no longer unpinned in the recipe)")
    log.info(f"{result.path}: {len(result.added)} added, {len(result.kept)} kept, {len(result.removed)} dropped")
    return 0
