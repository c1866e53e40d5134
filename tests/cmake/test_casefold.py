"""Includes spelled for Windows' case-insensitive file system (toolkit/cmake/casefold.py): the forwarding headers the
toolkit writes, which a real compiler then follows."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from toolkit.cmake.casefold import forwarding_headers, write_forwarding_headers


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_only_includes_that_need_another_case_get_a_forwarding_header(tmp_path: Path) -> None:
    sdk = tmp_path / "sdk"
    _write(sdk / "windows.h", "#define FROM_SDK 1\n")
    _write(sdk / "psapi.h", "")
    deps = tmp_path / "deps"
    _write(deps / "include" / "wil" / "resource.h", "#define FROM_WIL 2\n")
    tree = tmp_path / "tree"
    unit = _write(tree / "src" / "unit.cc", "#include <Windows.h>\n#include \"wil/Resource.h\"\n#include <psapi.h>\n"
                  "#include \"local.h\"\n#include <missing.h>\n  #  include <Psapi.h>\n"
                  "int value = FROM_SDK + FROM_WIL;\n")
    _write(tree / "src" / "local.h", "")
    headers = forwarding_headers([tree], [sdk, deps / "include"])
    # Spelled exactly, found beside the unit, or found nowhere: left to the compiler.
    assert headers == {"Psapi.h": "psapi.h", "Windows.h": "windows.h", "wil/Resource.h": "wil/resource.h"}

    out = tmp_path / "casefold"
    _write(out / "Stale.h", "#include <stale.h>\n")
    write_forwarding_headers(out, headers)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.h")) == \
        ["Psapi.h", "Windows.h", "wil/Resource.h"]
    assert (out / "Windows.h").read_text().endswith("#include <windows.h>\n")

    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        pytest.skip("no C++ compiler on this machine to follow the headers")
    # The compiler follows them: the unit compiles against the lower-case headers only through the forwards.
    done = subprocess.run([compiler, "-fsyntax-only", f"-I{sdk}", f"-I{deps / 'include'}", f"-idirafter{out}",
                           "-I", str(tree / "src"), "-include", "stddef.h", "-x", "c++", "-"],
                          input=unit.read_text().replace("#include <missing.h>\n", ""), text=True,
                          capture_output=True)
    assert done.returncode == 0, done.stderr


def test_links_are_never_followed(tmp_path: Path) -> None:
    sdk = tmp_path / "sdk"
    _write(sdk / "windows.h", "")
    outside = _write(tmp_path / "outside" / "unit.cc", "#include <Windows.h>\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "linked").symlink_to(outside.parent, target_is_directory=True)
    (tree / "unit.cc").symlink_to(outside)
    assert forwarding_headers([tree], [sdk]) == {}


def test_a_header_installed_as_a_link_is_a_header_by_its_name(tmp_path: Path) -> None:
    # Debian's MinGW-w64 for UCRT: include/windows.h -> ../../share/mingw-w64/include/windows.h.
    shared = _write(tmp_path / "share" / "windows.h", "")
    sdk = tmp_path / "sdk"
    sdk.mkdir()
    (sdk / "windows.h").symlink_to(shared)
    tree = tmp_path / "tree"
    _write(tree / "unit.cc", "#include <Windows.h>\n#include <windows.h>\n")
    assert forwarding_headers([tree], [sdk]) == {"Windows.h": "windows.h"}
