"""Recipes: what to build, read from recipes/<name>.toml into typed, validated settings.

A recipe is data only. Every section is read strictly through tomlread.Table, so any wrong key, type or
value fails with the file and the dotted key. Relative paths are relative to the recipe's folder.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from toolkit.recipe.confine import confined
from toolkit.recipe.core import NAME, BuildSettings, Feature, Output, read_build, read_features, read_outputs
from toolkit.recipe.schema import doc, recipe_table
from toolkit.util.errors import RecipeError
from toolkit.util.tomlread import Table, load_toml

if TYPE_CHECKING:  # imported for real only where the recipe is read: see load_recipe and read_sections
    from toolkit.recipe.api_check import ApiCheckSettings
    from toolkit.recipe.compile_check import CompileCheckSettings
    from toolkit.recipe.hipify import HipifySettings
    from toolkit.recipe.release import ReleaseSettings
    from toolkit.recipe.smoke import SmokeSettings
    from toolkit.recipe.sources import FetchContentDep, OrtSettings, Requirements, SourceSettings
    from toolkit.recipe.wheel import WheelSettings

T = TypeVar("T")


@recipe_table("", keys={
    "recipe": "The recipe's identity and shape.",
    "recipe.extends": "A shared fragment (path relative to the recipe) whose `[features]` this recipe takes; the "
                      "recipe's own features win by name.",
    "features.<name>": "One feature.",
    "patches": "The patch series.",
})
@dataclass(frozen=True)
class Recipe:
    name: str = field(metadata=doc(
        "The recipe's name: its file's stem (`recipes/NAME.toml` says `name = \"NAME\"`; any other is refused), "
        "lowercase letters, digits, `-`, `_`; names the work tree `build/<name>/`.", key="recipe.name"))
    summary: str = field(metadata=doc("One line shown by `list`.", key="recipe.summary"))
    file: Path
    # None: the tree comes from --source
    source: SourceSettings | None = field(metadata=doc(
        "Where the tree to build comes from: exactly one of `path`, `url`, `git`. Left out: the tree must come "
        "from `--source`."))
    build: BuildSettings = field(metadata=doc(
        "How CMake configures and builds the tree, and how its libraries are collected."))
    features: dict[str, Feature] = field(metadata=doc(
        "Features: each turns a CMake option on or off (`--with-NAME`, `--without-NAME`)."))
    outputs: tuple[Output, ...] = field(metadata=doc("Libraries the build must produce; `check` verifies them."))
    series: Path | None = field(metadata=doc(
        "Path of the `series` file, relative to the recipe.", key="patches.series"))
    # The stages this recipe runs, by name, in the pipeline's order; None: every stage that applies to it.
    stages: tuple[str, ...] | None = field(default=None, metadata=doc(
        "The stages this recipe runs, by name (see the stage reference); left out: every stage that applies.",
        key="recipe.stages"))
    # The optional sections, each used by one area of the toolkit and read by its own module here in recipe/ (the
    # areas sit above this package and read their settings from it); a field's name is its TOML section's, its doc()
    # what the section is for. A new section is a module here, a field and its reader's line in read_sections (its
    # keys' meanings are on its own class's fields: toolkit/recipe/schema.py).
    hipify: HipifySettings | None = field(default=None, metadata=doc(
        "The hipify stage: which CUDA files are converted and how."))
    compile_check: CompileCheckSettings | None = field(default=None, metadata=doc(
        "The compile-check stage: compile every hipified unit with the build root's hipcc."))
    release: ReleaseSettings | None = field(default=None, metadata=doc(
        "The release matrix (`nox -s release`): Python versions x GPU target sets x feature sets."))
    wheel: WheelSettings | None = field(default=None, metadata=doc("The wheel `--wheel` packages."))
    smoke: SmokeSettings | None = field(default=None, metadata=doc(
        "What `smoke` checks after installing the wheel in a fresh venv."))
    api_check: ApiCheckSettings | None = field(default=None, metadata=doc(
        "The api-check stage: the system APIs the tree calls must be in the headers it compiles with."))
    fetchcontent: tuple[FetchContentDep, ...] = field(default=(), metadata=doc(
        "The tree's FetchContent dependencies, served by the toolkit's dependency provider from verified "
        "folders."))
    ort: OrtSettings | None = field(default=None, metadata=doc(
        "ONNX Runtime's packages (headers, library, CMake config) to build against, one per platform."))
    requires: Requirements | None = field(default=None, metadata=doc(
        "The installs a build needs (preflight): `ort`, `rocm`, `migraphx`."))

    @property
    def dir(self) -> Path:
        return self.file.parent


# The checkout the toolkit runs from: recipes/, patches/ and samples/ live beside the package.
PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_RECIPE = "amdgpu-ep"
"""The recipe every command takes without --recipe: the bundled sample."""


def recipe_argument(value: str) -> Path:
    """argparse type for --recipe: a recipe name (recipes/NAME.toml) or a path."""
    return find_recipe(value, PROJECT_ROOT)


def recipes_dir(project_root: Path) -> Path:
    return project_root / "recipes"


def find_recipe(name_or_path: str, project_root: Path) -> Path:
    """A recipe by name (recipes/<name>.toml) or by path."""
    candidate = Path(name_or_path)
    if candidate.suffix == ".toml" or "/" in name_or_path:
        if not candidate.is_file():
            raise RecipeError(f"{candidate}: recipe file not found")
        return candidate.resolve()
    path = recipes_dir(project_root) / f"{name_or_path}.toml"
    if not path.is_file():
        known = sorted(p.stem for p in recipes_dir(project_root).glob("*.toml") if ".lock" not in p.name)
        raise RecipeError(
            f"no recipe named '{name_or_path}' (looked for {path})",
            hint=f"known recipes: {', '.join(known) or 'none'}",
        )
    return path.resolve()


def load_recipe(path: Path) -> Recipe:
    path = Path(path).resolve()
    root = load_toml(path)

    meta = root.table("recipe")
    name = meta.str("name")
    if not NAME.match(name):
        raise meta.error("name", f"expected lowercase letters, digits, '-' or '_', got {name!r}")
    if name != path.stem:
        # The name picks the work tree (build/<name>/) and `--recipe NAME` finds recipes/<name>.toml: a copy
        # that kept another recipe's name would build into, and clean, that recipe's folders.
        raise RecipeError(f"{path}: key 'recipe.name': {name!r} is not the file's name; a recipe's name is its "
                          f"file's stem ({path.stem!r} for {path.name})",
                          hint=f"set name = \"{path.stem}\", or rename the file to {name}.toml")
    summary = meta.str("summary", "")
    base = _load_base(meta, path)
    # Read with a default, not after has(): a key read is a key done() names among the known ones.
    named = meta.str_list("stages", None)
    stages = tuple(named) if named is not None else None
    meta.done()

    # Imported here, as the sections' readers are (read_sections): reading a recipe's name needs none of them.
    from toolkit.recipe.sources import SourceSettings

    source = SourceSettings.from_table(root.table("source"), path.parent) if root.has("source") else None
    build = read_build(root.table("build", None))
    features = read_features(base.table("features", None)) if base is not None else {}
    own = read_features(root.table("features", None), features)
    features.update(own)
    # A feature's list-valued defines reach CMake as lists too: one set of list names per recipe.
    build = replace(build, list_defines=tuple(dict.fromkeys(
        [*build.list_defines, *(name for f in features.values() for name in f.list_defines)])))
    outputs = read_outputs(root, features)

    series = None
    if root.has("patches"):
        patches = root.table("patches")
        series = confined(path.parent / patches.str("series"), path.parent, f"{path}: key 'patches.series'")
        patches.done()

    recipe = read_sections(Recipe(name, summary, path, source, build, features, outputs, series, stages), root)
    _check_feature_references(root, recipe)
    root.done()
    return recipe


def read_sections(recipe: Recipe, root: Table) -> Recipe:
    """The recipe with its optional sections (the fields after `stages`) read from `root`, each by its own
    section's reader. The readers are imported here, not at the top: `python -m toolkit` imports this module at
    start-up, and a command that only names a recipe should not import every section's reader to read it."""
    from toolkit.recipe.api_check import from_table as api_check
    from toolkit.recipe.compile_check import from_table as compile_check
    from toolkit.recipe.hipify import from_table as hipify
    from toolkit.recipe.release import from_table as release
    from toolkit.recipe.smoke import from_table as smoke
    from toolkit.recipe.sources import OrtSettings, Requirements, fetchcontent_from_tables
    from toolkit.recipe.wheel import from_table as wheel

    where = recipe.dir
    return replace(
        recipe,
        hipify=_section(root, "hipify", hipify, where),
        compile_check=_section(root, "compile_check", compile_check, where),
        release=_section(root, "release", release, where),
        wheel=_section(root, "wheel", wheel, where),
        smoke=_section(root, "smoke", smoke, where),
        api_check=_section(root, "api_check", api_check, where),
        # An array of tables, not a table: read whole by its own function.
        fetchcontent=fetchcontent_from_tables(root.tables("fetchcontent"), where) if root.has("fetchcontent")
        else (),
        ort=_section(root, "ort", OrtSettings.from_table, where),
        requires=_section(root, "requires", Requirements.from_table, where),
    )


