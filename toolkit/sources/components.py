"""Finding installed dependencies (ORT, ROCm, MIGraphX) and fetching ORT's release package.

What marks a usable install (headers, CMake config), which option and environment variables name it,
and where to look by default are data in components.json. An explicit location that lacks a marker is
an error, not a reason to look elsewhere: the user asked for that one.
"""

from __future__ import annotations

import json
import platform as _platform
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from toolkit.recipe.pinned import PinnedArchive
from toolkit.recipe.sources import OrtPackage, OrtSettings
from toolkit.sources.archive import unpack_pinned, with_lock_pins
from toolkit.sources.context import FetchContext
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON

_OS = {"Linux": "linux", "Windows": "win", "Darwin": "osx"}
_ARCH = {"x86_64": "x64", "AMD64": "x64", "aarch64": "aarch64", "arm64": "arm64", "ARM64": "arm64"}


def platform_tag() -> str:
    """This machine as ORT's release packages name platforms: linux-x64, linux-aarch64, win-x64, osx-arm64."""
    system, machine = _platform.system(), _platform.machine()
    return f"{_OS.get(system, system.lower())}-{_ARCH.get(machine, machine.lower())}"


@lru_cache(maxsize=1)
def components() -> JSON:
    data: JSON = json.loads(resources.files("toolkit.sources").joinpath("components.json").read_text(encoding="utf-8"))
    return data


@dataclass(frozen=True)
class Located:
    component: str
    path: Path | None
    origin: str  # "--rocm-path", "ROCM_PATH", "default", "recipe package ..."
    problem: str | None = None


def missing_markers(component: str, path: Path) -> list[str]:
    """The marker files (per components.json) that path lacks, described for the user."""
    missing = []
    for marker in components()[component]["markers"]:
        if not any(next(iter(path.glob(pattern)), None) is not None for pattern in marker["any"]):
            missing.append(f"{marker['what']} (looked for {', '.join(marker['any'])})")
    return missing


def locate(component: str, explicit: Path | None, env: Mapping[str, str],
           found: Mapping[str, Located] | None = None) -> Located:
    """Find one component: the option, then environment variables, then related installs, then defaults."""
    spec = components()[component]
    named: list[tuple[str, Path]] = []
    if explicit is not None:
        named.append((spec["option"], Path(explicit)))
    named += [(var, Path(env[var])) for var in spec["env"] if env.get(var)]
    if named:
        origin, path = named[0]
        if not path.is_dir():
            return Located(component, None, origin, f"{origin}={path}: no such folder")
        missing = missing_markers(component, path)
        if missing:
            return Located(component, None, origin, f"{origin}={path} lacks: " + "; ".join(missing))
        return Located(component, path.resolve(), origin)
    beside = [(other, found[other].path) for other in spec["after"] if found and other in found]
    candidates = [(f"next to {other}", near) for other, near in beside if near is not None]
    candidates += [("default", Path(d)) for d in spec["defaults"]]
    for origin, path in candidates:
        if path.is_dir() and not missing_markers(component, path):
            return Located(component, path.resolve(), origin)
    tried = ", ".join(str(p) for _, p in candidates) or "nowhere by default"
    names = " or ".join([spec["option"], *spec["env"]])
    return Located(component, None, "not found", f"not found (tried {tried}); give {names}")


def ort_pin(archive: PinnedArchive, ctx: FetchContext) -> str | None:
    """The pin that names ORT's unpacked folder in the cache (its verified sha256, else its content digest)."""
    pinned = with_lock_pins(archive, ctx)
    return pinned.sha256 or pinned.content


def planned_ort_prefix(settings: OrtSettings, ctx: FetchContext) -> Path | None:
    """Where fetch_ort will unpack ORT's package, known without fetching when it is pinned (for a dry run)."""
    package = settings.package_for(platform_tag())
    key = ort_pin(package.archive, ctx) if package is not None else None
    if package is None or key is None:
        return None
    unpacked = ctx.cache.root / "unpacked" / key
    return unpacked / package.archive.subdir if package.archive.subdir else unpacked


def fetch_ort(settings: OrtSettings, ctx: FetchContext, platform: str | None = None) -> Path:
    """Fetch, verify and unpack ORT's package for this platform (a release archive or a .deb); returns the prefix."""
    platform = platform or platform_tag()
    package: OrtPackage | None = settings.package_for(platform)
    if package is None:
        known = ", ".join(p.platform for p in settings.packages) or "none"
        raise ToolkitError(f"[ort] {settings.version}: no package for platform {platform} (recipe has: {known})",
                           hint="add an [[ort.package]] for it, or pass --ort-home DIR")
    archive = package.archive
    what = f"ort package {platform}"
    # Unpacked once per machine in the cache, in a folder named by its pin (the verified sha256, else the
    # content digest), so every build and work tree shares one copy; the cache lock keeps parallel builds
    # from unpacking it twice.
    key = ort_pin(archive, ctx)
    if key is None:  # a development build of an unpinned package: the bytes it got name the folder
        key = ctx.fetch_url(archive.url, None, what).parent.name
        archive = archive.with_pins(key, None)
    unpacked = ctx.cache.root / "unpacked" / key
    with ctx.cache.lock(f"unpack-{key}", str(unpacked)):
        unpack_pinned(archive, ctx, unpacked, what)
    folder = unpacked / archive.subdir if archive.subdir else unpacked
    missing = missing_markers("ort", folder)
    if missing:
        raise ToolkitError(f"ORT package {archive.url} unpacked into {folder} lacks: " + "; ".join(missing),
                           hint="check the package URL (a release package with headers and CMake config), "
                           "or pass --ort-home DIR")
    return folder
