"""Debian binary packages as build inputs: read a verified .deb's files, never install it.

A .deb is an `ar` archive holding `debian-binary`, `control.tar.*` and `data.tar.*`; the data member is the
file tree dpkg would write under `/`. `data_tar` takes that member out as a tar; toolkit.sources.extract
(extract_archive, extract_deb) unpacks it with the same safety rules as every other archive. The .deb
itself arrives like any other download:
pinned by sha256 in the recipe and verified before use. `index_entry` reads a suite's `Packages` index,
where apt finds the checksum it verifies a .deb against, so a pin can be checked against the archive.
"""

from __future__ import annotations

import lzma
import shutil
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from toolkit.util.errors import ToolkitError

AR_MAGIC = b"!<arch>\n"
_HEADER = 60  # name 16, mtime 12, uid 6, gid 6, mode 8, size 10, magic 2


def is_deb(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(len(AR_MAGIC)) == AR_MAGIC


@dataclass(frozen=True)
class ArMember:
    name: str
    offset: int  # of the member's data in the file
    size: int


def ar_members(path: Path) -> list[ArMember]:
    """The members of an ar archive (the common format dpkg writes: short names, no symbol table)."""
    members = []
    with open(path, "rb") as handle:
        if handle.read(len(AR_MAGIC)) != AR_MAGIC:
            raise ToolkitError(f"{path}: not an ar archive (a .deb starts with '!<arch>')")
        while header := handle.read(_HEADER):
            if len(header) != _HEADER or header[58:60] != b"`\n":
                raise ToolkitError(f"{path}: damaged ar member header at byte {handle.tell() - len(header)}")
            name = header[:16].decode("ascii", "replace").strip().rstrip("/")
            size_text = header[48:58].decode("ascii", "replace").strip()
            if not size_text.isdigit():
                raise ToolkitError(f"{path}: ar member {name!r} has a bad size field {size_text!r}")
            size = int(size_text)
            members.append(ArMember(name, handle.tell(), size))
            handle.seek(size + (size & 1), 1)  # members are padded to an even offset
    return members


def _decompressor(name: str) -> Callable[[Path], AbstractContextManager[IO[bytes]]] | None:
    """A function turning the compressed data member into a plain tar, for the compressions dpkg uses."""
    if name.endswith(".zst"):
        try:  # Python 3.14's standard library; before that the zstandard package, when installed
            from compression import zstd

            # Typed here: under python_version 3.11 mypy does not know the module (ignore_missing_imports).
            opener: Callable[[Path], AbstractContextManager[IO[bytes]]] = zstd.open
            return opener
        except ImportError:
            pass
        try:
            import zstandard
        except ImportError:
            raise ToolkitError(f"{name} is zstd-compressed and this Python has no zstd decoder",
                               hint="pip install zstandard (or use Python >= 3.14)") from None
        return lambda path: zstandard.ZstdDecompressor().stream_reader(open(path, "rb"), closefd=True)
    return None  # tarfile reads gz, xz, bz2 and plain tars itself


def data_tar(deb: Path, folder: Path) -> Path:
    """Write the data member of `deb` into folder as a tar that tarfile reads (zstd decoded here); its path.

    Unpacking that tar safely is toolkit.sources.extract's job (extract_archive reads a .deb through this).
    """
    deb, folder = Path(deb), Path(folder)
    members = ar_members(deb)
    data = [m for m in members if m.name.startswith("data.tar")]
    if len(data) != 1:
        found = ", ".join(m.name for m in members) or "nothing"
        raise ToolkitError(f"{deb}: expected one data.tar.* member, found {found}", hint="is this a Debian package?")
    member = data[0]
    raw = folder / member.name
    with open(deb, "rb") as src, open(raw, "wb") as out:
        src.seek(member.offset)
        _copy_exactly(src, out, member.size, deb, member.name)
    decompress = _decompressor(member.name)
    if decompress is None:
        return raw
    tar = folder / "data.tar"
    with decompress(raw) as src, open(tar, "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)
    raw.unlink()
    return tar


def _copy_exactly(src: IO[bytes], out: IO[bytes], size: int, deb: Path, name: str) -> None:
    left = size
    while left:
        chunk = src.read(min(left, 1 << 20))
        if not chunk:
            raise ToolkitError(f"{deb}: member {name} is cut short ({size - left} of {size} bytes)")
        out.write(chunk)
        left -= len(chunk)


@dataclass(frozen=True)
class IndexEntry:
    package: str
    version: str
    architecture: str
    filename: str  # pool path, relative to the archive root
    sha256: str
    size: int


def index_entry(packages_index: bytes, package: str, version: str | None = None) -> IndexEntry | None:
    """The stanza of `package` (at `version`, if given) in a Packages index (plain or .xz bytes)."""
    if packages_index[:6] == b"\xfd7zXZ\x00":
        packages_index = lzma.decompress(packages_index)
    for stanza in packages_index.decode("utf-8", "replace").split("\n\n"):
        fields = {}
        for line in stanza.splitlines():
            if line and not line[0].isspace() and ":" in line:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        if fields.get("Package") != package or (version is not None and fields.get("Version") != version):
            continue
        try:
            return IndexEntry(package, fields["Version"], fields["Architecture"], fields["Filename"],
                              fields["SHA256"], int(fields["Size"]))
        except (KeyError, ValueError) as exc:
            raise ToolkitError(f"Packages index: stanza of {package} lacks a valid field ({exc})") from None
    return None
