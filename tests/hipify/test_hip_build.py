"""The hipify stage in the build: the sample's CUDA kernels become HIP and compile for the requested targets."""

from pathlib import Path

import pytest

from tests.support.tools import need, require_tool
from tests.support.tools import run_toolkit as toolkit
from toolkit.binary.elf import read_elf
from toolkit.binary.offload_bundle import gpu_targets


@pytest.fixture(scope="module")
def hip_available():
    need("hipcc", "hipcc libamdhip64-dev rocm-device-libs")
    require_tool(Path("/usr/bin/clang++-15").is_file(), "clang++-15 is not installed (apt-get install -y hipcc)")


def test_kernels_compile_for_each_requested_target(hip_available, tmp_path):
    proc = toolkit("build", "--build-dir", str(tmp_path), "--gpu-targets", "gfx90a,gfx1030")
    work = tmp_path / "amdgpu-ep" / "release"
    assert (work / "hipified" / "kernels" / "hip" / "batch_pad.hip").is_file()
    assert "cuda" not in (work / "hipified" / "kernels" / "hip" / "batch_pad.hip").read_text().replace(
        "CUDA", "").lower().split("//")[0]
    backend = work / "lib" / "libmigraphx-backend.so"
    assert gpu_targets(backend) == ["gfx1030", "gfx90a"]
    facts = read_elf(backend)
    assert "libamdhip64.so.5" in facts.needed
    assert not facts.runpath and not facts.rpath  # the build machine's /usr/lib does not ship
    assert list(facts.defined) == ["CreateEpFactories", "ReleaseEpFactory"]
    assert gpu_targets(work / "lib" / "libamdgpu-ep.so") == []
    assert "code objects for gfx1030, gfx90a" in proc.stderr

    # A rerun converts nothing and keeps the hipified file's mtime.
    hip = work / "hipified" / "kernels" / "hip" / "batch_pad.hip"
    mtime = hip.stat().st_mtime_ns
    again = toolkit("build", "--build-dir", str(tmp_path), "--gpu-targets", "gfx90a,gfx1030", "--force")
    assert "0 converted" in again.stderr
    assert hip.stat().st_mtime_ns == mtime


def test_without_targets_the_build_says_it_skips_the_kernels(tmp_path):
    proc = toolkit("build", "--build-dir", str(tmp_path))
    assert "GPU kernels skipped: no --gpu-targets given" in proc.stderr
    assert gpu_targets(tmp_path / "amdgpu-ep" / "release" / "lib" / "libmigraphx-backend.so") == []
