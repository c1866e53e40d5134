"""Release entries with a build root of their own ([[release.rocm]] root, [[release.toolchain]] root): each is built
in a container of that root.

A release started on the host builds each such entry with `container ... release --only ID` in a container of
that root, reads back the wheel and the entry's build facts, and publishes every entry into ONE dist folder (with
the meta-package that the recipe's ROCm variants sit behind). Inside a root's container or the root itself, only
the entries of that root are built there; any other is an error that says where to run the release.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from toolkit.container import engine as container
from toolkit.pipeline.options import RELEASE_PASSED
from toolkit.recipe.wheel import WheelSettings
from toolkit.release.matrix import Entry
from toolkit.release.orchestrator import MetaFn
from toolkit.util import log
from toolkit.util.errors import RUN_TOOLKIT, ToolkitError
from toolkit.util.fsutil import JSON
from toolkit.util.process import run

FACTS_FILE = "entry-facts.json"
# Set for the release a host release runs in a container of an entry's root: that entry's id. The host prints
# the entry's lines (building, its SBOM) and the result; the release inside prints neither.
ENTRY_ENV = "TOOLKIT_RELEASE_ENTRY"
# The build options a release passes on to an entry built in a container of its root: all it was given but the
# build folder, which `container --build-dir` mounts at its own path there.
PASSED_INTO_ROOT = tuple(name for name in RELEASE_PASSED if name != "build_folder")


def current_root() -> str | None:
    """The build root this process runs in (its image or the root itself), None on the host."""
    return os.environ.get("TOOLKIT_IN_IMAGE") or os.environ.get("TOOLKIT_IN_ROOT") or None


def entry_of_host_release() -> str | None:
    """The entry id when this process is the release a host release runs in a container of that entry's root."""
    return (os.environ.get(ENTRY_ENV) or None) if current_root() else None


def root_for(entry: Entry) -> str | None:
    """The root whose image must build `entry`; None when it is built here."""
    if entry.root is None:
        return None
    here = current_root()
    if here == entry.root:
        return None
    if here is not None:
        raise ToolkitError(f"release entry {entry.id} is built in build root {entry.root}, and this is {here}",
                           hint="start the release on the host, which runs each entry in a container of its root, or "
                                "select this root's entries with --only")
    return entry.root


def roots_of(entries: list[Entry]) -> list[str]:
    """The distinct roots the entries are built in (their ROCm variant's or toolchain set's), in matrix order."""
    return list(dict.fromkeys(e.root for e in entries if e.root is not None))


def build_in_root_image(recipe: Path, entry: Entry, work_dir: Path, *, release_args: list[str],
                        offline: bool, env: Mapping[str, str] | None = None) -> tuple[Path, JSON]:
    """`container --recipe RECIPE release --only ID` in a container of the entry's root, its build folder in
    `work_dir`; the wheel it wrote and the facts of its build. `release_args` are the build options passed on
    (PASSED_INTO_ROOT), `env` what the release adds to the environment of that command."""
    root = entry.root or "?"   # only entries with a root come here
    build = work_dir / "build"
    build.mkdir(parents=True, exist_ok=True)
    facts_inside = f"{container.BUILD}/{FACTS_FILE}"
    argv = [sys.executable, "-m", "toolkit", "container", "--recipe", str(recipe), "--build-dir", str(build),
            *(["--network", "none"] if offline else []),
            "release", "--only", entry.id, "--facts-out", facts_inside, *release_args]
    log.stage("release", f"{entry.id}: in a container of build root {root}")
    proc = run(argv, f"release entry {entry.id} in a container of its root", output="terminal", check=False,
               env={**os.environ, **(env or {}), ENTRY_ENV: entry.id})
    if proc.returncode != 0:
        raise ToolkitError(f"release entry {entry.id} failed in a container of build root {root} "
                           f"(exit {proc.returncode})",
                           hint="its log is above; rerun that entry alone with "
                                f"`nox -s container -- --recipe {recipe.stem} release --only {entry.id}`")
    dist = build / recipe.stem / "dist"
    wheels = sorted(dist.glob("*.whl"))
    if len(wheels) != 1:
        raise ToolkitError(f"release entry {entry.id}: expected one wheel in {dist}, found {len(wheels)}")
    facts: JSON = json.loads((build / FACTS_FILE).read_text(encoding="utf-8"))[entry.id]
    # The tools of the image that built it (its provenance's), not those of the host that started the release.
    statement = json.loads((dist / "provenance.json").read_text(encoding="utf-8"))
    facts["tools"] = statement["predicate"]["buildDefinition"]["internalParameters"]["toolchain"]
    return wheels[0], facts


def meta_writer(settings: WheelSettings, source_date_epoch: str | None = None) -> MetaFn:
    """Writes the meta-package of `settings` ([wheel] with rocm_variants) into the folder given, dated by
    `source_date_epoch` (None: this process's $SOURCE_DATE_EPOCH)."""
    from toolkit.wheel.meta import write_meta_wheel

    return lambda folder: write_meta_wheel(settings, folder, source_date_epoch)


def check_rocm_variant(entry: Entry, wheel: Path, variants: dict[str, str]) -> None:
    """The wheel an entry of ROCm variant V built must be V's distribution: a root whose HIP is not the one
    its entry names would otherwise publish a wheel under the wrong ROCm."""
    if entry.rocm is None or not variants:
        return
    # <distribution>_<variant>, or <distribution>_<variant>_<feature> for a named feature's build ([wheel]
    # named_features): the variant is one of the name's parts either way.
    name = wheel.name.split("-", 1)[0]
    if entry.rocm.name not in name.split("_"):
        raise ToolkitError(f"release entry {entry.id} (ROCm variant {entry.rocm.name}, root {entry.rocm.root}) "
                           f"built {wheel.name}, whose libraries link another HIP "
                           f"(variants: {', '.join(f'{k}={v}' for k, v in variants.items())})",
                           hint=f"check the HIP that build root {entry.rocm.root} installs "
                                f"(`{RUN_TOOLKIT} root show {entry.rocm.root}`)")
