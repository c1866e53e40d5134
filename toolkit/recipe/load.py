"""Recipes: what to build, read from recipes/<name>.toml into typed, validated settings.

A recipe is data only. Every section is read strictly through tomlread.Table, so any wrong key, type or
value fails with the file and the dotted key. Relative paths are relative to the recipe's folder.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from toolkit.recipe.confine import confined
from toolkit.util.errors import RecipeError
from toolkit.util.tomlread import Table, load_toml

if TYPE_CHECKING:  # imported for real only where the recipe is read: see load_recipe and read_sections
    from toolkit.compile_check.settings import CompileCheckSettings
    from toolkit.hipify.settings import HipifySettings
    from toolkit.release.settings import ReleaseSettings
    from toolkit.sources.settings import FetchContentDep, OrtSettings, Requirements, SourceSettings
    from toolkit.upstream.settings import ApiCheckSettings
    from toolkit.wheel.settings import SmokeSettings, WheelSettings

T = TypeVar("T")

_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_DEFINE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
PLATFORMS = ("linux", "windows")


@dataclass(frozen=True)
class Spelling:
    """One way a source revision names a feature: its CMake option and the library it builds."""

    define: str
    library: str | None


@dataclass(frozen=True)
class Feature:
    name: str
    summary: str
    default: bool
    # Candidate spellings in order of preference; the first the source tree declares is used.
    spellings: tuple[Spelling, ...]
    implies: tuple[str, ...] = ()
    platforms: tuple[str, ...] = PLATFORMS


@dataclass(frozen=True)
class Output:
    """A library the build must produce; `feature` set means only when that feature is on."""

    library: str | None
    feature: str | None
    exports: tuple[str, ...]
    # Libraries its ELF must list as NEEDED (libmigraphx_c.so.3: linked to MIGraphX, not loading it late).
    needs: tuple[str, ...] = ()


@dataclass(frozen=True)
class BuildSettings:
    build_type: str
    generator: str
    defines: dict[str, str]
    # Folders (relative to the source tree) searched for `option(...)` declarations.
    option_files: tuple[str, ...]
    # Remove build-machine RUNPATHs from the shipped copies (not $ORIGIN-relative ones).
    strip_runpath: bool = False
    # Where the libraries come from: "output-dir" (the folder the tree's `output_dir_define` names, as the
    # sample has one) or "install" (`cmake --install` into a staging prefix: the tree's own
    # install rules say what it ships).
    collect: str = "install"
    # The tree's own CMake variables for what the toolkit hands it: the folder its libraries go to, and the
    # folder of hipified kernel sources it compiles. Part of the tree's CMake surface, so recipe data.
    output_dir_define: str | None = None
    kernels_define: str | None = None
    # The C/C++ toolchain (toolkit/cmake/toolchains.toml): "system" (CMake's pick) or "zig", which builds for
    # `glibc_floor` (None: that file's default) with libc++ linked in statically.
    toolchain: str = "system"
    glibc_floor: str | None = None
    # Sections whose linker-made __start_/__stop_ symbols zig's lld would export (toolkit/cmake/toolchain.py).
    hide_section_bounds: tuple[str, ...] = ()
    # The `defines` given as arrays: CMake lists, whose value holds ';' on purpose.
    list_defines: tuple[str, ...] = ()


@dataclass(frozen=True)
class Recipe:
    name: str
    summary: str
    file: Path
    source: SourceSettings | None  # None: the tree comes from --source
    build: BuildSettings
    features: dict[str, Feature]
    outputs: tuple[Output, ...]
    series: Path | None
    # The stages this recipe runs, by name, in the pipeline's order; None: every stage that applies to it.
    stages: tuple[str, ...] | None = None
    # The optional sections, each owned by one area of the toolkit and read by its settings module; a field's
    # name is its TOML section's. A new section is a field here and its reader's line in read_sections.
    hipify: HipifySettings | None = None
    compile_check: CompileCheckSettings | None = None
    release: ReleaseSettings | None = None
    wheel: WheelSettings | None = None
    smoke: SmokeSettings | None = None
    api_check: ApiCheckSettings | None = None
    fetchcontent: tuple[FetchContentDep, ...] = ()
    ort: OrtSettings | None = None
    requires: Requirements | None = None

    @property
    def dir(self) -> Path:
        return self.file.parent


# The checkout the toolkit runs from: recipes/, patches/ and samples/ live beside the package.
PROJECT_ROOT = Path(__file__).resolve().parents[2]


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
    if not _NAME.match(name):
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

    # Imported here: the release CLI resolves recipe names inside bare containers with only the stdlib.
    from toolkit.sources.settings import SourceSettings

    source = SourceSettings.from_table(root.table("source"), path.parent) if root.has("source") else None
    build = _read_build(root.table("build", None))
    features = _read_features(base.table("features", None)) if base is not None else {}
    own = _read_features(root.table("features", None), features)
    features.update(own)
    outputs = _read_outputs(root, features)

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
    area's reader. The readers are imported here, not at the top: `python -m toolkit` imports this module at
    start-up, where some of them (the wheel's needs `packaging`) could not be, in a container with only the
    standard library."""
    from toolkit.compile_check.settings import from_table as compile_check
    from toolkit.hipify.settings import from_table as hipify
    from toolkit.release.settings import from_table as release
    from toolkit.sources.settings import OrtSettings, Requirements, fetchcontent_from_tables
    from toolkit.upstream.settings import from_table as api_check
    from toolkit.wheel.settings import from_table as wheel
    from toolkit.wheel.settings import smoke_from_table as smoke

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


