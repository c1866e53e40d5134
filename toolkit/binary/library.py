"""A built library's loader-facing facts whatever its format: ELF (Linux) or PE (Windows).

The check stage and the wheel stage ask the same two questions of either, what it exports and what it loads, so
they read it here and never look at the format themselves."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from toolkit.binary.elf import is_elf, read_elf
from toolkit.binary.pe import is_pe, read_pe
from toolkit.util.errors import ToolkitError


class LibraryFacts(Protocol):
    @property
    def defined(self) -> tuple[str, ...]: ...

    @property
    def needed(self) -> tuple[str, ...]: ...


def read_library(path: Path) -> LibraryFacts:
    """The facts of an ELF shared object or a PE DLL; any other file is an error naming it."""
    if is_elf(path):
        return read_elf(path)
    if is_pe(path):
        return read_pe(path)
    raise ToolkitError(f"{path}: neither an ELF shared library nor a Windows DLL")


def is_library(path: Path) -> bool:
    return is_elf(path) or is_pe(path)
