"""Build the EP wheel from the build stage's libraries with scikit-build-core.

The wheel is built without build isolation (`python -m build --no-isolation`): the toolkit's own
environment carries scikit-build-core, and an isolated build would need the network for every wheel.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolkit.binary.elf import highest_versions, merge_highest, read_elf, version_needs
from toolkit.binary.library import is_library, read_library
from toolkit.binary.pe import read_pe
from toolkit.binary.windows import system_imports
from toolkit.recipe.wheel import Component, WheelSettings
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.process import run
from toolkit.wheel.buildinfo import BuildInfo
from toolkit.wheel.data import ep_entry_points, rocm_excludes
from toolkit.wheel.licenses import tree_license_files, with_carried_licenses
from toolkit.wheel.linked_licenses import LinkedNotices
from toolkit.wheel.project import generate_project
from toolkit.wheel.repair import matches_any


def select_components(settings: WheelSettings, lib_dir: Path, info: BuildInfo) -> tuple[Component, ...]:
    """The components this build packages, each checked to be on disk, and a plugin EP library unless it says
    it is not (`plugin = false`)."""
    features = frozenset(info.features)
    chosen = settings.components_for(features)
    required = ep_entry_points()
    for c in settings.components:
        if c not in chosen and (lib_dir / c.file(info.platform)).exists():
            log.stage("wheel", f"leaving out {c.file(info.platform)}: feature '{c.feature}' is off")
    for c in chosen:
        path = lib_dir / c.file(info.platform)
        why = f" (feature '{c.feature}' is on)" if c.feature else ""
        if not path.is_file():
            raise ToolkitError(
                f"{path}: library of component '{c.library}'{why} not found",
                "run the build stage first, or remove the component from the recipe's [wheel]",
            )
        if not is_library(path):
            raise ToolkitError(f"{path}: neither an ELF shared library nor a Windows DLL")
        missing = [name for name in required if name not in read_library(path).defined] if c.plugin else []
        if missing:
            raise ToolkitError(
                f"{path}: does not export {', '.join(missing)}; ORT cannot load it as a plugin EP library",
                "export CreateEpFactories and ReleaseEpFactory (see the sample's cmake/exports.map)",
            )
    return chosen


def build_wheel(
    settings: WheelSettings,
    lib_dir: Path,
    build_info: BuildInfo | Mapping[str, Any],
    out_dir: Path,
    env: Mapping[str, str] | None = None,
    source_dir: Path | None = None,
    dep_dirs: Mapping[str, Path] | None = None,
    linked: LinkedNotices | None = None,
) -> Path:
    """Package `lib_dir`'s libraries as the recipe's wheel in `out_dir`; returns the wheel's path. `source_dir`: the
    EP's source tree, whose LICENSE, COPYING and LICENSES/ files the wheel carries (licenses.py); `dep_dirs`: the
    build's fetched dependencies by name, which hold the license texts of the libraries it carries; `linked`: the
    notices of other projects' code inside the libraries (linked_licenses.linked_notices).

    The wheel is tagged py3-none-linux_<arch>: `repair_wheel` gives it the manylinux tag auditwheel
    computes. SOURCE_DATE_EPOCH (this process's, or `env`'s: what the caller adds to the build's
    environment) dates every entry when set; otherwise scikit-build-core's fixed epoch does, so two builds
    of the same inputs are byte-identical either way.
    """
    lib_dir, out_dir = Path(lib_dir), Path(out_dir)
    info = build_info if isinstance(build_info, BuildInfo) else BuildInfo.from_mapping(build_info)
    ensure_tools()
    components = select_components(settings, lib_dir, info)
    needs = {c.file(info.platform): linked_rocm(lib_dir, (c,), info.platform) for c in components}
    external = {c.file(info.platform): linked_external(lib_dir, c, settings.excludes, info.platform)
                for c in components}
    info = dataclasses.replace(info, rocm_libraries=linked_rocm(lib_dir, components, info.platform),
                               symbol_versions=symbol_versions(lib_dir, components, info.platform))
    settings = settings.for_features(info.features).for_linked(info.rocm_libraries,
                                                               f"[wheel] of the recipe ({lib_dir})", info.platform)
    info = dataclasses.replace(info, rocm_variant=settings.variant)
    settings = dataclasses.replace(settings, license=with_carried_licenses(
        settings.license, components, linked.expressions if linked else ()))
    if source_dir is not None and not tree_license_files(source_dir):
        log.warn(f"{source_dir}: no LICENSE, COPYING or LICENSES/ file, so the wheel carries no license of the EP; "
                 "publish refuses such a wheel")
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".wheel-build-", dir=out_dir) as tmp:
        project = generate_project(settings, components, lib_dir, info, Path(tmp) / "project", needs, source_dir,
                                   external, dep_dirs, linked)
        dist = Path(tmp) / "dist"
        cmd = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(project)]
        log.stage("wheel", f"building {settings.distribution} {settings.version} from {len(components)} libraries")
        # A cross build's tag is the target's: scikit-build-core takes the platform from _PYTHON_HOST_PLATFORM
        # (sysconfig's spelling, win-amd64), as CPython's own cross builds set it.
        host = {"_PYTHON_HOST_PLATFORM": info.wheel_platform.replace("_", "-", 1)} if info.wheel_platform else {}
        run(cmd, "wheel build", output="merge", env=_build_env({**(env or {}), **host}),
            hint="pip install scikit-build-core build, and check the generated project above")
        wheels = sorted(dist.glob("*.whl"))
        if len(wheels) != 1:
            raise ToolkitError(f"wheel build produced {len(wheels)} wheels in {dist}, expected one")
        final = out_dir / wheels[0].name
        os.replace(wheels[0], final)
    log.stage("wheel", f"wrote {final}")
    return final


def linked_rocm(lib_dir: Path, components: tuple[Component, ...], platform: str = "linux") -> tuple[str, ...]:
    """The ROCm sonames the components link (NEEDED entries matching the ROCm names repair keeps external):
    which ROCm the wheel needs at run time, e.g. libamdhip64.so.6 (HIP 6) and libmigraphx_c.so.3. None for a
    Windows build: a DLL imports no ROCm (the DirectX backend reaches the GPU through DirectML)."""
    if platform != "linux":
        return ()
    needed = {name for c in components for name in read_elf(Path(lib_dir) / c.filename).needed}
    return tuple(sorted(name for name in needed if matches_any(name, rocm_excludes())))


def symbol_versions(lib_dir: Path, components: tuple[Component, ...], platform: str) -> dict[str, str]:
    """The highest GLIBC_, GLIBCXX_ and CXXABI_ versions the components need (ELF symbol versions; none for a
    Windows build, whose DLLs version nothing that way)."""
    if platform != "linux":
        return {}
    return merge_highest([highest_versions(version_needs(lib_dir / c.filename)) for c in components])


def linked_external(lib_dir: Path, component: Component, excludes: tuple[str, ...],
                    platform: str = "linux") -> tuple[str, ...]:
    """The sonames `component` links that repair leaves external by the recipe's excludes and that are not ROCm: the
    self-check reports them apart from ROCm's. For a Windows build, Windows' own DLLs it imports (the check stage
    allows those and what the wheel carries), which the self-check looks up with Windows' DLL search."""
    if platform != "linux":
        return system_imports(read_pe(Path(lib_dir) / component.file(platform)))
    needed = read_elf(Path(lib_dir) / component.filename).needed
    return tuple(sorted(n for n in needed if matches_any(n, excludes) and not matches_any(n, rocm_excludes())))


def _build_env(added: Mapping[str, str]) -> dict[str, str]:
    env = {**os.environ, **added}
    # A user's pip or scikit-build-core configuration must not change what the recipe asked for.
    for key in list(env):
        if key.startswith("SKBUILD_") or key.startswith("PIP_CONFIG"):
            del env[key]
    return env


def ensure_tools() -> None:
    """Fail early, naming the package, when a tool the wheel stage runs is missing."""
    for module, package in (("scikit_build_core", "scikit-build-core"), ("build", "build")):
        if importlib.util.find_spec(module) is None:
            raise ToolkitError(f"python module '{module}' not found", f"pip install {package}")
