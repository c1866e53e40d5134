"""Facts about a Windows DLL (PE/COFF), read with pefile: what it exports, which DLLs it imports, and what would
make two builds of the same sources differ (a link time in the header, a debug directory naming a .pdb)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from toolkit.util.errors import ToolkitError

_MACHINES = {0x8664: "x86_64", 0xAA64: "aarch64", 0x14C: "i386"}


@dataclass(frozen=True)
class PeFacts:
    exports: tuple[str, ...]   # exported names, sorted
    imports: tuple[str, ...]   # imported DLL names as the import table spells them, in its order
    timestamp: int             # the COFF header's TimeDateStamp: 0 when the linker was told to leave it out
    debug_entries: int         # debug directory entries (CodeView records name a .pdb path and carry a time)
    machine: str

    @property
    def defined(self) -> tuple[str, ...]:
        """What the library offers to a loader, named as ELF's view names it (the check stage reads either)."""
        return self.exports

    @property
    def needed(self) -> tuple[str, ...]:
        return self.imports


def is_pe(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(2) == b"MZ"
    except OSError:
        return False


def read_pe(path: Path) -> PeFacts:
    # Imported here: a command line is read (in a release image too) without the packages only a Windows build uses.
    import pefile

    try:
        pe = pefile.PE(str(path), fast_load=True)
    except (OSError, pefile.PEFormatError) as exc:
        raise ToolkitError(f"{path}: not a readable PE file ({exc})") from None
    try:
        pe.parse_data_directories(directories=[pefile.DIRECTORY_ENTRY[name] for name in (
            "IMAGE_DIRECTORY_ENTRY_EXPORT", "IMAGE_DIRECTORY_ENTRY_IMPORT", "IMAGE_DIRECTORY_ENTRY_DEBUG")])
        table = getattr(pe, "DIRECTORY_ENTRY_EXPORT", None)
        exports = sorted(s.name.decode() for s in (table.symbols if table else []) if s.name)
        imports = [entry.dll.decode() for entry in getattr(pe, "DIRECTORY_ENTRY_IMPORT", [])]
        return PeFacts(tuple(exports), tuple(imports), int(pe.FILE_HEADER.TimeDateStamp),
                       len(getattr(pe, "DIRECTORY_ENTRY_DEBUG", [])),
                       _MACHINES.get(int(pe.FILE_HEADER.Machine), hex(int(pe.FILE_HEADER.Machine))))
    finally:
        pe.close()