def _read_build(t: Table | None) -> BuildSettings:
    if t is None:
        return BuildSettings("Release", "Ninja", {}, ("CMakeLists.txt", "cmake"))
    build_type = t.str("build_type", "Release", choices=["Release", "RelWithDebInfo", "Debug", "MinSizeRel"])
    generator = t.str("generator", "Ninja", choices=["Ninja"])
    defines, lists = _read_defines(t)
    option_files = tuple(t.str_list("option_files", ["CMakeLists.txt", "cmake"]))
    strip_runpath = t.bool("strip_runpath", False)
    output_dir_define = t.str("output_dir_define", None)
    kernels_define = t.str("kernels_define", None)
    for key, value in (("output_dir_define", output_dir_define), ("kernels_define", kernels_define)):
        if value is not None and not _DEFINE.match(value):
            raise t.error(key, f"expected a CMake variable name, got {value!r}")
    collect = t.str("collect", "output-dir" if output_dir_define else "install", choices=["output-dir", "install"])
    if collect == "output-dir" and output_dir_define is None:
        raise t.error("collect", "\"output-dir\" needs output_dir_define: the CMake variable naming the folder "
                                 "the tree writes its libraries to")
    toolchain, floor, hidden = _read_toolchain(t)
    t.done()
    return BuildSettings(build_type, generator, defines, option_files, strip_runpath, collect,
                         output_dir_define, kernels_define, toolchain, floor, hidden, lists)


def _read_defines(t: Table) -> tuple[dict[str, str], tuple[str, ...]]:
    """[build] defines: NAME = "value" (one line, no ';') or NAME = ["a", "b"] (a CMake list, joined with ';')."""
    table = t.table("defines", None)
    if table is None:
        return {}, ()
    defines, lists = {}, []
    for key in table.keys():
        if not _DEFINE.match(key):
            raise t.error(f"defines.{key}", "expected a CMake variable name")
        items = table.str_or_list(key)
        is_list = not isinstance(table.data[key], str)
        for i, item in enumerate(items):
            where = f"defines.{key}" + (f"[{i}]" if is_list else "")
            if "\n" in item or "\r" in item or "\x00" in item:
                raise t.error(where, f"{item!r} holds a newline or NUL; expected a one-line value")
            if ";" in item:
                raise t.error(where, f"{item!r} holds ';', which CMake reads as a list separator; expected a value "
                                     f"without ';' (write a CMake list as an array: {key} = [\"a\", \"b\"])")
        defines[key] = ";".join(items)
        if is_list:
            lists.append(key)
    table.done()
    return defines, tuple(lists)


