"""--dry-run for the sources layer: what would be fetched, where, and every define CMake would get.

Nothing here touches the network or writes to disk; it only reads the recipe, the lock file and which
checksums the cache already holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from toolkit.recipe.sources import FetchContentDep, SourceSettings
from toolkit.sources.archive import is_cached, with_lock_pins
from toolkit.sources.context import FetchContext
from toolkit.sources.fetchcontent import DISCONNECTED, expected_requests, plan_fetchcontent
from toolkit.sources.mirrors import origin
from toolkit.sources.preflight import ResolvedPaths
from toolkit.util.redact import redact_url


def plan_source(settings: SourceSettings, ctx: FetchContext, dest_dir: Path) -> str:
    if settings.path is not None:
        return f"source: local tree {settings.path}" + (f" (subdir {settings.subdir})" if settings.subdir else "")
    if settings.archive is not None:
        pins = with_lock_pins(settings.archive, ctx).describe_pins()
        where = origin(settings.archive.url, ctx.mirrors, is_cached(settings.archive, ctx), ctx.offline,
                       ctx.insecure_mirror)
        return f"source: {redact_url(settings.archive.url)} [{pins}, {where}] -> unpack into {dest_dir}"
    assert settings.git is not None and settings.commit is not None  # one kind of source: SourceSettings checks it
    git = settings.git
    where = origin(git, ctx.mirrors, ctx.cache.git_path(git, settings.commit).is_dir(), ctx.offline,
                   ctx.insecure_mirror, git=True)
    subs = " with submodules" if settings.submodules else ""
    return f"source: git {redact_url(git)} at {settings.commit}{subs} [{where}] -> {dest_dir}"


def plan_lines(settings: SourceSettings | None, deps: Sequence[FetchContentDep], ctx: FetchContext, source_dest: Path,
               deps_dest: Path, resolved: ResolvedPaths | None = None, configures: bool = True) -> list[str]:
    """The sources part of a build plan, one line per fact, in the order the build would act (the FetchContent
    part only for a build that configures)."""
    lines = []
    if settings is not None:
        lines.append(plan_source(settings, ctx, source_dest))
    if not configures:
        return lines
    # The names come from the recipe filtered by this build's features: what the configure will ask the
    # provider for. The configure reports what it did ask; a name outside this list fails it.
    lines.append("fetchcontent: CMake will ask the dependency provider for: "
                 f"{', '.join(expected_requests(deps)) or 'none'}")
    if deps:
        lines.append(f"  served from verified folders under {deps_dest}; CMake downloads nothing (-D{DISCONNECTED}=ON)")
        lines += [f"  {p.line()}" for p in plan_fetchcontent(deps, ctx, deps_dest)]
    if resolved is not None:
        lines += [f"dependency {line}" for line in resolved.lines()]
        for key, value in resolved.cmake_defines().items():
            lines.append(f"  -D{key}={value}")
        if resolved.ort_package is not None:
            lines.append("  (CMAKE_PREFIX_PATH gets the unpacked ORT package first once it is fetched)")
    return lines
