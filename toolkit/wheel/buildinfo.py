"""What a build was made from, recorded in the wheel so an installed EP says where it came from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from toolkit.recipe.core import TOOLCHAIN_PLATFORMS
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON


@dataclass(frozen=True)
class BuildInfo:
    source_revision: str
    patches: tuple[str, ...] = ()
    features: tuple[str, ...] = ()  # the features that were on
    rocm_version: str | None = None
    gpu_targets: tuple[str, ...] = ()
    # The C/C++ toolchain's identity (toolkit/cmake/toolchain.py): {"name": "system"} or zig's pin and target.
    toolchain: JSON | None = None
    # The ROCm libraries the packaged libraries link, by soname (HIP's, MIGraphX's): filled in by the wheel
    # build from their ELF NEEDED entries, so an installed wheel says which ROCm it needs.
    rocm_libraries: tuple[str, ...] = ()
    # The upstream commit the source tree is (a git source's commit, or the commit an archive's URL names);
    # None for a local tree or an archive of no known commit.
    upstream_commit: str | None = None
    # HIP's version as the headers the compile read say (hip/hip_version.h: MAJOR.MINOR.PATCH); None: no HIP.
    hip_version: str | None = None
    # The ROCm variant the wheel is for ([wheel.rocm_variants], by the HIP soname linked): set by the wheel build.
    rocm_variant: str | None = None
    # The highest GLIBC_, GLIBCXX_ and CXXABI_ symbol versions the packaged libraries need ({"GLIBC": "2.43", ...}):
    # set by the wheel build from their .gnu.version_r, so a self-check says which glibc and libstdc++ it needs.
    symbol_versions: JSON | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], where: str = "build info") -> BuildInfo:
        """Accept the pipeline's dict; `features` may be a list of names or a {name: bool} table."""
        known = {"source_revision", "patches", "features", "rocm_version", "gpu_targets", "toolchain",
                 "rocm_libraries", "upstream_commit", "hip_version", "rocm_variant", "symbol_versions"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ToolkitError(f"{where}: unknown key {unknown[0]!r}", f"known keys: {', '.join(sorted(known))}")
        revision = data.get("source_revision")
        if not isinstance(revision, str) or not revision:
            raise ToolkitError(f"{where}: 'source_revision' must be a non-empty string, got {revision!r}")
        features = data.get("features", ())
        if isinstance(features, Mapping):
            features = [name for name, on in features.items() if on]
        rocm = data.get("rocm_version")
        if rocm is not None and not isinstance(rocm, str):
            raise ToolkitError(f"{where}: 'rocm_version' must be a string or null, got {rocm!r}")
        for key in ("upstream_commit", "hip_version", "rocm_variant"):
            if data.get(key) is not None and not isinstance(data[key], str):
                raise ToolkitError(f"{where}: {key!r} must be a string or null, got {data[key]!r}")
        toolchain = data.get("toolchain")
        if toolchain is not None and not (isinstance(toolchain, Mapping) and isinstance(toolchain.get("name"), str)):
            raise ToolkitError(f"{where}: 'toolchain' must be a table with a 'name' or null, got {toolchain!r}")
        versions = data.get("symbol_versions")
        if versions is not None and not (isinstance(versions, Mapping) and
                                         all(isinstance(v, str) for v in [*versions, *versions.values()])):
            raise ToolkitError(f"{where}: 'symbol_versions' must be a table of strings or null, got {versions!r}")
        return cls(
            source_revision=revision,
            patches=_strings(data.get("patches", ()), where, "patches"),
            features=tuple(sorted(_strings(features, where, "features"))),
            rocm_version=rocm,
            gpu_targets=_strings(data.get("gpu_targets", ()), where, "gpu_targets"),
            toolchain=dict(toolchain) if toolchain is not None else None,
            rocm_libraries=_strings(data.get("rocm_libraries", ()), where, "rocm_libraries"),
            upstream_commit=data.get("upstream_commit"),
            hip_version=data.get("hip_version"),
            rocm_variant=data.get("rocm_variant"),
            symbol_versions=dict(versions) if versions is not None else None,
        )

    @property
    def platform(self) -> str:
        """The operating system the libraries are for: the toolchain's (recipe.core.TOOLCHAIN_PLATFORMS)."""
        return TOOLCHAIN_PLATFORMS.get(str((self.toolchain or {}).get("name")), "linux")

    @property
    def wheel_platform(self) -> str | None:
        """The platform tag the toolchain fixes (win_amd64); None where repair computes it (manylinux)."""
        value = (self.toolchain or {}).get("wheel_platform")
        return str(value) if value else None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in out.items()}


def _strings(value: Any, where: str, key: str) -> tuple[str, ...]:
    if isinstance(value, str) or not all(isinstance(v, str) for v in value):
        raise ToolkitError(f"{where}: {key!r} must be a list of strings, got {value!r}")
    return tuple(value)
