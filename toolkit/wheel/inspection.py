"""Report what a wheel holds and needs: tags, shared libraries, what they need that the wheel does not
carry (ROCm, system, other), exported EP entry points and the GPU targets of their code objects.

It reads any wheel, ours or not (onnxruntime-rocm from PyPI is the reference case), so it relies
only on the wheel format and ELF, never on our package layout; our build facts are shown when the
package carries them. Libraries are unpacked one at a time to a temporary file because real ones run
to half a gigabyte.

(Named inspection, not inspect: a module called inspect here would shadow the standard library's for
anything run from this folder.)
"""

from __future__ import annotations

import json
import posixpath
import shutil
import tempfile
import zipfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from toolkit.binary.elf import ELF_MAGIC, highest_version, read_elf, version_needs
from toolkit.binary.offload_bundle import natural_key, offload_report
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON
from toolkit.wheel.data import ep_entry_points, rocm_excludes, system_libraries
from toolkit.wheel.repair import matches_any
from toolkit.wheel.wheelfile import parse_wheel_filename, read_entry_points, read_headers

WHEEL_INFO_FILE = "_wheel_info.json"


@dataclass(frozen=True)
class LibraryReport:
    path: str  # inside the wheel
    soname: str | None
    needed: tuple[str, ...]
    runpath: tuple[str, ...]
    rpath: tuple[str, ...]
    stack_flags: str | None
    ep_entry_points: tuple[str, ...]  # the plugin EP entry points it exports
    gpu_targets: tuple[str, ...]
    offload_bundles: int
    compressed_bundles: int
    # The highest GLIBC_x.y and GLIBCXX_x.y.z symbol versions it needs (ELF version needs); None: none.
    glibc: str | None = None
    glibcxx: str | None = None
    size: int = 0          # bytes, unpacked
    debug_bytes: int = 0   # of which DWARF debug info


@dataclass(frozen=True)
class Dependency:
    name: str
    kind: str  # "rocm", "system" or "other"
    needed_by: tuple[str, ...]


@dataclass(frozen=True)
class WheelReport:
    path: str
    distribution: str
    version: str
    tags: tuple[str, ...]  # from the WHEEL file
    requires_dist: tuple[str, ...]
    libraries: tuple[LibraryReport, ...]
    not_carried: tuple[Dependency, ...]
    python_entry_points: dict[str, dict[str, str]] = field(default_factory=dict)
    build_info: JSON | None = None  # present in wheels this toolkit built

    @property
    def gpu_targets(self) -> tuple[str, ...]:
        return tuple(sorted({t for lib in self.libraries for t in lib.gpu_targets}, key=natural_key))

    @property
    def ep_libraries(self) -> tuple[str, ...]:
        return tuple(lib.path for lib in self.libraries if len(lib.ep_entry_points) == len(ep_entry_points()))

    def needed(self, kind: str) -> tuple[str, ...]:
        return tuple(d.name for d in self.not_carried if d.kind == kind)

    def to_json(self) -> str:
        data = asdict(self)
        data["gpu_targets"] = list(self.gpu_targets)
        data["ep_libraries"] = list(self.ep_libraries)
        return json.dumps(data, indent=2, sort_keys=True)


def dependency_kind(name: str) -> str:
    if matches_any(name, rocm_excludes()):
        return "rocm"
    if matches_any(name, system_libraries()):
        return "system"
    return "other"


