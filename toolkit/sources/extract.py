"""Safe extraction of tar (plain, gz, xz, bz2) and zip archives: all or nothing, never outside the tree.

Every member is checked before anything is written: NUL bytes, absolute paths, '..', links whose target
leaves the tree, members written through a link, and device files or FIFOs are refused with the member's
name. The archive is unpacked into a fresh temporary folder beside the destination without ever following
a link, and only a complete tree is renamed into place; a failure leaves the destination as it was. The
temporary folders of killed extractions are removed by the next extraction into the same destination.
"""

from __future__ import annotations

import os
import posixpath
import re
import shutil
import stat
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Generic, TypeVar

from toolkit.sources import debian
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import replace_dir

_TMP_SUFFIX = ".extract"
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2", ".tbz", ".tar", ".zip", ".deb")


def is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


# The archive's own record of a member: tarfile.TarInfo or zipfile.ZipInfo.
_Member = TypeVar("_Member", tarfile.TarInfo, zipfile.ZipInfo)


@dataclass
class _Entry(Generic[_Member]):
    name: str  # normalized, relative, after strip_components
    kind: str  # file, dir, symlink, hardlink
    mode: int
    mtime: float
    link: str | None
    member: _Member


class _Refused(Exception):
    pass


def extract_archive(archive: Path, dest: Path, strip_components: int | None = None) -> Path:
    """Unpack archive into dest (replacing it). strip_components None strips a single top-level folder."""
    archive, dest = Path(archive), Path(dest)
    if debian.is_deb(archive):  # a Debian package: its data tree
        return extract_deb(archive, dest)
    try:
        if _is_zip(archive):
            with zipfile.ZipFile(archive) as zf:
                entries = _plan(_zip_entries(zf), strip_components)
                _write_all(entries, dest, lambda e: zf.open(e.member))
        else:
            try:
                tf = tarfile.open(archive, "r:*")
            except tarfile.TarError as exc:
                raise ToolkitError(f"{archive}: not a tar or zip archive ({exc})") from None
            with tf:
                tar_entries = _plan(_tar_entries(tf), strip_components)  # its own name: TarInfo members, not ZipInfo
                _write_all(tar_entries, dest, lambda e: tf.extractfile(e.member))
    except _Refused as exc:
        raise ToolkitError(
            f"{archive}: refused to extract: {exc}",
            hint="the archive is malformed or malicious; nothing was written to " + str(dest),
        ) from None
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as exc:
        raise ToolkitError(f"{archive}: cannot extract: {exc}", hint=f"nothing was written to {dest}") from None
    return dest


def extract_deb(deb: Path, dest: Path) -> Path:
    """Unpack the data tree of a Debian package into dest (replacing it, all or nothing), never installing it."""
    deb, dest = Path(deb), Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{dest.name}.", suffix=".deb", dir=dest.parent) as tmp:
        tar = debian.data_tar(deb, Path(tmp))
        # Debian's trees start at ./usr: nothing to strip, the caller names the prefix inside (subdir).
        return extract_archive(tar, dest, strip_components=0)


