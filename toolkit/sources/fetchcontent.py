"""FetchContent dependencies served by CMake itself: verified source folders behind a dependency provider.

Each [[fetchcontent]] entry is a pinned archive (toolkit.recipe.pinned), fetched once, unpacked and checked
against its pins by toolkit.sources.archive: the archive sha256 (when the recipe knows upstream's) and the
digest of the unpacked tree (`content`, from the recipe or the lock file). The content digest is what
GitHub's tag archive and a mirror's re-packed archive of the same tag share, so one pin accepts both. The configure
then gets the provider (provider.cmake, injected with
CMAKE_PROJECT_TOP_LEVEL_INCLUDES) and a generated map of name -> folder; CMake asks the provider for exactly
the dependencies it evaluates, nested ones included, and a name the map lacks fails the configure there,
naming the recipe key to add. Nothing here reads the tree's CMake text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from toolkit.recipe.sources import FetchContentDep
from toolkit.sources.archive import is_cached, unpack_pinned, with_lock_pins
from toolkit.sources.context import FetchContext
from toolkit.sources.mirrors import origin
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import atomic_write_text
from toolkit.util.redact import redact_url

DISCONNECTED = "FETCHCONTENT_FULLY_DISCONNECTED"
PROVIDER = Path(__file__).with_name("provider.cmake")
MAP_NAME = "toolkit-provider-map.cmake"
REPORT_NAME = "toolkit-provider-report.txt"


def dep_dir(dest: Path, dep: FetchContentDep) -> Path:
    return Path(dest) / dep.name.lower()


def source_dir(dest: Path, dep: FetchContentDep) -> Path:
    folder = dep_dir(dest, dep)
    return folder / dep.archive.subdir if dep.archive.subdir else folder


# -- fetching and verifying one dependency ----------------------------------------------------------

def prepare_dep(dep: FetchContentDep, ctx: FetchContext, dest: Path) -> Path:
    """Fetch, unpack and verify one dependency under dest/<name>; returns its source folder."""
    what = f"fetchcontent {dep.name}"
    pinned = with_lock_pins(dep.archive, ctx)
    if pinned.content is None and pinned.sha256 is None:
        lock = ctx.lock.path.name if ctx.lock is not None else "the lock file"
        raise ToolkitError(f"{what}: {dep.archive.url} has no content digest or sha256 in the recipe or {lock}",
                           hint="run `nox -s lock` (with --mirror when upstream is out of reach) to pin it")
    unpack_pinned(dep.archive, ctx, dep_dir(dest, dep), what, kind="fetchcontent")
    return _checked_source(dep, dest, what)


def _checked_source(dep: FetchContentDep, dest: Path, what: str) -> Path:
    folder = source_dir(dest, dep)
    if not dep.files_only and not (folder / "CMakeLists.txt").is_file():
        raise ToolkitError(
            f"{what}: {dep.archive.url} unpacked into {dep_dir(dest, dep)} has no CMakeLists.txt at "
            f"{dep.archive.subdir or 'its top'}",
            hint="set 'subdir' (or 'strip_components') for this [[fetchcontent]] entry, or `files_only = true` "
            "for a dependency the tree only reads files from",
        )
    return folder


# -- handing them to CMake -----------------------------------------------------------------------

def provider_defines(deps: Sequence[FetchContentDep], ctx: FetchContext, dest: Path, recipe: Path,
                     binary_dir: Path) -> dict[str, str]:
    """Verify every listed dependency and write the provider's map; returns the configure's defines."""
    for dep in deps:
        prepare_dep(dep, ctx, Path(dest))
    write_provider_map(deps, dest, recipe)
    return handover_defines(dest, binary_dir)


def write_provider_map(deps: Sequence[FetchContentDep], dest: Path, recipe: Path) -> Path:
    """The provider's map of name -> source folder under `dest`: made of paths alone, so it fetches nothing (the
    folders are verified by prepare_dep first)."""
    dest = Path(dest)
    lines = [f"# Written by the toolkit for {Path(recipe).name}: FetchContent name -> verified source folder."]
    for dep in deps:
        lines.append(f'set(TOOLKIT_FC_DIR_{dep.name.lower()} "{source_dir(dest, dep).as_posix()}")')
    lines.append(f'set(TOOLKIT_FC_NAMES "{";".join(d.name.lower() for d in deps)}")')
    lines.append(f'set(TOOLKIT_FP_NAMES "{";".join(d.name for d in deps if d.find_package)}")')
    lines.append(f'set(TOOLKIT_FP_SERVED "{";".join(d.name for d in deps if d.serves_find_package)}")')
    lines.append(f'set(TOOLKIT_PROVIDER_RECIPE "{Path(recipe).as_posix()}")')
    dest.mkdir(parents=True, exist_ok=True)
    atomic_write_text(dest / MAP_NAME, "\n".join(lines) + "\n")
    return dest / MAP_NAME


def handover_defines(dest: Path, binary_dir: Path) -> dict[str, str]:
    """The defines that hand CMake the provider and its map in `dest` (what a dry run shows, writing nothing)."""
    return {
        "CMAKE_PROJECT_TOP_LEVEL_INCLUDES": PROVIDER.as_posix(),
        "TOOLKIT_PROVIDER_MAP": (Path(dest) / MAP_NAME).as_posix(),
        "TOOLKIT_PROVIDER_REPORT": (Path(binary_dir) / REPORT_NAME).as_posix(),
        DISCONNECTED: "ON",
    }


def read_report(binary_dir: Path) -> dict[str, list[str]]:
    """What the last configure asked the provider for: {"fetchcontent": [...], "find_package": [...]}."""
    asked: dict[str, list[str]] = {"fetchcontent": [], "find_package": []}
    path = Path(binary_dir) / REPORT_NAME
    if not path.is_file():
        return asked
    for line in path.read_text().splitlines():
        method, _, name = line.partition(" ")
        if method in asked and name and name not in asked[method]:
            asked[method].append(name)
    return asked


# -- the dry run ------------------------------------------------------------------------------------

def expected_requests(deps: Sequence[FetchContentDep]) -> list[str]:
    """The FetchContent names a configure with these features will ask for, in the recipe's order.

    Taken from the recipe's list filtered by the build's features (`when`), not from the tree's text: only
    CMake knows which declarations it evaluates, and a dry run must not configure. The real configure
    reports what it did ask (read_report), and the tests compare the two.
    """
    return [d.name.lower() for d in deps]


@dataclass(frozen=True)
class PlannedDep:
    name: str
    url: str
    sha256: str | None
    content: str | None
    cached: bool
    source_dir: Path
    asked_by: str | None
    origin: str = ""   # where it would come from: cached, a mirror, upstream (toolkit.sources.mirrors.origin)

    def line(self) -> str:
        pins = []
        if self.sha256:
            pins.append(f"sha256 {self.sha256[:12]}...")
        if self.content:
            pins.append(f"content {self.content[:12]}...")
        state = self.origin or ("cached" if self.cached else "to fetch")
        who = f" (asked by {self.asked_by})" if self.asked_by else ""
        return (f"{self.name}{who} -> {self.source_dir.as_posix()}  <- {redact_url(self.url)} "
                f"[{', '.join(pins) or 'UNPINNED'}, {state}]")


def plan_fetchcontent(deps: Sequence[FetchContentDep], ctx: FetchContext, dest: Path) -> list[PlannedDep]:
    """What provider_defines would do, without network access or writing anything."""
    out = []
    for dep in deps:
        pinned = with_lock_pins(dep.archive, ctx)
        cached = is_cached(dep.archive, ctx)
        where = origin(pinned.url, ctx.mirrors, cached, ctx.offline, ctx.insecure_mirror)
        out.append(PlannedDep(dep.name.lower(), pinned.url, pinned.sha256, pinned.content, cached,
                              source_dir(dest, dep), dep.asked_by, where))
    return out
