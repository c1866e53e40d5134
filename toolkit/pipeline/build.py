"""Settling one build before anything runs: recipe, features and their spellings, source, dependencies.

Option resolution is kept apart from execution: `prepare()` returns a Build that knows every define,
path and library of the build, so a dry run can print it all and the stages only act on it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from toolkit import patching
from toolkit.binary.hip import HipToolchain, NoHip, find_hip
from toolkit.cmake.commands import compiler_launcher
from toolkit.cmake.toolchain import Toolchain
from toolkit.cmake.toolchain import resolve as resolve_toolchain
from toolkit.pipeline import validate
from toolkit.pipeline.match import check_tree_fits
from toolkit.pipeline.options import BuildOptions
from toolkit.pipeline.workspace import Workspace, default_build_folder
from toolkit.recipe import features as feat
from toolkit.recipe.hipify import HipifySettings
from toolkit.recipe.load import PROJECT_ROOT, Recipe, find_recipe, load_recipe
from toolkit.recipe.sources import Requirements, SourceSettings, active_deps, source_from_argument
from toolkit.sources.components import fetch_ort
from toolkit.sources.context import FetchContext
from toolkit.sources.plan import plan_lines
from toolkit.sources.preflight import PreflightOptions, ResolvedPaths
from toolkit.sources.preflight import check as locate_components
from toolkit.sources.preflight import preflight as require_components
from toolkit.sources.source import resolve_source
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON, sha256_file, tree_digest
from toolkit.util.locks import WorkLock, remove_stale_temporaries

if TYPE_CHECKING:
    from toolkit.recipe.compile_check import CompileCheckSettings
    from toolkit.recipe.sources import FetchContentDep


# What the features are read from: the tree, and its option files as (relative path, text); None while the
# tree is not there (a dry run before the fetch).
_OptionFiles = tuple[tuple[str, str], ...]
_FeaturesKey = tuple[Path, _OptionFiles | None]


class BuildFacts(TypedDict):
    """What the wheel records about its build (its get_build_info()), build-info.json and the provenance."""

    source_revision: str              # <tree folder>@sha256:<digest of the pristine tree>
    upstream_commit: str | None
    patches: list[str]                # "<name> sha256=<hex>" of each base patch applied
    features: list[str]
    rocm_version: str | None
    hip_version: str | None
    gpu_targets: list[str]
    toolchain: JSON                   # Toolchain.identity()


def library_file(name: str) -> str:
    return f"lib{name}.so"


@dataclass
class Build:
    """Everything one build needs, settled before any stage runs."""

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
    # Computed once and never cleared: each is made only of what prepare() settled and no stage changes (the
    # recipe, the options, the fetched pristine source_dir). Hashing a real tree is not free.
    _source_digest: str | None = None
    _series: patching.Series | None = None
    _toolchain: Toolchain | None = None
    _fetchcontent: dict[str, str] | None = None
    # The features the tree declares, kept with what they were read from: the tree and its option files' text.
    # A stage that rewrites the tree (source, patch) changes that key, so nothing has to be told to read again.
    _features: tuple[_FeaturesKey, dict[str, feat.ResolvedFeature]] | None = None
    # Held from prepare() until unlock(): no other process writes into this work tree meanwhile.
    lock: WorkLock | None = None
    # What the caller adds to the environment of every tool the build runs (CMake, the wheel build, auditwheel):
    # a release's SOURCE_DATE_EPOCH, TZ and shared compile cache. Given to each tool, never set on this process.
    env: Mapping[str, str] = field(default_factory=dict)

    def unlock(self) -> None:
        if self.lock is not None:
            self.lock.release()

    def source_digest(self) -> str:
        if self._source_digest is None:
            self._source_digest = tree_digest(self.source_dir)
        return self._source_digest

    # -- what the patched tree declares ------------------------------------------------------
    def resolved_features(self) -> dict[str, feat.ResolvedFeature]:
        """Each feature's spelling, as the work tree's copy declares it (the source before it is copied)."""
        tree = self.workspace.source if self.workspace.source.is_dir() else self.source_dir
        # Read on every call, since the key is what the answer is made of: the copy changes under the stages.
        files = tuple(feat.cmake_option_files(tree, self.recipe.build.option_files)) if tree.is_dir() else None
        key = (tree, files)
        if self._features is None or self._features[0] != key:
            self._features = (key, self._resolve_features(tree, files))
        return self._features[1]

    def _resolve_features(self, tree: Path, files: _OptionFiles | None) -> dict[str, feat.ResolvedFeature]:
        if files is None:
            # Dry run of a source not fetched yet: its options are unknown, assume the preferred spellings.
            return feat.resolve_spellings(self.recipe, self.chosen, None, str(tree))
        series = self.series()
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

    def fetchcontent_defines(self) -> dict[str, str]:
        """The dependency provider and its map of verified folders (fetched, verified, unpacked once)."""
        if self.options.dry_run:
            from toolkit.sources.fetchcontent import handover_defines

            return handover_defines(self.workspace.root / "deps", self.workspace.cmake)
        if self._fetchcontent is None:
            from toolkit.sources.fetchcontent import provider_defines

            self._fetchcontent = provider_defines(self.fetchcontent_deps(), self.fetch, self.workspace.root / "deps",
                                                  self.recipe.file, self.workspace.cmake)
        return self._fetchcontent

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

    def ccache_env(self) -> dict[str, str]:
        """ccache's store in the toolkit cache, paths under the work tree made relative: a fresh build folder
        (or a second worktree) hits what an earlier build compiled. Settings the caller made (its environment,
        the build's `env`) win."""
        if compiler_launcher() is None:
            return {}
        from toolkit.buildroot.sandbox import ccache_dir

        wanted = {"CCACHE_DIR": str(ccache_dir(self.fetch.cache.root)), "CCACHE_BASEDIR": str(self.workspace.root),
                  "CCACHE_NOHASHDIR": "true", **self.toolchain().ccache_env()}
        return {k: v for k, v in wanted.items() if k not in os.environ and k not in self.env}

    @contextlib.contextmanager
    def tool_env(self) -> Iterator[dict[str, str]]:
        """The environment of a CMake configure or build step: ccache's, and a TMPDIR in the work tree made for
        the step and removed after it, so that what the compilers leave behind is neither outside the work tree
        nor kept (HIP's clang driver leaves two empty folders in TMPDIR per compile)."""
        tmp = self.workspace.tmp
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        try:
            yield {**self.ccache_env(), **self.env, "TMPDIR": str(tmp)}
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def toolchain(self) -> Toolchain:
        """The C/C++ toolchain: --toolchain, else the recipe's [build] toolchain, for the recipe's glibc floor."""
        if self._toolchain is None:
            settings = self.recipe.build
            name = self.options.toolchain or settings.toolchain
            if self.options.glibc_floor and name != "zig":
                raise ToolkitError(f"--glibc-floor {self.options.glibc_floor}: only the zig toolchain builds for a "
                                   f"glibc floor, and this build uses the {name} toolchain",
                                   hint="add --toolchain zig, or drop --glibc-floor")
            self._toolchain = resolve_toolchain(name, self.options.glibc_floor or settings.glibc_floor,
                                                settings.hide_section_bounds)
        return self._toolchain

    @property
    def toolchain_dir(self) -> Path:
        """Where the toolchain's wrapper scripts live: one folder per toolchain and target under it."""
        return self.workspace.root / "toolchain"

    def defines(self) -> dict[str, str]:
        defines = dict(self.recipe.build.defines)
        defines["CMAKE_BUILD_TYPE"] = self.recipe.build.build_type
        defines.update(self.deps.cmake_defines(self.ort_home or self.planned_ort_home()))
        defines.update(self.fetchcontent_defines())
        defines.update(feat.cmake_defines(self.recipe, self.resolved_features()))
        if self.recipe.build.gpu_targets_define and self.options.gpu_targets:  # the tree's own GPU targets variable
            defines[self.recipe.build.gpu_targets_define] = ";".join(self.options.gpu_targets)
        defines.update(self.toolchain().defines(self.toolchain_dir))
        launcher = compiler_launcher()
        if launcher:
            defines["CMAKE_C_COMPILER_LAUNCHER"] = launcher
            defines["CMAKE_CXX_COMPILER_LAUNCHER"] = launcher
        return defines

    def expected(self) -> list[tuple[str, tuple[str, ...]]]:
        return feat.expected_libraries(self.recipe, self.resolved_features())

    # -- facts several stages share ----------------------------------------------------------
    def series(self) -> patching.Series | None:
        """The recipe's series as this source revision needs it: entries whose revision conditions
        (if-tree-has, unless-tree-has) say the fetched tree does not need them are left out, and said so once."""
        if self.recipe.series is not None and self._series is None:
            loaded = patching.load_series(self.recipe.series)
            if not self.source_dir.is_dir():
                return loaded  # a dry run before the fetch: the conditions cannot be judged yet
            self._series, skipped = loaded.for_tree(self.source_dir)
            for entry, why in skipped:
                log.info(f"patch {entry.name}: {why}")
        return self._series

    def active_patches(self, phase: str) -> list[patching.SeriesEntry]:
        """The series entries of `phase` this feature set applies: only these count, so a feature no patch
        depends on does not re-patch (and so rebuild) the tree."""
        series = self.series()
        return series.select(phase, self.enabled())[0] if series is not None else []

    def patch_pins(self, phase: str = "base") -> list[tuple[str, str]]:
        return [(e.name, sha256_file(e.path)) for e in self.active_patches(phase)]

    def kernels_dir(self) -> Path:
        """Where the hipified sources the later stages read are: hipify's output, or its patched copy."""
        return self.workspace.hipified_patched if self.active_patches("hipified") else self.workspace.hipified

    def kernel_toolchain(self) -> tuple[HipToolchain | None, str]:
        """The HIP toolchain that compiles the hipified kernels, or None and why they are skipped."""
        if self.hipify is None:
            return None, "no [hipify] in the recipe"
        if not self.options.gpu_targets:
            return None, "GPU kernels skipped: no --gpu-targets given (e.g. --gpu-targets gfx90a,gfx1030)"
        toolchain = find_hip(str(self.options.rocm_path) if self.options.rocm_path else None)
        if isinstance(toolchain, NoHip):
            return None, f"GPU kernels skipped: {toolchain.reason}"
        return toolchain, ""

    def build_facts(self) -> BuildFacts:
        """What the wheel records about its build: source revision, patches, features, ROCm, GPU targets, and
        the C/C++ toolchain (its identity: for zig, the pinned version, target and wheel sha256)."""
        from toolkit.wheel.facts import hip_headers, upstream_commit

        toolchain, _ = self.kernel_toolchain()
        targets = self.recipe.build.gpu_targets_define
        # The HIP headers the configured tree compiles with (None before configure, or when it uses no HIP).
        prefixes = tuple(p for p in (self.options.rocm_path,) if p)
        headers = hip_headers(self.workspace.cmake, prefixes)
        rocm = f"HIP {toolchain.version} ({toolchain.kind})" if toolchain else None
        return {
            "source_revision": f"{self.source_dir.name}@sha256:{self.source_digest()}",
            "upstream_commit": upstream_commit(self.source),
            "patches": [f"{name} sha256={sha}" for name, sha in self.patch_pins()],
            "features": sorted(self.enabled()),
            "rocm_version": headers.describe() if headers else rocm,
            "hip_version": headers.version if headers else toolchain.version if toolchain else None,
            # The tree's own targets variable ([build] gpu_targets_define), or what the hipified kernels compile for.
            "gpu_targets": [t for t in self.defines().get(targets, "").split(";") if t] if targets else
            list(self.options.gpu_targets) if toolchain else [],
            "toolchain": self.toolchain().identity(),
        }


def prepare(options: BuildOptions, preflight: bool = True, env: Mapping[str, str] | None = None) -> Build:
    """Settle the recipe, features, source and dependencies; fetch nothing in a dry run.

    preflight=False (patch check and refresh) locates ORT/ROCm/MIGraphX without requiring them: patching
    needs only the source. `env` is added to the environment of the tools the build runs (Build.env).
    """
    env = dict(env or {})
    recipe = load_recipe(find_recipe(options.recipe, PROJECT_ROOT))
    chosen = feat.select_features(recipe, options.with_features, options.without_features)
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
    preflight_options = PreflightOptions(ort_home=options.ort_home, rocm_path=options.rocm_path,
                                         migraphx_home=options.migraphx_home)
    upstream = ws.root / "upstream"
    if options.dry_run:
        deps = locate_components(requires, enabled, preflight_options, ort, ctx)
        source_dir = resolve_source(source, ctx, upstream) if source.kind == "path" else upstream
        if options.source and source_dir.is_dir():
            check_tree_fits(recipe, source_dir, enabled, PROJECT_ROOT)
        return Build(recipe, options, ws, source_dir, chosen, source, ctx, deps,
                     hipify=hipify_settings(recipe, options), env=env)
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
            ort_home = fetch_ort(ort, ctx)
    except BaseException:
        lock.release()
        raise
    return Build(recipe, options, ws, source_dir, chosen, source, ctx, deps, ort_home,
                 hipify=hipify_settings(recipe, options), lock=lock, env=env)


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
