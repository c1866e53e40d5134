"""Bundling what a wheel's libraries link where auditwheel has no policy for them (a glibc newer than its newest, or
[wheel] platform = "linux").

auditwheel refuses to repair a wheel whose libraries need glibc symbols newer than its newest policy (hip-ep built
in sid needs GLIBC_2.43), and offers no `linux` target. This does its grafting step for such a wheel, the same way:
each library the Resolver says must be bundled is copied into `<package>.libs/` under a name of its own (the soname
with a hash of its bytes, so it never collides with another copy of that library in the process), every ELF file's
NEEDED entry is pointed at that name, the copies find each other through RUNPATH $ORIGIN and the wheel's own
libraries find them through `$ORIGIN/<the way to the folder>`. ROCm and the system's core libraries stay external,
as the Resolver classified them; the wheel keeps its `linux_<arch>` tag.
"""

from __future__ import annotations

import hashlib
import posixpath
import shutil
from collections.abc import Iterable
from pathlib import Path

from toolkit.binary.elf import read_elf
from toolkit.binary.patchelf import find_patchelf, set_runpath
from toolkit.util.process import run
from toolkit.wheel.rocm import Need


def grafted_name(soname: str, data: bytes) -> str:
    """libLLVM.so.22.1 -> libLLVM-<8 hex of its sha256>.so.22.1."""
    stem, dot, rest = soname.partition(".so")
    return f"{stem}-{hashlib.sha256(data).hexdigest()[:8]}{dot}{rest}"


def graft(source: Path, members: Iterable[str], needs: Iterable[Need], libs_folder: str) -> tuple[list[str], list[str]]:
    """Bundle the `needs` of kind "bundled" into source/libs_folder; returns (members changed, members added)."""
    bundled = [n for n in needs if n.kind == "bundled" and n.path is not None]
    if not bundled:
        return [], []
    folder = source / libs_folder
    folder.mkdir(parents=True, exist_ok=True)
    renamed: dict[str, str] = {}
    added = []
    for need in bundled:
        data = Path(str(need.path)).read_bytes()
        name = grafted_name(need.soname, data)
        renamed[need.soname] = name
        shutil.copyfile(str(need.path), folder / name)
        added.append(f"{libs_folder}/{name}")
    patchelf = find_patchelf()
    changed = []
    for member in [*members, *added]:
        path = source / member
        facts = read_elf(path)
        args: list[str | Path] = []
        for old in facts.needed:
            if old in renamed:
                args += ["--replace-needed", old, renamed[old]]
        if member in added:
            args += ["--set-soname", posixpath.basename(member)]
        if args:
            run([patchelf, *args, path.absolute()], f"{member}: pointing its NEEDED entries at the bundled copies")
        # A copy finds the other copies beside it; a library of the wheel finds them in the folder.
        way = "$ORIGIN" if member in added else \
            "$ORIGIN/" + posixpath.relpath(libs_folder, posixpath.dirname(member) or ".")
        if any(old in renamed for old in facts.needed) and way not in facts.runpath:
            set_runpath(path, [*facts.runpath, way] if member not in added else [way])
        if args or member in added:
            changed.append(member)
    return [m for m in changed if m not in added], added
