"""`python -m toolkit clean`: remove build outputs, never what a running process uses.

Without a selector it removes every work tree under the build folder (`build/<recipe>/<variant>/`, and
`build/roots/<root>/<recipe>/<variant>/` of the builds made in a build root), the build outputs README's
`nox -s clean` promises; `--variant`, `--recipe` and `--all` choose one work tree, one recipe's folders (here and
in each root's) or everything under the build folder. A work tree goes only under the lock a build holds on it
(toolkit.util.locks, the one `build --no-wait` reports), at whatever depth under what is removed it lies: one in
use is refused, naming the holder, or waited for with `--wait`; nothing is removed until every lock is taken.

The toolkit cache is touched only with `--cache`, and then only its downloads (downloads/, partial/, git/,
content/), each under the lock a download holds. Build roots (`root prune`), ccache, zig, the compile-check
and hipify-perl results and the lock files stay: each goes through the command that names it. `--dry-run`
says what would go and its size, and what is in use.
"""

from __future__ import annotations

import argparse
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.buildroot.session import ROOTS_BUILD
from toolkit.pipeline.options import check_work_tree_name
from toolkit.pipeline.workspace import Workspace, default_build_folder
from toolkit.recipe.load import DEFAULT_RECIPE, PROJECT_ROOT, find_recipe, load_recipe
from toolkit.util import log
from toolkit.util.errors import RecipeError, ToolkitError
from toolkit.util.locks import WorkLock, holder_of, lock_path

DOWNLOADS = ("downloads", "partial", "git", "content")
# What else lives in the toolkit cache, and what removes it.
_KEPT = {
    "roots": "build roots: `root prune NAME` removes the stale ones",
    "ccache": "the compiler cache builds share (`ccache --clear` with CCACHE_DIR set to it empties it)",
    "zig": "the pinned zig toolchain the zig builds use",
    "locks": "lock files: a held one belongs to a running process",
    "compile-check": "each unit's compile-check result, kept by content key",
    "hipify-perl": "hipify-perl's outputs, kept by content key",
    "unpacked": "unpacked packages builds use (ORT's)",
}


@dataclass
class Target:
    path: Path
    # (what a lock guards, its lock file: None for the one beside it)
    guards: list[tuple[Path, Path | None]] = field(default_factory=list)
    group: Path | None = None  # the cache folder it lies in: the dry run sums such entries up


def run(args: argparse.Namespace) -> int:
    root = (args.build_folder or default_build_folder()).resolve()
    if args.all and (args.recipe or args.variant):
        raise ToolkitError("clean: --all removes everything under the build folder; leave out --recipe/--variant")
    from toolkit.util.cachedir import default_cache_dir

    cache = default_cache_dir().resolve()
    targets = [] if args.cache and not (args.all or args.recipe or args.variant) else _build_targets(args, root)
    if args.cache:
        targets += _cache_targets(cache)
    if args.dry_run:
        _plan(targets, cache, args.cache)
        return 0
    locks = _take(targets, args.wait)
    try:
        removed = sum(_remove(t.path, None if t.group else cache) for t in targets)
    finally:
        for lock in reversed(locks):
            lock.release()
    if args.cache:
        _say_kept(cache)
    if not removed:
        chosen = args.cache or args.all or args.recipe or args.variant
        log.info("nothing removed" + ("" if targets or chosen else f": no work tree under {root}"))
    return 0


def _recipe_name(value: str) -> str:
    """A recipe by name or path; a name whose recipe file is gone still names its build folder."""
    try:
        return load_recipe(find_recipe(value, PROJECT_ROOT)).name
    except RecipeError:
        if "/" in value or value.endswith(".toml"):
            raise
        return check_work_tree_name(value)


def is_work_tree(path: Path) -> bool:
    """A variant built in build/<recipe>/: a folder holding a stage state folder."""
    return path.is_dir() and not path.is_symlink() and (path / "state").is_dir()


def _in_use_or_tree(path: Path) -> bool:
    return is_work_tree(path) or lock_path(path).exists()


def _guards(target: Path) -> list[tuple[Path, Path | None]]:
    """What must be free for `target` to go: every folder at any depth under it (itself too) that is a work tree
    or has a lock file (a recipe folder's work trees, build/roots/<root>/<recipe>/<variant> of a build made in a
    root, a release's output folder), and what each lock file in them guards (a build whose tree is not made
    yet). A work tree's own lock covers what it holds: the walk does not go into it, nor through links."""
    found = [target] if _in_use_or_tree(target) else []
    for folder, subfolders, _ in os.walk(target) if target.is_dir() and not target.is_symlink() else ():
        here = Path(folder)
        if here != target and is_work_tree(here):
            subfolders.clear()
            continue
        found += [here / f.name[1:-len(".lock")] for f in sorted(here.glob(".*.lock"))]
        inside = [here / name for name in sorted(subfolders)]
        subfolders[:] = [name for name in sorted(subfolders) if not name.startswith(".")
                         and not (here / name).is_symlink()]
        found += [p for p in inside if not p.name.startswith(".") and _in_use_or_tree(p)]
    return [(p, None) for p in dict.fromkeys(found)]


def recipe_folders(root: Path) -> list[Path]:
    """The folders that hold recipes' work trees: the build folder, and build/roots/<root>/ of each build root
    builds were made in (toolkit/buildroot/session.py)."""
    roots = root / ROOTS_BUILD
    if not roots.is_dir() or roots.is_symlink() or is_work_tree(roots):
        return [root]
    return [root, *sorted(p for p in roots.iterdir() if p.is_dir() and not p.is_symlink()
                          and not p.name.startswith(".") and not is_work_tree(p))]


