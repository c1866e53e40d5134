"""Safe extraction of tar (plain, gz, xz, bz2) and zip archives: all or nothing, never outside the tree.

Every member is checked before anything is written: absolute paths, '..', links whose target leaves the
tree, members written through a link, and device files or FIFOs are refused with the member's name. The
archive is unpacked into a fresh temporary folder beside the destination, and only a complete tree is
renamed into place; a failure leaves the destination as it was.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import stat
import tarfile
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from toolkit.errors import ToolkitError
from toolkit.fsutil import replace_dir

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2", ".tbz", ".tar", ".zip", ".deb")


def is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


@dataclass
class _Entry:
    name: str  # normalized, relative, after strip_components
    kind: str  # file, dir, symlink, hardlink
    mode: int
    mtime: float
    link: str | None
    member: object  # tarfile.TarInfo or zipfile.ZipInfo


class _Refused(Exception):
    pass


def extract_archive(archive: Path, dest: Path, strip_components: int | None = None) -> Path:
    """Unpack archive into dest (replacing it). strip_components None strips a single top-level folder."""
    archive, dest = Path(archive), Path(dest)
    from toolkit.sources import debian

    if debian.is_deb(archive):  # a Debian package: its data tree (see debian.py)
        return debian.extract_deb(archive, dest)
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
                entries = _plan(_tar_entries(tf), strip_components)
                _write_all(entries, dest, lambda e: tf.extractfile(e.member))
    except _Refused as exc:
        raise ToolkitError(
            f"{archive}: refused to extract: {exc}",
            hint="the archive is malformed or malicious; nothing was written to " + str(dest),
        ) from None
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as exc:
        raise ToolkitError(f"{archive}: cannot extract: {exc}", hint=f"nothing was written to {dest}") from None
    return dest


def _is_zip(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(4) in (b"PK\x03\x04", b"PK\x05\x06")


def _clean_name(raw: str) -> str:
    """The member's relative path; refuses absolute paths and '..'."""
    if raw.startswith(("/", "\\")) or (len(raw) > 1 and raw[1] == ":"):
        raise _Refused(f"member {raw!r} has an absolute path")
    parts = [p for p in raw.replace("\\", "/").split("/") if p not in ("", ".")]
    if ".." in parts:
        raise _Refused(f"member {raw!r} contains '..'")
    return "/".join(parts)


def _tar_entries(tf: tarfile.TarFile):
    for m in tf:
        name = _clean_name(m.name)
        if m.isreg():
            kind, link = "file", None
        elif m.isdir():
            kind, link = "dir", None
        elif m.issym():
            kind, link = "symlink", m.linkname
        elif m.islnk():
            kind, link = "hardlink", _clean_name(m.linkname)
        else:
            raise _Refused(f"member {m.name!r} is a device file, FIFO or other special file")
        yield _Entry(name, kind, m.mode, float(m.mtime), link, m)


def _zip_entries(zf: zipfile.ZipFile):
    for info in zf.infolist():
        name = _clean_name(info.filename)
        unix_mode = info.external_attr >> 16
        ftype = stat.S_IFMT(unix_mode)
        mtime = time.mktime(info.date_time + (0, 0, -1))
        if info.is_dir() or ftype == stat.S_IFDIR:
            yield _Entry(name, "dir", 0o755, mtime, None, info)
        elif ftype == stat.S_IFLNK:
            target = zf.read(info).decode("utf-8", "surrogateescape")
            yield _Entry(name, "symlink", 0o777, mtime, target, info)
        elif ftype in (0, stat.S_IFREG):
            yield _Entry(name, "file", unix_mode & 0o777 or 0o644, mtime, None, info)
        else:
            raise _Refused(f"member {info.filename!r} is a device file, FIFO or other special file")


def _plan(raw_entries, strip_components: int | None) -> list[_Entry]:
    entries = [e for e in raw_entries if e.name]
    if strip_components is None:
        tops = {e.name.split("/", 1)[0] for e in entries}
        single_dir = len(tops) == 1 and all("/" in e.name or e.kind == "dir" for e in entries)
        strip_components = 1 if single_dir else 0
    out: list[_Entry] = []
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
            target_parts = e.link.split("/")[strip_components:]
            target = "/".join(target_parts)
            if target not in files:
                raise _Refused(f"hard link {e.name!r} -> {e.link!r} does not point to a file earlier in the archive")
            e.link = target
        if e.kind == "file":
            files.add(e.name)
        out.append(e)
    return out


def _write_all(entries: list[_Entry], dest: Path, open_member) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".extract", dir=dest.parent))
    try:
        root = os.path.realpath(tmp)
        checked: set[Path] = set()  # parent folders already resolved inside the tree
        dir_mtimes = []
        for e in entries:
            path = tmp / e.name
            if e.kind == "dir":
                _check_inside(root, path.parent, e.name)
                path.mkdir(parents=True, exist_ok=True)
                dir_mtimes.append((path, e.mtime))
                continue
            if path.parent not in checked:
                path.parent.mkdir(parents=True, exist_ok=True)
                _check_inside(root, path.parent, e.name)
                checked.add(path.parent)
            if path.is_symlink() or path.is_file():
                path.unlink()
            if e.kind == "symlink":
                os.symlink(e.link, path)
                continue
            mode = 0o755 if e.mode & 0o111 else 0o644
            if e.kind == "hardlink":
                # A copy, not os.link: the tree must not share inodes with anything the archive names.
                shutil.copyfile(tmp / e.link, path, follow_symlinks=False)
                os.chmod(path, mode)
            else:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
                with os.fdopen(fd, "wb") as out, open_member(e) as src:
                    shutil.copyfileobj(src, out, 1 << 20)
            os.utime(path, (e.mtime, e.mtime), follow_symlinks=False)
        for path, mtime in reversed(dir_mtimes):
            os.utime(path, (mtime, mtime))
        # Belt and braces: whatever chain of links the tree holds, every one must resolve inside it.
        for e in entries:
            if e.kind == "symlink":
                _check_inside(root, tmp / e.name, e.name)
        replace_dir(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _check_inside(root: str, path: Path, name: str) -> None:
    real = os.path.realpath(path)
    if real != root and not real.startswith(root + os.sep):
        raise _Refused(f"member {name!r} resolves outside the tree (through a link)")
