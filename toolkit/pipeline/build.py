"""Settling one build before anything runs: recipe, features and their spellings, source, dependencies.

Option resolution is kept apart from execution: `prepared()` settles a Build, an immutable value of what the
build is (recipe, options, features chosen, source, dependencies, work tree), so a dry run can print it all and
the stages only act on it. The Build holds inputs only: what a run derives from them (the tree's digest, the
defines, the build facts) is made once by the stage that owns it and handed on (toolkit/pipeline/produced.py),
by calling that area's function through toolkit/pipeline/adapters/derive.py. The work tree's lock is held
by `prepared()` for the length of its `with` block, not by the build.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit import patching
from toolkit.cmake.toolchain import Toolchain
from toolkit.cmake.toolchain import resolve as resolve_toolchain
from toolkit.pipeline import validate
from toolkit.pipeline.match import check_tree_fits
from toolkit.pipeline.options import BuildOptions
from toolkit.pipeline.workspace import Workspace, default_build_folder
from toolkit.recipe import features as feat
from toolkit.recipe.core import library_file
from toolkit.recipe.hipify import HipifySettings
from toolkit.recipe.load import PROJECT_ROOT, Recipe, find_recipe, load_recipe
from toolkit.recipe.sources import Requirements, SourceSettings, active_deps, source_from_argument
from toolkit.sources.components import fetch_ort, ort_package_platform
from toolkit.sources.context import FetchContext
from toolkit.sources.plan import plan_lines
from toolkit.sources.preflight import PreflightOptions, ResolvedPaths
from toolkit.sources.preflight import check as locate_components
from toolkit.sources.preflight import preflight as require_components
from toolkit.sources.source import resolve_source
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.locks import WorkLock, remove_stale_temporaries

if TYPE_CHECKING:
    from toolkit.recipe.compile_check import CompileCheckSettings
    from toolkit.recipe.sources import FetchContentDep


# What the features are read from: the tree, and its option files as (relative path, text); None while the
# tree is not there (a dry run before the fetch).
_OptionFiles = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Build:
    """Everything one build needs, settled before any stage runs; nothing assigns to it afterwards."""

    recipe: Recipe
    options: BuildOptions
    workspace: Workspace
    source_dir: Path
    chosen: dict[str, bool]
    source: SourceSettings
    fetch: FetchContext
    # ORT, ROCm and MIGraphX as the preflight found them (in a dry run: what it would use).
    deps: ResolvedPaths
    ort_home: Path | None = None
    # The recipe's [hipify] with the engine the options chose (None: the recipe hipifies nothing).
    hipify: HipifySettings | None = None
    # What the caller adds to the environment of every tool the build runs (CMake, the wheel build, auditwheel):
    # a release's SOURCE_DATE_EPOCH, TZ and shared compile cache. Given to each tool, never set on this process.
    env: Mapping[str, str] = field(default_factory=dict)
    # The recipe's series as this source revision needs it (series_for), settled with the tree.
    series: patching.Series | None = None

    # -- what the patched tree declares ------------------------------------------------------
    def resolved_features(self) -> dict[str, feat.ResolvedFeature]:
        """Each feature's spelling, as the work tree's copy declares it (the source before it is copied)."""
        tree = self.workspace.source if self.workspace.source.is_dir() else self.source_dir
        # Read on every call: the copy changes under the stages (source, patch), and what it declares with it.
        files = tuple(feat.cmake_option_files(tree, self.recipe.build.option_files)) if tree.is_dir() else None
        return self._resolve_features(tree, files)

    def _resolve_features(self, tree: Path, files: _OptionFiles | None) -> dict[str, feat.ResolvedFeature]:
        if files is None:
            # Dry run of a source not fetched yet: its options are unknown, assume the preferred spellings.
            return feat.resolve_spellings(self.recipe, self.chosen, None, str(tree))
        series = self.series
        if tree == self.workspace.source or series is None:
            options = feat.declared_options(files)
        else:
            # Not patched yet (first run or dry run): read the options as the patches will leave them.
            options = feat.declared_options(self._patched_view(series, files))
        label = str(tree) if self.source.kind == "path" else f"{tree} ({self.source.describe()})"
        return feat.resolve_spellings(self.recipe, self.chosen, options, label)

    def _patched_view(self, series: patching.Series, files: _OptionFiles) -> list[tuple[str, str]]:
        changed = patching.patched_contents(series, self.source_dir, "base", sorted(self.enabled()))
        view = dict(files)
        for rel, data in changed.items():
            if data is None:
                view.pop(rel, None)
            elif rel.endswith(("CMakeLists.txt", ".cmake")):
                view[rel] = data.decode("utf-8", errors="replace")
        return list(view.items())

    def enabled(self) -> set[str]:
        return {name for name, on in self.chosen.items() if on}

    def fetchcontent_deps(self) -> tuple[FetchContentDep, ...]:
        return active_deps(self.recipe.fetchcontent, self.enabled())

    def planned_ort_home(self) -> Path | None:
        """In a dry run, where ORT's package will be unpacked (the real build passes that folder)."""
        if not self.options.dry_run or self.deps.ort_package is None or self.recipe.ort is None:
            return None
        from toolkit.sources.components import planned_ort_prefix

        return planned_ort_prefix(self.recipe.ort, self.fetch)

    # -- the recipe's sections a stage needs (a stage exists only when its section does) ----------------
    def hipify_needed(self) -> HipifySettings:
        if self.hipify is None:
            raise ToolkitError(f"recipe {self.recipe.name} has no [hipify] section ({self.recipe.file})")
        return self.hipify

    def compile_check(self) -> CompileCheckSettings:
        if self.recipe.compile_check is None:
            raise ToolkitError(f"recipe {self.recipe.name} has no [compile_check] section ({self.recipe.file})")
        return self.recipe.compile_check

    def toolchain(self) -> Toolchain:
        """The C/C++ toolchain: --toolchain, else the recipe's [build] toolchain, for the recipe's glibc floor."""
        # Worked out on each call, from the options and the recipe alone (a small pinned table is all it reads).
        settings = self.recipe.build
        name = self.options.toolchain or settings.toolchain
        if self.options.glibc_floor and name != "zig":
            raise ToolkitError(f"--glibc-floor {self.options.glibc_floor}: only the zig toolchain builds for a "
                               f"glibc floor, and this build uses the {name} toolchain",
                               hint="add --toolchain zig, or drop --glibc-floor")
        return resolve_toolchain(name, self.options.glibc_floor or settings.glibc_floor, settings.hide_section_bounds)

    @property
    def toolchain_dir(self) -> Path:
        """Where the toolchain's wrapper scripts live: one folder per toolchain and target under it."""
        return self.workspace.root / "toolchain"

    def library_file(self, name: str) -> str:
        """The file of the library `name` for the platform this build's toolchain targets."""
        return library_file(name, self.toolchain().platform)

    def expected(self) -> list[tuple[str, tuple[str, ...]]]:
        return feat.expected_libraries(self.recipe, self.resolved_features())

    def process_libraries(self) -> list[str]:
        """What the expected libraries need that the build does not produce: every process loading them has it."""
        produced = {self.library_file(n) for n, _ in self.expected()}
        return [n for o in self.recipe.outputs for n in o.needs if n not in produced]

    def built_libraries(self) -> list[str]:
        """The files of the expected libraries the tree builds (not those it only installs: carried)."""
        carried = feat.carried_libraries(self.recipe, self.resolved_features())
        return [self.library_file(n) for n, _ in self.expected() if n not in carried]