def _build_targets(args: argparse.Namespace, root: Path) -> list[Target]:
    folders = recipe_folders(root)
    if args.all:
        paths = sorted(root.iterdir()) if root.is_dir() else []
    elif args.recipe or args.variant:
        name = _recipe_name(args.recipe or DEFAULT_RECIPE)
        variant = check_work_tree_name(args.variant) if args.variant else None
        wanted = [Workspace.for_recipe(f, name, variant).root if variant else f / name for f in folders]
        paths = [wanted[0], *(p for p in wanted[1:] if p.exists() or p.is_symlink())]
        if not (paths[0].exists() or paths[0].is_symlink()):
            log.info(f"nothing to remove at {paths[0]}")
    else:  # every work tree: what a build made (here or in a build root), and nothing else the build folder holds
        paths = [p for folder in folders for recipe in _subfolders(folder, skip=ROOTS_BUILD if folder == root else "")
                 for p in sorted(recipe.iterdir()) if not p.name.startswith(".") and _in_use_or_tree(p)]
    return [Target(p, _guards(p)) for p in paths if p.exists() or p.is_symlink()]


def _subfolders(folder: Path, skip: str) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink() and not p.name.startswith(".")
                  and (p.name != skip or is_work_tree(p)))


def _cache_targets(cache: Path) -> list[Target]:
    """The downloads, each with the lock file its download takes (toolkit.sources.cache.Cache.lock)."""
    locks = cache / "locks"
    out: list[Target] = []
    for folder in (cache / name for name in DOWNLOADS):
        for entry in sorted(folder.iterdir()) if folder.is_dir() else []:
            if folder.name == "downloads":
                guards: list[tuple[Path, Path | None]] = [(entry, locks / f"{entry.name}.lock")]
            elif folder.name == "partial":
                guards = [(entry, locks / f"{entry.name.removesuffix('.part')}.lock")]
            elif folder.name == "git":  # git/<url key>/<commit>, each checked out under git-<url key>-<commit>
                names = {f"git-{entry.name}-{c.name}.lock" for c in entry.iterdir()} if entry.is_dir() else set()
                names |= {f.name for f in locks.glob(f"git-{entry.name}-*.lock")}
                guards = [(entry, locks / name) for name in sorted(names)]
            else:  # content/: one small index file each, written whole
                guards = []
            out.append(Target(entry, guards, folder))
    return out


def _take(targets: list[Target], wait: bool) -> list[WorkLock]:
    """Every target's locks, before anything is removed; one in use refuses the whole clean (or, with `wait`,
    is waited for)."""
    taken: list[WorkLock] = []
    try:
        for target in targets:
            for guarded, file in target.guards:
                if file is not None and not file.parent.is_dir():
                    continue  # no download ever ran here: nothing to wait for
                try:
                    taken.append(WorkLock(guarded, wait=wait, file=file).acquire())
                except ToolkitError as exc:
                    raise ToolkitError(f"clean: {exc.message}; nothing was removed",
                                       hint="let it finish, or run clean again with --wait to wait for it") from None
    except BaseException:
        for lock in reversed(taken):
            lock.release()
        raise
    return taken


def size_of(path: Path) -> int:
    """Bytes of the files under `path` (links not followed)."""
    if path.is_symlink() or not path.is_dir():
        return path.lstat().st_size
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:  # removed meanwhile
                pass
    return total


def _plan(targets: list[Target], cache: Path, downloads: bool) -> None:
    groups: dict[Path, list[Target]] = {}
    for target in targets:
        busy = [(g, h) for g, f in target.guards if (h := holder_of(g, file=f))]
        if busy:
            guarded, holder = busy[0]
            inside = "" if guarded == target.path else f", which holds {guarded}"
            log.info(f"in use by {holder}: {target.path}{inside} (clean refuses it; --wait waits for it)")
        elif target.group is not None:
            groups.setdefault(target.group, []).append(target)
        else:
            _remove(target.path, cache, dry_run=True)
    for group, entries in groups.items():
        total = sum(size_of(t.path) for t in entries)
        log.info(f"would remove {len(entries)} entr{'y' if len(entries) == 1 else 'ies'} of {group} "
                 f"({log.human_size(total)})")
    if downloads:
        _say_kept(cache)
    if not targets:
        log.info("nothing to remove")


def _say_kept(cache: Path) -> None:
    for entry in sorted(cache.iterdir()) if cache.is_dir() else []:
        if entry.name not in DOWNLOADS:
            log.info(f"kept {entry}: {_KEPT.get(entry.name, 'not a download')}")


def _remove(target: Path, keep: Path | None, dry_run: bool = False) -> int:
    """Remove `target`, except `keep` (and the folders leading to it) when it lies inside."""
    verb = "would remove" if dry_run else "removed"
    if keep is not None and target.resolve() == keep:
        log.info(f"kept {target}: it is the toolkit cache (clean --cache removes its downloads)")
        return 0
    if keep is not None and target.is_dir() and not target.is_symlink() and keep.is_relative_to(target.resolve()):
        return sum(_remove(child, keep, dry_run) for child in sorted(target.iterdir()))
    size = log.human_size(size_of(target))
    if not dry_run:
        if target.is_symlink() or not target.is_dir():
            target.unlink()
        else:
            shutil.rmtree(target)
    log.info(f"{verb} {target} ({size})")
    return 1