def _is_zip(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(4) in (b"PK\x03\x04", b"PK\x05\x06")


def _clean_name(raw: str) -> str:
    """The member's relative path; refuses NUL bytes, absolute paths and '..'."""
    if "\x00" in raw:
        raise _Refused(f"member {raw!r} has a NUL byte in its name")
    if raw.startswith(("/", "\\")) or (len(raw) > 1 and raw[1] == ":"):
        raise _Refused(f"member {raw!r} has an absolute path")
    parts = [p for p in raw.replace("\\", "/").split("/") if p not in ("", ".")]
    if ".." in parts:
        raise _Refused(f"member {raw!r} contains '..'")
    return "/".join(parts)


def _tar_entries(tf: tarfile.TarFile) -> Iterator[_Entry[tarfile.TarInfo]]:
    for m in tf:
        name = _clean_name(m.name)
        if m.isreg():
            kind, link = "file", None
        elif m.isdir():
            kind, link = "dir", None
        elif m.issym() or m.islnk():
            if "\x00" in m.linkname:
                raise _Refused(f"link {m.name!r} has a NUL byte in its target {m.linkname!r}")
            kind = "symlink" if m.issym() else "hardlink"
            link = m.linkname if m.issym() else _clean_name(m.linkname)
        else:
            raise _Refused(f"member {m.name!r} is a device file, FIFO or other special file")
        yield _Entry(name, kind, m.mode, float(m.mtime), link, m)


def _zip_entries(zf: zipfile.ZipFile) -> Iterator[_Entry[zipfile.ZipInfo]]:
    for info in zf.infolist():
        name = _clean_name(info.filename)
        unix_mode = info.external_attr >> 16
        ftype = stat.S_IFMT(unix_mode)
        mtime = time.mktime(info.date_time + (0, 0, -1))
        if info.is_dir() or ftype == stat.S_IFDIR:
            yield _Entry(name, "dir", 0o755, mtime, None, info)
        elif ftype == stat.S_IFLNK:
            target = zf.read(info).decode("utf-8", "surrogateescape")
            if "\x00" in target:
                raise _Refused(f"link {info.filename!r} has a NUL byte in its target {target!r}")
            yield _Entry(name, "symlink", 0o777, mtime, target, info)
        elif ftype in (0, stat.S_IFREG):
            yield _Entry(name, "file", unix_mode & 0o777 or 0o644, mtime, None, info)
        else:
            raise _Refused(f"member {info.filename!r} is a device file, FIFO or other special file")


def _plan(raw_entries: Iterable[_Entry[_Member]], strip_components: int | None) -> list[_Entry[_Member]]:
    entries = [e for e in raw_entries if e.name]
    if strip_components is None:
        tops = {e.name.split("/", 1)[0] for e in entries}
        single_dir = len(tops) == 1 and all("/" in e.name or e.kind == "dir" for e in entries)
        strip_components = 1 if single_dir else 0
    out: list[_Entry[_Member]] = []
    files: set[str] = set()
    links: set[str] = set()
    for e in entries:
        parts = e.name.split("/")[strip_components:]
        if not parts:
            continue
        e.name = "/".join(parts)
        for i in range(1, len(parts)):
            prefix = "/".join(parts[:i])
            if prefix in links:
                raise _Refused(f"member {e.name!r} would be written through the symlink {prefix!r}")
        if e.kind == "symlink":
            if e.link is None or e.link.startswith("/") or (len(e.link) > 1 and e.link[1] == ":"):
                raise _Refused(f"symlink {e.name!r} points to the absolute path {e.link!r}")
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(e.name), e.link))
            if resolved == ".." or resolved.startswith("../"):
                raise _Refused(f"symlink {e.name!r} -> {e.link!r} points outside the tree")
            links.add(e.name)
        elif e.kind == "hardlink":
            assert e.link is not None  # _tar_entries gives every hard link its target
            target_parts = e.link.split("/")[strip_components:]
            target = "/".join(target_parts)
            if target not in files:
                raise _Refused(f"hard link {e.name!r} -> {e.link!r} does not point to a file earlier in the archive")
            e.link = target
        if e.kind == "file":
            files.add(e.name)
        out.append(e)
    return out


