"""Every define the toolkit manages is passed on every configure, and `check` holds the offload bundles to
the build facts: what CMake's cache kept from an earlier build cannot leak into the next one."""

import json
import shutil
from pathlib import Path

import pytest

from tests.support.tools import need, require_tool
from tests.support.tools import run_toolkit as toolkit
from toolkit.binary.offload_bundle import gpu_targets
from toolkit.cmake.commands import read_cache
from toolkit.engine.options import BuildOptions
from toolkit.util.errors import ToolkitError


def test_plain_configure_passes_the_kernel_defines_empty(tmp_path):
    plan = toolkit("build", "--build-dir", str(tmp_path), "--dry-run").stdout
    for define in ("GPU_TARGETS", "AMDGPU_EP_HIP_SOURCES_DIR", "CMAKE_HIP_FLAGS", "CMAKE_PREFIX_PATH"):
        assert f"define {define}=\n" in plan, define
        assert f" -D{define}= " in plan or plan.rstrip().endswith(f"-D{define}="), define


@pytest.fixture(scope="module")
def after_gfx90a(tmp_path_factory):
    """A --gpu-targets gfx90a build, then a plain one in the same work tree."""
    need("hipcc", "hipcc libamdhip64-dev rocm-device-libs")
    require_tool(Path("/usr/bin/clang++-15").is_file(), "clang++-15 is not installed (apt-get install -y hipcc)")
    root = tmp_path_factory.mktemp("b")
    work = root / "amdgpu-ep" / "release"
    toolkit("build", "--build-dir", str(root), "--gpu-targets", "gfx90a")
    kept = tmp_path_factory.mktemp("kept") / "libmigraphx-backend.so"
    shutil.copy2(work / "lib" / "libmigraphx-backend.so", kept)
    assert gpu_targets(kept) == ["gfx90a"]
    plain = toolkit("build", "--build-dir", str(root))
    return root, work, kept, plain


def test_plain_build_after_a_gpu_targets_build_compiles_no_kernels(after_gfx90a):
    root, work, _, plain = after_gfx90a
    assert "GPU kernels skipped: no --gpu-targets given" in plain.stderr
    assert gpu_targets(work / "lib" / "libmigraphx-backend.so") == []
    cache = read_cache(work / "cmake")
    assert cache["GPU_TARGETS"] == "" and cache["AMDGPU_EP_HIP_SOURCES_DIR"] == ""
    assert json.loads((work / "build-info.json").read_text())["gpu_targets"] == []


def test_check_fails_when_offload_bundles_disagree_with_the_facts(after_gfx90a):
    from toolkit.cmake.check_stage import check_stage
    from toolkit.engine.build import prepare

    root, work, kept, _ = after_gfx90a
    lib = work / "lib" / "libmigraphx-backend.so"
    good = lib.read_bytes()
    shutil.copy2(kept, lib)
    b = prepare(BuildOptions(build_root=root))
    try:
        with pytest.raises(ToolkitError) as failed:
            check_stage(b).run()
    finally:
        b.unlock()
        lib.write_bytes(good)
    message = str(failed.value)
    assert f"{lib} carries code objects for gfx90a, but the build facts record no GPU targets" in message
    assert "CMakeCache.txt" in message
