"""List the GPU targets in a clang offload bundle: a standalone bundle file, or the `.hip_fatbin`
section of a HIP object or shared library.

Bundle layout (little-endian): the 24-byte magic `__CLANG_OFFLOAD_BUNDLE__`, a u64 entry count, then
per entry a u64 offset (from the bundle's start), u64 size, u64 id length and the id, such as
`hipv4-amdgcn-amd-amdhsa--gfx90a` (kind, target triple, then the target id after `--`).
Newer ROCm compresses bundles: magic `CCOB`, u16 version, u16 method (0 zlib, 1 zstd), then by version
v1: u32 uncompressed size; v2: u32 total size, u32 uncompressed size; v3: u64 total, u64 uncompressed;
then a u64 hash and the compressed bundle. A `.hip_fatbin` section may hold several bundles, one per
translation unit, each aligned; they are read in turn.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

from toolkit.errors import ToolkitError

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
COMPRESSED_MAGIC = b"CCOB"
SECTION = ".hip_fatbin"


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
        """The GPU target id (gfx90a, gfx90a:xnack-) or '' for the host entry."""
        return self.id.split("--", 1)[1] if "--" in self.id else ""


def _read_plain(data: bytes, where: str) -> tuple[list[BundleEntry], int]:
    """Entries of the uncompressed bundle at the start of data, and the bundle's length."""
    try:
        (count,) = struct.unpack_from("<Q", data, len(MAGIC))
        pos = len(MAGIC) + 8
        entries = []
        end = pos
        for _ in range(count):
            offset, size, id_len = struct.unpack_from("<QQQ", data, pos)
            pos += 24
            ident = data[pos:pos + id_len]
            if len(ident) != id_len:
                raise struct.error("id past the end")
            pos += id_len
            entries.append(BundleEntry(ident.decode("ascii", errors="replace"), offset, size))
            end = max(end, offset + size)
    except struct.error:
        raise ToolkitError(f"{where}: truncated offload bundle") from None
    if end > len(data):
        raise ToolkitError(f"{where}: offload bundle entry runs past the end ({end} > {len(data)} bytes)")
    return entries, max(end, pos)


def _decompress(data: bytes, where: str) -> tuple[bytes, int | None]:
    """The bundle inside a CCOB header, and the compressed blob's total size when the header says."""
    version, method = struct.unpack_from("<HH", data, 4)
    if version == 1:
        total, (raw_size,) = None, struct.unpack_from("<I", data, 8)
        header = 8 + 4 + 8
    elif version == 2:
        total, raw_size = struct.unpack_from("<II", data, 8)
        header = 8 + 8 + 8
    elif version == 3:
        total, raw_size = struct.unpack_from("<QQ", data, 8)
        header = 8 + 16 + 8
    else:
        raise ToolkitError(f"{where}: compressed offload bundle version {version} is not known")
    payload = data[header:total] if total else data[header:]
    if method == 0:
        out = zlib.decompressobj().decompress(payload)
    elif method == 1:
        try:
            import zstandard  # optional: only ROCm builds with zstd-compressed bundles need it
        except ImportError:
            raise ToolkitError(f"{where}: offload bundle is zstd-compressed",
                               "pip install zstandard to read it") from None
        out = zstandard.ZstdDecompressor().decompress(payload, max_output_size=raw_size)
    else:
        raise ToolkitError(f"{where}: offload bundle compression method {method} is not known")
    if len(out) != raw_size:
        raise ToolkitError(f"{where}: compressed offload bundle decompressed to {len(out)} bytes, "
                           f"header says {raw_size}")
    return out, total


def read_bundles(data: bytes, where: str = "bundle") -> list[list[BundleEntry]]:
    """Every bundle in data (a section or a file), in order; entries of compressed ones after inflating."""
    bundles = []
    pos = 0
    while True:
        plain = data.find(MAGIC, pos)
        packed = data.find(COMPRESSED_MAGIC, pos)
        starts = [p for p in (plain, packed) if p != -1]
        if not starts:
            return bundles
        at = min(starts)
        if at == packed:
            inner, total = _decompress(data[at:], where)
            entries, _ = _read_plain(inner, where)
            bundles.append(entries)
            pos = at + (total or 4)
        else:
            entries, length = _read_plain(data[at:], where)
            bundles.append(entries)
            pos = at + length


def bundle_data(path: Path) -> bytes:
    """The bundle bytes of a file: its .hip_fatbin section if it is ELF, else the whole file."""
    path = Path(path)
    with open(path, "rb") as handle:
        head = handle.read(4)
        if head != b"\x7fELF":
            handle.seek(0)
            return handle.read()
        from elftools.elf.elffile import ELFFile

        section = ELFFile(handle).get_section_by_name(SECTION)
        return b"" if section is None else section.data()


def gpu_targets(path: Path) -> list[str]:
    """Sorted GPU target ids (gfx90a, gfx1030, ...) whose code objects the file carries."""
    data = bundle_data(path)
    targets = {e.target for bundle in read_bundles(data, str(path)) for e in bundle if e.target}
    return sorted(targets)
