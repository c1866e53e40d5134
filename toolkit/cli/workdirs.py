"""`python -m toolkit list` and `clean`: what the build folder holds, and removing it.

list: every recipe (its features and their defaults) and the variants built for it under the build
root. clean: see toolkit/pipeline/clean.py.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from toolkit.pipeline.options import add_option
from toolkit.pipeline.workspace import default_build_folder
from toolkit.recipe.load import PROJECT_ROOT, load_recipe, recipes_dir
from toolkit.util.errors import ToolkitError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("list", help="recipes, their features (with defaults) and the variants built")
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
    root = _build_folder(args)
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


def _clean(args: argparse.Namespace) -> int:
    from toolkit.pipeline import clean

    return clean.run(args)
