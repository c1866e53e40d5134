"""`python -m toolkit list` and `clean`: what the build folder holds, and removing it.

list: every recipe (its features and their defaults) and the variants built for it in the build folder
and in build/roots/<root>/ (builds made in a build root). clean: see toolkit/pipeline/clean.py.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from toolkit.buildroot.session import ROOTS_BUILD
from toolkit.pipeline.options import add_option
from toolkit.pipeline.workspace import default_build_folder
from toolkit.recipe.load import PROJECT_ROOT, load_recipe, recipes_dir
from toolkit.util.errors import ToolkitError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("list", help="recipes, their features (with defaults) and the variants built (in the build "
                                    "folder and in build/roots/<root>/)")
    add_option(p, "build_folder")
    p.set_defaults(func=_list)

    p = sub.add_parser("clean", help="remove work trees, a recipe's builds, the build folder, or the downloads",
                       description="Remove build outputs: without --variant, --recipe or --all, every work tree "
                                   "under the build folder (build/<recipe>/<variant>, and build/roots/<root>/<recipe>/"
                                   "<variant> of builds made in a build root). A work tree a build is using, at any "
                                   "depth under what is removed, is refused, naming the build's pid (or waited for "
                                   "with --wait). The toolkit cache stays, but for its downloads with --cache.")
    p.add_argument("--recipe", metavar="NAME|PATH",
                   help="the recipe whose builds to remove, here and in build/roots/<root>/ (all its variants unless "
                        "--variant is given)")
    p.add_argument("--variant", metavar="NAME", help="only this work tree, build/<recipe>/<NAME> (and "
                                                     "build/roots/<root>/<recipe>/<NAME>; recipe: --recipe, default "
                                                     "amdgpu-ep)")
    p.add_argument("--all", action="store_true", help="everything under the build folder")
    p.add_argument("--cache", action="store_true",
                   help="the toolkit cache's downloads (alone: only them); its build roots, ccache and zig stay")
    p.add_argument("--wait", action="store_true",
                   help="wait for a build using what is to be removed (default: refuse, naming it)")
    add_option(p, "build_folder")
    p.add_argument("--dry-run", action="store_true", help="say what would be removed, and its size; remove nothing")
    p.set_defaults(func=_clean)


def _build_folder(args: argparse.Namespace) -> Path:
    return (args.build_folder or default_build_folder()).resolve()


def _work_trees(folder: Path) -> list[Path]:
    """Variants built in build/<recipe>/."""
    from toolkit.pipeline.clean import is_work_tree

    return sorted(p for p in folder.iterdir() if is_work_tree(p)) if folder.is_dir() else []


def _list(args: argparse.Namespace) -> int:
    from toolkit.pipeline.clean import recipe_folders

    root = _build_folder(args)
    # The build folder's own trees, then build/roots/<root>/ of each build root builds were made in.
    folders = recipe_folders(root)
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
        lines = _built_lines(root, folders, recipe.name)
        print("\n".join(lines) if lines else f"  built: nothing  (in {root / recipe.name})")
    for folder in (f for f in folders if f.is_dir()):
        for other in sorted(p for p in folder.iterdir() if p.is_dir() and p.name not in known):
            if other.name != ROOTS_BUILD and _work_trees(other):
                print(f"{other.name}  (recipe file not in {recipes_dir(PROJECT_ROOT)})")
                print("\n".join(_built_lines(root, [folder], other.name)))
    return 0


def _built_lines(root: Path, folders: list[Path], name: str) -> list[str]:
    """One line per folder holding work trees of recipe `name`: the build folder's, then each build root's."""
    lines = []
    for folder in folders:
        trees = _work_trees(folder / name)
        if trees:
            where = "" if folder == root else f" in root {folder.name}"
            lines.append(f"  built{where}: " + ", ".join(p.name for p in trees) + f"  (in {folder / name})")
    return lines


def _clean(args: argparse.Namespace) -> int:
    from toolkit.pipeline import clean

    return clean.run(args)
