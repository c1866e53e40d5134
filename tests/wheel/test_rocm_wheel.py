"""inspect on a real AMD wheel nobody here built: onnxruntime-rocm 1.22.2.post3 from PyPI (57 MB)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tools import require_tool
from toolkit.util.cachedir import default_cache_dir
from toolkit.wheel.inspection import inspect_wheel

# pip downloads it from PyPI on a cold cache.
pytestmark = pytest.mark.network

ROCM_WHEEL = "onnxruntime-rocm==1.22.2.post3"


def cache() -> Path:
    """Downloaded once into a cache that outlives the test session: the toolkit's cache folder
    (TOOLKIT_CACHE_DIR or the user cache dir), or TOOLKIT_TEST_CACHE."""
    return Path(os.environ.get("TOOLKIT_TEST_CACHE") or default_cache_dir() / "test-wheels")


@pytest.fixture(scope="module")
def rocm_wheel() -> Path:
    folder = cache() / "onnxruntime-rocm"
    found = sorted(folder.glob("onnxruntime_rocm-1.22.2.post3-*.whl"))
    if not found:
        # Pinned to one build (cp311, manylinux_2_34) so the test reads the same bytes on any Python.
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version", "3.11",
               "--platform", "manylinux_2_34_x86_64", "-d", str(folder), ROCM_WHEEL]
        done = subprocess.run(cmd, capture_output=True, text=True)
        require_tool(done.returncode == 0, f"cannot download {ROCM_WHEEL} from PyPI: {done.stderr.strip()[-300:]}")
        found = sorted(folder.glob("onnxruntime_rocm-1.22.2.post3-*.whl"))
    return found[0]


def test_inspect_lists_rocm_needs_and_gpu_targets(rocm_wheel):
    report = inspect_wheel(rocm_wheel)
    assert report.distribution == "onnxruntime-rocm" and report.version == "1.22.2.post3"
    assert report.tags == ("cp311-cp311-manylinux_2_34_x86_64",)
    rocm = report.needed("rocm")
    for name in ("libamdhip64.so.7", "libMIOpen.so.1", "libhipblas.so.3", "libhipfft.so.0", "librocm_smi64.so.1",
                 "libroctracer64.so.4"):
        assert name in rocm, rocm
    assert not [n for n in rocm
                if n.startswith("libamdhip64") and any(lib.path.endswith(n) for lib in report.libraries)]
    assert report.needed("other") == ()
    assert set(report.needed("system")) >= {"libc.so.6", "libstdc++.so.6"}
    for target in ("gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100", "gfx1201"):
        assert target in report.gpu_targets
    provider = next(lib for lib in report.libraries if lib.path == "onnxruntime/capi/libonnxruntime_providers_rocm.so")
    assert provider.runpath == ("/opt/rocm/lib", "/opt/rocm-7.2.4/lib", "")
    assert provider.offload_bundles > 50
    # Not a plugin EP: ORT 1.22's ROCm EP is a provider bridge library, so no plugin entry points.
    assert report.ep_libraries == ()
    assert (report.python_entry_points["console_scripts"]["onnxruntime_test"]
            == "onnxruntime.tools.onnxruntime_test:main")


def test_cli_text_report(rocm_wheel):
    done = subprocess.run([sys.executable, "-m", "toolkit", "inspect", str(rocm_wheel)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert ("    rocm: libMIOpen.so.1, libamdhip64.so.7, libhipblas.so.3, libhipfft.so.0, librocm_smi64.so.1, "
            "libroctracer64.so.4" in done.stdout)
    assert "  GPU targets: gfx90a, gfx908, gfx942, gfx1030, gfx1100, gfx1101, gfx1200, gfx1201" in done.stdout
