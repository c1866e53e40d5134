"""What the toolkit needs to know about one ELF shared library, read with pyelftools.

One reader for every stage: the build's export check, wheel repair (checks on extracted files),
inspect (reports on any wheel) and the SBOM (libraries read from inside a wheel, as bytes).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from elftools.common.exceptions import ELFError
from elftools.elf.constants import P_FLAGS
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from toolkit.util.errors import ToolkitError

ELF_MAGIC = b"\x7fELF"


@dataclass(frozen=True)
class ElfFacts:
    soname: str | None
    needed: tuple[str, ...]
    runpath: tuple[str, ...]
    rpath: tuple[str, ...]
    # None when the file has no PT_GNU_STACK header: the loader then maps the stack executable.
    stack_flags: str | None
    exports: tuple[str, ...]  # defined global/weak dynamic function symbols, sorted
    machine: str
    # Every defined dynamic symbol of any type that other objects see (`nm -D --defined-only`'s, minus version nodes
    # and LOCAL entries).
    defined: tuple[str, ...] = ()
    # Bytes of DWARF sections (.debug_*, compressed .zdebug_*): 0 for a library shipped without debug info.
    debug_bytes: int = 0

    @property
    def executable_stack(self) -> bool:
        return self.stack_flags is None or "X" in self.stack_flags


def is_elf(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(4) == ELF_MAGIC


def _split_path_list(value: str) -> tuple[str, ...]:
    # An empty element is meaningful to the loader (the current directory), so it is kept.
    return tuple(value.split(":"))


def read_elf(path: Path | bytes, label: str | None = None) -> ElfFacts:
    """Facts of a library on disk, or of its bytes (then `label` names it in errors)."""
    opener: Callable[[], BinaryIO]
    if isinstance(path, (bytes, bytearray)):
        data = bytes(path)
        opener, name = (lambda: io.BytesIO(data)), label or "<bytes>"
    else:
        file = Path(path)
        opener, name = (lambda: open(file, "rb")), str(file)
    try:
        with opener() as handle:
            elf = ELFFile(handle)
            soname = None
            needed: list[str] = []
            runpath: tuple[str, ...] = ()
            rpath: tuple[str, ...] = ()
            exports: set[str] = set()
            defined: set[str] = set()
            debug_bytes = 0
            for section in elf.iter_sections():
                if section.name.startswith((".debug", ".zdebug")):
                    debug_bytes += section["sh_size"]
                if isinstance(section, DynamicSection):
                    # pyelftools sets each tag's string attribute (needed, soname, ...) at run time.
                    for tag in section.iter_tags():
                        if tag.entry.d_tag == "DT_NEEDED":
                            needed.append(tag.needed)  # type: ignore[attr-defined]
                        elif tag.entry.d_tag == "DT_SONAME":
                            soname = tag.soname  # type: ignore[attr-defined]
                        elif tag.entry.d_tag == "DT_RUNPATH":
                            runpath = _split_path_list(tag.runpath)  # type: ignore[attr-defined]
                        elif tag.entry.d_tag == "DT_RPATH":
                            rpath = _split_path_list(tag.rpath)  # type: ignore[attr-defined]
                elif isinstance(section, SymbolTableSection) and section.name == ".dynsym":
                    for symbol in section.iter_symbols():
                        # A LOCAL entry in .dynsym is visible to no other object: GNU ld leaves the vague-linkage
                        # symbols a version script localized there (typeinfo names, inline template functions).
                        if (symbol.name and symbol["st_shndx"] not in ("SHN_UNDEF", "SHN_ABS")
                                and symbol["st_info"]["type"] != "STT_SECTION"
                                and symbol["st_info"]["bind"] != "STB_LOCAL"):
                            defined.add(symbol.name)
                        if (
                            symbol.name
                            and symbol["st_shndx"] != "SHN_UNDEF"
                            and symbol["st_info"]["type"] == "STT_FUNC"
                            and symbol["st_info"]["bind"] in ("STB_GLOBAL", "STB_WEAK")
                        ):
                            exports.add(symbol.name)
            stack_flags = None
            for segment in elf.iter_segments():
                if segment["p_type"] == "PT_GNU_STACK":
                    flags = segment["p_flags"]
                    stack_flags = "".join(
                        letter
                        for letter, bit in (("R", P_FLAGS.PF_R), ("W", P_FLAGS.PF_W), ("X", P_FLAGS.PF_X))
                        if flags & bit
                    )
            machine = elf["e_machine"]
    except (ELFError, OSError, ValueError) as exc:
        raise ToolkitError(f"{name}: cannot read as an ELF shared library: {exc}") from None
    return ElfFacts(
        soname=soname,
        needed=tuple(needed),
        runpath=runpath,
        rpath=rpath,
        stack_flags=stack_flags,
        exports=tuple(sorted(exports)),
        machine=machine,
        defined=tuple(sorted(defined)),
        debug_bytes=debug_bytes,
    )


def section_extent(path: Path, name: str) -> tuple[int, int] | None:
    """(file offset, size) of a section, or None when the file has no such section."""
    with open(path, "rb") as handle:
        try:
            elf = ELFFile(handle)
        except ELFError:
            return None
        section = elf.get_section_by_name(name)
        if section is None or section["sh_type"] == "SHT_NOBITS":
            return None
        return section["sh_offset"], section["sh_size"]


def version_needs(path: Path) -> dict[str, tuple[str, ...]]:
    """The symbol versions a library needs, per library that provides them (its .gnu.version_r section):
    {"libc.so.6": ("GLIBC_2.2.5", "GLIBC_2.17"), ...}. These, not the build machine, bound the oldest glibc the
    library loads on, and so the manylinux tag auditwheel gives it."""
    out: dict[str, tuple[str, ...]] = {}
    try:
        with open(path, "rb") as handle:
            elf = ELFFile(handle)
            for section in elf.iter_sections():
                if section["sh_type"] != "SHT_GNU_verneed":
                    continue
                for verneed, auxiliaries in section.iter_versions():  # type: ignore[attr-defined]
                    out[verneed.name] = tuple(aux.name for aux in auxiliaries)
    except (ELFError, OSError, ValueError) as exc:
        raise ToolkitError(f"{path}: cannot read its symbol version needs: {exc}") from None
    return out


def highest_version(needs: dict[str, tuple[str, ...]], prefix: str) -> str | None:
    """The highest `PREFIX_X.Y[.Z]` version among `needs` (GLIBC, GLIBCXX, CXXABI), as "X.Y[.Z]"; None if none."""
    found = []
    for versions in needs.values():
        for name in versions:
            head, _, number = name.partition("_")
            if head == prefix and number and all(part.isdigit() for part in number.split(".")):
                found.append(tuple(int(part) for part in number.split(".")))
    return ".".join(map(str, max(found))) if found else None


# The symbol-version families that bound where a library loads: glibc's, then libstdc++'s (its library and its ABI).
VERSION_FAMILIES = ("GLIBC", "GLIBCXX", "CXXABI")


def highest_versions(needs: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """{"GLIBC": "2.43", "GLIBCXX": "3.4.32", ...}: the highest version of each family in VERSION_FAMILIES that
    `needs` (version_needs') names; a family it does not name is left out."""
    found = {family: highest_version(needs, family) for family in VERSION_FAMILIES}
    return {family: version for family, version in found.items() if version}


def merge_highest(many: list[dict[str, str]]) -> dict[str, str]:
    """The highest version of each family over several libraries' highest_versions."""
    out: dict[str, str] = {}
    for versions in many:
        for family, version in versions.items():
            if family not in out or _numbers(version) > _numbers(out[family]):
                out[family] = version
    return {family: out[family] for family in VERSION_FAMILIES if family in out}


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def versions_words(versions: dict[str, str]) -> str:
    """'GLIBC_2.43 and GLIBCXX_3.4.32' (every family, in VERSION_FAMILIES' order); '' for none."""
    names = [f"{family}_{version}" for family, version in versions.items()]
    return " and ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else "".join(names)
