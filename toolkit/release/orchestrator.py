"""Run release entries and publish their records: wheels, one SBOM per wheel, provenance, SHA256SUMS.

The build itself is injected (`build_fn(entry, work_dir) -> (wheel_path, facts)`), so this module owns
only what a release adds on top of a build. Everything is written into a staging folder beside the
output folder and moved into place at the end: a failed entry, an invalid SBOM or an unverified source
leaves the previous release folder as it was.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from toolkit.release import checksums, provenance, sbom
from toolkit.release.matrix import Entry
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON, atomic_write_text, make_temp_dir, replace_dir, sha256_file, tree_usage
from toolkit.util.locks import WorkLock, remove_stale_temporaries

BuildFn = Callable[[Entry, Path], "tuple[Path, JSON]"]
MetaFn = Callable[[Path], Path]   # writes a meta-package's wheel into the folder given, returns its path
PROVENANCE = "provenance.json"
SBOM_SUFFIX = ".cdx.json"
WORK_FOLDER = ".work"   # in the staging folder: each entry's work tree, .work/ID
WORK = ".work"          # the sibling the work trees are set aside in while they are removed: .<out>.work.tmp-...


@dataclass(frozen=True)
class ReleaseResult:
    out_dir: Path
    wheels: list[Path]
    sboms: list[Path]
    provenance: Path
    checksums: Path


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _root_properties(facts: JSON) -> dict[str, str]:
    """The build root (package set) the wheel was built in, as the build's facts say. Which ROCm the wheel is
    for is the wheel's own record (sbom.BUILD_PROPS), which the host checked against the entry's variant."""
    props = {}
    if facts.get("build_root"):
        props["toolkit:build-root"] = facts["build_root"]["name"]
        props["toolkit:build-root:package-set"] = facts["build_root"]["package_set"]
    return props


def _check_replaceable(out_dir: Path) -> None:
    # The output folder is replaced as a whole; never do that to a folder a release did not write.
    if out_dir.exists() and any(out_dir.iterdir()) and not (out_dir / checksums.FILENAME).is_file():
        raise ToolkitError(f"{out_dir}: not empty and not a release folder (no {checksums.FILENAME})",
                           hint="choose a new or empty output folder; a release replaces its folder whole")


def _silent(name: str, message: str) -> None:
    pass


@dataclass(frozen=True)
class _Context:
    excludes: list[str] | None
    recipe: str | None
    toolchain: JSON | None
    meta: MetaFn | None
    facts_out: Path | None
    env: dict[str, str]
    say: Callable[[str, str], None]   # log.stage, or nothing for an entry of a release started on the host


def run_release(entries: list[Entry], build_fn: BuildFn, out_dir: Path, *,
                excludes: list[str] | None = None, recipe: str | None = None,
                toolchain: JSON | None = None, no_wait: bool = False, meta: MetaFn | None = None,
                facts_out: Path | None = None, env: Mapping[str, str] | None = None,
                announce: bool = True) -> ReleaseResult:
    """Build every entry with `build_fn` and publish the records into `out_dir`. `env` is what the release adds
    to its builds' environment (their SOURCE_DATE_EPOCH dates the records too); this process's is not changed.
    `announce` False: this release is one entry of a release started on the host (in a container of its root),
    which prints each entry's lines and its result itself; this one prints neither, so each line comes once."""
    if not entries:
        raise ToolkitError("nothing to release: the matrix selection is empty")
    out_dir = Path(out_dir).resolve()
    # One release at a time per output folder; `no_wait` fails at once, naming the process holding it.
    lock = WorkLock(out_dir, wait=not no_wait).acquire()
    try:
        staging_name = f"{out_dir.name}.staging"
        remove_stale_temporaries(out_dir.parent, (staging_name, f"{out_dir.name}.old", f"{out_dir.name}{WORK}"))
        context = _Context(excludes, recipe, toolchain, meta, facts_out, dict(env or {}),
                           log.stage if announce else _silent)
        return _release(entries, build_fn, out_dir, staging_name, context)
    finally:
        lock.release()


