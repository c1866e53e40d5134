"""A wheel whose libraries need a newer glibc and libstdc++ than this machine's cannot run here, and no package
changes that: the hip-ep self-check says what the wheel needs (recorded at build time, _wheel_info.json), what this
machine has, and that it cannot run here; the repair line names every versioned need (glibc's and libstdc++'s). It
used to say "install the package that provides it", and the repair line named GLIBC alone.

The libraries are real, built here with gcc: libhipgpu.so links stand-ins of libc.so.6 and libstdc++.so.6 whose
symbols carry versions no glibc or libstdc++ defines yet (GLIBC_2.99, GLIBCXX_3.4.99), so this machine's loader
refuses it with its own words, as Debian 12's refuses a wheel built on sid."""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from tests.support.wheel_support import needs_newer_c_runtime
from toolkit.recipe.wheel import Component, WheelSettings
from toolkit.wheel.build import build_wheel
from toolkit.wheel.repair import repair_wheel

SETTINGS = WheelSettings(
    version="0.4.0", components=(Component("hipgpu", "hipgpu", runpath=("$ORIGIN",)),),
    distribution="onnxruntime-ep-hip", import_package="onnxruntime_ep_hip", platform="linux")
INFO = {"source_revision": "0123abc", "patches": [], "features": [], "rocm_version": None, "gpu_targets": []}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("newer")
    needs_newer_c_runtime(work / "lib" / "libhipgpu.so")
    return build_wheel(SETTINGS, work / "lib", INFO, work / "dist")


def machine_glibcxx() -> str:
    """The highest GLIBCXX_ version this machine's libstdc++ defines (its .gnu.version_d, read with pyelftools)."""
    path = subprocess.run(["gcc", "-print-file-name=libstdc++.so.6"], capture_output=True, text=True,
                          check=True).stdout.strip()
    with open(os.path.realpath(path), "rb") as handle:
        section = next(s for s in ELFFile(handle).iter_sections() if s["sh_type"] == "SHT_GNU_verdef")
        names = [aux.name for _, auxiliaries in section.iter_versions() for aux in auxiliaries]
    return max((n.removeprefix("GLIBCXX_") for n in names if re.fullmatch(r"GLIBCXX_[\d.]+", n)),
               key=lambda v: tuple(map(int, v.split("."))))


def test_the_self_check_says_the_wheel_needs_a_newer_glibc_and_libstdcxx_and_cannot_run_here(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    clean = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    done = subprocess.run([sys.executable, "-m", "onnxruntime_ep_hip"], capture_output=True, text=True,
                          env={**clean, "PYTHONPATH": str(site)}, cwd=tmp_path, timeout=300)
    out = done.stdout
    assert done.returncode == 1 and "Traceback" not in out + done.stderr, out + done.stderr
    glibc, glibcxx = platform.libc_ver()[1], machine_glibcxx()
    verdict = out.splitlines()[-1]
    assert verdict.startswith(
        "not ready: libhipgpu.so cannot run here: this wheel needs glibc >= 2.99 and the libstdc++ it was built with "
        f"(GLIBCXX_3.4.99 or newer); this machine has glibc {glibc} and libstdc++ up to GLIBCXX_{glibcxx}, so it "
        "cannot run here (the loader: "), verdict
    # The loader's own words, and what to do: no package can provide a newer glibc.
    assert re.search(r"version .GLIBC(XX)?_(2|3\.4)\.99' not found \(required by \S+/libhipgpu\.so\)", verdict)
    assert "What to do: no package installs a newer glibc or libstdc++ beside this system's: run it on a system " \
           "with glibc 2.99 or newer" in verdict
    assert "install the package that provides it" not in out
    assert (f"  symbol versions it needs: GLIBC_2.99, GLIBCXX_3.4.99 at most (this machine: glibc {glibc}, "
            f"libstdc++ GLIBCXX_{glibcxx})\n") in out, out
    # What the wheel needs was read from its libraries when it was built, not guessed from the loader's first error.
    info = json.loads((site / "onnxruntime_ep_hip" / "_wheel_info.json").read_text())
    assert info["build"]["symbol_versions"] == {"GLIBC": "2.99", "GLIBCXX": "3.4.99"}


def test_the_repair_line_names_every_versioned_need(wheel, tmp_path, capfd):
    capfd.readouterr()
    result = repair_wheel(wheel, tmp_path / "repaired", components=SETTINGS.components, platform="linux")
    line = next(x for x in capfd.readouterr().err.splitlines() if f"{result.wheel.name}: tag " in x)
    assert ", GLIBC_2.99 and GLIBCXX_3.4.99 at most, not from this machine's glibc)" in line, line