def _read_toolchain(t: Table) -> tuple[str, str | None, tuple[str, ...]]:
    """[build] toolchain, glibc_floor and hide_section_bounds (see toolkit/cmake/toolchain.py)."""
    from toolkit.cmake.toolchain import NAMES, floor_problem

    toolchain = t.str("toolchain", "system", choices=NAMES)
    floor = t.str("glibc_floor", None)
    problem = floor_problem(floor) if floor is not None else None
    if problem:
        raise t.error("glibc_floor", problem)
    hidden = tuple(t.str_list("hide_section_bounds", []))
    for i, section in enumerate(hidden):
        if not _DEFINE.match(section):
            raise t.error(f"hide_section_bounds[{i}]", f"expected a section name that is a C identifier, got "
                                                       f"{section!r} (only those get __start_/__stop_ symbols)")
    return toolchain, floor, hidden


def _read_features(t: Table | None, inherited: dict[str, Feature] | None = None) -> dict[str, Feature]:
    features: dict[str, Feature] = {}
    if t is None:
        return features
    inherited = inherited or {}
    for name, ft in t.subtables():
        if not _NAME.match(name):
            raise t.error(name, "feature names use lowercase letters, digits, '-' or '_'")
        summary = ft.str("summary", "")
        default = ft.bool("default", False)
        spellings: list[Spelling] = []
        if ft.has("define"):
            define = ft.str("define")
            spellings.append(Spelling(_check_define(ft, "define", define), ft.str("library", None)))
        if ft.has("spelling"):
            if spellings:
                raise ft.error("spelling", "give either 'define' (one spelling) or [[spelling]] tables, not both")
            for st in ft.tables("spelling"):
                define = _check_define(st, "define", st.str("define"))
                spellings.append(Spelling(define, st.str("library", None)))
                st.done()
        if not spellings:
            raise ft.error("define", "required: the CMake option this feature turns on (or [[spelling]] tables)")
        implies = tuple(ft.str_list("implies", []))
        platforms = tuple(ft.str_list("platforms", list(PLATFORMS)))
        for i, plat in enumerate(platforms):
            if plat not in PLATFORMS:
                raise ft.error(f"platforms[{i}]", f"expected one of {', '.join(PLATFORMS)}, got {plat!r}")
        ft.done()
        features[name] = Feature(name, summary, default, tuple(spellings), implies, platforms)
    known = {**inherited, **features}
    for name, feature in features.items():
        for i, other in enumerate(feature.implies):
            if other not in known:
                raise t.error(f"{name}.implies[{i}]", f"no feature named {other!r} (features: {', '.join(known)})")
    return features


def _check_define(t: Table, key: str, value: str) -> str:
    if not _DEFINE.match(value):
        raise t.error(key, f"expected a CMake option name like USE_MIGRAPHX, got {value!r}")
    return value


def _read_outputs(root: Table, features: dict[str, Feature]) -> tuple[Output, ...]:
    outputs = []
    for ot in root.tables("outputs", []):
        feature = ot.str("feature", None)
        if feature is not None and feature not in features:
            raise ot.error("feature", f"no feature named {feature!r} (features: {', '.join(features)})")
        library = ot.str("library", None)
        if library is None:
            if feature is None:
                raise ot.error("library", "required when no 'feature' names where the library comes from")
            if not any(s.library for s in features[feature].spellings):
                raise ot.error("library", f"required: feature {feature!r} declares no library")
        exports = tuple(ot.str_list("exports", []))
        needs = tuple(ot.str_list("needs", []))
        ot.done()
        outputs.append(Output(library, feature, exports, needs))
    return tuple(outputs)


def _check_feature_references(root: Table, recipe: Recipe) -> None:
    """Other sections name features (a wheel component only for hipdnn, say): they must exist."""
    features = recipe.features
    components = recipe.wheel.components if recipe.wheel is not None else ()
    for i, component in enumerate(components):
        if component.feature is not None and component.feature not in features:
            raise RecipeError(f"{root.file}: key 'wheel.components[{i}].feature': no feature named "
                              f"{component.feature!r} (features: {', '.join(features)})")
