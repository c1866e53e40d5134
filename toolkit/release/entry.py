"""One release matrix entry built through the pipeline: its wheel, and the facts its provenance and SBOM record."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from toolkit.cmake.commands import build_command, find_cmake
from toolkit.pipeline import derive
from toolkit.pipeline.adapters.configure import configure_ran
from toolkit.pipeline.build import Build
from toolkit.pipeline.options import BuildOptions, build_argv, option_argv
from toolkit.pipeline.stages import built, built_wheels
from toolkit.release.matrix import Entry
from toolkit.util.errors import RUN_TOOLKIT, ToolkitError
from toolkit.util.fsutil import JSON


def entry_options(recipe_path: Path, entry: Entry, no_wait: bool = False,
                  overrides: Mapping[str, Any] | None = None) -> BuildOptions:
    """The build options of one entry: its own variant, features, GPU targets and toolchain, a local version label
    so that entries never share a wheel name (none for the public entries, [release] public), and --require-pinned
    (a release refuses unpinned sources); `overrides` are the build options the release was given to pass on
    (pipeline.options.release_overrides)."""
    chain = entry.toolchain
    options = BuildOptions(recipe=str(recipe_path), variant=f"release-{entry.id}",
                           with_features=tuple(entry.features), gpu_targets=tuple(entry.gpu_targets),
                           local_version=entry.local_version, no_wait=no_wait, require_pinned=True,
                           toolchain=chain.toolchain if chain else None,
                           glibc_floor=chain.glibc_floor if chain else None)
    return replace(options, **{k: v for k, v in (overrides or {}).items() if v not in (None, (), False)})


def build_release_entry(recipe_path: Path, entry: Entry, work_dir: Path, no_wait: bool = False,
                        overrides: Mapping[str, Any] | None = None,
                        env: Mapping[str, str] | None = None) -> tuple[Path, JSON]:
    """Build, package and repair one release matrix entry; returns its wheel and the facts for provenance.
    `env` is what the release adds to the environment of the build's tools (Build.env)."""
    options = entry_options(recipe_path, entry, no_wait, overrides)
    # The provenance is read from the work tree while it is still locked: no other build can change it meanwhile.
    with built(options, package=True, env=env) as b:
        return _entry_facts(b, options, entry)


def _entry_facts(b: Build, options: BuildOptions, entry: Entry) -> tuple[Path, JSON]:
    wheels = built_wheels(b)
    patches = [{"name": name, "sha256": sha, "phase": phase} for phase in ("base", "hipified")
               for name, sha in derive.patch_pins(b, phase)]
    configured = configure_ran(b)
    if configured is None:
        raise ToolkitError(f"release entry {entry.id}: the work tree {b.workspace.root} records no configure",
                           hint=f"configure it again: {RUN_TOOLKIT} build --force {' '.join(option_argv(options))}")
    # The configure as it ran (a --fresh included); the build command is the one the build stage runs.
    commands = [build_argv(options, "--wheel"), configured,
                build_command(find_cmake(), b.workspace.cmake, options.jobs)]
    built = derive.facts(b)
    facts: JSON = {"sources": [source_record(b, built["upstream_commit"])], "patches": patches, "commands": commands,
             # The C/C++ toolchain's identity (zig: pinned version, target, wheel sha256), as the configure's
             # fingerprint has it.
             "toolchain": b.toolchain().identity(), "fetchcontent": fetchcontent_records(b),
             # What the wheel was built from and for: the upstream commit, the HIP headers, the ROCm variant.
             "upstream_commit": built["upstream_commit"], "hip_version": built["hip_version"],
             "rocm_version": built["rocm_version"], "rocm_variant": wheel_variant(wheels[0])}
    root = build_root_record()
    if root:
        facts["build_root"] = root
    return wheels[0], facts


def wheel_variant(wheel: Path) -> str | None:
    """The ROCm variant the wheel was made for (the wheel stage chose it from the HIP soname linked)."""
    import zipfile

    from toolkit.wheel.inspection import read_build_info

    with zipfile.ZipFile(wheel) as archive:
        return (read_build_info(archive) or {}).get("rocm_variant")


def build_root_record() -> dict[str, str] | None:
    """The build root this build ran in (its image or the root itself) and its package set's digest: which of
    Debian's packages, at which versions (the root's lock file), the wheel was built against."""
    from toolkit.recipe import packageset
    from toolkit.release.in_root import current_root

    name = current_root()
    if name is None:
        return None
    spec = packageset.load(name)
    return {"name": name, "package_set": spec.digest()}


def source_record(b: Build, upstream_commit: str | None) -> dict[str, str | None]:
    if b.source.kind == "path":
        return {"name": b.source_dir.name, "uri": b.source_dir.as_uri(), "sha256": b.source_digest()}
    sha = b.fetch.sha256_for(b.source.url, b.source.sha256) if b.source.url else b.source_digest()
    record = {"name": b.source_dir.name, "uri": b.source.url or f"git+{b.source.git}@{b.source.commit}", "sha256": sha}
    commit = b.source.commit or upstream_commit
    if commit:
        record["version"] = commit
    return record


def fetchcontent_records(b: Build) -> list[JSON]:
    """Every FetchContent dependency the build served, with its version (from its URL) and pins: the digest of
    its unpacked tree (what the build verified) and the archive's sha256 where known."""
    from toolkit.sources.archive import with_lock_pins
    from toolkit.upstream.dep_changes import version_of

    out: list[JSON] = []
    for dep in b.fetchcontent_deps():
        pinned = with_lock_pins(dep.archive, b.fetch)
        record = {"name": dep.name, "url": pinned.url, "version": version_of(pinned.url) or "unknown",
                  "content": pinned.content}
        if pinned.sha256:
            record["sha256"] = pinned.sha256
        out.append(record)
    return sorted(out, key=lambda r: r["name"])
