"""toolkit.binary.patchelf on a real small shared library built with gcc: RUNPATH set, replaced and removed,
checked with readelf; a failure names the library and patchelf's complaint."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.tools import need
from toolkit.binary import patchelf
from toolkit.util.errors import ToolkitError
from toolkit.util.toolenv import env_bin_dir


def _dynamic(lib: Path) -> str:
    return subprocess.run([need("readelf", "binutils"), "-d", str(lib)], capture_output=True, text=True,
                          check=True).stdout


@pytest.fixture
def lib(tmp_path) -> Path:
    gcc = need("gcc")
    source = tmp_path / "tiny.c"
    source.write_text("int tiny(void) { return 42; }\n")
    out = tmp_path / "libtiny.so"
    subprocess.run([gcc, "-shared", "-fPIC", "-Wl,-rpath,/opt/build-machine/lib", "-Wl,--enable-new-dtags",
                    "-o", str(out), str(source)], check=True)
    assert "(RUNPATH)" in _dynamic(out) and "/opt/build-machine/lib" in _dynamic(out)
    return out


def test_finds_the_toolkit_environments_patchelf_first():
    found = patchelf.find_patchelf()
    own = env_bin_dir() / "patchelf"
    assert found == own if own.is_file() else found.name == "patchelf"


def test_set_and_remove_runpath(lib):
    patchelf.set_runpath(lib, ["$ORIGIN", "$ORIGIN/../lib"])
    dynamic = _dynamic(lib)
    assert "Library runpath: [$ORIGIN:$ORIGIN/../lib]" in dynamic, dynamic
    assert "/opt/build-machine" not in dynamic and "(RPATH)" not in dynamic
    patchelf.remove_runpath(lib)
    dynamic = _dynamic(lib)
    assert "(RUNPATH)" not in dynamic and "(RPATH)" not in dynamic, dynamic


def test_no_entries_removes_the_runpath(lib):
    patchelf.set_runpath(lib, [])
    assert "(RUNPATH)" not in _dynamic(lib)


def test_failure_names_the_file_and_patchelfs_message(tmp_path):
    not_elf = tmp_path / "libnot.so"
    not_elf.write_text("not an ELF file\n")
    with pytest.raises(ToolkitError) as err:
        patchelf.set_runpath(not_elf, ["$ORIGIN"])
    message = str(err.value)
    assert message.startswith(f"{not_elf}: setting RUNPATH $ORIGIN failed (exit "), message
    assert "--set-rpath" in message and len(message.splitlines()) > 1  # patchelf's own words follow


def test_option_looking_names_reach_patchelf_as_paths_and_values(lib, monkeypatch):
    """A library named like an option (relative to the working folder) and a RUNPATH starting with '-' are
    handed over where patchelf reads them as a path and as --set-rpath's value."""
    odd = lib.with_name("--version")
    lib.rename(odd)
    monkeypatch.chdir(lib.parent)
    patchelf.set_runpath(Path("--version"), ["-odd", "$ORIGIN"])
    assert "[-odd:$ORIGIN]" in _dynamic(odd)
    patchelf.remove_runpath(Path("--version"))
    assert "RUNPATH" not in _dynamic(odd)
