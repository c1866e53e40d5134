"""Includes spelled for a case-insensitive file system, answered on a case-sensitive one.

A tree written on Windows includes `<Windows.h>`, `<Psapi.h>` or `<wil/Resource.h>`; the headers are `windows.h`,
`psapi.h` and `wil/resource.h`, which Windows finds and Linux does not. Rather than rename anything in the tree or in
the headers, the toolkit answers each such spelling with a forwarding header of that name, in a folder the compiler
searches after the build's own: `Windows.h` holding `#include <windows.h>`. Which spellings need one is found by
reading the includes of the sources the build compiles, so a tree that spells its includes exactly gets none.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from toolkit.util.fsutil import atomic_write_text

_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.MULTILINE)
_SOURCE_SUFFIXES = {".h", ".hh", ".hpp", ".hxx", ".inl", ".c", ".cc", ".cpp", ".cxx"}
NOTE = "// Written by the ort-amdgpu toolkit (toolkit/cmake/casefold.py): this spelling names {actual}.\n"


def _walk(root: Path, linked_files: bool = False) -> Iterable[Path]:
    """Every regular file under root; links are neither followed nor read. `linked_files`: links to files are given
    too, by their own name, for a caller that only names them."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
        for name in files:
            path = Path(folder, name)
            if linked_files or not path.is_symlink():
                yield path


def _index(include_roots: Iterable[Path]) -> tuple[set[str], dict[str, str]]:
    """The headers the include roots hold, by exact relative name and by lower-cased name (first root wins). A header
    installed as a link is a header by its name (Debian's MinGW-w64 links every header of a triplet's include folder
    into /usr/share/mingw-w64/include); only names are taken, so no link is read."""
    exact: set[str] = set()
    folded: dict[str, str] = {}
    for root in include_roots:
        if not root.is_dir():
            continue
        for path in _walk(root, linked_files=True):
            rel = path.relative_to(root).as_posix()
            exact.add(rel)
            folded.setdefault(rel.lower(), rel)
    return exact, folded


def _includes(path: Path) -> Iterable[str]:
    try:
        data = path.read_bytes()
    except OSError:
        return
    for match in _INCLUDE.finditer(data):
        yield match.group(1).decode("utf-8", errors="replace").replace("\\", "/")


def forwarding_headers(sources: Iterable[Path], include_roots: Iterable[Path]) -> dict[str, str]:
    """{spelling: actual} for every include of the sources that names a header of the include roots only when
    case is ignored (neither the roots nor the including file's folder hold it as spelled)."""
    exact, folded = _index(include_roots)
    found: dict[str, str] = {}
    for root in sources:
        for path in _walk(root):
            if path.suffix.lower() not in _SOURCE_SUFFIXES:
                continue
            for spelled in _includes(path):
                if spelled in exact or spelled in found or (path.parent / spelled).is_file():
                    continue
                actual = folded.get(spelled.lower())
                if actual is not None and actual != spelled:
                    found[spelled] = actual
    return dict(sorted(found.items()))


def write_forwarding_headers(out: Path, headers: dict[str, str]) -> None:
    """Make `out` hold exactly one forwarding header per spelling (stale ones from an earlier tree are removed)."""
    out.mkdir(parents=True, exist_ok=True)
    wanted = {out / spelled: NOTE.format(actual=actual) + f"#include <{actual}>\n"
              for spelled, actual in headers.items()}
    for path in sorted(_walk(out), reverse=True):
        if path not in wanted:
            path.unlink()
    for path, text in wanted.items():
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, text)
