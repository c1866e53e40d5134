"""`release-compare DIR1 DIR2`: the first difference of two release folders, file by file.

The folders may come from anywhere (a colleague's upload, a CI artifact), so nothing in them is trusted:

- a link is compared as a link (its target text), never followed: a link to /proc/self/environ in a dist
  folder must not print the environment; files are opened with O_NOFOLLOW;
- reads are streamed in bounded chunks (a 50 MB wheel member costs 1 MiB of memory, not 50), and what is
  quoted back (a differing line) is at most a short excerpt;
- a `.whl` that is not a readable zip is an error naming it (exit 2), not "they differ" (exit 1).
"""

from __future__ import annotations

import os
import stat
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, BinaryIO

from toolkit.util.errors import ToolkitError
from toolkit.util.redact import redact_text

_CHUNK = 1 << 20
_EXCERPT = 120
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, RuntimeError, NotImplementedError,
               ValueError)


def _entries(folder: Path) -> dict[str, os.stat_result]:
    """Every entry under folder, by relative path, from lstat (links not followed, nor descended into)."""
    out: dict[str, os.stat_result] = {}
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            with os.scandir(current) as it:
                items = list(it)
        except OSError as exc:
            raise ToolkitError(f"{current}: cannot list the release folder ({exc.strerror})") from None
        for item in items:
            st = item.stat(follow_symlinks=False)
            out[Path(item.path).relative_to(folder).as_posix()] = st
            if stat.S_ISDIR(st.st_mode):
                pending.append(Path(item.path))
    return out


def _kind(st: os.stat_result) -> str:
    mode = st.st_mode
    return ("link" if stat.S_ISLNK(mode) else "folder" if stat.S_ISDIR(mode) else
            "file" if stat.S_ISREG(mode) else "special file")