def _section(root: Table, name: str, read: Callable[[Table, Path], T], recipe_dir: Path) -> T | None:
    """Section `name` read by `read`; None where the recipe has none (asked with has(): the reference shows
    the section as optional)."""
    return read(root.table(name), recipe_dir) if root.has(name) else None


def _load_base(meta: Table, path: Path) -> Table | None:
    """`extends = "FILE"`: a shared recipe fragment whose [features] this recipe takes (its own win per name).

    Only [features] is shared: source, outputs, patches and the rest describe one tree and stay in its recipe.
    Errors in the fragment name the fragment's file and key.
    """
    rel = meta.str("extends", None)
    if rel is None:
        return None
    base_path = confined(path.parent / rel, path.parent, f"{path}: key 'recipe.extends'")
    if not base_path.is_file():
        raise meta.error("extends", f"no such file {base_path} (relative to {path.parent})")
    if base_path == path:
        raise meta.error("extends", "a recipe cannot extend itself")
    base = load_toml(base_path)
    for key in base.keys():
        if key != "features":
            raise base.error(key, f"a shared fragment (extended by {path.name}) holds only [features]")
    return base


def _check_feature_references(root: Table, recipe: Recipe) -> None:
    """Other sections name features (a wheel component only for hipdnn, say): they must exist."""
    features = recipe.features
    components = recipe.wheel.components if recipe.wheel is not None else ()
    for i, component in enumerate(components):
        for key, name in (("feature", component.feature), ("unless", component.unless)):
            if name is not None and name not in features:
                raise RecipeError(f"{root.file}: key 'wheel.components[{i}].{key}': no feature named "
                                  f"{name!r} (features: {', '.join(features)})")
    for i, name in enumerate(recipe.wheel.named_features if recipe.wheel is not None else ()):
        if name not in features:
            raise RecipeError(f"{root.file}: key 'wheel.named_features[{i}]': no feature named {name!r} "
                              f"(features: {', '.join(features)})")
    named = recipe.wheel.named_features if recipe.wheel is not None else ()
    for i, extra in enumerate(recipe.wheel.extras if recipe.wheel is not None else ()):
        if extra.feature is not None and extra.feature not in named:
            raise RecipeError(f"{root.file}: key 'wheel.extras[{i}].feature': {extra.feature!r} is not one of "
                              f"[wheel] named_features ({', '.join(named) or 'none'}): a wheel that offers the extra "
                              "only with a feature on needs a name of its own")
