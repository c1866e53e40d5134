"""The umbrella's self-check loads the hip EP its hip backend finds at run time (libhipgpu.so, in the
onnxruntime-ep-hip package folder beside its own) and carries over that library's own verdict: a test build
(mock) that would run no model, a library missing, symbol versions this machine lacks. It used to say "found ...
(RUNPATH)" of a library it never loaded, so a machine with a GPU could be called ready with a hip backend that is
broken or computes nothing. Real wheels built here from stand-in libraries, unpacked side by side into one folder
as pip installs them; the shipped self-check run for real."""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.tools import ROOT
from tests.support.wheel_support import build_c_library, needs_newer_c_runtime, shared_library
from toolkit.recipe.load import load_recipe
from toolkit.recipe.wheel import Component, WheelSettings
from toolkit.wheel.build import build_wheel

# The hip backend as recipes/umbrella-ep-real.toml packages it in its -hipdnn wheels: its RUNPATH and what it dlopens.
_REAL = load_recipe(ROOT / "recipes" / "umbrella-ep-real.toml").wheel
assert _REAL is not None
HIP_BACKEND = next(c for c in _REAL.components if c.library == "hip-backend")
UMBRELLA = WheelSettings(
    version="0.3.0",
    components=(Component("amdgpu-ep", "AMDGPUExecutionProvider", runpath=("$ORIGIN",)),
                Component("hip-backend", runtime="AMD's libhipgpu.so", dlopens=HIP_BACKEND.dlopens,
                          runpath=HIP_BACKEND.runpath)),
    distribution="onnxruntime-ep-amdgpu")
FACTS = {"source_revision": "x", "features": []}
FOUND = "  libhipgpu.so (loaded at run time by libhip-backend.so): found {path} (RUNPATH); "


def hip_ep_wheel(work: Path, mock: bool, newer: bool = False) -> Path:
    """onnxruntime-ep-hip as recipes/hip-ep.toml makes it, from stand-in libraries."""
    settings = load_recipe(ROOT / "recipes" / "hip-ep.toml").wheel
    assert settings is not None
    for c in settings.components_for(frozenset({"mock"} if mock else ())):
        if c.library == "hipgpu" and newer:
            needs_newer_c_runtime(work / "lib" / c.filename)
        else:
            build_c_library(work / "lib" / c.filename)
    return build_wheel(settings, work / "lib", {"source_revision": "y", "features": {"mock": mock}}, work / "dist")


@pytest.fixture(scope="module")
def umbrella(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("umbrella")
    for c in UMBRELLA.components:
        build_c_library(work / "lib" / c.filename)
    return build_wheel(UMBRELLA, work / "lib", FACTS, work / "dist")


def installed(umbrella: Path, site: Path, *others: Path) -> Path:
    for wheel in (umbrella, *others):
        zipfile.ZipFile(wheel).extractall(site)
    return site


def selfcheck(site: Path) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    return subprocess.run([sys.executable, "-m", "onnxruntime_ep_amdgpu"], capture_output=True, text=True,
                          env={**clean, "PYTHONPATH": str(site)}, cwd=site, timeout=300)


def test_a_mock_hip_ep_found_beside_it_is_a_test_build_and_the_umbrella_is_not_ready(umbrella, tmp_path):
    site = installed(umbrella, tmp_path / "site", hip_ep_wheel(tmp_path / "hip", mock=True))
    done = selfcheck(site)
    path = site / "onnxruntime_ep_hip" / "libhipgpu.so"
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("  libhipgpu.so (loaded at run time"))
    assert line.startswith(FOUND.format(path=path) + "loads; from onnxruntime-ep-hip ") and \
        "(TEST BUILD: mock: " in line, line
    verdict = done.stdout.splitlines()[-1]
    assert re.fullmatch(rf"not ready: libhipgpu\.so at {re.escape(str(path))} \(loaded by libhip-backend\.so at run "
                        r"time\) is a test build of onnxruntime-ep-hip \S+ \(feature mock: .+\): libhip-backend\.so "
                        r"would load it, and it runs no model\. What to do: uninstall onnxruntime-ep-hip and "
                        r"install .+", verdict), verdict


def test_a_hip_ep_that_does_not_load_here_says_what_it_lacks(umbrella, tmp_path):
    site = installed(umbrella, tmp_path / "site")
    gone = shared_library(tmp_path / "gone", "libgone.so.1").parent
    path = build_c_library(site / "onnxruntime_ep_hip" / "libhipgpu.so", libs=[f"-L{gone}", "-l:libgone.so.1"])
    out = selfcheck(site).stdout
    assert FOUND.format(path=path) + "does not load: libgone.so.1: cannot open shared object file" in out, out
    assert (f"  - libhipgpu.so at {path} (loaded by libhip-backend.so at run time) does not load here: libgone.so.1: "
            "cannot open shared object file") in out, out
    # It costs the hip backend only: the umbrella routes to its other backends.
    assert "(optional): the loader's error names what it lacks; libhipgpu.so comes from the HIP EP" in out, out


def test_a_hip_ep_built_for_a_newer_system_carries_its_own_needs(umbrella, tmp_path):
    site = installed(umbrella, tmp_path / "site", hip_ep_wheel(tmp_path / "hip", mock=False, newer=True))
    out = selfcheck(site).stdout
    path = site / "onnxruntime_ep_hip" / "libhipgpu.so"
    assert FOUND.format(path=path) + "does not load: " in out and "version `GLIBC" in out, out
    assert (f"  - libhipgpu.so at {path} (loaded by libhip-backend.so at run time) cannot run here: "
            "onnxruntime-ep-hip ") in out, out
    assert (f" needs glibc >= 2.99 and the libstdc++ it was built with (GLIBCXX_3.4.99 or newer); this machine has "
            f"glibc {platform.libc_ver()[1]} and libstdc++ up to GLIBCXX_") in out, out
