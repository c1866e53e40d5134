"""Build facts: what the wheel records about its build (its get_build_info()), build-info.json and the provenance,
read from what the build really used: the upstream commit of the source, and the HIP version of the headers the
compile read (hip/hip_version.h found through the configure's include folders)."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from toolkit.apicheck.compiledb import COMPILE_DB, SYSTEM_INCLUDE_DIRS, include_dirs
from toolkit.cmake.commands import read_cache
from toolkit.recipe.sources import SourceSettings
from toolkit.util.fsutil import JSON

HIP_VERSION_HEADER = Path("hip") / "hip_version.h"
_COMMIT_IN_URL = re.compile(r"(?:^|[/=@#])([0-9a-f]{40})(?=$|[/.#?&])")


class BuildFacts(TypedDict):
    source_revision: str              # <tree folder>@sha256:<digest of the pristine tree>
    upstream_commit: str | None
    patches: list[str]                # "<name> sha256=<hex>" of each base patch applied
    features: list[str]
    rocm_version: str | None
    hip_version: str | None
    gpu_targets: list[str]
    toolchain: JSON                   # Toolchain.identity()


def build_facts(*, source: SourceSettings, source_dir: Path, source_digest: str, patch_pins: Sequence[tuple[str, str]],
                features: Sequence[str], kernel_hip: tuple[str, str] | None, cmake_dir: Path,
                rocm_prefixes: tuple[Path, ...], gpu_targets: Sequence[str], toolchain: JSON) -> BuildFacts:
    """The facts of one build. `kernel_hip` is (version, kind) of the HIP toolchain that compiles the hipified
    kernels, when there is one; the HIP headers the configured tree compiles with win over it (None before the
    configure, or when the tree uses no HIP)."""
    headers = hip_headers(cmake_dir, rocm_prefixes)
    kernels = f"HIP {kernel_hip[0]} ({kernel_hip[1]})" if kernel_hip else None
    return {
        "source_revision": f"{source_dir.name}@sha256:{source_digest}",
        "upstream_commit": upstream_commit(source),
        "patches": [f"{name} sha256={sha}" for name, sha in patch_pins],
        "features": sorted(features),
        "rocm_version": headers.describe() if headers else kernels,
        "hip_version": headers.version if headers else kernel_hip[0] if kernel_hip else None,
        "gpu_targets": list(gpu_targets),
        "toolchain": toolchain,
    }


def upstream_commit(source: SourceSettings) -> str | None:
    """The commit the source tree is: a git source's commit, or the 40-hex commit an archive's URL names (GitHub's
    /archive/<commit>.tar.gz, a mirror of it); None for a local tree or an archive named by tag or file."""
    if source.kind == "git":
        return source.commit
    if source.kind == "url" and source.url:
        match = _COMMIT_IN_URL.search(source.url)
        return match.group(1) if match else None
    return None


@dataclass(frozen=True)
class HipHeaders:
    version: str  # MAJOR.MINOR.PATCH as hip_version.h defines them
    header: Path
    package: str | None = None  # "PACKAGE VERSION" of the Debian package that installed it, where dpkg knows

    def describe(self) -> str:
        owner = f", {self.package}" if self.package else ""
        return f"HIP {self.version} ({self.header}{owner})"


def hip_headers(cmake_dir: Path, extra_prefixes: tuple[Path, ...] = ()) -> HipHeaders | None:
    """The HIP headers the configured tree compiles with, or None when it does not use HIP (its CMake cache has
    no hip_DIR). Searched as the compiler would: the include folders of compile_commands.json in order, then the
    prefix of the hip package config CMake found, then `extra_prefixes`' include/, then the system folders. Read
    once a build: the configure stage makes the build facts and hands them on (toolkit/pipeline/produced.py)."""
    hip_dir = read_cache(Path(cmake_dir)).get("hip_DIR", "")
    if not hip_dir or hip_dir.endswith("-NOTFOUND"):
        return None
    candidates = [*_compile_include_dirs(Path(cmake_dir)), *(p / "include" for p in Path(hip_dir).parents),
                  *(Path(p) / "include" for p in extra_prefixes), *SYSTEM_INCLUDE_DIRS]
    for folder in dict.fromkeys(candidates):
        header = folder / HIP_VERSION_HEADER
        if header.is_file():
            version = header_version(header)
            if version is not None:
                from toolkit.apicheck.apis import owning_package

                return HipHeaders(version, header, owning_package(header.parent))
    return None


def header_version(header: Path) -> str | None:
    text = header.read_text(encoding="utf-8", errors="replace")
    parts = []
    for key in ("MAJOR", "MINOR", "PATCH"):
        match = re.search(rf"#\s*define\s+HIP_VERSION_{key}\s+(\d+)", text)
        if match is None:
            return None
        parts.append(match.group(1))
    return ".".join(parts)


def _compile_include_dirs(cmake_dir: Path) -> list[Path]:
    db = cmake_dir / COMPILE_DB
    if not db.is_file():
        return []
    out: list[Path] = []
    try:
        entries = json.loads(db.read_text(encoding="utf-8"))
    except ValueError:
        return []
    for entry in entries:
        argv = entry.get("arguments") or shlex.split(entry.get("command", ""))
        out += [d for d in include_dirs(argv, Path(entry.get("directory", "."))) if d not in out]
    return out
