"""A release entry's wheel and the facts its provenance records, taken from the work tree after the build's stages
and before the tree's lock is let go (stages.build_then): the wheel is copied out, since the next build of the tree
that packages replaces wheelhouse/, and the facts read (the source, the patches, the commands as they ran, the
toolchain, the FetchContent dependencies, the upstream commit, the HIP and ROCm versions). The release
(release/entry.py) adds what needs no tree."""

from __future__ import annotations

import shutil
from pathlib import Path

from toolkit.cmake.commands import build_command, find_cmake
from toolkit.pipeline.adapters import derive
from toolkit.pipeline.adapters.configure import configure_ran
from toolkit.pipeline.build import Build
from toolkit.pipeline.options import build_argv, option_argv
from toolkit.pipeline.produced import Produced
from toolkit.pipeline.stages import built_wheels
from toolkit.recipe.pinned import version_of
from toolkit.sources.archive import with_lock_pins
from toolkit.util.errors import RUN_TOOLKIT, ToolkitError
from toolkit.util.fsutil import JSON


def entry_provenance(b: Build, produced: Produced, into: Path, what: str) -> tuple[Path, JSON]:
    """The build's wheel, copied into the folder `into`, and its facts (as its stages produced them); `what` names
    the build in an error."""
    options = b.options
    made = built_wheels(b)[0]
    configured = configure_ran(b)
    if configured is None:
        raise ToolkitError(f"{what}: the work tree {b.workspace.root} records no configure",
                           hint=f"configure it again: {RUN_TOOLKIT} build --force {' '.join(option_argv(options))}")
    wheel = into / made.name
    shutil.copy2(made, wheel)
    patches = [{"name": name, "sha256": sha, "phase": phase} for phase in ("base", "hipified")
               for name, sha in derive.patch_pins(b, phase)]
    # The configure as it ran (a --fresh included); the build command is the one the build stage runs.
    commands = [build_argv(options, "--wheel"), configured,
                build_command(find_cmake(), b.workspace.cmake, options.jobs)]
    facts = produced.configure("wheel").facts
    source = source_record(b, produced.digest("wheel"), facts["upstream_commit"])
    return wheel, {"sources": [source], "patches": patches, "commands": commands,
                   # The C/C++ toolchain's identity (zig: pinned version, target, wheel sha256), as the configure's
                   # fingerprint has it.
                   "toolchain": b.toolchain().identity(), "fetchcontent": fetchcontent_records(b),
                   # What the wheel was built from and for: the upstream commit, the HIP headers, the ROCm version.
                   "upstream_commit": facts["upstream_commit"], "hip_version": facts["hip_version"],
                   "rocm_version": facts["rocm_version"]}


def source_record(b: Build, digest: str, upstream_commit: str | None) -> dict[str, str | None]:
    if b.source.kind == "path":
        return {"name": b.source_dir.name, "uri": b.source_dir.as_uri(), "sha256": digest}
    sha = b.fetch.sha256_for(b.source.url, b.source.sha256) if b.source.url else digest
    record = {"name": b.source_dir.name, "uri": b.source.url or f"git+{b.source.git}@{b.source.commit}", "sha256": sha}
    commit = b.source.commit or upstream_commit
    if commit:
        record["version"] = commit
    return record


def fetchcontent_records(b: Build) -> list[JSON]:
    """Every FetchContent dependency the build served, with its version (from its URL), pins (the digest of its
    unpacked tree, what the build verified, and the archive's sha256 where known) and license; `in_wheel` false
    for one the build only reads."""
    out: list[JSON] = []
    for dep in b.fetchcontent_deps():
        pinned = with_lock_pins(dep.archive, b.fetch)
        record: JSON = {"name": dep.name, "url": pinned.url, "version": version_of(pinned.url) or "unknown",
                  "content": pinned.content}
        if pinned.sha256:
            record["sha256"] = pinned.sha256
        if dep.license:
            record["license"] = dep.license
        if not dep.in_wheel:
            record["in_wheel"] = False
        out.append(record)
    return sorted(out, key=lambda r: r["name"])
