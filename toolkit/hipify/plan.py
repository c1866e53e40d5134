"""Which input goes to which output, and which outputs are still up to date.

Every input file is counted once: excluded (with the rule's reason), ignored (not selected, or its
output is left out), replaced by a hand-written overlay, or planned with an output path. Two inputs
writing the same output is an error, never a silent overwrite.
"""

from __future__ import annotations

import os
from pathlib import Path

from toolkit.hipify.report import HipifyReport
from toolkit.recipe.hipify import HipifySettings
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON, sha256_bytes


def plan_outputs(settings: HipifySettings, src_dir: Path, out_dir: Path, old_files: dict[str, JSON],
                 report: HipifyReport) -> tuple[dict[str, JSON], list[str]]:
    """Fill report's counts and outputs; returns the cache entries still valid and the inputs to convert."""
    entries: dict[str, JSON] = {}
    todo: list[str] = []
    owners: dict[str, str] = {}
    files = _relative_files(str(src_dir))
    # A hand-written overlay file takes the place of the converted file that would land on its path
    # (ORT's ROCm build put its hand-written folder first on the include path).
    overlays = {settings.rename_path(rel): rel for rel in files
                if settings.overlay and settings.overlaid(rel) and settings.excluded(rel) is None}
    build_files = []
    for rel in files:
        report.total += 1
        out_rel = _output_for(settings, rel, overlays, report)
        if out_rel is None:
            continue
        if is_build_file(rel) and not settings.overlaid(rel):
            build_files.append(rel)
            continue
        if out_rel in owners:
            raise ToolkitError(f"hipify: {owners[out_rel]} and {rel} would both be written to {out_rel}",
                               "exclude the CUDA file a hand-written overlay replaces ([[hipify.exclude]]), "
                               "or change the [[hipify.rename]] / suffixes rules")
        owners[out_rel] = rel
        report.outputs[rel] = out_rel
        cached = old_files.get(rel)
        if cached is not None and _up_to_date(cached, os.path.join(src_dir, rel), out_rel, out_dir / out_rel):
            entries[rel] = cached
            report.unchanged += 1
        else:
            todo.append(rel)
    if build_files:
        raise _refuse_build_files(settings, build_files)
    return entries, todo


def is_build_file(rel: str) -> bool:
    name = rel.rpartition("/")[2]
    return name == "CMakeLists.txt" or name.endswith(".cmake")


def _refuse_build_files(settings: HipifySettings, build_files: list[str]) -> ToolkitError:
    """Renaming CUDA words in a CMake file (CUDA::curand -> CUDA::hiprand) while find_package(CUDAToolkit) and
    LANGUAGES CUDA stay is a build file that is neither CUDA's nor HIP's, reported as converted: refused."""
    where = f"{settings.recipe}: " if settings.recipe else ""
    shown = ", ".join(build_files[:3]) + (f" and {len(build_files) - 3} more" if len(build_files) > 3 else "")
    return ToolkitError(
        f"hipify: {where}[hipify] include selects CMake build files ({shown}); hipify converts C/C++/CUDA "
        "sources, and a CMake file needs its languages, packages and targets rewritten for HIP as a whole",
        "narrow `include` to the sources (e.g. \"src/**/*.cu\"), or [[hipify.exclude]] the build files with a "
        "reason, and give the HIP build its own CMakeLists.txt (an overlay, or the recipe's tree): see "
        "docs/guides/writing-a-recipe.md, 'A plain CUDA CMake project'")


def _relative_files(root: str) -> list[str]:
    """fsutil.iter_files's listing (same files, same order, .git left out) as posix strings: no Path per file."""
    out = []
    root = root.rstrip("/") or "/"
    cut = len(root.rstrip("/")) + 1
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        base = dirpath[cut:] + "/" if dirpath != root else ""
        out += [base + name for name in sorted(filenames)]
    return out


def _output_for(settings: HipifySettings, rel: str, overlays: dict[str, str], report: HipifyReport) -> str | None:
    """The output path of input rel, or None (counted in report) when it gets none."""
    rule = settings.excluded(rel)
    if rule is not None:
        report.excluded.append((rel, rule.reason))
        return None
    if not settings.included(rel) and not settings.overlaid(rel):
        report.ignored += 1
        return None
    out_rel = settings.rename_path(rel)
    if settings.left_out(out_rel):
        report.ignored += 1
        return None
    if out_rel in overlays and overlays[out_rel] != rel:
        report.excluded.append((rel, f"the hand-written {overlays[out_rel]} takes its place (overlay)"))
        return None
    return out_rel


def _up_to_date(cached: JSON, src: str, out_rel: str, out: Path) -> bool:
    """Same output path, the output as this cache last wrote it (size and mtime), and the same input bytes (read
    last: a file with no cache entry is read once, by the conversion)."""
    if cached.get("output") != out_rel:
        return False
    try:
        st = out.stat()
    except FileNotFoundError:
        return False
    if st.st_size != cached["output_size"] or st.st_mtime_ns != cached["output_mtime_ns"]:
        return False
    with open(src, "rb") as handle:
        return sha256_bytes(handle.read()) == cached.get("input_sha256")
