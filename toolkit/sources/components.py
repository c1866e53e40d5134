"""Finding installed dependencies (ORT, ROCm, MIGraphX) and fetching ORT's release package.

What marks a usable install (headers, CMake config), which option and environment variables name it,
and where to look by default are data in components.json. An explicit location that lacks a marker is
an error, not a reason to look elsewhere: the user asked for that one.
"""

from __future__ import annotations

import hashlib
import json
import platform as _platform
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from toolkit.recipe.pinned import PinnedArchive
from toolkit.recipe.sources import OrtPackage, OrtSettings, OrtWindowsDll
from toolkit.sources.archive import unpack_pinned, with_lock_pins
from toolkit.sources.context import FetchContext
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON, atomic_write_text

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


TARGET_ORT_PLATFORMS = {"windows": "windows-x64"}


def ort_package_platform(settings: OrtSettings | None, target_os: str) -> str | None:
    """Which [[ort.package]] a build for target_os uses: the target's own where the recipe has one (a Windows build
    links ORT's Windows DLL), else this machine's (None: its headers serve a tree that never links ORT)."""
    wanted = TARGET_ORT_PLATFORMS.get(target_os)
    if settings is None or wanted is None or settings.package_for(wanted) is None:
        return None
    return wanted


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
    if package.windows_dll is not None:
        folder = windows_sdk(settings.version, folder, package.windows_dll, ctx)
    missing = missing_markers("ort", folder)
    if missing:
        raise ToolkitError(f"ORT package {archive.url} unpacked into {folder} lacks: " + "; ".join(missing),
                           hint="check the package URL (a release package with headers and CMake config), "
                           "or pass --ort-home DIR")
    return folder


WINDOWS_CONFIG = """# Written by the ort-amdgpu toolkit (toolkit/sources/components.py): ORT {version}'s headers with
# the Windows DLL of PyPI's onnxruntime wheel, which MinGW links directly (no import library needed).
get_filename_component(_ort_prefix "${{CMAKE_CURRENT_LIST_DIR}}/../../.." ABSOLUTE)
set(onnxruntime_VERSION {version})
if(NOT TARGET onnxruntime::onnxruntime)
  add_library(onnxruntime::onnxruntime SHARED IMPORTED)
  set_target_properties(onnxruntime::onnxruntime PROPERTIES
    IMPORTED_LOCATION "${{_ort_prefix}}/lib/onnxruntime.dll"
    IMPORTED_IMPLIB "${{_ort_prefix}}/lib/onnxruntime.dll"
    INTERFACE_INCLUDE_DIRECTORIES "${{_ort_prefix}}/include/onnxruntime")
endif()
"""


def windows_sdk(version: str, headers: Path, dll: OrtWindowsDll, ctx: FetchContext) -> Path:
    """ORT for a Windows build, put together once per pin in the cache: the package's headers, the DLL from its
    archive, and a CMake config for find_package(onnxruntime)."""
    key = ort_pin(dll.archive, ctx)
    if key is None:
        raise ToolkitError(f"[ort] windows_dll {dll.archive.url} has no sha256 or content digest",
                           hint="pin it in the recipe (sha256 of the wheel), or run `nox -s lock`")
    unpacked = ctx.cache.root / "unpacked" / key
    with ctx.cache.lock(f"unpack-{key}", str(unpacked)):
        unpack_pinned(dll.archive, ctx, unpacked, f"ort windows dll {version}")
    source = unpacked / dll.path
    if not source.is_file():
        raise ToolkitError(f"[ort] windows_dll: {dll.archive.url} has no {dll.path}",
                           hint="set windows_dll.path to the DLL's path inside the archive")
    sdk = ctx.cache.root / "ort-windows" / hashlib.sha256(f"{headers}\0{key}\0{version}".encode()).hexdigest()[:16]
    with ctx.cache.lock(f"ort-windows-{sdk.name}", str(sdk)):
        if not (sdk / "lib" / "cmake" / "onnxruntime" / "onnxruntimeConfig.cmake").is_file():
            partial = sdk.with_name(sdk.name + ".partial")
            shutil.rmtree(partial, ignore_errors=True)
            shutil.copytree(headers / "include", partial / "include", symlinks=False)
            (partial / "lib" / "cmake" / "onnxruntime").mkdir(parents=True)
            shutil.copyfile(source, partial / "lib" / "onnxruntime.dll")
            atomic_write_text(partial / "lib" / "cmake" / "onnxruntime" / "onnxruntimeConfig.cmake",
                              WINDOWS_CONFIG.format(version=version))
            shutil.rmtree(sdk, ignore_errors=True)
            partial.rename(sdk)
    return sdk