def series_for(recipe: Recipe, source_dir: Path) -> patching.Series | None:
    """The recipe's series as this source revision needs it: entries whose revision conditions (if-tree-has,
    unless-tree-has) say the fetched tree does not need them are left out, and said so once, as the build is
    settled."""
    if recipe.series is None:
        return None
    if not source_dir.is_dir():  # a dry run before the fetch: the conditions cannot be judged yet
        return patching.load_series(recipe.series)
    series, skipped = patching.load_series(recipe.series).for_tree(source_dir)
    for entry, why in skipped:
        log.info(f"patch {entry.name}: {why}")
    return series


@contextlib.contextmanager
def prepared(options: BuildOptions, preflight: bool = True, env: Mapping[str, str] | None = None) -> Iterator[Build]:
    """The settled build, with its work tree locked until the `with` block ends (a dry run locks nothing).

    preflight=False (patch check and refresh) locates ORT/ROCm/MIGraphX without requiring them: patching
    needs only the source. `env` is added to the environment of the tools the build runs (Build.env).
    """
    build, lock = _settle(options, preflight, env)
    try:
        yield build
    finally:
        if lock is not None:
            lock.release()


def _settle(options: BuildOptions, preflight: bool, env: Mapping[str, str] | None) -> tuple[Build, WorkLock | None]:
    """Settle the recipe, features, source and dependencies; fetch nothing in a dry run. The lock is held from
    before the first write into the work tree (the fetch) and handed to the caller."""
    env = dict(env or {})
    recipe = load_recipe(find_recipe(options.recipe, PROJECT_ROOT))
    chosen = feat.select_features(recipe, options.with_features, options.without_features,
                                  options.target_platform(recipe.build.toolchain))
    enabled = [name for name, on in chosen.items() if on]
    root = options.build_folder or default_build_folder()
    ws = Workspace.for_recipe(root, recipe.name, options.variant)
    validate.check_build(recipe, options, root, ws.root)
    source = source_from_argument(options.source) if options.source else recipe.source
    if source is None:
        raise ToolkitError(f"recipe {recipe.name} has no [source] ({recipe.file})",
                           hint="pass --source PATH, URL#sha256=HEX or git+URL@COMMIT")
    ctx = FetchContext.create(recipe.file, offline=options.offline, mirrors=list(options.mirrors),
                              release=options.require_pinned, insecure_mirror=options.insecure_mirror)
    validate.check_pinned(recipe, options, ctx.lock)
    # Said once the options are known good and before anything is fetched: a download's line (ORT's package)
    # belongs under the recipe it is for.
    on = ", ".join(f"{n}={'on' if v else 'off'}" for n, v in chosen.items()) or "none (the recipe has none)"
    log.info(f"recipe {recipe.name} ({recipe.file}), variant {options.variant}, features: {on}")
    requires = recipe.requires or Requirements()
    ort = recipe.ort
    ort_platform = ort_package_platform(ort, options.target_platform(recipe.build.toolchain))
    preflight_options = PreflightOptions(ort_home=options.ort_home, rocm_path=options.rocm_path,
                                         migraphx_home=options.migraphx_home, platform=ort_platform)
    upstream = ws.root / "upstream"
    if options.dry_run:
        deps = locate_components(requires, enabled, preflight_options, ort, ctx)
        source_dir = resolve_source(source, ctx, upstream) if source.kind == "path" else upstream
        if options.source and source_dir.is_dir():
            check_tree_fits(recipe, source_dir, enabled, PROJECT_ROOT)
        return Build(recipe, options, ws, source_dir, chosen, source, ctx, deps,
                     hipify=hipify_settings(recipe, options), env=env, series=series_for(recipe, source_dir)), None
    # Everything missing is reported at once, before anything is fetched or built.
    try:
        find = require_components if preflight else locate_components
        deps = find(requires, enabled, preflight_options, ort, ctx)
    except ToolkitError as exc:
        raise with_root_hint(exc, recipe) from None
    validate.make_build_folder(root)
    # Fetching, patching and building all write into the work tree: one process at a time.
    lock = WorkLock(ws.root, wait=not options.no_wait).acquire()
    try:
        remove_stale_temporaries(ws.root)
        source_dir = resolve_source(source, ctx, upstream)
        validate.check_source_tree(source_dir, from_option=bool(options.source))
        if options.source:
            # A tree the recipe does not pin: its patches must fit, or the error names the recipe that does.
            check_tree_fits(recipe, source_dir, enabled, PROJECT_ROOT)
        ort_home = None
        if ort is not None and deps.ort_package is not None and preflight:
            ort_home = fetch_ort(ort, ctx, ort_platform)
        series = series_for(recipe, source_dir)
    except BaseException:
        lock.release()
        raise
    return Build(recipe, options, ws, source_dir, chosen, source, ctx, deps, ort_home,
                 hipify=hipify_settings(recipe, options), env=env, series=series), lock


