"""A release request settled before anything is built: its entries and where each is built, the output folder,
the compile cache, the recipe's ROCm variants; and the dry run's account of it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.pipeline.workspace import default_build_folder
from toolkit.recipe.features import select_features
from toolkit.recipe.load import load_recipe
from toolkit.recipe.wheel import WheelSettings
from toolkit.release import compile_cache, in_root
from toolkit.release.matrix import Entry
from toolkit.release.request import ReleaseRequest, load_settings
from toolkit.util.errors import ToolkitError


@dataclass(frozen=True)
class ReleasePlan:
    request: ReleaseRequest
    entries: tuple[Entry, ...]
    out_dir: Path
    cache_url: str | None                 # the shared compile cache (None: off)
    cache_origin: str                     # where that setting came from, for messages
    # entry id -> the build root whose container builds it (None: built here)
    elsewhere: dict[str, str | None] = field(default_factory=dict)
    # The recipe's [wheel], read when the matrix has a ROCm axis: its variants and their meta-package.
    wheel: WheelSettings | None = None
    # The archives the entries fetch, every one pinned (a release refuses unpinned sources), and the lock file.
    downloads: int = 0
    lock_file: Path | None = None

    @property
    def variants(self) -> dict[str, str]:
        return dict(self.wheel.rocm_variants) if self.wheel else {}

    @property
    def writes_meta(self) -> bool:
        """The meta-package the ROCm variants sit behind is written where the whole release is: on the host."""
        return bool(self.wheel and self.variants and not in_root.current_root())

    @property
    def all_elsewhere(self) -> bool:
        return all(self.elsewhere.values())


def plan_release(request: ReleaseRequest) -> ReleasePlan:
    settings = load_settings(request.recipe)
    entries = tuple(request.entries())
    folder = request.build.build_folder or default_build_folder()
    out_dir = request.out or (Path(os.environ["TOOLKIT_OUT_DIR"]) if os.environ.get("TOOLKIT_OUT_DIR")
                              else folder / request.recipe.stem / "dist")
    url, origin = compile_cache.resolve_url(settings.compile_cache)
    _refuse_test_builds(request.recipe, entries)
    elsewhere = {e.id: in_root.root_for(e) for e in entries}   # before anything runs: a wrong root is an error
    wheel = _wheel(request.recipe) if settings.rocm else None
    downloads, lock = _pinned(request, entries)
    return ReleasePlan(request, entries, out_dir, url, origin, elsewhere, wheel, downloads, lock)


def _pinned(request: ReleaseRequest, entries: tuple[Entry, ...]) -> tuple[int, Path]:
    """How many archives the entries' builds fetch, and the lock file; any of them without a sha256 or content
    digest in the recipe or the lock refuses the release (its dry run too), before anything runs."""
    from toolkit.pipeline.options import release_overrides
    from toolkit.pipeline.validate import downloads_of
    from toolkit.release.entry import entry_options
    from toolkit.sources.lock import LockFile, require_pinned

    recipe = load_recipe(request.recipe)
    overrides = release_overrides(request.build)
    items = {(i.where, i.url): i for e in entries
             for i in downloads_of(recipe, entry_options(request.recipe, e, overrides=overrides))}
    lock = LockFile.for_recipe(recipe.file)
    require_pinned(list(items.values()), lock, recipe.file)
    return len(items), lock.path



def _refuse_test_builds(recipe_file: Path, entries: tuple[Entry, ...]) -> None:
    """A release never ships a test build ([wheel] test_only: hip-ep's mock runtime): refused before anything runs,
    by the dry run too, naming each entry and feature."""
    recipe = load_recipe(recipe_file)
    if recipe.wheel is None or not recipe.wheel.test_only:
        return
    refused = []
    for entry in entries:
        on = {name for name, state in select_features(recipe, entry.features, ()).items() if state}
        refused += [f"entry {entry.id} has {name} on ({why})" for name, why in recipe.wheel.test_build(on).items()]
    if refused:
        raise ToolkitError(f"{recipe_file}: a release never ships a test build ([wheel] test_only): "
                           + "; ".join(refused),
                           hint="a release builds what users run: make the recipe's default a build without the "
                                "test-only feature, or build one by hand with --without-<feature> --wheel")


def _wheel(recipe: Path) -> WheelSettings:
    """The recipe's [wheel]: a release with a ROCm axis makes its variants' meta-package from it."""
    wheel = load_recipe(recipe).wheel
    if wheel is None:
        raise ToolkitError(f"{recipe}: no [wheel] section", "add [wheel] to the recipe: [release] rocm makes one "
                                                            "wheel per ROCm variant and their meta-package")
    return wheel


def print_plan(plan: ReleasePlan) -> None:
    wheel = plan.wheel
    print(f"recipe: {plan.request.recipe}")
    print(f"output: {plan.out_dir} (SHA256SUMS, provenance.json, <wheel>.cdx.json per wheel"
          f"{', the meta-package ' + wheel.distribution if wheel and plan.variants else ''})")
    print(f"compile cache: {compile_cache.redact(plan.cache_url) or 'off'} (from {plan.cache_origin})")
    lock = plan.lock_file.name if plan.lock_file else "the lock file"
    print(f"pinned sources: {plan.downloads} archive(s) the entries fetch, each with a sha256 or content digest "
          f"(recipe or {lock}); a release refuses an unpinned one" if plan.downloads else
          "pinned sources: the entries fetch no archive (local folders or git commits)")
    for entry in plan.entries:
        root = plan.elsewhere[entry.id]
        where = f", in a container of build root {root}" if root else ""
        rocm = f", ROCm {entry.rocm.name} (root {entry.rocm.root})" if entry.rocm else ""
        axes = [f"python {entry.python}" if entry.python else "",
                f"targets {';'.join(entry.gpu_targets)}" if entry.gpu_targets else "",
                f"toolchain {entry.toolchain.name}" if entry.toolchain else ""]
        print(f"entry {entry.id}: {''.join(a + ', ' for a in axes if a)}"
              f"features {','.join(entry.features) or 'none'}{rocm}{where}")
