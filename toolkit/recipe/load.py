"""Recipes: what to build, read from recipes/<name>.toml into typed, validated settings.

A recipe is data only. Every section is a frozen dataclass read by its fields (toolkit/util/tomlclass.py), so any
wrong key, type or value fails with the file and the dotted key. Relative paths are relative to the recipe's folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Self

from toolkit.recipe.confine import confined
from toolkit.recipe.core import NAME, BuildSettings, Feature, Output
from toolkit.util.errors import RecipeError
from toolkit.util.tomlclass import read
from toolkit.util.tomlfields import doc
from toolkit.util.tomlread import Site, load_toml

if TYPE_CHECKING:  # imported for real only where the recipe is read: see section_classes
    from toolkit.recipe.api_check import ApiCheckSettings
    from toolkit.recipe.compile_check import CompileCheckSettings
    from toolkit.recipe.hipify import HipifySettings
    from toolkit.recipe.release import ReleaseSettings
    from toolkit.recipe.smoke import SmokeSettings
    from toolkit.recipe.sources import FetchContentDep, OrtSettings, Requirements, SourceSettings
    from toolkit.recipe.wheel import WheelSettings


def _recipe_name(name: str, site: Site) -> None:
    if not NAME.match(name):
        raise site.error(f"expected lowercase letters, digits, '-' or '_', got {name!r}")
    stem = site.file.stem
    if name != stem:
        # The name picks the work tree (build/<name>/) and `--recipe NAME` finds recipes/<name>.toml: a copy
        # that kept another recipe's name would build into, and clean, that recipe's folders.
        raise site.error(f"{name!r} is not the file's name; a recipe's name is its file's stem ({stem!r} for "
                         f"{site.file.name})", hint=f"set name = \"{stem}\", or rename the file to {name}.toml")


def _inside_allowed_folders(path: Path, site: Site) -> None:
    confined(path, site.context.folder, site.where)


def _a_fragment(path: Path, site: Site) -> None:
    _inside_allowed_folders(path, site)
    if not path.is_file():
        raise site.error(f"no such file {path} (relative to {site.context.folder})")
    if path == site.file:
        raise site.error("a recipe cannot extend itself")


def _feature_name(feature: Feature, site: Site) -> None:
    if not NAME.match(site.name):
        raise site.error("feature names use lowercase letters, digits, '-' or '_'")


def _fetchcontent_once(deps: tuple[FetchContentDep, ...], site: Site) -> None:
    from toolkit.recipe.sources import once_each

    once_each(deps, site)


def _known_features(features: dict[str, Feature], known: dict[str, Feature], site: Site) -> None:
    """Each feature's `implies` names a feature of `known`."""
    for name, feature in features.items():
        for i, other in enumerate(feature.implies):
            if other not in known:
                raise site.key(name).key("implies").item(i).error(
                    f"no feature named {other!r} (features: {', '.join(known)})")


@dataclass(frozen=True)
class Recipe:
    # The tables no field holds, whose keys fields name with a dot (`recipe.name`): what each is for.
    TABLES: ClassVar[dict[str, str]] = {"recipe": "The recipe's identity and shape.", "patches": "The patch series."}

    name: str = field(metadata=doc(
        "The recipe's name: its file's stem (`recipes/NAME.toml` says `name = \"NAME\"`; any other is refused), "
        "lowercase letters, digits, `-`, `_`; names the work tree `build/<name>/`.", key="recipe.name",
        check=_recipe_name))
    summary: str = field(default="", metadata=doc("One line shown by `list`.", key="recipe.summary"))
    # Only [features] is shared: source, outputs, patches and the rest describe one tree and stay in its recipe.
    extends: Path | None = field(default=None, metadata=doc(
        "A shared fragment (path relative to the recipe) whose `[features]` this recipe takes; the recipe's own "
        "features win by name.", key="recipe.extends", check=_a_fragment))
    file: Path = Path()  # the recipe's file, set by its reader
    # None: the tree comes from --source
    source: SourceSettings | None = field(default=None, metadata=doc(
        "Where the tree to build comes from: exactly one of `path`, `url`, `git`. Left out: the tree must come "
        "from `--source`."))
    build: BuildSettings = field(default_factory=BuildSettings, metadata=doc(
        "How CMake configures and builds the tree, and how its libraries are collected."))
    features: dict[str, Feature] = field(default_factory=dict, metadata=doc(
        "Features: each turns a CMake option on or off (`--with-NAME`, `--without-NAME`).", each=_feature_name))
    outputs: tuple[Output, ...] = field(default=(), metadata=doc(
        "Libraries the build must produce; `check` verifies them."))
    series: Path | None = field(default=None, metadata=doc(
        "Path of the `series` file, relative to the recipe.", key="patches.series", required=True,
        check=_inside_allowed_folders))
    # The stages this recipe runs, by name, in the pipeline's order; None: every stage that applies to it.
    stages: tuple[str, ...] | None = field(default=None, metadata=doc(
        "The stages this recipe runs, by name (see the stage reference); left out: every stage that applies.",
        key="recipe.stages"))
    # The optional sections, each used by one area of the toolkit and read by its own module here in recipe/ (the
    # areas sit above this package and read their settings from it); a field's name is its TOML section's, its doc()
    # what the section is for. A new section is a module here, a field and its class's line in section_classes.
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
        "folders.", check=_fetchcontent_once))
    ort: OrtSettings | None = field(default=None, metadata=doc(
        "ONNX Runtime's packages (headers, library, CMake config) to build against, one per platform."))
    requires: Requirements | None = field(default=None, metadata=doc(
        "The installs a build needs (preflight): `ort`, `rocm`, `migraphx`."))

    @property
    def dir(self) -> Path:
        return self.file.parent

    def validated(self, site: Site) -> Self:
        """The recipe with its file, the fragment's features beneath its own, and the CMake lists of both; every
        feature another section names exists."""
        inherited = _inherited(self.extends, site.file)
        features = {**inherited, **self.features}
        _known_features(self.features, features, site.key("features"))
        # A feature's list-valued defines reach CMake as lists too: one set of list names per recipe.
        lists = tuple(dict.fromkeys([*self.build.list_defines, *(n for f in features.values()
                                                                  for n in f.list_defines)]))
        recipe = replace(self, file=site.file, features=features, build=replace(self.build, list_defines=lists))
        _check_outputs(recipe.outputs, features, site.key("outputs"))
        _check_feature_references(recipe, site)
        return recipe


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
    return read(Recipe, load_toml(path), names=section_classes())


