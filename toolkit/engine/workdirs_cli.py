"""`python -m toolkit list` and `clean`: what the build root holds, and removing it.

list: every recipe (its features and their defaults) and the variants built for it under the build
root. clean: one variant's work tree, one recipe's folder, or everything under the build root; the
download cache only when asked with --cache, and never as a side effect, even when it lies inside.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from toolkit.engine.options import check_variant
from toolkit.engine.workspace import Workspace, default_build_root
from toolkit.recipe.load import PROJECT_ROOT, find_recipe, load_recipe, recipes_dir
from toolkit.util import log
from toolkit.util.errors import RecipeError, ToolkitError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("list", help="recipes, their features (with defaults) and the variants built")
    p.add_argument("--build-dir", type=Path, metavar="DIR", help="build root (default: $TOOLKIT_BUILD_DIR or ./build)")
    p.set_defaults(func=_list)

    p = sub.add_parser("clean", help="remove a variant's work tree, a recipe's builds, or the whole build root",
                       description="Remove build outputs. The download cache stays unless --cache is given.")
    p.add_argument("--recipe", metavar="NAME|PATH",
                   help="the recipe whose builds to remove (all its variants unless --variant is given)")
    p.add_argument("--variant", metavar="NAME", help="only this work tree, build/<recipe>/<NAME> "
                                                     "(recipe: --recipe, default amdgpu-ep)")
    p.add_argument("--all", action="store_true", help="everything under the build root")
    p.add_argument("--cache", action="store_true", help="also the shared download cache ($TOOLKIT_CACHE_DIR)")
    p.add_argument("--build-dir", type=Path, metavar="DIR", help="build root (default: $TOOLKIT_BUILD_DIR or ./build)")
    p.add_argument("--dry-run", action="store_true", help="say what would be removed; remove nothing")
    p.set_defaults(func=_clean)


def _build_root(args: argparse.Namespace) -> Path:
    return (args.build_dir or default_build_root()).resolve()


def _work_trees(folder: Path) -> list[Path]:
    """Variants built in build/<recipe>/: folders holding a stage state folder."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink() and (p / "state").is_dir())


def _list(args: argparse.Namespace) -> int:
    root = _build_root(args)
    known = set()
    for file in sorted(recipes_dir(PROJECT_ROOT).glob("*.toml")):
        if file.name.endswith(".lock.toml"):
            continue
        try:
            recipe = load_recipe(file)
        except ToolkitError as exc:
            print(f"{file.stem}: cannot be read: {exc.message}")
            continue
        known.add(recipe.name)
        print(f"{recipe.name}  {recipe.summary}  ({file})")
        if recipe.features:
            print("  features: " + ", ".join(f"{name} ({'on' if f.default else 'off'} by default)"
                                             for name, f in recipe.features.items()))
        built = _work_trees(root / recipe.name)
        print("  built: " + (", ".join(p.name for p in built) if built else "nothing") + f"  (in {root / recipe.name})")
    others = [p for p in sorted(root.iterdir()) if p.is_dir() and p.name not in known] if root.is_dir() else []
    for folder in others:
        trees = _work_trees(folder)
        if trees:
            print(f"{folder.name}  (recipe file not in {recipes_dir(PROJECT_ROOT)})")
            print("  built: " + ", ".join(p.name for p in trees) + f"  (in {folder})")
    return 0


def _recipe_name(value: str) -> str:
    """A recipe by name or path; a name whose recipe file is gone still names its build folder."""
    try:
        return load_recipe(find_recipe(value, PROJECT_ROOT)).name
    except RecipeError:
        if "/" in value or value.endswith(".toml"):
            raise
        return check_variant(value)


def _clean(args: argparse.Namespace) -> int:
    root = _build_root(args)
    if not (args.all or args.recipe or args.variant or args.cache):
        raise ToolkitError("clean: say what to remove", hint="--variant NAME [--recipe NAME], --recipe NAME, "
                                                             "--all (the build root), --cache (the download cache)")
    if args.all and (args.recipe or args.variant):
        raise ToolkitError("clean: --all removes everything under the build root; leave out --recipe/--variant")
    from toolkit.sources.cache import default_cache_dir

    cache = default_cache_dir().resolve()
    targets: list[Path] = []
    if args.all:
        targets = sorted(root.iterdir()) if root.is_dir() else []
    elif args.recipe or args.variant:
        name = _recipe_name(args.recipe or "amdgpu-ep")
        if args.variant:
            targets = [Workspace.for_recipe(root, name, check_variant(args.variant)).root]
        else:
            targets = [root / name]
    if args.cache:
        targets.append(cache)
    removed = 0
    for target in targets:
        if not (target.exists() or target.is_symlink()):
            log.info(f"nothing to remove at {target}")
            continue
        keep = cache if not args.cache else None
        removed += _remove(target, keep, args.dry_run)
    if not removed:
        log.info("nothing removed")
    return 0


def _remove(target: Path, keep: Path | None, dry_run: bool) -> int:
    """Remove `target`, except `keep` (and the folders leading to it) when it lies inside."""
    verb = "would remove" if dry_run else "removed"
    if keep is not None and target.resolve() == keep:
        log.info(f"kept {target}: it is the download cache (clean --cache removes it)")
        return 0
    if target.is_symlink() or not target.is_dir():
        if not dry_run:
            target.unlink()
        log.info(f"{verb} {target}")
        return 1
    if keep is not None and keep.is_relative_to(target.resolve()):
        count = sum(_remove(child, keep, dry_run) for child in sorted(target.iterdir()))
        return count
    if not dry_run:
        shutil.rmtree(target)
    log.info(f"{verb} {target}")
    return 1