def _release(entries: list[Entry], build_fn: BuildFn, out_dir: Path, staging_name: str,
             ctx: _Context) -> ReleaseResult:
    _check_replaceable(out_dir)
    excludes = sbom.load_rocm_excludes() if ctx.excludes is None else ctx.excludes
    env = ctx.env
    staging = make_temp_dir(out_dir.parent, staging_name)
    aside: Path | None = None
    try:
        # A reproducible release (SOURCE_DATE_EPOCH set) records no run times: a rebuild gives the same file.
        epoch = env.get("SOURCE_DATE_EPOCH") or os.environ.get("SOURCE_DATE_EPOCH") or None
        started = None if epoch else _now()
        toolchain = provenance.collect_toolchain(env=env) if ctx.toolchain is None else ctx.toolchain
        builds: list[JSON] = []
        wheels: list[Path] = []
        sboms: list[Path] = []
        producer: dict[str, str] = {}
        for entry in entries:
            ctx.say("release", f"building {entry.id}")
            work = staging / WORK_FOLDER / entry.id
            work.mkdir(parents=True)
            wheel, facts = build_fn(entry, work)
            _check_wheel(entry, Path(wheel), producer)
            dest = staging / Path(wheel).name
            shutil.copy2(wheel, dest)
            wheels.append(dest)
            sboms.append(_write_sbom(entry, dest, facts, excludes, epoch, ctx.say))
            builds.append({"entry": entry.to_json(), "wheel": dest.name, "sha256": sha256_file(dest),
                           "facts": facts})

        if ctx.meta is not None:   # the meta-package the ROCm variants sit behind: metadata only, no SBOM of its own
            wheels.append(ctx.meta(staging))
            ctx.say("release", f"{wheels[-1].name}: meta-package, installing the newest ROCm major's variant")
        if ctx.facts_out is not None:
            atomic_write_text(ctx.facts_out, json.dumps({b["entry"]["id"]: b["facts"] for b in builds}, indent=2))

        unbuilt = tuple((w.name, sha256_file(w)) for w in wheels[len(builds):])   # the meta-package
        statement = provenance.build_statement(builds, toolchain, started, started and _now(), ctx.recipe,
                                               extra_subjects=unbuilt)
        prov_path = staging / PROVENANCE
        atomic_write_text(prov_path, provenance.render(statement))
        # The entries' work trees (an entry built in a container has its whole build folder there) are set aside
        # and removed once the release is in place, saying so: that takes minutes for a real build's.
        aside = make_temp_dir(out_dir.parent, f"{out_dir.name}{WORK}")
        os.replace(staging / WORK_FOLDER, aside / WORK_FOLDER)
        names = [p.name for p in wheels + sboms] + [PROVENANCE]
        checksums.write(staging, names)
        replace_dir(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if aside is not None:
            shutil.rmtree(aside, ignore_errors=True)
        raise
    ctx.say("release", f"wrote {len(wheels)} wheel(s), SBOMs, {PROVENANCE} and {checksums.FILENAME} to {out_dir}")
    remove_work_trees(aside / WORK_FOLDER)
    shutil.rmtree(aside, ignore_errors=True)
    return ReleaseResult(out_dir, [out_dir / p.name for p in wheels], [out_dir / p.name for p in sboms],
                         out_dir / PROVENANCE, out_dir / checksums.FILENAME)


def _check_wheel(entry: Entry, wheel: Path, producer: dict[str, str]) -> None:
    """What an entry's build returned is a wheel file no other entry produced; recorded in `producer`."""
    if not wheel.is_file() or wheel.suffix != ".whl":
        raise ToolkitError(f"release entry {entry.id}: the build returned {wheel}, not a wheel file")
    if wheel.name in producer:
        raise ToolkitError(f"release entries {producer[wheel.name]} and {entry.id} both produced "
                           f"{wheel.name}",
                           hint="give each matrix entry a distinct wheel name (a build tag or a "
                                "local version naming the GPU target set and features)")
    producer[wheel.name] = entry.id


def _write_sbom(entry: Entry, wheel: Path, facts: JSON, excludes: list[str], epoch: str | None,
                say: Callable[[str, str], None]) -> Path:
    """The wheel's SBOM, validated, beside it."""
    document = sbom.wheel_sbom(wheel, excludes, properties={
        "toolkit:matrix:entry": entry.id,
        "toolkit:matrix:gpu-targets": ";".join(entry.gpu_targets),
        "toolkit:matrix:features": ",".join(entry.features),
        **_root_properties(facts),
    }, inputs=facts, source_date_epoch=epoch)
    text = sbom.render(document)
    sbom_path = wheel.with_name(wheel.name + SBOM_SUFFIX)
    sbom.validate(text, str(sbom_path.name))
    atomic_write_text(sbom_path, text)
    rocm = sbom.external_libraries(document, "rocm")
    say("release", f"{wheel.name}: SBOM lists {len(document['components'])} components, "
        f"external ROCm libraries: {', '.join(rocm) or 'none'}")
    return sbom_path


def remove_work_trees(work: Path) -> None:
    """Remove the entries' work trees (`work`/ID), first saying how many and how big where there is anything to
    remove: an entry built in a container of its root leaves its whole build folder there."""
    held = [d for d in sorted(work.iterdir()) if d.is_dir() and any(d.iterdir())] if work.is_dir() else []
    if held:
        files, size = tree_usage(work)
        log.stage("release", f"removing the work trees of {len(held)} entr{'y' if len(held) == 1 else 'ies'} "
                  f"({', '.join(d.name for d in held)}: their build folders, {files} files, {log.human_size(size)})")
    shutil.rmtree(work, ignore_errors=True)
