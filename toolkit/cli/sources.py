"""`python -m toolkit fetch` and `python -m toolkit lock`: the sources layer on the command line."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.pipeline.options import add_option
from toolkit.recipe.load import DEFAULT_RECIPE
from toolkit.util import log
from toolkit.util.argcheck import is_sha256
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import atomic_write_bytes
from toolkit.util.redact import public_url, redact_text, redact_url, shorten

if TYPE_CHECKING:
    from toolkit.sources.cache import Cache
    from toolkit.sources.download import DownloadOptions


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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

    p = subparsers.add_parser("lock", help="pin every unpinned URL of a recipe into recipes/<name>.lock.toml",
                              description="Download each URL the recipe names without a sha256 (once, through the "
                              "cache) and write its sha256 into the lock file next to the recipe "
                              "(recipes/NAME.lock.toml). With --source URL: download that archive and print it "
                              "pinned, as URL#sha256=HEX, to pass to --source.")
    p.add_argument("--recipe", default=DEFAULT_RECIPE, metavar="NAME|PATH",
                   help=f"recipe to lock (default {DEFAULT_RECIPE}, the bundled sample)")
    p.add_argument("--source", metavar="URL", help="pin this archive URL (what `build --source URL` downloads) "
                   "instead of a recipe: prints URL#sha256=HEX")
    p.add_argument("--refresh", action="store_true", help="download and re-pin URLs the lock already pins")
    _common(p)
    p.set_defaults(func=_lock)


def _common(p: argparse.ArgumentParser) -> None:
    # The build options' --mirror, --insecure-mirror and --offline, with what each means for a download.
    add_option(p, "mirrors", help="mirror base URL, tried before upstream, in order (also $TOOLKIT_MIRRORS)")
    add_option(p, "insecure_mirror")
    add_option(p, "offline", help="read only the cache and file:// mirrors, never the network (fetch fails naming "
                                  "what is missing; lock leaves it unpinned, with a warning and a closing `left "
                                  "unpinned:` line)")
    p.add_argument("--cache-dir", type=Path, default=None, help="cache folder (default $TOOLKIT_CACHE_DIR or "
                   "the platform's user cache)")


def _mirrors(args: argparse.Namespace) -> tuple[str, ...]:
    """--mirror values then $TOOLKIT_MIRRORS, each checked (a file:// mirror must exist)."""
    from toolkit.sources.mirrors import check_mirrors, mirrors_from_env

    return check_mirrors(tuple(args.mirrors) + tuple(m for m in mirrors_from_env() if m not in args.mirrors))


def _download_options(args: argparse.Namespace) -> DownloadOptions:
    from toolkit.sources.download import DownloadOptions

    return DownloadOptions(insecure_mirror=args.insecure_mirror)


def _cache(args: argparse.Namespace) -> Cache:
    from toolkit.sources.cache import Cache

    return Cache(args.cache_dir.resolve()) if args.cache_dir else Cache.default()


def _fetch(args: argparse.Namespace) -> int:
    from toolkit.sources.cache import file_name_for
    from toolkit.sources.download import fetch
    from toolkit.sources.extract import extract_archive, is_archive

    sha = args.sha256.lower()
    if not is_sha256(sha):
        raise ToolkitError(f"--sha256 {shorten(args.sha256)}: expected 64 hex digits")
    path = fetch(args.url, sha, _cache(args), _mirrors(args), args.offline, _download_options(args))
    dest: Path = args.dest
    if is_archive(file_name_for(args.url)) or is_archive(path.name):
        extract_archive(path, dest, args.strip_components)
        log.info(f"unpacked {redact_url(args.url)} into {dest}")
        print(dest)
    else:
        target = dest / file_name_for(args.url)
        with open(path, "rb") as handle:
            atomic_write_bytes(target, handle.read())
        shutil.copymode(path, target)
        log.info(f"copied {redact_url(args.url)} to {target}")
        print(target)
    return 0


def _lock(args: argparse.Namespace) -> int:
    from toolkit.recipe.load import PROJECT_ROOT, find_recipe
    from toolkit.sources.lock import lock_recipe, recipe_urls

    if args.source is not None:
        return _lock_source(args)
    recipe = find_recipe(args.recipe, PROJECT_ROOT)
    result = lock_recipe(recipe, _cache(args), _mirrors(args), refresh=args.refresh, offline=args.offline,
                         options=_download_options(args))
    for url, sha in result.added.items():
        print(f"pinned {sha}  {redact_url(url)}  (from {result.origins.get(url, 'upstream')})")
    for url in result.removed:
        print(f"dropped {redact_url(url)} (no longer unpinned in the recipe)")
    if result.added or result.removed:
        log.info(f"{result.path}: {len(result.added)} added, {len(result.kept)} kept, {len(result.removed)} dropped")
    elif result.kept:
        print(f"nothing new to pin: the {len(result.kept)} URL(s) {recipe} leaves unpinned are in {result.path} "
              "(--refresh downloads them again)")
    elif result.unpinned:
        pass   # said below
    elif urls := recipe_urls(recipe):
        print(f"nothing to pin: all {len(urls)} URL(s) {recipe} names have a sha256 in the recipe itself")
    else:
        print(f"nothing to pin: {recipe} names no URL to download (its sources are local folders or git commits)")
    if result.unpinned:
        print(f"left unpinned: {len(result.unpinned)} URL(s) could not be read (warned above): "
              + ", ".join(sorted(result.unpinned.values()))
              + "; a build that needs one refuses it unpinned, naming it")
    return 0


def _lock_source(args: argparse.Namespace) -> int:
    """`lock --source URL`: the one archive a `build --source URL` would download, pinned for the command line."""
    from toolkit.recipe.sources import source_from_argument
    from toolkit.sources.download import fetch_unpinned_from

    settings = source_from_argument(args.source)
    if settings.url is None:
        what = "a local folder" if settings.path is not None else "a git commit, pinned by the commit itself"
        print(f"nothing to pin: --source {redact_text(args.source)} is {what}")
        return 0
    if settings.sha256 is not None:
        print(f"nothing to pin: --source {redact_url(args.source)} already carries its sha256")
        return 0
    _, digest, where = fetch_unpinned_from(settings.url, _cache(args), _mirrors(args), _download_options(args),
                                           offline=args.offline)
    # Printed without credentials: they come from ~/.netrc or the command line each time, never a saved line.
    pinned = f"{public_url(settings.url)}#sha256={digest}"
    log.info(f"pinned (from {where}): build with --source '{pinned}'")
    print(pinned)
    return 0
