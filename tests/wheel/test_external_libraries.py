"""The self-check reports the libraries a wheel leaves external that are not ROCm (the recipe's [wheel] excludes), as
it does ROCm's: where the loader finds each and whether it loads, and what to install when it does not. It used to say
"ROCm libraries it links: none" and nothing of them. Built from hip-ep's own [wheel] with excludes = ["libLLVM.so.*"]
added (hip-ep now links LLVM statically; a wheel built against a distribution's shared LLVM would leave it out so),
and stand-in libraries, libhip-compiler.so linking a stand-in libLLVM.so.22.1; the self-check run for real."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from tests.support.selfcheck_support import install_text
from tests.support.tools import ROOT
from tests.support.wheel_support import build_c_library, shared_library
from toolkit.recipe.load import load_recipe
from toolkit.wheel.build import build_wheel

LLVM = "libLLVM.so.22.1"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """(the unpacked wheel, the folder of the stand-in libLLVM)."""
    work = tmp_path_factory.mktemp("hipgpu")
    llvm = work / "llvm"
    shared_library(llvm, LLVM)
    settings = load_recipe(ROOT / "recipes" / "hip-ep.toml").wheel
    assert settings is not None
    settings = replace(settings, excludes=("libLLVM.so.*",))
    for c in settings.components_for(frozenset()):
        build_c_library(work / "lib" / c.filename,
                        libs=[f"-L{llvm}", f"-l:{LLVM}"] if c.library == "hip-compiler" else [])
    wheel = build_wheel(settings, work / "lib", {"source_revision": "x", "features": {"mock": False}}, work / "dist")
    zipfile.ZipFile(wheel).extractall(work / "site")
    return work / "site", llvm


def selfcheck(site: Path, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    done = subprocess.run([sys.executable, "-m", "onnxruntime_ep_hip"], capture_output=True, text=True,
                          env={**clean, "PYTHONPATH": str(site), **env}, cwd=site, timeout=300)
    return done.stdout + done.stderr


def test_a_non_rocm_library_left_external_is_reported_and_its_absence_named(built):
    site, _ = built
    out = selfcheck(site)
    assert "ROCm libraries it links: none\n" in out
    assert ("other libraries it links, left external (not ROCm; this machine provides them):\n"
            f"  {LLVM} (needed by libhip-compiler.so): NOT FOUND; does not load: {LLVM}: cannot open shared object "
            "file") in out, out
    assert (f"  - needs {LLVM} (not found; the wheel leaves it external): install {install_text(LLVM)}, or put the "
            f"folder that holds {LLVM} on LD_LIBRARY_PATH\n") in out, out
    # The compiler fails to load for that library alone: no second piece about it.
    assert "libhip-compiler.so does not load here" not in out.split("what to do:")[1]


def test_found_on_the_loaders_path_it_loads(built):
    site, llvm = built
    out = selfcheck(site, LD_LIBRARY_PATH=str(llvm))
    assert f"  {LLVM} (needed by libhip-compiler.so): found {llvm / LLVM} (LD_LIBRARY_PATH); loads\n" in out, out
    assert f"needs {LLVM}" not in out
