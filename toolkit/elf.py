"""Reading what a shared library exports, with pyelftools (no binutils needed)."""

from __future__ import annotations

from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from toolkit.errors import ToolkitError


def defined_dynamic_symbols(path: Path) -> list[str]:
    """Names in .dynsym that the library defines (what `nm -D --defined-only` lists, minus versions)."""
    try:
        with open(path, "rb") as handle:
            elf = ELFFile(handle)
            dynsym = elf.get_section_by_name(".dynsym")
            if dynsym is None:
                return []
            names = []
            for sym in dynsym.iter_symbols():
                if not sym.name or sym["st_shndx"] == "SHN_UNDEF":
                    continue
                if sym["st_info"]["type"] == "STT_SECTION":
                    continue
                names.append(sym.name)
            return sorted(set(names))
    except (OSError, ELFError) as exc:
        raise ToolkitError(f"{path}: cannot read as an ELF shared library: {exc}") from None
