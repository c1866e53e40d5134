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
from toolkit.pipeline.options import BuildOptions
from toolkit.util.errors import ToolkitError


def _passed_empty(plan: str, define: str) -> bool:
    return f"define {define}=\n" in plan and (f" -D{define}= " in plan or plan.rstrip().endswith(f"-D{define}="))


def test_plain_configure_passes_the_kernel_defines_empty(tmp_path):
    plan = toolkit("build", "--build-dir", str(tmp_path), "--dry-run").stdout
    assert _passed_empty(plan, "AMDGPU_EP_HIP_SOURCES_DIR")   # the tree's own variable, on every configure
    # The toolkit's off values clear only what a configure left in the cache: none yet, so none passed
    # (CMake would warn that the sample never reads CMAKE_HIP_FLAGS or ROCM_PATH).
    for define in ("GPU_TARGETS", "CMAKE_HIP_FLAGS", "ROCM_PATH"):
        assert f"-D{define}=" not in plan, define
    cmake = tmp_path / "amdgpu-ep" / "release" / "cmake"
    cmake.mkdir(parents=True)
    (cmake / "CMakeCache.txt").write_text("GPU_TARGETS:STRING=gfx90a\nCMAKE_HIP_FLAGS:STRING=--rocm-path=/usr\n"
                                          "ROCM_PATH:PATH=\n")
    again = toolkit("build", "--build-dir", str(tmp_path), "--dry-run").stdout
    assert _passed_empty(again, "GPU_TARGETS") and _passed_empty(again, "CMAKE_HIP_FLAGS")
    assert "-DROCM_PATH=" not in again   # empty in the cache already: nothing to clear


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
    from toolkit.pipeline import stages
    from toolkit.pipeline.adapters.check import check_stage
    from toolkit.pipeline.build import prepared
    from toolkit.pipeline.produced import Produced

    root, work, kept, _ = after_gfx90a
    lib = work / "lib" / "libmigraphx-backend.so"
    good = lib.read_bytes()
    shutil.copy2(kept, lib)
    try:
        with prepared(BuildOptions(build_folder=root)) as b, pytest.raises(ToolkitError) as failed:
            # The stages up to configure, all up to date, hand the check the facts it compares with.
            produced = Produced()
            specs = stages.stages_of(b)
            upto = specs[: [s.name for s in specs].index("configure") + 1]
            stages.run_stages(b, [spec.make(b, produced) for spec in upto])
            check_stage(b, produced).run()
    finally:
        lib.write_bytes(good)
    message = str(failed.value)
    assert f"{lib} carries code objects for gfx90a, but the build facts record no GPU targets" in message
    assert "CMakeCache.txt" in message


def test_the_configure_record_is_the_command_that_ran_fresh_included(tmp_path):
    """The provenance's configure command is the one the stage ran: after a toolchain change the stage adds
    --fresh, and the record has it (rebuilding the command afterwards would lose it)."""
    from toolkit.pipeline.adapters.configure import configure_ran
    from toolkit.pipeline.build import prepared

    toolkit("build", "--build-dir", str(tmp_path), "--until", "configure")
    with prepared(BuildOptions(build_folder=tmp_path, dry_run=True)) as b:
        first = configure_ran(b)
        assert first is not None and first[1:3] == ["-S", str(b.workspace.source)] and "--fresh" not in first
        cache = b.workspace.cmake / "CMakeCache.txt"
        # A compiler of the toolkit's own wrappers in the cache, where this build wants the system's: a switch.
        text = cache.read_text()
        cache.write_text(text + f"CMAKE_CXX_COMPILER:FILEPATH={b.toolchain_dir}/zig/zig-clang++\n")
        toolkit("build", "--build-dir", str(tmp_path), "--until", "configure", "--force")
        again = configure_ran(b)
        # A work tree without the record (configured before it was kept) configures again on a plain build.
        b.workspace.configure_record.unlink()
        toolkit("build", "--build-dir", str(tmp_path), "--until", "configure")
        restored = configure_ran(b)
    assert again is not None and again[:2] == [first[0], "--fresh"] and again[2:4] == first[1:3]
    assert restored is not None and "--fresh" not in restored and restored[1:3] == first[1:3]