def section_classes() -> dict[str, Any]:
    """The classes of the optional sections, by the names Recipe's fields give them. Imported here, not at the top:
    `python -m toolkit` imports this module at start-up, and a command that only names a recipe should not import
    every section's module to do so."""
    from toolkit.recipe.api_check import ApiCheckSettings
    from toolkit.recipe.compile_check import CompileCheckSettings
    from toolkit.recipe.hipify import HipifySettings
    from toolkit.recipe.release import ReleaseSettings
    from toolkit.recipe.smoke import SmokeSettings
    from toolkit.recipe.sources import FetchContentDep, OrtSettings, Requirements, SourceSettings
    from toolkit.recipe.wheel import WheelSettings

    classes: list[type] = [ApiCheckSettings, CompileCheckSettings, HipifySettings, ReleaseSettings, SmokeSettings,
                           FetchContentDep, OrtSettings, Requirements, SourceSettings, WheelSettings]
    return {cls.__name__: cls for cls in classes}


@dataclass(frozen=True)
class Fragment:
    """A shared recipe fragment (`extends`): [features] only."""

    features: dict[str, Feature] = field(default_factory=dict, metadata=doc(
        "The shared features.", each=_feature_name))

    def validated(self, site: Site) -> Self:
        _known_features(self.features, self.features, site.key("features"))
        return self


def _inherited(fragment: Path | None, recipe: Path) -> dict[str, Feature]:
    """The features of the fragment the recipe extends; errors there name the fragment's file and key."""
    if fragment is None:
        return {}
    base = load_toml(fragment)
    for key in base.keys():
        if key != "features":
            raise base.error(key, f"a shared fragment (extended by {recipe.name}) holds only [features]")
    return dict(read(Fragment, base).features)


def _check_outputs(outputs: tuple[Output, ...], features: dict[str, Feature], site: Site) -> None:
    """Each output's `feature` and `unless` name features; one without a library takes its feature's."""
    named = ", ".join(features)
    for i, output in enumerate(outputs):
        at = site.item(i)
        if output.feature is not None and output.feature not in features:
            raise at.key("feature").error(f"no feature named {output.feature!r} (features: {named})")
        if output.library is None:
            if output.feature is None:
                raise at.key("library").error("required when no 'feature' names where the library comes from")
            if not any(s.library for s in features[output.feature].spellings):
                raise at.key("library").error(f"required: feature {output.feature!r} declares no library")
        if output.unless is not None and output.unless not in features:
            raise at.key("unless").error(f"no feature named {output.unless!r} (features: {named})")


def _check_feature_references(recipe: Recipe, site: Site) -> None:
    """Other sections name features (a wheel component only for hipdnn, say): they must exist; an extra offered only
    with a feature on names one of [wheel] named_features (checked after those)."""
    if recipe.wheel is None:
        return
    named = ", ".join(recipe.features)
    for i, component in enumerate(recipe.wheel.components):
        for key, name in (("feature", component.feature), ("unless", component.unless)):
            if name is not None and name not in recipe.features:
                raise site.key("wheel").key("components").item(i).key(key).error(
                    f"no feature named {name!r} (features: {named})")
    for i, name in enumerate(recipe.wheel.named_features):
        if name not in recipe.features:
            raise site.key("wheel").key("named_features").item(i).error(
                f"no feature named {name!r} (features: {named})")
    offered = ", ".join(recipe.wheel.named_features) or "none"
    for i, extra in enumerate(recipe.wheel.extras):
        if extra.feature is not None and extra.feature not in recipe.wheel.named_features:
            raise site.key("wheel").key("extras").item(i).key("feature").error(
                f"{extra.feature!r} is not one of [wheel] named_features ({offered}): a wheel that offers the extra "
                "only with a feature on needs a name of its own")
