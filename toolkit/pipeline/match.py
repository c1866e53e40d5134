"""Which recipe a source tree belongs to, judged by the one thing a recipe knows about its tree: whether its
patch series applies there. Used when `--source` brings a tree the chosen recipe's patches do not fit, so the
error names the recipe to use instead of advising to refresh patches written for another tree.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from toolkit.recipe.load import Recipe, load_recipe, recipes_dir
from toolkit.util.errors import ToolkitError


def series_failures(recipe: Recipe, tree: Path, features: Iterable[str]) -> list[str]:
    """'patch: summary' for each base-phase patch of the recipe's series that does not apply to tree."""
    from toolkit import patching

    if recipe.series is None:
        return []
    series, _ = patching.load_series(recipe.series).for_tree(tree)
    return [f"{a.entry.name}: {a.summary}" for a in patching.analyze(series, tree, "base", sorted(features))
            if not a.ok]


def fitting_recipes(tree: Path, project_root: Path, exclude: str) -> list[str]:
    """Recipes (other than `exclude`) that have a patch series and whose series applies cleanly to tree."""
    from toolkit.recipe import features as feat

    fits = []
    for path in sorted(recipes_dir(project_root).glob("*.toml")):
        if ".lock" in path.name:
            continue
        try:
            recipe = load_recipe(path)
        except ToolkitError:
            continue
        if recipe.name == exclude or recipe.series is None:
            continue
        defaults = [n for n, on in feat.select_features(recipe, [], []).items() if on]
        if not series_failures(recipe, tree, defaults):
            fits.append(recipe.name)
    return fits


def check_tree_fits(recipe: Recipe, tree: Path, features: Iterable[str], project_root: Path) -> None:
    """Raise an error naming the likely recipe when the recipe's patches do not fit a --source tree and
    another recipe's do."""
    failed = series_failures(recipe, tree, features)
    if not failed:
        return
    likely = fitting_recipes(tree, project_root, recipe.name)
    listed = "\n".join(f"  {line}" for line in failed[:5])
    if likely:
        raise ToolkitError(
            f"--source {tree}: the patch series of recipe {recipe.name} ({recipe.series}) does not fit this tree:\n"
            f"{listed}\nthe tree fits recipe {' or '.join(likely)} (its patch series applies)",
            hint=f"pass --recipe {likely[0]}",
        )
    # No other recipe fits: a drifted tree of this recipe, most likely. The patch stage's per-hunk analysis
    # (patch, file, hunk, what it found, what to do) says more than a summary here would.