def _elf_members(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    members = []
    for info in archive.infolist():
        if info.is_dir() or info.file_size < 4:
            continue
        with archive.open(info) as handle:
            if handle.read(4) == ELF_MAGIC:
                members.append(info)
    return members


def _library_report(archive: zipfile.ZipFile, info: zipfile.ZipInfo, scratch: Path) -> LibraryReport:
    target = scratch / "library"
    with archive.open(info) as src, open(target, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    try:
        facts = read_elf(target)
        needs = version_needs(target)
        offload = offload_report(target, label=f"{archive.filename}: {info.filename}")
    finally:
        target.unlink()
    return LibraryReport(
        path=info.filename,
        soname=facts.soname,
        needed=facts.needed,
        runpath=facts.runpath,
        rpath=facts.rpath,
        stack_flags=facts.stack_flags,
        ep_entry_points=tuple(name for name in ep_entry_points() if name in facts.exports),
        gpu_targets=offload.targets,
        offload_bundles=offload.bundles,
        compressed_bundles=offload.compressed_bundles,
        glibc=highest_version(needs, "GLIBC"),
        glibcxx=highest_version(needs, "GLIBCXX"),
        size=info.file_size,
        debug_bytes=facts.debug_bytes,
    )


def read_build_info(archive: zipfile.ZipFile) -> JSON | None:
    """The build facts a wheel of this toolkit records (with its ROCm variant), or None for other wheels."""
    for name in sorted(archive.namelist()):
        if posixpath.basename(name) == WHEEL_INFO_FILE and name.count("/") == 1:
            try:
                data = json.loads(archive.read(name))
                # The variant is the wheel's (chosen by the HIP soname linked); older wheels kept it beside build.
                return {"rocm_variant": data.get("rocm_variant"), **data["build"]}
            except (ValueError, KeyError, TypeError):
                return None
    return None


def inspect_wheel(path: Path) -> WheelReport:
    path = Path(path)
    if not path.is_file():
        raise ToolkitError(f"{path}: wheel not found")
    name = parse_wheel_filename(path.name)
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise ToolkitError(f"{path}: not a wheel (bad zip file: {exc})") from None
    with archive, tempfile.TemporaryDirectory(prefix="inspect-") as scratch:
        wheel_meta = read_headers(archive, "WHEEL")
        metadata = read_headers(archive, "METADATA")
        tags = tuple(wheel_meta.get_all("Tag") or ()) if wheel_meta else name.tags
        libraries = tuple(_library_report(archive, info, Path(scratch)) for info in _elf_members(archive))
        carried = {posixpath.basename(lib.path) for lib in libraries} | {
            lib.soname for lib in libraries if lib.soname
        }
        users: dict[str, list[str]] = {}
        for lib in libraries:
            for needed in lib.needed:
                if needed not in carried:
                    users.setdefault(needed, []).append(lib.path)
        not_carried = tuple(
            Dependency(needed, dependency_kind(needed), tuple(by)) for needed, by in sorted(users.items())
        )
        return WheelReport(
            path=str(path),
            distribution=(metadata.get("Name") if metadata else None) or name.distribution,
            version=(metadata.get("Version") if metadata else None) or name.version,
            tags=tags,
            requires_dist=tuple(metadata.get_all("Requires-Dist") or ()) if metadata else (),
            libraries=libraries,
            not_carried=not_carried,
            python_entry_points=read_entry_points(archive),
            build_info=read_build_info(archive),
        )


def describe_toolchain(identity: JSON | None) -> str:
    """A build info's toolchain in words (wheels built before it was recorded have none)."""
    if not identity:
        return "not recorded"
    if identity.get("name") != "zig":
        return str(identity.get("name"))
    return (f"zig {identity.get('version')} for {identity.get('target')} ({identity.get('cxx_runtime')}; "
            f"{identity.get('wheel')} sha256 {identity.get('wheel_sha256')})")


def rocm_variant_words(b: JSON) -> str:
    """Which ROCm a wheel is for: its variant, the HIP sonames it links and the HIP headers it compiled against."""
    hip = [name for name in b.get("rocm_libraries", []) if name.startswith("libamdhip64.so")]
    if not b.get("rocm_variant") and not hip:
        return "any (links no HIP)"
    parts = [f"links {', '.join(hip)}"] if hip else []
    if b.get("hip_version"):
        parts.append(f"compiled against HIP {b['hip_version']}")
    return f"{b.get('rocm_variant') or 'no variant'}" + (f" ({'; '.join(parts)})" if parts else "")


def _join(values: Iterable[str]) -> str:
    return ", ".join(values) if values else "none"


def format_report(report: WheelReport) -> str:
    lines = [
        f"{Path(report.path).name}",
        f"  distribution: {report.distribution} {report.version}",
        f"  tags: {_join(report.tags)}",
        f"  requires: {_join(report.requires_dist)}",
    ]
    if report.build_info is not None:
        b = report.build_info
        lines += [
            f"  upstream commit: {b.get('upstream_commit') or 'not known'}",
            f"  source revision: {b.get('source_revision')}",
            f"  patches applied: {_join(b.get('patches', []))}",
            f"  features: {_join(b.get('features', []))}",
            f"  ROCm version: {b.get('rocm_version') or 'none'}",
            f"  for ROCm: {rocm_variant_words(b)}",
            f"  GPU targets built: {_join(b.get('gpu_targets', []))}",
            f"  toolchain: {describe_toolchain(b.get('toolchain'))}",
        ]
    lines.append(f"  shared libraries ({len(report.libraries)}):")
    for lib in report.libraries:
        lines.append(f"    {lib.path}")
        debug = f"{log.human_size(lib.debug_bytes)} of it debug info" if lib.debug_bytes else "no debug info"
        lines.append(f"      size: {log.human_size(lib.size)} ({debug})")
        lines.append(f"      needs: {_join(lib.needed)}")
        lines.append(f"      highest symbol versions: GLIBC {lib.glibc or 'none'}, GLIBCXX {lib.glibcxx or 'none'}")
        if lib.runpath:
            lines.append(f"      RUNPATH: {':'.join(lib.runpath)}")
        if lib.rpath:
            lines.append(f"      RPATH: {':'.join(lib.rpath)}")
        stack = "no PT_GNU_STACK (executable)" if lib.stack_flags is None else lib.stack_flags
        lines.append(f"      stack: {stack}")
        lines.append(f"      EP entry points: {_join(lib.ep_entry_points)}")
        if lib.offload_bundles or lib.compressed_bundles:
            extra = f", {lib.compressed_bundles} compressed (targets not decoded)" if lib.compressed_bundles else ""
            lines.append(f"      GPU targets: {_join(lib.gpu_targets)} ({lib.offload_bundles} offload bundles{extra})")
    lines.append("  needed but not carried:")
    for kind in ("rocm", "other", "system"):
        deps = [d for d in report.not_carried if d.kind == kind]
        if deps:
            lines.append(f"    {kind}: {_join(d.name for d in deps)}")
    if not report.not_carried:
        lines.append("    nothing")
    lines.append(f"  GPU targets: {_join(report.gpu_targets)}")
    for group, entries in sorted(report.python_entry_points.items()):
        lines.append(f"  entry points [{group}]: {_join(f'{k} = {v}' for k, v in sorted(entries.items()))}")
    return "\n".join(lines)
