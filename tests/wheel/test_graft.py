"""[wheel] platform = "linux": the libraries are repaired by the toolkit's own grafting (as are libraries that need a
glibc newer than auditwheel's newest policy, tests/wheel/test_glibc_tag.py), since auditwheel has no linux target.
Real gcc-built libraries: the umbrella stand-in links a library from a folder on LD_LIBRARY_PATH, which the repaired
wheel must carry and find."""

from __future__ import annotations

import ctypes
import os
import re
import zipfile
from dataclasses import replace

from tests.support.wheel_support import SETTINGS, build_c_library, repair_bundling, shared_library
from toolkit.binary.elf import read_elf
from toolkit.wheel.build import build_wheel


def test_linux_platform_bundles_what_the_libraries_link_and_keeps_the_tag(tmp_path, monkeypatch):
    dep = shared_library(tmp_path / "dep", "libstandin.so.3")
    libs = tmp_path / "lib"
    build_c_library(libs / "libamdgpu-ep.so", libs=[f"-L{dep.parent}", "-l:libstandin.so.3"])
    build_c_library(libs / "libmigraphx-backend.so")
    settings = replace(SETTINGS, platform="linux")
    wheel = build_wheel(settings, libs, {"source_revision": "x"}, tmp_path / "raw")
    assert wheel.name.endswith("-linux_x86_64.whl")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(dep.parent))
    repaired = repair_bundling(wheel, tmp_path / "out", components=settings.components, platform="linux")
    assert repaired.wheel.name == wheel.name  # the tag is kept
    folder = f"{SETTINGS.import_package}.libs"
    names = zipfile.ZipFile(repaired.wheel).namelist()
    [copy] = [n for n in names if n.startswith(f"{folder}/")]
    assert re.fullmatch(rf"{folder}/libstandin-[0-9a-f]{{8}}\.so\.3", copy)
    record = zipfile.ZipFile(repaired.wheel).read(f"{wheel.name.split('-')[0]}-0.1.0.dist-info/RECORD").decode()
    assert f"{copy},sha256=" in record
    unpacked = tmp_path / "unpacked"
    zipfile.ZipFile(repaired.wheel).extractall(unpacked)
    umbrella = unpacked / SETTINGS.import_package / "libamdgpu-ep.so"
    facts = read_elf(umbrella)
    assert copy.split("/")[1] in facts.needed and "libstandin.so.3" not in facts.needed
    assert f"$ORIGIN/../{folder}" in facts.runpath
    assert read_elf(unpacked / copy).soname == copy.split("/")[1]
    # Loads with the bundled copy alone: the folder it came from is off the loader's path now.
    monkeypatch.delenv("LD_LIBRARY_PATH")
    os.chmod(umbrella, 0o755)
    ctypes.CDLL(str(umbrella))
