"""The GPU targets in clang offload bundles: a standalone bundle file, bundle bytes, or the `.hip_fatbin`
section of a HIP object or shared library.

Bundle layout (little-endian): the 24-byte magic `__CLANG_OFFLOAD_BUNDLE__`, a u64 entry count, then
per entry a u64 offset (from the bundle's start), u64 size, u64 id length and the id, such as
`hipv4-amdgcn-amd-amdhsa--gfx90a` (kind, target triple, then the target id).
Newer ROCm compresses bundles: magic `CCOB`, u16 version, u16 method (0 zlib, 1 zstd), then by version
v1: u32 uncompressed size; v2: u32 total size, u32 uncompressed size; v3: u64 total, u64 uncompressed;
then a u64 hash and the compressed bundle. A `.hip_fatbin` section may hold several bundles, one per
translation unit, each aligned; they are read in turn.

Real sections run to hundreds of megabytes, so files are mapped, not read, and bundles are walked by
offset: only entry ids are copied out, and compressed bundles are inflated one at a time.
"""

from __future__ import annotations

import mmap
import os
import re
import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from toolkit.binary.elf import ELF_MAGIC, section_extent
from toolkit.util.errors import ToolkitError

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
COMPRESSED_MAGIC = b"CCOB"
SECTION = ".hip_fatbin"
_COUNT = struct.Struct("<Q")
_ENTRY = struct.Struct("<QQQ")
_VERSION_METHOD = struct.Struct("<HH")
# The size fields of each CCOB version; all but version 1 start with the compressed bundle's total size.
_SIZES = {1: struct.Struct("<I"), 2: struct.Struct("<II"), 3: struct.Struct("<QQ")}
_HASH_SIZE = 8
_CHUNK = 1 << 20
# Bundle bytes: in memory, or a mapped file.
_Data = bytes | bytearray | mmap.mmap


@dataclass(frozen=True)
class BundleEntry:
    id: str
    offset: int
    size: int

    @property
    def kind(self) -> str:
        return self.id.split("-", 1)[0]

    @property
    def target(self) -> str:
        """The AMD GPU target id (gfx90a, gfx90a:xnack-), or '' for the host and any other entry."""
        # Current clang writes a four-part triple and older clang a three-part one, so the target is
        # found from the end: the last '-' before the ':feature' suffixes (which may end in '-').
        name, colon, features = self.id.partition(":")
        head, _, gpu = name.rpartition("-")
        if not gpu or head.split("-")[1:2] != ["amdgcn"]:
            return ""
        return gpu + colon + features


@dataclass(frozen=True)
class OffloadReport:
    targets: tuple[str, ...]  # unique target ids, naturally sorted, e.g. ("gfx90a:xnack-", "gfx1030")
    bundles: int  # bundles read, compressed ones included
    compressed_bundles: int  # zstd-compressed bundles left unread: the zstandard module is not installed


def natural_key(target: str) -> tuple[int | str, ...]:
    # gfx908 before gfx1030: compare the digits as numbers.
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", target))


def _need(pos: int, size: int, end: int, where: str) -> None:
    # A mapped file goes on past the section, so reads are bounded by hand, not by struct.error.
    if pos + size > end:
        raise ToolkitError(f"{where}: truncated offload bundle")


def _read_plain(data: _Data, start: int, end: int, where: str) -> tuple[list[BundleEntry], int]:
    """Entries of the uncompressed bundle at data[start:end], and the offset just past the bundle."""
    _need(start, len(MAGIC) + _COUNT.size, end, where)
    (count,) = _COUNT.unpack_from(data, start + len(MAGIC))
    pos = start + len(MAGIC) + _COUNT.size
    entries = []
    stop = pos
    for _ in range(count):
        _need(pos, _ENTRY.size, end, where)
        offset, size, id_len = _ENTRY.unpack_from(data, pos)
        pos += _ENTRY.size
        _need(pos, id_len, end, where)
        entries.append(BundleEntry(bytes(data[pos:pos + id_len]).decode("ascii", "replace"), offset, size))
        pos += id_len
        stop = max(stop, start + offset + size)
    if stop > end:
        raise ToolkitError(f"{where}: offload bundle entry runs past the end "
                           f"({stop - start} > {end - start} bytes)")
    return entries, max(stop, pos)


class _Decoder(Protocol):
    """What _decode uses of zlib's or zstandard's decompressobj."""

    @property
    def eof(self) -> bool: ...

    @property
    def unused_data(self) -> bytes: ...

    def decompress(self, data: memoryview, /) -> bytes: ...


def _decode(decoder: _Decoder, payload: memoryview) -> tuple[bytes, int]:
    """What the compressed stream at the start of payload decodes to, and how many bytes it took.

    Fed in chunks so that a stream of unknown length (CCOB version 1) leaves at most one chunk behind
    in the decoder's unused_data, rather than a copy of the rest of the section.
    """
    out = []
    fed = 0
    while fed < len(payload) and not decoder.eof:
        with payload[fed:fed + _CHUNK] as chunk:
            out.append(decoder.decompress(chunk))
            fed += len(chunk)
    return b"".join(out), fed - len(decoder.unused_data)


