"""Preflight: before anything is built, find every install the recipe requires, and report all gaps at once.

The recipe's [requires] says which components (ort, rocm, migraphx) a build needs, always and per enabled
feature; the bundled sample needs none, a real umbrella EP tree with migraphx on needs all three. One
error lists everything missing, each with the option or variable that would fix it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.recipe.sources import OrtPackage, OrtSettings, Requirements
from toolkit.sources.archive import is_cached, with_lock_pins
from toolkit.sources.components import Located, components, locate, platform_tag
from toolkit.sources.context import FetchContext
from toolkit.util.debian_mirror import debian_mirror
from toolkit.util.errors import ToolkitError
from toolkit.util.redact import redact_url


@dataclass(frozen=True)
class PreflightOptions:
    ort_home: Path | None = None
    rocm_path: Path | None = None
    migraphx_home: Path | None = None
    platform: str | None = None
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))

    def explicit(self, component: str) -> Path | None:
        return {"ort": self.ort_home, "rocm": self.rocm_path, "migraphx": self.migraphx_home}[component]


@dataclass(frozen=True)
class ResolvedPaths:
    needed: tuple[str, ...]
    found: dict[str, Located]
    ort_package: OrtPackage | None = None  # ORT comes from the recipe's release package (fetched later)
    problems: tuple[str, ...] = ()

    def path(self, component: str) -> Path | None:
        located = self.found.get(component)
        return located.path if located else None

    def cmake_defines(self, ort_home: Path | None = None) -> dict[str, str]:
        """CMAKE_PREFIX_PATH (ORT first, then MIGraphX, then ROCm) and ROCM_PATH when ROCm is used."""
        prefixes = [ort_home or self.path("ort"), self.path("migraphx"), self.path("rocm")]
        unique = list(dict.fromkeys(p.as_posix() for p in prefixes if p is not None))
        defines = {"CMAKE_PREFIX_PATH": ";".join(unique)} if unique else {}
        rocm = self.path("rocm")
        if rocm is not None:
            defines["ROCM_PATH"] = rocm.as_posix()
        return defines

    def lines(self) -> list[str]:
        out = []
        for name in components():
            located = self.found.get(name)
            if name not in self.needed:
                out.append(f"{name}: not required by this recipe and feature set")
            elif located is None or located.problem:
                out.append(f"{name}: MISSING: {located.problem if located else 'not checked'}")
            elif located.path is None:
                out.append(f"{name}: {located.origin}")
            else:
                out.append(f"{name}: {located.path} (from {located.origin})")
        return out


def check(requirements: Requirements, features: list[str] | tuple[str, ...] | set[str], options: PreflightOptions,
          ort: OrtSettings | None = None, ctx: FetchContext | None = None) -> ResolvedPaths:
    """Locate every needed component; problems are collected, not raised (for --dry-run)."""
    needed = tuple(requirements.needed(features))
    found: dict[str, Located] = {}
    ort_package = None
    for name in needed:
        explicit = options.explicit(name)
        # A recipe without [ort], or without a package for this platform while its [ort] has packages for others
        # only (a Windows one), takes the system's ORT (a distribution's libonnxruntime-dev under /usr).
        platform = options.platform or platform_tag()
        if name == "ort" and ort is not None and explicit is None and \
                not any(options.env.get(v) for v in components()["ort"]["env"]) and \
                not _others_only(ort, platform):
            found[name], ort_package = _ort_from_recipe(ort, platform, ctx)
            continue
        found[name] = locate(name, explicit, options.env, found)
    problems = tuple(f"{components()[n]['title']}: {found[n].problem}\n      hint: {_hint(found[n], ort)}"
                     for n in needed if found[n].problem)
    return ResolvedPaths(needed, found, ort_package, problems)


def _others_only(ort: OrtSettings, platform: str) -> bool:
    """A build for this machine's own system, whose [ort] lists packages for other systems only (a Windows
    build's): the system's ORT serves it."""
    system = platform.split("-")[0]
    return platform == platform_tag() and all(not p.platform.startswith(system) for p in ort.packages)


def _hint(located: Located, ort: OrtSettings | None) -> str:
    """What to do about one missing component, from where it was looked for: a user who named a folder is told
    to fix that folder, not to name one; the recipe's package offline is fetched by a run online."""
    spec = components()[located.component]
    named = [spec["option"], *spec["env"]]
    package = f"the recipe's [ort] {ort.version} package" if ort is not None else ""
    if located.origin in named:
        hint = f"point {located.origin} at the {spec['title']}"
        return hint + (f", or leave {located.origin} out to use {package}" if package else "")
    if package and located.origin.startswith("ORT ") and "offline" in (located.problem or ""):
        return f"run once without --offline (it is then kept in the download cache), or pass {spec['option']} DIR"
    fallback: str = spec["hint"]
    return fallback


class PreflightError(ToolkitError):
    """Components missing before a build. `from_system`: one of them is a system install a build root brings
    (ROCm, MIGraphX, the system's ORT); an ORT the recipe fetches as its own [ort] package is not."""

    def __init__(self, message: str, from_system: bool):
        super().__init__(message)
        self.from_system = from_system


def _ort_from_recipe(ort: OrtSettings | None, platform: str,
                     ctx: FetchContext | None) -> tuple[Located, OrtPackage | None]:
    if ort is None:
        return Located("ort", None, "not found", "no --ort-home given and the recipe has no [ort] section"), None
    package = ort.package_for(platform)
    if package is None:
        known = ", ".join(p.platform for p in ort.packages) or "none"
        return Located("ort", None, "not found",
                       f"no --ort-home given and [ort] {ort.version} has no package for {platform} "
                       f"(recipe has: {known})"), None
    archive = package.archive
    origin = f"ORT {ort.version} release package {archive.url} (fetched at build time)"
    if ctx is not None:
        pinned = with_lock_pins(archive, ctx)
        cached = is_cached(archive, ctx)
        if pinned.sha256 is None and pinned.content is None and ctx.release:
            return Located("ort", None, origin, f"{archive.url} has no sha256 (run `nox -s lock`)"), package
        if ctx.offline and not cached:
            return Located("ort", None, origin, f"offline and {archive.url} is not in the download cache"), package
        if archive.is_debian and not cached:
            try:
                mirror = debian_mirror()
            except ToolkitError as exc:
                how = f"; {exc.hint}" if exc.hint else ""
                return Located("ort", None, origin, f"{archive.url}: {exc.message}{how}"), package
            where = f" from the Debian mirror {redact_url(mirror.url)} ({mirror.origin}) (fetched"
            origin = origin.replace(" (fetched", where)
    return Located("ort", None, origin), package


def preflight(requirements: Requirements, features: list[str] | tuple[str, ...] | set[str], options: PreflightOptions,
              ort: OrtSettings | None = None, ctx: FetchContext | None = None) -> ResolvedPaths:
    """Locate every needed component or raise one ToolkitError listing everything missing."""
    resolved = check(requirements, features, options, ort, ctx)
    if resolved.problems:
        listed = "\n".join(f"  - {p}" for p in resolved.problems)
        from_system = any(located.problem and not (name == "ort" and ort is not None)
                          for name, located in resolved.found.items())
        raise PreflightError(f"preflight: missing before anything is built:\n{listed}", from_system)
    return resolved
