"""A component's RUNPATH inside the wheel: set before auditwheel repairs it, verified after.

AMD's umbrella EP `dlopen`s its backends by bare name (`libmigraphx-backend.so`), so in an installed wheel
the loader finds them only through the umbrella's own search path. The recipe says which components need
which entries (`runpath = "$ORIGIN"`) and which siblings each loads (`loads = [...]`); the library keeps
its other entries after the recipe's. auditwheel keeps `$ORIGIN` entries when it rewrites a library's
search path for grafted libraries (it writes DT_RPATH then, which the loader reads the same way for a
dlopen from that library while no DT_RUNPATH exists).
"""

from __future__ import annotations

import csv
import io
import posixpath
import zipfile
from collections.abc import Iterable
from pathlib import Path

from toolkit.binary.elf import read_elf
from toolkit.binary.patchelf import set_runpath
from toolkit.recipe.core import library_file
from toolkit.recipe.wheel import Component
from toolkit.util.errors import ToolkitError
from toolkit.wheel.wheelfile import record_hash


def component_members(members: Iterable[str], components: Iterable[Component]) -> dict[str, Component]:
    """Archive path -> component, for the components this wheel holds (a feature that is off leaves some out)."""
    by_file = {c.filename: c for c in components}
    return {m: by_file[posixpath.basename(m)] for m in members if posixpath.basename(m) in by_file}


def effective_search_path(path: Path) -> tuple[str, ...]:
    facts = read_elf(path)
    # The loader ignores DT_RPATH when DT_RUNPATH exists.
    return facts.runpath if facts.runpath else facts.rpath


def set_runpaths(root: Path, members: dict[str, Component]) -> list[str]:
    """Give each member the RUNPATH its component asks for (its own other entries kept after); the members changed."""
    changed = []
    for member, component in sorted(members.items()):
        if not component.runpath:
            continue
        current = effective_search_path(root / member)
        wanted = tuple(dict.fromkeys((*component.runpath, *current)))
        if wanted == current and read_elf(root / member).runpath:
            continue
        set_runpath(root / member, wanted)
        changed.append(member)
    return changed


def _origin_dir(member: str, entry: str) -> str | None:
    for token in ("$ORIGIN", "${ORIGIN}"):
        if entry == token or entry.startswith(token + "/"):
            return posixpath.normpath(posixpath.join(posixpath.dirname(member), entry[len(token) + 1:]))
    return None


def verify(root: Path, members: dict[str, Component]) -> list[str]:
    """Problems with the repaired members: a recipe entry lost, or a bare-name sibling the loader would miss."""
    problems = []
    by_library = {c.library: m for m, c in members.items()}
    for member, component in sorted(members.items()):
        search = effective_search_path(root / member)
        shown = ":".join(search) or "none"
        lost = [e for e in component.runpath if e not in search]
        if lost:
            problems.append(f"{member}: search path {shown} lacks {', '.join(lost)} (component "
                            f"'{component.library}' asks for runpath = \"{':'.join(component.runpath)}\")")
        for sibling in component.loads:
            if sibling not in by_library:
                continue  # not in this wheel (its feature is off); the umbrella reports it at run time
            target = library_file(sibling)
            problem = _bare_name_problem(root, member, search, target, by_library[sibling])
            if problem:
                problems.append(f"{member}: dlopen(\"{target}\") {problem} (search path: {shown}); give component "
                                f"'{component.library}' runpath = \"$ORIGIN\"")
    return problems


def _bare_name_problem(root: Path, member: str, search: tuple[str, ...], target: str, expected: str) -> str | None:
    for entry in search:
        folder = _origin_dir(member, entry)
        if folder is None:
            if entry and Path(entry, target).exists():
                return f"would load {entry}/{target} from this machine, not {expected} from the wheel"
            continue
        if folder == ".." or folder.startswith("../"):
            continue
        if posixpath.join(folder, target) == posixpath.normpath(expected) and (root / expected).is_file():
            return None
    return f"would not find {expected}"


def rewrite_wheel(src: Path, dest: Path, root: Path, changed: Iterable[str], added: Iterable[str] = ()) -> None:
    """Copy `src` to `dest` with the `changed` members taken from `root`: same order, dates and modes;
    the `added` members (files of `root`) dated as the wheel's first entry, libraries (mode 755) before the
    dist-info, dist-info files (license texts, mode 644) just before RECORD; RECORD updated."""
    changed, added = set(changed), list(added)
    with zipfile.ZipFile(src) as archive:
        infos = archive.infolist()
        record_name = next((i.filename for i in infos if i.filename.endswith(".dist-info/RECORD")), None)
        if record_name is None:
            raise ToolkitError(f"{src}: no .dist-info/RECORD: not a wheel")
        new_data = {name: (root / name).read_bytes() for name in [*changed, *added]}
        rows = list(csv.reader(io.StringIO(archive.read(record_name).decode("utf-8"))))
        for row in rows:
            if row and row[0] in new_data:
                row[1:3] = [record_hash(new_data[row[0]]), str(len(new_data[row[0]]))]
        rows[-1:-1] = [[name, record_hash(new_data[name]), str(len(new_data[name]))] for name in added]
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(rows)
        new_data[record_name] = out.getvalue().encode("utf-8")
        first_dist_info = next(i for i, info in enumerate(infos) if ".dist-info/" in info.filename)
        record_at = next(i for i, info in enumerate(infos) if info.filename == record_name)
        libraries: list[zipfile.ZipInfo] = []
        metadata: list[zipfile.ZipInfo] = []
        for name in added:
            info = zipfile.ZipInfo(name, date_time=infos[0].date_time)
            in_dist_info = name.split("/", 1)[0].endswith(".dist-info")
            info.external_attr = ((0o100644 if in_dist_info else 0o100755) << 16)
            info.compress_type = zipfile.ZIP_DEFLATED
            (metadata if in_dist_info else libraries).append(info)
        with zipfile.ZipFile(dest, "w") as target:
            for info in [*infos[:first_dist_info], *libraries, *infos[first_dist_info:record_at], *metadata,
                         *infos[record_at:]]:
                data = new_data.get(info.filename)
                target.writestr(info, archive.read(info) if data is None else data, compress_type=info.compress_type)