def _write_all(entries: list[_Entry[_Member]], dest: Path,
               open_member: Callable[[_Entry[_Member]], IO[bytes] | None]) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    _remove_leftovers(dest)
    # The pid in the name tells a later run whether the process that made the folder is still alive.
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.{os.getpid()}.", suffix=_TMP_SUFFIX, dir=dest.parent))
    try:
        root = os.path.realpath(tmp)
        dir_mtimes = []
        known: set[str] = set()  # folders proven real
        # No operation below follows a link: parents are walked with lstat, files are created O_EXCL|O_NOFOLLOW,
        # metadata is set through the open descriptor or with follow_symlinks=False. So even an archive that is
        # refused at the end cannot have changed anything outside tmp.
        for e in entries:
            path = _make_parents(tmp, e.name, known)
            existing = _lstat(path)
            if e.kind == "dir":
                if existing is None:
                    os.mkdir(path)
                elif not stat.S_ISDIR(existing.st_mode):
                    raise _Refused(f"directory member {e.name!r} would replace the {_kind(existing)} of that name")
                dir_mtimes.append((path, e.mtime))
                continue
            if existing is not None:
                if stat.S_ISDIR(existing.st_mode):
                    raise _Refused(f"member {e.name!r} would replace the folder of that name")
                os.unlink(path)
            if e.kind == "symlink":
                if e.link is None:
                    raise _Refused(f"symlink member {e.name!r} names no target")
                os.symlink(e.link, path)
                continue
            mode = 0o755 if e.mode & 0o111 else 0o644
            # A hard link becomes a copy, not os.link: the tree must not share inodes with anything the archive names.
            source = _open_copy_source(tmp, e, known) if e.kind == "hardlink" else open_member(e)
            assert source is not None  # asked only for regular files, which extractfile always opens
            with source as src:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
                with os.fdopen(fd, "wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
                    out.flush()
                    os.utime(out.fileno(), (e.mtime, e.mtime))
        for path, mtime in reversed(dir_mtimes):
            os.utime(path, (mtime, mtime), follow_symlinks=False)
        # Whatever chain of links the tree holds, every one must resolve inside it (realpath only reads).
        for e in entries:
            if e.kind == "symlink":
                _check_inside(root, tmp / e.name, e.name)
        replace_dir(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _kind(st: os.stat_result) -> str:
    return "symlink" if stat.S_ISLNK(st.st_mode) else "folder" if stat.S_ISDIR(st.st_mode) else "file"


def _make_parents(tmp: Path, name: str, known: set[str], create: bool = True) -> Path:
    """tmp/name, its parent folders made (or found) as real folders: never through a link or over a file.

    `known` holds folders already proven real; none can turn into a link later, as replacing a folder is refused.
    """
    parts = name.split("/")
    current = tmp
    for i, part in enumerate(parts[:-1]):
        current = current / part
        rel = "/".join(parts[:i + 1])
        if rel in known:
            continue
        st = _lstat(current)
        if st is None and create:
            os.mkdir(current)
        elif st is None or not stat.S_ISDIR(st.st_mode):
            what = "a missing folder" if st is None else f"the {_kind(st)}"
            raise _Refused(f"member {name!r} would be written through {what} {'/'.join(parts[:i + 1])!r}")
        known.add(rel)
    return current / parts[-1]


def _open_copy_source(tmp: Path, e: _Entry[_Member], known: set[str]) -> IO[bytes]:
    """The file a hard link names, opened without following a link; refused if it is no regular file now."""
    path = _make_parents(tmp, e.link or "", known, create=False)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        fd = -1
    if fd < 0 or not stat.S_ISREG(os.fstat(fd).st_mode):
        if fd >= 0:
            os.close(fd)
        raise _Refused(f"hard link {e.name!r} -> {e.link!r}: the target is no longer a regular file")
    return os.fdopen(fd, "rb")


_LEFTOVER = r"\.{name}\.(?:(\d+)\.)?[a-z0-9_]{{8}}" + re.escape(_TMP_SUFFIX)


def _remove_leftovers(dest: Path) -> None:
    """Remove the temporary folders of extractions into dest that were killed (their process is gone)."""
    pattern = re.compile(_LEFTOVER.format(name=re.escape(dest.name)))
    for path in dest.parent.iterdir():
        match = pattern.fullmatch(path.name)
        if not match or path.is_symlink() or not path.is_dir():
            continue
        if match.group(1) and _alive(int(match.group(1))):
            continue  # another process is unpacking into dest right now
        shutil.rmtree(path, ignore_errors=True)
        log.info(f"removed {path}, left behind by an interrupted extraction")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def _check_inside(root: str, path: Path, name: str) -> None:
    real = os.path.realpath(path)
    if real != root and not real.startswith(root + os.sep):
        raise _Refused(f"member {name!r} resolves outside the tree (through a link)")
