"""Licenses of other projects' code inside the wheel's own libraries, in `.dist-info/licenses/linked/<name>/`: each
fetched dependency the build compiled in (its recipe entry names its license; its texts are the license files at the
top of its tree) and each static archive of the build machine that the linker read (cmake/link_inputs.py; its
license and texts from data/licenses.json's `linked` entries and its Debian package, as for a bundled library).
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from toolkit.recipe.sources import FetchContentDep
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON
from toolkit.wheel.licenses import LicenseSource, debian_package, license_text_files, table, text_file

LINKED = "linked"


@dataclass(frozen=True)
class LinkedNotices:
    """The license files of the code of other projects inside the wheel's own libraries (path under
    .dist-info/licenses/ -> bytes), and their SPDX expressions."""

    files: dict[str, bytes]
    expressions: tuple[str, ...]


def _top_license_files(tree: Path) -> list[str]:
    """The license files at the top of a dependency's tree (its LICENSES/ folder may hold texts for its tooling)."""
    patterns = [p.lower() for p in table()["tree_files"] if "/" not in p]
    return sorted(p.name for p in tree.iterdir() if p.is_file() and any(fnmatch.fnmatchcase(p.name.lower(), g)
                                                                          for g in patterns))


def _dependency_files(dep: FetchContentDep, tree: Path) -> dict[str, bytes]:
    if dep.license is None:
        raise ToolkitError(f"[[fetchcontent]] {dep.name}: no `license`, but its code is in the wheel's libraries, so "
                           "the wheel must carry its license",
                           f"add its SPDX license to the recipe's [[fetchcontent]] {dep.name} (its LICENSE file says "
                           "which), or `in_wheel = false` for files the build only reads")
    top = Path(tree).resolve()
    names = list(dep.license_files) or _top_license_files(top)
    if not names:
        raise ToolkitError(f"{top}: [[fetchcontent]] {dep.name} has no LICENSE, COPYING or NOTICE file at its top",
                           "name the files that state its license with its `license_files` (paths inside its tree)")
    files = {}
    for name in names:
        text = (top / name).resolve()
        if not text.is_relative_to(top) or not text.is_file():
            raise ToolkitError(f"[[fetchcontent]] {dep.name}: license_files {name!r} is no file inside {top}",
                               "name a file of the dependency, as its archive lays it out")
        files[f"{LINKED}/{dep.name}/{posixpath.basename(name)}"] = text.read_bytes()
    return files


def _entry(entries: list[JSON], archive: str) -> JSON | None:
    name = posixpath.basename(archive)
    return next((e for e in entries if any(fnmatch.fnmatchcase(name, g) for g in e["archives"])), None)


def _archive_files(entry: JSON, archives: list[str], users: list[str], source: LicenseSource) -> dict[str, bytes]:
    root = source.system_root()
    owner = debian_package(archives[0], root)
    text = text_file(entry, owner[0] if owner else None, root)
    if text is None:
        raise ToolkitError(f"{archives[0]}: the linker put {entry['name']} into the wheel's libraries, but this "
                           f"machine has no license text for it (looked for {', '.join(entry['texts'])} under {root})",
                           "install its package with its /usr/share/doc/<package>/copyright, or say where its text "
                           f"lies in {source.table_name()}")
    folder = f"{LINKED}/{entry['name']}"
    files = {f"{folder}/{n}": data for n, data in license_text_files(entry, text, root, entry["name"]).items()}
    where = entry["source"]
    if owner and owner[1] and owner[2]:
        where += (f"; the archives are Debian's {owner[0]} {owner[2]}, whose source is Debian's source package "
                  f"{owner[1]} {owner[2]} (`apt-get source {owner[1]}={owner[2]}`)")
    texts = sorted(posixpath.basename(f) for f in files)
    named = ", ".join(posixpath.basename(a) for a in archives[:5]) + (
        f" and {len(archives) - 5} more" if len(archives) > 5 else "")
    files[f"{folder}/NOTICE"] = (
        f"{entry['name']} is linked statically into {', '.join(users)}: {len(archives)} archive(s) of the build "
        f"machine, {named}.\n"
        f"License: {entry['license']}; its text: {', '.join(texts)} beside this file.\n"
        f"Source: {where}.\n").encode()
    return files


def linked_notices(dependencies: Iterable[tuple[FetchContentDep, Path]],
                   archives: Mapping[str, Iterable[str] | None], source: LicenseSource | None = None) -> LinkedNotices:
    """The notices of what the wheel's libraries contain of other projects: `dependencies`, the fetched dependencies
    the build used with their trees (those not `in_wheel` left out), and `archives`, each library member's static
    archives from outside the work tree (link_inputs.archives_linked; None where the link left no record)."""
    source = source or LicenseSource()
    data = source.data()
    files: dict[str, bytes] = {}
    expressions = []
    for dep, tree in dependencies:
        if dep.in_wheel:
            files.update(_dependency_files(dep, tree))
            expressions.append(str(dep.license))
    groups: dict[str, tuple[JSON, list[str], list[str]]] = {}
    for user, found in sorted(archives.items()):
        for archive in found or ():
            if _entry(data.get("runtime", []), archive) is not None:
                continue
            entry = _entry(data.get("linked", []), archive)
            if entry is None:
                raise ToolkitError(f"{archive}: the linker put it into {user}, but {source.table_name()} names no "
                                   "license for it",
                                   "add a `linked` entry (archive glob, SPDX license, source, where its text lies), "
                                   "or a `runtime` one for an archive of the compiler's or the C library's own runtime")
            _, paths, users = groups.setdefault(entry["name"], (entry, [], []))
            if archive not in paths:
                paths.append(archive)
            if user not in users:
                users.append(user)
    for entry, paths, users in groups.values():
        files.update(_archive_files(entry, sorted(paths), users, source))
        expressions.append(str(entry["license"]))
    return LinkedNotices(files, tuple(dict.fromkeys(expressions)))
