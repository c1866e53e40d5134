"""Reproducible releases: the environment a release builds in, and the comparison of two release folders.

Two release runs of the same entry give byte-identical wheels, SBOMs, provenance and SHA256SUMS when:

- every date comes from SOURCE_DATE_EPOCH (wheel entries, the SBOM's timestamp); the release sets it, when the
  caller did not, to the commit time of the project's checkout (the `container` command passes the host's
  value in), else to 1980-01-01, the earliest a zip can hold; provenance then records no run times;
- paths are the same: the container mounts the project and the build folder at fixed paths, and ccache makes
  paths under the work tree relative (CCACHE_BASEDIR), so cached objects do not carry another folder's path;
- archives are ordered and dated: the wheel is built by scikit-build-core with sorted members, auditwheel
  rewrites it dated by SOURCE_DATE_EPOCH; build ids are content hashes (the linker's default).

`python -m toolkit release-compare DIR1 DIR2` names the first difference: the file and, for a wheel, the first
zip member whose bytes or metadata differ (diffoscope, where installed, gives the full report).
"""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

from toolkit.util.errors import ToolkitError
from toolkit.util.process import run_git

ZIP_EPOCH = 315532800   # 1980-01-01T00:00:00Z: the earliest date a zip entry can carry


def release_env(recipe: Path, source: str | None = None, project: Path | None = None) -> dict[str, str]:
    """Environment a release sets for its builds (the caller's own values win)."""
    env = {"TZ": "UTC"}
    if not os.environ.get("SOURCE_DATE_EPOCH"):
        env["SOURCE_DATE_EPOCH"] = str(source_date_epoch(project or Path(recipe).resolve().parent))
    return {k: v for k, v in env.items() if not os.environ.get(k)}


def source_date_epoch(folder: Path) -> int:
    """The commit time of the checkout holding `folder`, or ZIP_EPOCH where git cannot tell (no git, or a
    worktree whose repository is not mounted)."""
    if shutil.which("git") is None:
        return ZIP_EPOCH
    proc = run_git(["log", "-1", "--format=%ct"], [], "the project's commit time", cwd=folder, check=False)
    value = proc.stdout.strip()
    return int(value) if proc.returncode == 0 and value.isdigit() else ZIP_EPOCH


def compare_dirs(first: Path, second: Path) -> list[str]:
    """One line per difference between two release folders (empty: identical), each naming the file and,
    for a wheel, the first member that differs and how."""
    first, second = Path(first), Path(second)
    for folder in (first, second):
        if not folder.is_dir():
            raise ToolkitError(f"{folder}: no such release folder", hint="give two dist folders (build/<recipe>/dist)")
    names_a = {p.name for p in first.iterdir() if p.is_file()}
    names_b = {p.name for p in second.iterdir() if p.is_file()}
    out = [f"{name}: only in {first}" for name in sorted(names_a - names_b)]
    out += [f"{name}: only in {second}" for name in sorted(names_b - names_a)]
    for name in sorted(names_a & names_b):
        a, b = first / name, second / name
        if a.read_bytes() == b.read_bytes():
            continue
        if name.endswith(".whl"):
            out.append(f"{name}: {first_zip_difference(a, b)}")
        else:
            out.append(f"{name}: {first_text_difference(a, b)}")
    if out and shutil.which("diffoscope"):
        out.append(f"full report: diffoscope {first} {second}")
    return out


def first_zip_difference(a: Path, b: Path) -> str:
    """The first difference of two zip files, member by member in archive order."""
    with zipfile.ZipFile(a) as za, zipfile.ZipFile(b) as zb:
        infos_a, infos_b = za.infolist(), zb.infolist()
        for ia, ib in zip(infos_a, infos_b, strict=False):
            if ia.filename != ib.filename:
                return f"member order differs at {ia.filename!r} vs {ib.filename!r}"
            data_a, data_b = za.read(ia), zb.read(ib)
            if data_a != data_b:
                return f"member {ia.filename} differs: {_bytes_difference(data_a, data_b)}"
            for field in ("date_time", "external_attr", "compress_type", "extra", "comment", "create_system"):
                if getattr(ia, field) != getattr(ib, field):
                    return (f"member {ia.filename}: zip {field} differs ({getattr(ia, field)!r} vs "
                            f"{getattr(ib, field)!r})")
        if len(infos_a) != len(infos_b):
            longer, extra = (a, infos_a[len(infos_b)]) if len(infos_a) > len(infos_b) else (b, infos_b[len(infos_a)])
            return f"member {extra.filename} only in {longer}"
    return "same members and contents; the zip's own bytes differ (compression level or archive comment)"


def first_text_difference(a: Path, b: Path) -> str:
    data_a, data_b = a.read_bytes(), b.read_bytes()
    try:
        lines_a, lines_b = data_a.decode().splitlines(), data_b.decode().splitlines()
    except UnicodeDecodeError:
        return _bytes_difference(data_a, data_b)
    for number, (la, lb) in enumerate(zip(lines_a, lines_b, strict=False), 1):
        if la != lb:
            return f"line {number} differs: {la.strip()[:120]!r} vs {lb.strip()[:120]!r}"
    return f"{len(lines_a)} vs {len(lines_b)} lines"


def _bytes_difference(a: bytes, b: bytes) -> str:
    offset = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return f"{len(a)} vs {len(b)} bytes, first difference at offset {offset}"
