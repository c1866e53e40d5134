"""FetchContent dependencies served by CMake itself: verified source folders behind a dependency provider.

Each [[fetchcontent]] entry is fetched once, unpacked, and checked against its pins: the archive sha256
(when the recipe knows upstream's) and the digest of the unpacked tree (`content`, from the recipe or the
lock file). The content digest is what GitHub's tag archive and a mirror's re-packed archive of the same tag
share, so one pin accepts both. The configure then gets the provider (provider.cmake, injected with
CMAKE_PROJECT_TOP_LEVEL_INCLUDES) and a generated map of name -> folder; CMake asks the provider for exactly
the dependencies it evaluates, nested ones included, and a name the map lacks fails the configure there,
naming the recipe key to add. Nothing here reads the tree's CMake text.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import atomic_write_text, tree_digest
from toolkit.sources.context import FetchContext
from toolkit.sources.download import fetch_unpinned, mirror_url
from toolkit.sources.extract import extract_archive
from toolkit.sources.settings import FetchContentDep

DISCONNECTED = "FETCHCONTENT_FULLY_DISCONNECTED"
PROVIDER = Path(__file__).with_name("provider.cmake")
MAP_NAME = "toolkit-provider-map.cmake"
REPORT_NAME = "toolkit-provider-report.txt"


def dep_dir(dest: Path, dep: FetchContentDep) -> Path:
    return Path(dest) / dep.name.lower()


def source_dir(dest: Path, dep: FetchContentDep) -> Path:
    folder = dep_dir(dest, dep)
    return folder / dep.subdir if dep.subdir else folder


def content_pin(dep: FetchContentDep, ctx: FetchContext) -> str | None:
    if dep.content is not None:
        return dep.content
    return ctx.lock.get_content(dep.url) if ctx.lock is not None else None


# -- fetching and verifying one dependency ----------------------------------------------------------

def _stamp(folder: Path) -> Path:
    return folder.parent / f".{folder.name}.fetchcontent.json"


def _known_archive(ctx: FetchContext, content: str) -> str | None:
    """The sha256 of an archive already verified to unpack to `content` (recorded in the cache)."""
    index = ctx.cache.root / "content" / f"{content}.json"
    try:
        return json.loads(index.read_text())["sha256"]
    except (OSError, ValueError, KeyError):
        return None


def _remember_archive(ctx: FetchContext, content: str, sha256: str) -> None:
    index = ctx.cache.root / "content" / f"{content}.json"
    index.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(index, json.dumps({"sha256": sha256}) + "\n")


def _download(dep: FetchContentDep, ctx: FetchContext, what: str) -> Path:
    """An archive of dep.url whose bytes nothing pins yet: from a mirror (a file:// one even offline)."""
    local = [m for m in ctx.mirrors if m.startswith("file://")]
    if ctx.offline:
        for base in local:
            candidate = mirror_url(base, dep.url)
            if Path(candidate[len("file://"):]).is_file():
                return fetch_unpinned(candidate, ctx.cache, (), ctx.options)[0]
        raise ToolkitError(
            f"offline: {what}: {dep.url} is not in the download cache nor in a local mirror "
            f"({', '.join(local) or 'none given'})",
            hint="pass --mirror file://<mirror> holding it, or run once with network access",
        )
    return fetch_unpinned(dep.url, ctx.cache, ctx.mirrors, ctx.options)[0]


def prepare_dep(dep: FetchContentDep, ctx: FetchContext, dest: Path) -> Path:
    """Fetch, unpack and verify one dependency under dest/<name>; returns its source folder."""
    what = f"fetchcontent {dep.name}"
    content = content_pin(dep, ctx)
    archive_sha = ctx.sha256_for(dep.url, dep.sha256)
    if content is None and archive_sha is None:
        lock = ctx.lock.path.name if ctx.lock is not None else "the lock file"
        raise ToolkitError(f"{what}: {dep.url} has no content digest or sha256 in the recipe or {lock}",
                           hint="run `nox -s lock` (with --mirror when upstream is out of reach) to pin it")
    folder = dep_dir(dest, dep)
    identity = {"url": dep.url, "sha256": archive_sha, "content": content, "strip": dep.strip_components}
    stamp = _stamp(folder)
    if folder.is_dir() and stamp.is_file() and json.loads(stamp.read_text()) == identity:
        return _checked_source(dep, dest, what)

    archive = None
    if archive_sha is not None:
        try:
            archive = ctx.fetch_url(dep.url, archive_sha, what)
        except ToolkitError:
            # A mirror's re-packed archive has other bytes than upstream's: the content pin decides.
            if content is None:
                raise
    if archive is None and content is not None:
        known = _known_archive(ctx, content)
        archive = ctx.cache.find_download(known) if known else None
    if archive is None:
        archive = _download(dep, ctx, what)
    folder.parent.mkdir(parents=True, exist_ok=True)
    stamp.unlink(missing_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        extract_archive(archive, tmp / "tree", dep.strip_components)
        if content is not None:
            found = tree_digest(tmp / "tree")
            if found != content:
                raise ToolkitError(
                    f"{what}: {archive.name} (from {dep.url} or its mirror) unpacks to content {found}, "
                    f"but the pin is {content}",
                    hint="a different tree than the one pinned: check the mirror, or re-pin with `nox -s lock` "
                    "if the new version is intended",
                )
            _remember_archive(ctx, content, archive.parent.name)
        shutil.rmtree(folder, ignore_errors=True)
        (tmp / "tree").rename(folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    atomic_write_text(stamp, json.dumps(identity, sort_keys=True) + "\n")
    log.info(f"{what}: verified {'content ' + content[:12] if content else 'sha256 ' + archive_sha[:12]}... "
             f"in {folder}")
    return _checked_source(dep, dest, what)


def _checked_source(dep: FetchContentDep, dest: Path, what: str) -> Path:
    folder = source_dir(dest, dep)
    if not (folder / "CMakeLists.txt").is_file():
        raise ToolkitError(
            f"{what}: {dep.url} unpacked into {dep_dir(dest, dep)} has no CMakeLists.txt at "
            f"{dep.subdir or 'its top'}",
            hint="set 'subdir' (or 'strip_components') for this [[fetchcontent]] entry",
        )
    return folder


# -- handing them to CMake -----------------------------------------------------------------------

def provider_defines(deps, ctx: FetchContext, dest: Path, recipe: Path, binary_dir: Path) -> dict[str, str]:
    """Verify every listed dependency and write the provider's map; returns the configure's defines."""
    dest = Path(dest)
    lines = [f"# Written by the toolkit for {Path(recipe).name}: FetchContent name -> verified source folder."]
    for dep in deps:
        folder = prepare_dep(dep, ctx, dest)
        lines.append(f'set(TOOLKIT_FC_DIR_{dep.name.lower()} "{folder.as_posix()}")')
    lines.append(f'set(TOOLKIT_FC_NAMES "{";".join(d.name.lower() for d in deps)}")')
    lines.append(f'set(TOOLKIT_FP_NAMES "{";".join(d.name for d in deps if d.find_package)}")')
    lines.append(f'set(TOOLKIT_PROVIDER_RECIPE "{Path(recipe).as_posix()}")')
    map_file = dest / MAP_NAME
    dest.mkdir(parents=True, exist_ok=True)
    atomic_write_text(map_file, "\n".join(lines) + "\n")
    return {
        "CMAKE_PROJECT_TOP_LEVEL_INCLUDES": PROVIDER.as_posix(),
        "TOOLKIT_PROVIDER_MAP": map_file.as_posix(),
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

def expected_requests(deps) -> list[str]:
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

    def line(self) -> str:
        pins = []
        if self.sha256:
            pins.append(f"sha256 {self.sha256[:12]}...")
        if self.content:
            pins.append(f"content {self.content[:12]}...")
        state = "cached" if self.cached else "to fetch"
        who = f" (asked by {self.asked_by})" if self.asked_by else ""
        return (f"{self.name}{who} -> {self.source_dir.as_posix()}  <- {self.url} "
                f"[{', '.join(pins) or 'UNPINNED'}, {state}]")


def plan_fetchcontent(deps, ctx: FetchContext, dest: Path) -> list[PlannedDep]:
    """What provider_defines would do, without network access or writing anything."""
    out = []
    for dep in deps:
        sha = ctx.sha256_for(dep.url, dep.sha256)
        content = content_pin(dep, ctx)
        known = sha or (_known_archive(ctx, content) if content else None)
        cached = known is not None and ctx.cache.find_download(known) is not None
        out.append(PlannedDep(dep.name.lower(), dep.url, sha, content, cached, source_dir(dest, dep), dep.asked_by))
    return out