def with_root_hint(exc: ToolkitError, recipe: Recipe) -> ToolkitError:
    """A preflight failure outside a build root, for a recipe whose [release.container] names one: the hint
    is the documented way, building inside that root, not installing ROCm or MIGraphX on this machine."""
    from toolkit.buildroot.make import INFO

    root = recipe.release.container.root if recipe.release is not None else None
    if not root or (Path("/") / INFO).is_file():  # the root's record of itself: already inside one
        return exc
    if not getattr(exc, "from_system", True):  # only the recipe's own ORT package: a root brings nothing
        return exc                             # missing (the sample never needs one)
    hint = (f"recipe {recipe.name} builds inside the build root {root} (its [release.container] root): "
            f"nox -s container -- --root {root} build --recipe {recipe.name} (`nox -s root -- make {root}` "
            f"makes it first)" + (f"; or: {exc.hint}" if exc.hint else ""))
    return ToolkitError(exc.message, hint=hint)


def hipify_settings(recipe: Recipe, options: BuildOptions) -> HipifySettings | None:
    """The recipe's [hipify], with the engine `--hipify-engine` chose; None when the recipe hipifies nothing."""
    settings = recipe.hipify
    if settings is None or options.hipify_engine is None:
        return settings
    return dataclasses.replace(settings, engine=options.hipify_engine)


def print_sources_plan(b: Build) -> None:
    """A dry run's lines for the sources: where each would come from and where it would be unpacked."""
    # A recipe that never configures (stages without configure) has no FetchContent to plan.
    configures = b.recipe.stages is None or "configure" in b.recipe.stages
    for line in plan_lines(b.source, b.fetchcontent_deps(), b.fetch, b.workspace.root / "upstream",
                           b.workspace.root / "deps", b.deps, configures=configures):
        print(f"  sources: {line}")