def _inflate(data: _Data, start: int, end: int, where: str) -> tuple[bytes | None, int]:
    """The bundle inside the CCOB header at `start` (None if it is zstd and zstandard is missing), and
    the offset just past the compressed bundle."""
    _need(start, len(COMPRESSED_MAGIC) + _VERSION_METHOD.size, end, where)
    version, method = _VERSION_METHOD.unpack_from(data, start + len(COMPRESSED_MAGIC))
    sizes = _SIZES.get(version)
    if sizes is None:
        raise ToolkitError(f"{where}: compressed offload bundle version {version} is not known")
    header = len(COMPRESSED_MAGIC) + _VERSION_METHOD.size + sizes.size + _HASH_SIZE
    _need(start, header, end, where)
    *total, raw_size = sizes.unpack_from(data, start + len(COMPRESSED_MAGIC) + _VERSION_METHOD.size)
    # Version 1 does not record its length; only decoding the stream finds where it ends.
    stop = start + total[0] if total else end
    _need(start, stop - start, end, where)
    if method == 0:
        decoder, error = zlib.decompressobj(), zlib.error
    elif method == 1:
        try:
            import zstandard  # optional: only ROCm builds with zstd-compressed bundles need it
        except ImportError:
            # For version 1 that ends the scan: zstd keeps runs of its input verbatim, the inner
            # bundle's magic among them, so searching on inside the payload would find false bundles.
            return None, stop
        decoder, error = zstandard.ZstdDecompressor().decompressobj(), zstandard.ZstdError
    else:
        raise ToolkitError(f"{where}: offload bundle compression method {method} is not known")
    # Released explicitly: an export still alive when the file's mapping closes would make close fail.
    with memoryview(data)[start + header:stop] as payload:
        try:
            out, used = _decode(decoder, payload)
        except error as exc:
            raise ToolkitError(f"{where}: compressed offload bundle does not decompress: {exc}") from None
    if len(out) != raw_size:
        raise ToolkitError(f"{where}: compressed offload bundle decompressed to {len(out)} bytes, "
                           f"header says {raw_size}")
    return out, stop if total else start + header + used


def _bundles(data: _Data, begin: int, end: int, where: str) -> Iterator[list[BundleEntry] | None]:
    """Each bundle in data[begin:end] in order: its entries, or None for a zstd one that cannot be read."""
    plain = data.find(MAGIC, begin, end)
    packed = data.find(COMPRESSED_MAGIC, begin, end)
    while plain != -1 or packed != -1:
        entries: list[BundleEntry] | None
        if packed == -1 or (plain != -1 and plain < packed):
            entries, pos = _read_plain(data, plain, end, where)
        else:
            inner, pos = _inflate(data, packed, end, where)
            entries = None if inner is None else _read_plain(inner, 0, len(inner), where)[0]
        yield entries
        # Search again only past a hit the bundle covered: a magic the section lacks would otherwise be
        # looked for through the rest of it once per bundle.
        if plain != -1 and plain < pos:
            plain = data.find(MAGIC, pos, end)
        if packed != -1 and packed < pos:
            packed = data.find(COMPRESSED_MAGIC, pos, end)


@contextmanager
def _bundle_bytes(source: Path | bytes | bytearray, label: str | None) -> Iterator[tuple[_Data, int, int, str]]:
    """(data, begin, end, where): the bundle bytes are data[begin:end]; for an ELF file, its section."""
    if isinstance(source, (bytes, bytearray)):
        yield source, 0, len(source), label or "bundle"
        return
    path = Path(source)
    where = label or str(path)
    with open(path, "rb") as handle:
        if handle.read(4) == ELF_MAGIC:
            extent = section_extent(path, SECTION)
        else:
            extent = 0, os.fstat(handle.fileno()).st_size
        if extent is None or extent[1] == 0:  # mmap refuses an empty file
            yield b"", 0, 0, where
            return
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            yield data, extent[0], extent[0] + extent[1], where


def _zstd_missing(where: str) -> ToolkitError:
    return ToolkitError(f"{where}: offload bundle is zstd-compressed", "pip install zstandard to read it")


def read_bundles(data: bytes, where: str = "bundle") -> list[list[BundleEntry]]:
    """Every bundle in data (a section or a file), in order; entries of compressed ones after inflating."""
    bundles = []
    for entries in _bundles(data, 0, len(data), where):
        if entries is None:
            raise _zstd_missing(where)
        bundles.append(entries)
    return bundles


def bundle_data(path: Path) -> bytes:
    """The bundle bytes of a file: its .hip_fatbin section if it is ELF, else the whole file."""
    with _bundle_bytes(path, None) as (data, begin, end, _):
        return bytes(data[begin:end])


def offload_report(source: Path | bytes, label: str | None = None) -> OffloadReport:
    """Targets and bundle counts of a file (its .hip_fatbin section if ELF) or of bundle bytes; `label`
    names the source in errors. A file without the section holds no GPU code."""
    targets: set[str] = set()
    bundles = unread = 0
    with _bundle_bytes(source, label) as (data, begin, end, where):
        for entries in _bundles(data, begin, end, where):
            if entries is None:
                unread += 1
                continue
            bundles += 1
            targets.update(e.target for e in entries if e.target)
    return OffloadReport(tuple(sorted(targets, key=natural_key)), bundles, unread)


def gpu_targets(source: Path | bytes) -> list[str]:
    """Sorted GPU target ids (gfx1030, gfx90a, ...) whose code objects the file or bundle bytes carry."""
    report = offload_report(source)
    if report.compressed_bundles:
        raise _zstd_missing("bundle" if isinstance(source, (bytes, bytearray)) else str(source))
    return sorted(report.targets)
