"""Decoys for the DLLs a Windows wheel carries: a DLL of the same name and exports in the working directory and
another on PATH (WINEPATH), each saying when it is loaded. Windows' search order puts both after the folder of the
DLL that imports it; a decoy that speaks means the wheel's copy was not the one loaded (missing, or searched for
from somewhere else), which a user's machine would answer with whatever DLL of that name it happens to have."""

from __future__ import annotations

import re
from pathlib import Path

from toolkit.binary.pe import read_pe
from toolkit.cmake.mingw import MingwPin
from toolkit.util.errors import ToolkitError
from toolkit.util.process import run

PLACES = ("cwd", "path")
# What a decoy prints on stderr when the loader maps it.
SAID = re.compile(r"^\[decoy\] (?P<name>\S+) loaded from (?P<place>\w+)$")
_IDENTIFIER = re.compile(r"^[A-Za-z_]\w*$")
# The names go into the decoy's C source and its command line: plain file names only.
_DLL_NAME = re.compile(r"^[A-Za-z0-9_.+-]+\.dll$", re.IGNORECASE)

_SOURCE = """#include <windows.h>
#include <stdio.h>
BOOL WINAPI DllMain(HINSTANCE module, DWORD reason, LPVOID reserved) {
  if (reason == DLL_PROCESS_ATTACH) { fprintf(stderr, "[decoy] %s loaded from %s\\n", NAME, PLACE); fflush(stderr); }
  return TRUE;
}
"""


def carried_dlls(package: Path, ep: Path) -> list[Path]:
    """The DLLs beside the EP DLL in its package folder, other than itself: what the wheel carries for it."""
    found = sorted(p for p in package.glob("*.dll") if p.name.lower() != ep.name.lower())
    odd = [p.name for p in found if not _DLL_NAME.match(p.name)]
    if odd:
        raise ToolkitError(f"{package}: {odd[0]!r} is no DLL name a decoy can be built for",
                           hint="name the wheel's DLLs with letters, digits and . _ + - only")
    return found


def make_decoys(mingw: MingwPin, carried: list[Path], into: Path) -> dict[str, Path]:
    """Build a decoy of each carried DLL (same name, same exported names) in `into/cwd` and `into/path`; returns
    those two folders by place."""
    folders = {place: into / place for place in PLACES}
    stubs = {dll: "".join(f"__declspec(dllexport) void {name}(void) {{}}\n"
                          for name in read_pe(dll).exports if _IDENTIFIER.match(name)) for dll in carried}
    for place, folder in folders.items():
        folder.mkdir(parents=True, exist_ok=True)
        for dll in carried:
            source = folder / f"{dll.stem}.c"
            source.write_text(f'#define NAME "{dll.name}"\n#define PLACE "{place}"\n{_SOURCE}{stubs[dll]}')
            run([*mingw.c_command(), "-shared", "-O2", "-w", "-o", str(folder / dll.name), str(source),
                 *mingw.link_flags], f"the decoy {dll.name} ({place})", output="capture")
    return folders


def decoys_loaded(log: list[str]) -> list[str]:
    """`NAME from PLACE` for each decoy the run's log says was loaded."""
    return [f"{m['name']} from {'the working directory' if m['place'] == 'cwd' else 'PATH'}"
            for m in map(SAID.match, log) if m]