@contextmanager
def _open(path: Path) -> Iterator[BinaryIO]:
    """A regular file opened without following a link (the last part; the folders were walked by lstat)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ToolkitError(f"{path}: cannot read it ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        yield handle


def compare_dirs(first: Path, second: Path) -> list[str]:
    """One line per difference between two release folders (empty: identical), each naming the file and,
    for a wheel, the first member that differs and how."""
    first, second = Path(first), Path(second)
    for folder in (first, second):
        if not folder.is_dir():
            raise ToolkitError(f"{folder}: no such release folder (give two dist folders, build/<recipe>/dist)")
    entries_a, entries_b = _entries(first), _entries(second)
    out = [f"{_excerpt(name)}: only in {first}" for name in sorted(entries_a.keys() - entries_b.keys())]
    out += [f"{_excerpt(name)}: only in {second}" for name in sorted(entries_b.keys() - entries_a.keys())]
    for name in sorted(entries_a.keys() & entries_b.keys()):
        line = _difference(first / name, second / name, entries_a[name], entries_b[name])
        if line:
            out.append(f"{name}: {line}")
    return out


def _difference(a: Path, b: Path, st_a: os.stat_result, st_b: os.stat_result) -> str | None:
    kind_a, kind_b = _kind(st_a), _kind(st_b)
    if kind_a != kind_b:
        return f"a {kind_a} in one, a {kind_b} in the other"
    if kind_a == "link":
        target_a, target_b = os.readlink(a), os.readlink(b)
        if target_a == target_b:
            return None
        return f"links to different targets: {_excerpt(target_a)!r} vs {_excerpt(target_b)!r} (not followed)"
    if kind_a != "file":
        return None  # folders are compared through their entries; special files have no bytes to compare
    if st_a.st_size == st_b.st_size and _same_bytes(a, b):
        return None
    if a.name.endswith(".whl"):
        return first_zip_difference(a, b)
    return first_text_difference(a, b)


def _same_bytes(a: Path, b: Path) -> bool:
    with _open(a) as fa, _open(b) as fb:
        return _first_offset(fa, fb) is None


def _first_offset(fa: IO[bytes], fb: IO[bytes]) -> int | None:
    """The offset of the first differing byte of two streams (None: equal), reading both in chunks."""
    offset = 0
    while True:
        ca, cb = fa.read(_CHUNK), fb.read(_CHUNK)
        if ca != cb:
            return offset + next((i for i, (x, y) in enumerate(zip(ca, cb, strict=False)) if x != y),
                                 min(len(ca), len(cb)))
        if not ca:
            return None
        offset += len(ca)


def first_zip_difference(a: Path, b: Path) -> str:
    """The first difference of two zip files, member by member in archive order (members streamed)."""
    with _open(a) as fa, _open(b) as fb:
        za, zb = _zip(fa, a), _zip(fb, b)
        with za, zb:
            infos_a, infos_b = za.infolist(), zb.infolist()
            for ia, ib in zip(infos_a, infos_b, strict=False):
                if ia.filename != ib.filename:
                    return (f"member order differs at {_excerpt(ia.filename)!r} vs {_excerpt(ib.filename)!r}")
                found = _member_difference(za, zb, ia, ib, a, b)
                if found:
                    return found
            if len(infos_a) != len(infos_b):
                longer, extra = ((a, infos_a[len(infos_b)]) if len(infos_a) > len(infos_b)
                                 else (b, infos_b[len(infos_a)]))
                return f"member {_excerpt(extra.filename)} only in {longer}"
    return "same members and contents; the zip's own bytes differ (compression level or archive comment)"


def _zip(handle: BinaryIO, path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(handle)
    except _ZIP_ERRORS as exc:
        raise ToolkitError(f"{path}: not a readable wheel (zip): {_excerpt(str(exc))}") from None


def _member_difference(za: zipfile.ZipFile, zb: zipfile.ZipFile, ia: zipfile.ZipInfo, ib: zipfile.ZipInfo,
                       a: Path, b: Path) -> str | None:
    name = _excerpt(ia.filename)
    try:
        with za.open(ia) as ma, zb.open(ib) as mb:
            size_a, size_b = ia.file_size, ib.file_size
            offset = _first_offset(ma, mb)
    except _ZIP_ERRORS as exc:
        raise ToolkitError(f"{a} or {b}: member {name} cannot be read (not a readable wheel): "
                           f"{_excerpt(str(exc))}") from None
    if offset is not None:
        return f"member {name} differs: {size_a} vs {size_b} bytes, first difference at offset {offset}"
    for field in ("date_time", "external_attr", "compress_type", "extra", "comment", "create_system"):
        if getattr(ia, field) != getattr(ib, field):
            return (f"member {name}: zip {field} differs ({_excerpt(repr(getattr(ia, field)))} vs "
                    f"{_excerpt(repr(getattr(ib, field)))})")
    return None


def first_text_difference(a: Path, b: Path) -> str:
    """Where two files first differ: the line (with a short excerpt of each side) for text, else the offset."""
    with _open(a) as fa, _open(b) as fb:
        offset = _first_offset(fa, fb)
        size_a, size_b = os.fstat(fa.fileno()).st_size, os.fstat(fb.fileno()).st_size
        if offset is None:
            return f"{size_a} vs {size_b} bytes"
        line_a, number = _line_at(fa, offset)
        line_b, _ = _line_at(fb, offset)
    if offset in (size_a, size_b):
        return f"{size_a} vs {size_b} bytes: one ends where the other goes on (line {number})"
    if line_a is None or line_b is None:
        return f"{size_a} vs {size_b} bytes, first difference at offset {offset}"
    return f"line {number} differs: {_excerpt(line_a.strip())!r} vs {_excerpt(line_b.strip())!r}"


def _line_at(handle: BinaryIO, offset: int) -> tuple[str | None, int]:
    """The (bounded) text of the line holding byte `offset` and its number; None for bytes that are not text."""
    handle.seek(0)
    number, start, read = 1, 0, 0
    while read < offset:
        chunk = handle.read(min(_CHUNK, offset - read))
        if not chunk:
            break
        newlines = chunk.count(b"\n")
        if newlines:
            number += newlines
            start = read + chunk.rfind(b"\n") + 1
        read += len(chunk)
    begin = max(start, offset - _EXCERPT)   # a long line: its part around the difference only
    handle.seek(begin)
    raw = handle.read(offset - begin + _EXCERPT).split(b"\n", 1)[0]
    try:
        return raw.decode("utf-8"), number
    except UnicodeDecodeError:
        return None, number


def _excerpt(text: str) -> str:
    text = redact_text(text)
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "..."
