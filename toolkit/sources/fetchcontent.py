"""A local mirror for CMake FetchContent: pre-fetch each dependency, verified, and point CMake at it.

CMake reads FETCHCONTENT_SOURCE_DIR_<NAME> (upper-cased content name) as "already populated here", and
FETCHCONTENT_FULLY_DISCONNECTED=ON forbids any download, so a configure with these defines never touches
the network. A FetchContent_Declare the recipe does not list would then fail deep inside CMake; the
toolkit finds those first (declared_names) and names them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from toolkit.errors import ToolkitError
from toolkit.sources.context import FetchContext
from toolkit.sources.settings import FetchContentDep
from toolkit.sources.source import unpack_once

DISCONNECTED = "FETCHCONTENT_FULLY_DISCONNECTED"
_DECLARE = re.compile(r"\bFetchContent_Declare\s*\(\s*([^\s)]+)", re.IGNORECASE)
_SKIP_DIRS = {".git", "_deps", "build", "node_modules"}


def dep_dir(dest: Path, dep: FetchContentDep) -> Path:
    return Path(dest) / dep.name.lower()


def source_dir(dest: Path, dep: FetchContentDep) -> Path:
    folder = dep_dir(dest, dep)
    return folder / dep.subdir if dep.subdir else folder


def fetchcontent_defines(deps: tuple[FetchContentDep, ...] | list[FetchContentDep], ctx: FetchContext,
                         dest: Path) -> dict[str, str]:
    """Fetch and unpack every dependency under dest/<name>; returns the CMake defines that use them."""
    defines: dict[str, str] = {}
    for dep in deps:
        what = f"fetchcontent {dep.name}"
        archive = ctx.fetch_url(dep.url, dep.sha256, what)
        unpack_once(archive, dep_dir(dest, dep), dep.strip_components, what)
        folder = source_dir(dest, dep)
        if not (folder / "CMakeLists.txt").is_file():
            raise ToolkitError(
                f"{what}: {dep.url} unpacked into {dep_dir(dest, dep)} has no CMakeLists.txt at "
                f"{dep.subdir or 'its top'}",
                hint="set 'subdir' (or 'strip_components') for this [[fetchcontent]] entry",
            )
        defines[dep.define] = folder.as_posix()
    defines[DISCONNECTED] = "ON"
    return defines


def declared_names(source_tree: Path) -> dict[str, list[str]]:
    """FetchContent_Declare names in a tree's CMake files -> ['file:line', ...] where each is declared."""
    found: dict[str, list[str]] = {}
    root = Path(source_tree)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            if name != "CMakeLists.txt" and not name.endswith(".cmake"):
                continue
            path = Path(dirpath) / name
            text = path.read_text(encoding="utf-8", errors="replace")
            for match in _DECLARE.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.setdefault(match.group(1), []).append(f"{path.relative_to(root).as_posix()}:{line}")
    return found


def undeclared_in_recipe(deps, source_tree: Path) -> dict[str, list[str]]:
    """Names the tree declares that the recipe does not mirror (CMake would have to download them)."""
    listed = {d.name.upper() for d in deps}
    return {n: where for n, where in declared_names(source_tree).items()
            if "$" not in n and n.upper() not in listed}


def check_covered(deps, source_tree: Path, recipe: str) -> None:
    missing = undeclared_in_recipe(deps, source_tree)
    if missing:
        listed = "\n".join(f"  {n} (declared at {', '.join(w)})" for n, w in sorted(missing.items()))
        raise ToolkitError(
            f"{source_tree}: FetchContent dependencies not listed in {recipe} [[fetchcontent]]:\n{listed}",
            hint="add a [[fetchcontent]] entry (name, url) for each, then run `nox -s lock`",
        )


@dataclass(frozen=True)
class PlannedDep:
    name: str
    url: str
    sha256: str | None
    pinned_by: str  # "recipe", "lock" or "nothing"
    cached: bool
    define: str
    source_dir: Path

    def line(self) -> str:
        pin = f"sha256 {self.sha256[:12]}... ({self.pinned_by})" if self.sha256 else "UNPINNED"
        state = "cached" if self.cached else "to download"
        return f"-D{self.define}={self.source_dir.as_posix()}  <- {self.url} [{pin}, {state}]"


def plan_fetchcontent(deps, ctx: FetchContext, dest: Path) -> list[PlannedDep]:
    """What fetchcontent_defines would do, without network access or writing anything."""
    out = []
    for dep in deps:
        sha = ctx.sha256_for(dep.url, dep.sha256)
        pinned_by = "recipe" if dep.sha256 else "lock" if sha else "nothing"
        cached = sha is not None and ctx.cache.find_download(sha) is not None
        out.append(PlannedDep(dep.name, dep.url, sha, pinned_by, cached, dep.define, source_dir(dest, dep)))
    return out
