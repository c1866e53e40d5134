"""The CUDA corpus, hipified: compiles with Debian's hipcc for every AMD target it supports, and
matches the reviewed expected output where Debian lacks the library's headers."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.hipify_support import HIP_TARGETS, hip_env, require_hipcc
from tests.support.tools import DATA, ROOT
from toolkit.binary.offload_bundle import gpu_targets
from toolkit.hipify import hipify_tree
from toolkit.recipe.hipify import HipifySettings

CORPUS = DATA / "cuda_corpus"
EXPECTED = DATA / "cuda_corpus_expected"
SAMPLE_KERNEL = ROOT / "samples" / "umbrella-ep" / "kernels" / "cuda" / "batch_pad.cu"
COMPILED = [line.strip() for line in (CORPUS / "compile.txt").read_text().splitlines()
            if line.strip() and not line.startswith("#")]


@pytest.fixture(scope="module")
def hipified(tmp_path_factory):
    out = tmp_path_factory.mktemp("hipified")
    report = hipify_tree(HipifySettings(), CORPUS, out, jobs=1, progress=False)
    return out, report


@pytest.fixture(scope="module")
def hipified_ggl(tmp_path_factory):
    out = tmp_path_factory.mktemp("hipified_ggl")
    hipify_tree(HipifySettings(launch_syntax="hipLaunchKernelGGL"), CORPUS, out, jobs=1, progress=False)
    return out


def hipcc_compile(source: Path, obj: Path, targets=HIP_TARGETS) -> None:
    hipcc = require_hipcc()
    # -std=c++17: Debian's hipcc 5.2 defaults to an older standard than the sources (and CMake) use.
    cmd = [hipcc, "-std=c++17", "-x", "hip", *(f"--offload-arch={t}" for t in targets), "-c", str(source),
           "-o", str(obj)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=hip_env(), cwd=source.parent)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr[-4000:]}"


@pytest.mark.parametrize("name", COMPILED)
def test_hipified_corpus_compiles_for_all_targets(hipified, name, tmp_path):
    out, _ = hipified
    source = out / name
    obj = tmp_path / (name + ".o")
    hipcc_compile(source, obj)
    # Every file with a kernel carries a code object per target; host-only files carry none.
    has_kernels = "__global__" in source.read_text()
    assert gpu_targets(obj) == (sorted(HIP_TARGETS) if has_kernels else [])


@pytest.mark.parametrize("name", ["templates_launch.cu", "batch_pad.cu", "warp_reduce.cu"])
def test_hipLaunchKernelGGL_output_compiles(hipified_ggl, name, tmp_path):
    source = hipified_ggl / name
    assert "hipLaunchKernelGGL(" in source.read_text() and "<<<" not in source.read_text()
    hipcc_compile(source, tmp_path / "k.o", targets=("gfx90a",))


@pytest.mark.parametrize("name", sorted(p.name for p in EXPECTED.iterdir()))
def test_library_host_code_matches_expected(hipified, name, tmp_path):
    out, _ = hipified
    if ".hipdnn." in name:
        original = name.replace(".hipdnn.", ".")
        hipify_tree(HipifySettings(dnn="hipdnn"), CORPUS, tmp_path, jobs=1, progress=False)
        got = (tmp_path / original).read_text()
    else:
        got = (out / name).read_text()
    assert got == (EXPECTED / name).read_text()


def test_no_cuda_identifier_survives_in_compiled_files(hipified):
    out, report = hipified
    assert {u.file for u in report.unmapped} == {"unmapped_example.cu"}
    assert [(u.line, u.name) for u in report.unmapped] == [
        (3, "cooperative_groups/reduce.h"), (6, "cudaGraphInstantiateParams"),
        (7, "cudaGraphInstantiateWithParams"), (10, "CUDART_VERSION")]


def test_warp_size_warnings_point_at_the_lines(hipified):
    _, report = hipified
    got = {(w.file, w.line, w.kind) for w in report.warnings}
    assert {("warp_reduce.cu", 12, "lane-math"), ("warp_reduce.cu", 32, "lane-math"),
            ("warp_reduce.cuh", 5, "lane-mask"), ("warp_reduce.cuh", 10, "shfl-width"),
            ("warp_reduce.cu", 34, "lane-mask"), ("fp16_math.cu", 7, "cuda-arch")} <= got
    # An explicit width is not a width warning.
    assert ("warp_reduce.cuh", 18, "shfl-width") not in got


def test_sample_tree_kernel_converts_and_compiles(tmp_path):
    src = tmp_path / "src"
    (src / "cuda").mkdir(parents=True)
    (src / "cuda" / "batch_pad.cu").write_bytes(SAMPLE_KERNEL.read_bytes())
    settings = HipifySettings(strict=True, suffixes=((".cu", ".hip"),), renames=())
    report = hipify_tree(settings, src, tmp_path / "out", jobs=1, progress=False)
    assert report.outputs == {"cuda/batch_pad.cu": "cuda/batch_pad.hip"}
    hipcc_compile(tmp_path / "out" / "cuda" / "batch_pad.hip", tmp_path / "batch_pad.o")
    assert gpu_targets(tmp_path / "batch_pad.o") == sorted(HIP_TARGETS)
