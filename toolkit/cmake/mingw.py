"""The MinGW-w64 toolchain: Windows DLLs cross-compiled by clang with MinGW-w64's UCRT runtime (toolchains.toml
[mingw] says why).

CMake gets a toolchain file the toolkit writes into the work tree: the target system (Windows, AMD64), the
compilers by full path, MinGW-w64's libstdc++ headers, the Windows SDK pieces MinGW-w64 lacks (mingw_sdk/, and the
build's forwarding headers for includes spelled in another case), and the flags every compile and link of the tree
(and of its FetchContent dependencies) gets. The tools come from the build root; on a machine without them the
error names the packages and the root that has them.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON, atomic_write_text
from toolkit.util.process import run
from toolkit.util.tomlfields import doc

SDK_HEADERS = Path(__file__).parent / "mingw_sdk"
SDK_PRELUDE = "toolkit_mingw_sdk.h"


@dataclass(frozen=True)
class MingwPin:
    """toolchains.toml's [mingw] (read by toolkit/util/tomlclass.py; the file's comments say why each is so)."""

    triplet: str = field(metadata=doc("The GNU triplet the target is named by (`--target=`, MinGW-w64's folders)."))
    compiler: str = field(metadata=doc("The C compiler (clang); C++ is its clang++ namesake."))
    runtime: str = field(metadata=doc(
        "MinGW-w64's g++, whose libstdc++ headers and static runtime archives the target uses."))
    masm: str = field(metadata=doc("The MASM-compatible assembler, for a tree that enables ASM_MASM."))
    packages: tuple[str, ...] = field(metadata=doc("The Debian packages with these tools, named when they are "
                                                   "missing."))
    root: str = field(metadata=doc("The build root that has them."))
    compile_flags: tuple[str, ...] = field(metadata=doc("What every compile of the tree gets."))
    link_flags: tuple[str, ...] = field(metadata=doc("What every DLL and executable of the tree is linked with."))
    wheel_platform: str = field(metadata=doc("The platform tag of the wheels it builds."))

    def program(self, lang: str) -> str:
        """The bare name of the C, C++ or MASM compiler."""
        if lang == "CXX":
            return self.compiler.replace("clang", "clang++", 1)
        return self.masm if lang == "ASM_MASM" else self.compiler

    def compiler_path(self, lang: str) -> str:
        """The full path of a compiler, or its bare name where this machine has none (a dry run)."""
        name = self.program(lang)
        return shutil.which(name) or name

    def c_command(self) -> list[str]:
        """The C compiler for the target, as a command (the Wine smoke's harness)."""
        return [self.compiler_path("C"), f"--target={self.triplet}", *self.compile_flags]

    @property
    def sysroot_include(self) -> Path:
        """MinGW-w64's headers for the target: the Windows SDK as far as MinGW-w64 has it."""
        return Path("/usr") / self.triplet / "include"

    def identity(self) -> JSON:
        return {"name": "mingw", "wheel_platform": self.wheel_platform, "triplet": self.triplet,
                "compiler": self.compiler, "runtime": self.runtime, "masm": self.masm, "crt": "ucrt",
                "cxx_runtime": "libstdc++ (static)", "compile_flags": list(self.compile_flags),
                "link_flags": list(self.link_flags), "sdk_headers": _tree_digest(SDK_HEADERS)}

    def describe(self) -> str:
        return (f"{self.compiler} for {self.triplet} with MinGW-w64's UCRT runtime ({self.runtime}'s libstdc++, "
                f"linked in statically), for {self.wheel_platform}")


def _tree_digest(folder: Path) -> str:
    """What the SDK headers hold: a changed header is a changed toolchain (everything compiles again)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def check_installed(pin: MingwPin) -> None:
    """The tools are on PATH, or one error line naming the packages and the root that has them."""
    tools = (pin.program("C"), pin.program("CXX"), pin.runtime, pin.masm)
    missing = [name for name in tools if shutil.which(name) is None]
    if missing:
        raise ToolkitError(f"the mingw toolchain needs {', '.join(missing)}, which this machine does not have",
                           hint=f"build in the {pin.root} build root, which has them: nox -s container -- --root "
                                f"{pin.root} build --toolchain mingw (or install Debian's {', '.join(pin.packages)})")


def runtime_cxx_includes(pin: MingwPin) -> list[str]:
    """The libstdc++ include folders of MinGW-w64's g++, as that g++ reports them: clang takes these, and none of
    the build machine's own (clang would otherwise find the host's libstdc++ first)."""
    out = run(runtime_search_command(pin), f"{pin.runtime}'s include folders", output="capture")
    cxx = cxx_search_folders(out.stderr)
    if not cxx:
        raise ToolkitError(f"{pin.runtime} reported no libstdc++ include folder", hint="reinstall "
                           + ", ".join(pin.packages))
    return cxx


def runtime_search_command(pin: MingwPin) -> list[str]:
    return [pin.runtime, "-E", "-x", "c++", "-v", "-o", os.devnull, os.devnull]


def cxx_search_folders(verbose: str) -> list[str]:
    """The C++ library's folders in a GCC driver's `-v` search list."""
    listed = verbose.split("#include <...> search starts here:", 1)[-1].split("End of search list.", 1)[0]
    folders = [os.path.normpath(line.strip()) for line in listed.splitlines() if line.strip()]
    return [folder for folder in folders if "/c++" in folder]


def toolchain_file_text(pin: MingwPin, note: str, cxx_includes: list[str], casefold: Path) -> str:
    """CMake's view of the toolchain: clang for the target, MinGW-w64's runtime, the SDK headers the toolkit adds
    (after the build's own include folders, before MinGW-w64's), and the flags every compile and link gets."""
    link = " ".join(pin.link_flags)
    compile_flags = " ".join(pin.compile_flags)
    cxx = " ".join(["-nostdinc++", *(f"-isystem {folder}" for folder in cxx_includes), compile_flags,
                    f"-include {SDK_PRELUDE}"])
    added = f"{casefold.as_posix()} {SDK_HEADERS.as_posix()}"
    windres = shutil.which(f"{pin.triplet}-windres") or f"{pin.triplet}-windres"
    lines = [f"# Written by the ort-amdgpu toolkit (toolkit/cmake/mingw.py): {note}.",
             "set(CMAKE_SYSTEM_NAME Windows)",
             "set(CMAKE_SYSTEM_PROCESSOR AMD64)",
             f'set(CMAKE_C_COMPILER "{pin.compiler_path("C")}")',
             f'set(CMAKE_CXX_COMPILER "{pin.compiler_path("CXX")}")',
             f"set(CMAKE_C_COMPILER_TARGET {pin.triplet})",
             f"set(CMAKE_CXX_COMPILER_TARGET {pin.triplet})",
             f'set(CMAKE_ASM_MASM_COMPILER "{pin.compiler_path("ASM_MASM")}")',
             'set(CMAKE_ASM_MASM_FLAGS_INIT "-m64")',
             f'set(CMAKE_RC_COMPILER "{windres}")',
             f'set(CMAKE_C_FLAGS_INIT "{compile_flags}")',
             f'set(CMAKE_CXX_FLAGS_INIT "{cxx}")',
             f"set(CMAKE_C_STANDARD_INCLUDE_DIRECTORIES {added})",
             f"set(CMAKE_CXX_STANDARD_INCLUDE_DIRECTORIES {added})",
             # The target's libraries are MinGW's; headers and package configs may come from anywhere the
             # build points CMake at (ORT's headers in the toolkit cache, FetchContent dependencies).
             f'set(CMAKE_FIND_ROOT_PATH "/usr/{pin.triplet}")',
             "set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)",
             "set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)",
             "set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)",
             "set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)",
             f'set(CMAKE_USER_MAKE_RULES_OVERRIDE "{names_file(casefold.parent).as_posix()}")']
    lines += [f'set(CMAKE_{kind}_LINKER_FLAGS_INIT "{link}")' for kind in ("SHARED", "MODULE", "EXE")]
    return "\n".join(lines) + "\n"


# CMake's MinGW platform files name a DLL libNAME.dll, and set that after the toolchain file is read; trees written
# for Windows expect MSVC's NAME.dll (ORT registers a plugin EP by its path; a backend loads its siblings by name).
# The rules override is read after the platform files. A target that sets its own PREFIX keeps it.
NAMES_TEXT = """# Written by the ort-amdgpu toolkit (toolkit/cmake/mingw.py): DLLs named as MSVC names them.
set(CMAKE_SHARED_LIBRARY_PREFIX "")
set(CMAKE_SHARED_MODULE_PREFIX "")
"""


def names_file(folder: Path) -> Path:
    """The rules override beside the toolchain file in `folder`."""
    return folder / "windows-names.cmake"


def casefold_dir(toolchain_file: Path) -> Path:
    """Where the build's forwarding headers for includes spelled in another case go (toolkit/cmake/casefold.py)."""
    return toolchain_file.parent / "casefold"


def prepare_mingw(pin: MingwPin, toolchain_file: Path, note: str) -> None:
    """Check the tools are there; write the toolchain file (only when its text changes: CMake reconfigures)."""
    check_installed(pin)
    text = toolchain_file_text(pin, note, runtime_cxx_includes(pin), casefold_dir(toolchain_file))
    casefold_dir(toolchain_file).mkdir(parents=True, exist_ok=True)
    names = names_file(toolchain_file.parent)
    if not names.is_file() or names.read_text() != NAMES_TEXT:
        atomic_write_text(names, NAMES_TEXT)
    if not toolchain_file.is_file() or toolchain_file.read_text() != text:
        atomic_write_text(toolchain_file, text)
