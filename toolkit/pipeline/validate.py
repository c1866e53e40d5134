"""Checks made before a build starts, so careless input is one `error:` line rather than a failure (or a
silent surprise) halfway through: where the build goes, what the series asks for, what the tree holds,
and which GPU targets the HIP compiler accepts (`--gpu-targets`, and the recipe's [compile_check] targets).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.binary.hip import HipToolchain, find_hip, supported_processors, unsupported_targets
from toolkit.pipeline.options import BuildOptions
from toolkit.recipe.load import Recipe
from toolkit.util.errors import ToolkitError

if TYPE_CHECKING:
    from toolkit.sources.lock import LockFile, Pinnable


def check_build(recipe: Recipe, options: BuildOptions, build_folder: Path, work_tree: Path) -> None:
    check_inside(work_tree, build_folder)
    check_build_folder(build_folder)
    check_series_features(recipe)
    if options.gpu_targets:
        check_gpu_targets(options.gpu_targets, options.rocm_path)
    if recipe.compile_check is not None:
        from toolkit.compile_check.targets import check_targets

        check_targets(recipe.compile_check, recipe.file)


def check_inside(work_tree: Path, build_folder: Path) -> None:
    root = Path(build_folder).resolve()
    if not Path(work_tree).resolve().is_relative_to(root):
        raise ToolkitError(f"work tree {work_tree} would lie outside the build folder {root}",
                           hint="recipe and variant names are plain folder names")


def check_build_folder(build_folder: Path) -> None:
    """The build folder must lie under a folder; looking only: a refused build creates nothing."""
    existing = Path(build_folder)
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ToolkitError(f"{_build_folder_what(build_folder)}: {existing} is not a folder", hint=_BUILD_FOLDER_HINT)


def make_build_folder(build_folder: Path) -> None:
    """Create the build folder, just before the first thing is written into it."""
    try:
        Path(build_folder).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ToolkitError(f"{_build_folder_what(build_folder)} cannot be created: {exc.strerror or exc}",
                           hint=_BUILD_FOLDER_HINT) from None
    if not os.access(build_folder, os.W_OK | os.X_OK):
        raise ToolkitError(f"{_build_folder_what(build_folder)} is not writable", hint=_BUILD_FOLDER_HINT)


_BUILD_FOLDER_HINT = "choose a writable folder with --build-dir or $TOOLKIT_BUILD_DIR"


def _build_folder_what(build_folder: Path) -> str:
    return f"build folder {build_folder} (--build-dir or $TOOLKIT_BUILD_DIR)"


def check_series_features(recipe: Recipe) -> None:
    """A `when=` naming a feature the recipe lacks would drop (or always apply) its patch unnoticed."""
    if recipe.series is None:
        return
    from toolkit import patching

    series = patching.load_series(recipe.series)
    for entry in series.entries:
        for cond in entry.when:
            name = cond.lstrip("!")
            if name not in recipe.features:
                raise ToolkitError(
                    f"{entry.where(series.path)}: when={','.join(entry.when)} names feature '{name}', "
                    f"which recipe {recipe.name} ({recipe.file}) does not have",
                    hint=f"the recipe's features: {', '.join(sorted(recipe.features)) or 'none'}; "
                         "fix the name or add the feature to the recipe")


def check_source_tree(source_dir: Path, from_option: bool) -> None:
    what = f"--source {source_dir}" if from_option else f"source {source_dir}"
    if source_dir.is_dir() and not any(source_dir.iterdir()):
        raise ToolkitError(f"{what}: the folder is empty", hint="point it at a source tree (with its CMakeLists.txt)")


def check_gpu_targets(targets: tuple[str, ...], rocm_path: Path | None) -> None:
    """Ask the HIP compiler the build would use; without one the build skips the kernels and says so."""
    toolchain = find_hip(str(rocm_path) if rocm_path else None)
    if not isinstance(toolchain, HipToolchain):
        return
    bad = unsupported_targets(toolchain, targets)
    if bad:
        raise ToolkitError(
            f"--gpu-targets: {toolchain.compiler} ({toolchain.kind} HIP {toolchain.version}) rejects "
            + "; ".join(bad),
            hint="processors it supports: " + (", ".join(supported_processors(toolchain)) or "none listed"))


def downloads_of(recipe: Recipe, options: BuildOptions) -> list[Pinnable]:
    """The archives a build with `options` fetches: its source's (the recipe's, or --source), the FetchContent
    dependencies of its features, and the recipe's ORT package for this machine unless an ORT install is named."""
    from toolkit.recipe.features import select_features
    from toolkit.recipe.sources import active_deps, source_from_argument
    from toolkit.sources.components import components, platform_tag
    from toolkit.sources.lock import build_downloads

    chosen = select_features(recipe, options.with_features, options.without_features,
                             options.target_platform(recipe.build.toolchain))
    enabled = [name for name, on in chosen.items() if on]
    source = source_from_argument(options.source) if options.source else recipe.source
    named = options.ort_home is not None or any(os.environ.get(v) for v in components()["ort"]["env"])
    ort = recipe.ort.package_for(platform_tag()) if recipe.ort is not None and not named else None
    return build_downloads(source, active_deps(recipe.fetchcontent, enabled), ort)


def check_pinned(recipe: Recipe, options: BuildOptions, lock: LockFile | None) -> None:
    """--require-pinned (every build of a release): an archive the build fetches without a sha256 or content digest
    in the recipe or its lock file refuses the build before anything is fetched, each named with the lock command."""
    if options.require_pinned:
        from toolkit.sources.lock import LockFile, require_pinned

        require_pinned(downloads_of(recipe, options), lock or LockFile.for_recipe(recipe.file), recipe.file)
