"""The MinGW-w64 toolchain: Windows DLLs cross-compiled with GCC for UCRT (toolchains.toml [mingw] says why).

CMake gets a toolchain file the toolkit writes into the work tree: the target system (Windows, AMD64), the
compilers by full path, and the link flags every DLL and executable of the tree (and of its FetchContent
dependencies) gets. The compilers come from the build root; on a machine without them the error names the
package and the root that has them.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON, atomic_write_text
from toolkit.util.tomlfields import doc


@dataclass(frozen=True)
class MingwPin:
    """toolchains.toml's [mingw] (read by toolkit/util/tomlclass.py; the file's comments say why each is so)."""

    triplet: str = field(metadata=doc("The GNU triplet the compilers are named by."))
    package: str = field(metadata=doc("The Debian package with the compilers, named when they are missing."))
    root: str = field(metadata=doc("The build root that has them."))
    link_flags: tuple[str, ...] = field(metadata=doc("What every DLL and executable of the tree is linked with."))
    wheel_platform: str = field(metadata=doc("The platform tag of the wheels it builds."))

    def program(self, tool: str) -> str:
        return f"{self.triplet}-{tool}"

    def compiler(self, lang: str) -> str:
        """The full path of the C or C++ compiler, or its bare name where this machine has none (a dry run)."""
        name = self.program("g++" if lang == "CXX" else "gcc")
        return shutil.which(name) or name

    def identity(self) -> JSON:
        return {"name": "mingw", "wheel_platform": self.wheel_platform,
                "triplet": self.triplet, "package": self.package, "crt": "ucrt", "cxx_runtime": "libstdc++ (static)",
                "link_flags": list(self.link_flags)}

    def describe(self) -> str:
        return (f"MinGW-w64 GCC for {self.triplet} (UCRT; {self.package}), the C++ runtime linked in statically, "
                f"for {self.wheel_platform}")


def check_installed(pin: MingwPin) -> None:
    """The compilers are on PATH, or one error line naming the package and the root that has them."""
    missing = [name for name in (pin.program("gcc"), pin.program("g++")) if shutil.which(name) is None]
    if missing:
        raise ToolkitError(f"the mingw toolchain needs {', '.join(missing)}, which this machine does not have",
                           hint=f"build in the {pin.root} build root, which has them: nox -s container -- --root "
                                f"{pin.root} build --toolchain mingw (or install Debian's {pin.package})")


def toolchain_file_text(pin: MingwPin, note: str) -> str:
    flags = " ".join(pin.link_flags)
    lines = [f"# Written by the ort-amdgpu toolkit (toolkit/cmake/mingw.py): {note}.",
             "set(CMAKE_SYSTEM_NAME Windows)",
             "set(CMAKE_SYSTEM_PROCESSOR AMD64)",
             f'set(CMAKE_C_COMPILER "{pin.compiler("C")}")',
             f'set(CMAKE_CXX_COMPILER "{pin.compiler("CXX")}")',
             f'set(CMAKE_RC_COMPILER "{shutil.which(pin.program("windres")) or pin.program("windres")}")',
             # The target's libraries are MinGW's; headers and package configs may come from anywhere the
             # build points CMake at (ORT's headers in the toolkit cache, FetchContent dependencies).
             f'set(CMAKE_FIND_ROOT_PATH "/usr/{pin.triplet}")',
             "set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)",
             "set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)",
             "set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)",
             "set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)"]
    lines += [f'set(CMAKE_{kind}_LINKER_FLAGS_INIT "{flags}")' for kind in ("SHARED", "MODULE", "EXE")]
    return "\n".join(lines) + "\n"


def prepare_mingw(pin: MingwPin, toolchain_file: Path, note: str) -> None:
    """Check the compilers are there; write the toolchain file (only when its text changes: CMake reconfigures)."""
    check_installed(pin)
    text = toolchain_file_text(pin, note)
    if not toolchain_file.is_file() or toolchain_file.read_text() != text:
        atomic_write_text(toolchain_file, text)
