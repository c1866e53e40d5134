"""GPU targets held in a library's clang offload bundles (the `.hip_fatbin` section HIP code carries).

A bundle is `__CLANG_OFFLOAD_BUNDLE__`, a little-endian u64 entry count, then per entry u64 offset,
u64 size, u64 id length and the id, e.g. `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-` (kind, a
four-part triple, target id). A HIP library holds one bundle per translation unit, so the section is
scanned for every magic. Compressed bundles (`CCOB`, clang's --offload-compress) keep their ids inside
the compressed payload; they are counted and reported, not decoded, to stay within the stdlib.

The toolkit may grow a shared `toolkit/offload_bundle.py`; this reader stays the wheel stage's own
until then, and reads from a file with mmap because real sections run to hundreds of megabytes.
"""

from __future__ import annotations

import mmap
import re
import struct
from dataclasses import dataclass
from pathlib import Path

from toolkit.elf import section_extent

BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
COMPRESSED_MAGIC = b"CCOB"
FATBIN_SECTION = ".hip_fatbin"
_U64 = struct.Struct("<Q")
# A bundle of a few hundred entries is already unusual; a larger count means we misread the data.
_MAX_ENTRIES = 4096


@dataclass(frozen=True)
class OffloadReport:
    targets: tuple[str, ...]  # unique target ids, naturally sorted, e.g. ("gfx1030", "gfx90a:xnack-")
    bundles: int
    compressed_bundles: int


def parse_bundle_ids(data, start: int) -> list[str]:
    """The entry ids of the bundle whose magic begins at `start` in `data` (bytes or mmap)."""
    pos = start + len(BUNDLE_MAGIC)
    (count,) = _U64.unpack_from(data, pos)
    if count > _MAX_ENTRIES:
        raise ValueError(f"offload bundle at {start:#x} claims {count} entries")
    pos += 8
    ids = []
    for _ in range(count):
        _offset, _size, id_len = struct.unpack_from("<QQQ", data, pos)
        pos += 24
        if id_len > 1024:
            raise ValueError(f"offload bundle at {start:#x}: entry id of {id_len} bytes")
        ids.append(bytes(data[pos : pos + id_len]).decode("ascii", "replace"))
        pos += id_len
    return ids


def target_of(entry_id: str) -> str | None:
    """The GPU target of an entry id, or None for host and non-AMD entries."""
    parts = entry_id.split("-", 5)
    if len(parts) < 6 or parts[1] != "amdgcn":
        return None
    return parts[5] or None


def natural_key(target: str) -> tuple:
    # gfx908 before gfx1030: compare the digits as numbers.
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", target))


def _scan(data, begin: int, end: int) -> OffloadReport:
    targets: set[str] = set()
    bundles = 0
    pos = data.find(BUNDLE_MAGIC, begin, end)
    while pos != -1:
        bundles += 1
        for entry_id in parse_bundle_ids(data, pos):
            target = target_of(entry_id)
            if target:
                targets.add(target)
        pos = data.find(BUNDLE_MAGIC, pos + len(BUNDLE_MAGIC), end)
    compressed = 0
    pos = data.find(COMPRESSED_MAGIC, begin, end)
    while pos != -1:
        # Four bytes can occur by chance inside code objects: require a known version and method.
        if pos + 8 <= end:
            version, method = struct.unpack_from("<HH", data, pos + 4)
            if 1 <= version <= 3 and method in (0, 1):
                compressed += 1
        pos = data.find(COMPRESSED_MAGIC, pos + len(COMPRESSED_MAGIC), end)
    return OffloadReport(tuple(sorted(targets, key=natural_key)), bundles, compressed)


def offload_report(path: Path) -> OffloadReport:
    """Scan the `.hip_fatbin` section of an ELF file; a file without one holds no GPU code."""
    extent = section_extent(Path(path), FATBIN_SECTION)
    if extent is None or extent[1] == 0:
        return OffloadReport((), 0, 0)
    offset, size = extent
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        try:
            return _scan(data, offset, offset + size)
        except (ValueError, struct.error) as exc:
            raise ValueError(f"{path}: malformed offload bundle in {FATBIN_SECTION}: {exc}") from None


def gpu_targets(path: Path) -> list[str]:
    return list(offload_report(path).targets)
