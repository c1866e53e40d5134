"""One release matrix entry built through the pipeline: its wheel, and the facts its provenance and SBOM record
(those read from the work tree by the provenance adapter, pipeline/adapters/provenance.py; here what needs none)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from toolkit.pipeline.adapters import provenance
from toolkit.pipeline.options import BuildOptions
from toolkit.pipeline.stages import build_then
from toolkit.release.matrix import Entry
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
    """Build, package and repair one release matrix entry; returns its wheel, copied into `work_dir`, and the facts
    for provenance. `env` is what the release adds to the environment of the build's tools (Build.env)."""
    options = entry_options(recipe_path, entry, no_wait, overrides)
    # The wheel is copied out and the facts read while the work tree is still locked: no other build can change
    # either meanwhile.
    wheel, facts = build_then(options, functools.partial(provenance.entry_provenance, into=work_dir,
                                                         what=f"release entry {entry.id}"), package=True, env=env)
    facts["rocm_variant"] = wheel_variant(wheel)
    root = build_root_record()
    if root:
        facts["build_root"] = root
    return wheel, facts


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
