"""The built-in engine on small sources: tokens, headers, launches, warp intrinsics, reports."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from toolkit.hipify.engine import convert_text
from toolkit.hipify.tables import TABLES_DIR, load_tables
from toolkit.recipe.hipify import HipifySettings, Rename, Substitution, glob_match
from toolkit.util.errors import RecipeError, ToolkitError
from toolkit.util.tomlclass import read
from toolkit.util.tomlread import Table


def convert(src: str, **kw):
    settings = HipifySettings(**kw)
    return convert_text(textwrap.dedent(src), "f.cu", settings, load_tables(settings.options()))


def test_identifiers_are_replaced_whole_and_only_in_code():
    r = convert('''\
        // cudaMalloc in a comment
        /* cudaFree(p) */
        const char* s = "cudaMalloc failed"; const char* raw = R"x(cudaFree)x"; char c = 'c';
        void* mycudaMalloc = 0; total += cudaMallocCount;
        cudaMalloc(&p, 4); cudaStreamSynchronize(s);
        ''')
    lines = r.text.splitlines()
    assert lines[0] == "// cudaMalloc in a comment"
    assert lines[1] == "/* cudaFree(p) */"
    assert '"cudaMalloc failed"' in lines[2] and 'R"x(cudaFree)x"' in lines[2]
    assert lines[3] == "void* mycudaMalloc = 0; total += cudaMallocCount;"
    assert lines[4] == "hipMalloc(&p, 4); hipStreamSynchronize(s);"
    # cudaMallocCount looks like CUDA, no table knows it and the file does not declare it: reported.
    assert [(f.line, f.name) for f in r.unmapped] == [(4, "cudaMallocCount")]


def test_headers_are_renamed_and_unknown_cuda_headers_reported():
    r = convert('''\
        #include <cuda_runtime.h>
        #  include "cuda_fp16.h"
        #include <cub/warp/warp_reduce.cuh>
        #include <thrust/system/cuda/vector.h>
        #include <cusolverDn.h>
        #include "kernels/cuda/common.cuh"
        #include <vector>
        ''', renames=(Rename("cuda", "rocm"),), suffixes=((".cuh", ".hip.h"),))
    assert r.text.splitlines() == [
        "#include <hip/hip_runtime.h>",
        '#  include "hip/hip_fp16.h"',
        "#include <hipcub/warp/warp_reduce.hpp>",
        "#include <thrust/system/hip/vector.h>",
        "#include <cusolverDn.h>",
        '#include "kernels/rocm/common.hip.h"',
        "#include <vector>",
    ]
    assert [(f.line, f.name) for f in r.unmapped] == [(5, "cusolverDn.h")]


def test_cuda_arch_comparisons_become_device_pass_checks():
    r = convert('''\
        #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        #elif __CUDA_ARCH__ < 530
        #endif
        #ifdef __CUDACC__
        #endif
        int x = __CUDA_ARCH__ >= 700;
        ''')
    lines = r.text.splitlines()
    assert lines[0] == "#if defined(__HIP_DEVICE_COMPILE__) && defined(__HIP_DEVICE_COMPILE__)"
    assert lines[1] == "#elif !defined(__HIP_DEVICE_COMPILE__)"
    assert lines[3] == "#ifdef __HIPCC__"
    # Outside #if lines only the name changes: `defined` is not valid there.
    assert lines[5] == "int x = __HIP_DEVICE_COMPILE__ >= 700;"
    assert [(w.line, w.kind) for w in r.warnings] == [(1, "cuda-arch"), (2, "cuda-arch")]


def test_launches_to_hipLaunchKernelGGL():
    src = '''\
        k<<<grid, block>>>(a, b);
        ns::k2<float, 4><<<dim3(n / 256, 1), 256, smem, stream>>>(f(a, b), "x,)");
        k3<<<1, 1, 0>>>();
        '''
    kept = convert(src)
    assert kept.text == textwrap.dedent(src)
    r = convert(src, launch_syntax="hipLaunchKernelGGL")
    assert r.text.splitlines() == [
        "hipLaunchKernelGGL(k, dim3(grid), dim3(block), 0, 0, a, b);",
        'hipLaunchKernelGGL((ns::k2<float, 4>), dim3(dim3(n / 256, 1)), dim3(256), smem, stream, f(a, b), "x,)");',
        "hipLaunchKernelGGL(k3, dim3(1), dim3(1), 0, 0);",
    ]
    assert r.unmapped == []


def test_warp_intrinsics_drop_the_mask_and_warn():
    r = convert('''\
        v += __shfl_down_sync(0xffffffff, v, offset);
        v = __shfl_xor_sync(mask, v, 1, 16);
        unsigned a = __activemask(); __syncwarp(a);
        int lane = threadIdx.x & 31;
        int other = x & 31;
        ''')
    assert r.text.splitlines() == [
        "v += __shfl_down(v, offset);",
        "v = __shfl_xor(v, 1, 16);",
        "unsigned a = __ballot(1); __builtin_amdgcn_wave_barrier();",
        "int lane = threadIdx.x & 31;",
        "int other = x & 31;",
    ]
    kinds = [(w.line, w.kind) for w in r.warnings]
    assert kinds == [(1, "lane-mask"), (1, "shfl-width"), (2, "lane-mask"), (4, "lane-math")]
    assert "'0xffffffff'" in r.warnings[0].message


def test_namespaces_and_qualified_names():
    r = convert('''\
        cub::BlockReduce<float, 128> r; using namespace cub;
        thrust::sort(thrust::cuda::par.on(s), b, e);
        int cub = 3;
        namespace cuda { int f(); }
        ''')
    assert r.text.splitlines() == [
        "hipcub::BlockReduce<float, 128> r; using namespace hipcub;",
        "thrust::sort(thrust::hip::par.on(s), b, e);",
        "int cub = 3;",
        "namespace cuda { int f(); }",
    ]


def test_project_defined_names_are_not_reported():
    r = convert('''\
        #define CUDA_CHECK(x) x
        struct cudaHelperState { int a; };
        using cudaAlias = int;
        CUDA_CHECK(cudaNotARealCall());
        ''')
    assert [f.name for f in r.unmapped] == ["cudaNotARealCall"]
    assert {"CUDA_CHECK", "cudaHelperState", "cudaAlias"} <= set(r.defines)


def test_dnn_choice_picks_the_table():
    src = "cudnnHandle_t h; cudnnCreate(&h); CUDNN_STATUS_SUCCESS;\n"
    assert convert(src).text == "miopenHandle_t h; miopenCreate(&h); miopenStatusSuccess;\n"
    assert convert(src, dnn="hipdnn").text == "hipdnnHandle_t h; hipdnnCreate(&h); HIPDNN_STATUS_SUCCESS;\n"


def test_substitutions_run_after_conversion_in_order():
    subs = (Substitution("kCudaExecutionProvider", "kRocmExecutionProvider"),
            Substitution(r"GPU_WARP_SIZE = 32\b", "GPU_WARP_SIZE = 64", regex=True),
            Substitution("hipMalloc", "hipMallocManaged", glob="other/**"))
    r = convert('''\
        auto ep = kCudaExecutionProvider; // kCudaExecutionProvider too
        constexpr int GPU_WARP_SIZE = 32;
        cudaMalloc(&p, 4);
        ''', substitutions=subs)
    assert r.text.splitlines() == [
        "auto ep = kRocmExecutionProvider; // kRocmExecutionProvider too",
        "constexpr int GPU_WARP_SIZE = 64;",
        "hipMalloc(&p, 4);",
    ]


def test_tables_duplicate_and_prefix_errors_name_the_file(tmp_path):
    for path in TABLES_DIR.glob("_detect.json"):
        shutil.copy(path, tmp_path)
    (tmp_path / "a.json").write_text(json.dumps({"identifiers": {"cudaFoo": "hipFoo"}}))
    (tmp_path / "b.json").write_text(json.dumps({"same": ["cudaFoo"]}))
    with pytest.raises(ToolkitError, match=r"b\.json: key 'same': 'cudaFoo' is already mapped by a\.json"):
        load_tables({}, tmp_path)
    (tmp_path / "b.json").write_text(json.dumps({"prefix_renames": [{"from": "cu", "to": "hip", "names": ["nvFoo"]}]}))
    with pytest.raises(ToolkitError, match=r"b\.json: key 'prefix_renames\[0\]': 'nvFoo' does not start with 'cu'"):
        load_tables({}, tmp_path)
    (tmp_path / "b.json").write_text(json.dumps({"identifers": {}}))
    with pytest.raises(ToolkitError, match=r"b\.json: key 'identifers': unknown key"):
        load_tables({}, tmp_path)


def test_every_table_loads_under_every_dnn_choice():
    for dnn in ("miopen", "hipdnn"):
        tables = load_tables({"dnn": dnn})
        assert tables.identifiers["cudaMalloc"] == "hipMalloc"
        assert tables.map_header("cudnn.h") == ("miopen/miopen.h" if dnn == "miopen" else "hipdnn/hipdnn.h")


def _table(tmp_path: Path, text: str) -> Table:
    from toolkit.util.tomlread import load_toml

    path = tmp_path / "recipe.toml"
    path.write_text(textwrap.dedent(text))
    return load_toml(path).table("hipify")


def test_settings_read_from_a_table(tmp_path):
    s = read(HipifySettings, _table(tmp_path, '''\
        [hipify]
        launch_syntax = "hipLaunchKernelGGL"
        dnn = "hipdnn"
        strict = true
        include = ["**/*.cu"]
        suffixes = { ".cu" = ".hip" }
        [[hipify.rename]]
        from = "cuda"
        to = "rocm"
        [[hipify.exclude]]
        glob = "**/cudnn_*"
        reason = "cuDNN frontend graphs have no MIOpen equivalent"
        [[hipify.substitute]]
        from = "GPU_WARP_SIZE = 32"
        to = "GPU_WARP_SIZE = 64"
        '''))
    assert (s.launch_syntax, s.dnn, s.strict) == ("hipLaunchKernelGGL", "hipdnn", True)
    assert s.rename_path("core/cuda/cuda_ops.cu") == "core/rocm/rocm_ops.hip"
    assert s.excluded("a/cudnn_conv.cu").reason.startswith("cuDNN frontend")
    assert s.included("x/y.cu") and not s.included("x/y.h")


@pytest.mark.parametrize("body, message", [
    ('engine = "clang"', r"key 'hipify\.engine': expected one of 'builtin', 'hipify-perl', got 'clang'"),
    ('[[hipify.exclude]]\nglob = "a"\nreason = " "', r"key 'hipify\.exclude\[0\]\.reason': must say why"),
    ('[[hipify.exclude]]\nglob = "a"', r"key 'hipify\.exclude\[0\]\.reason': required"),
    ('[[hipify.substitute]]\nfrom = "("\nto = "x"\nregex = true',
     r"key 'hipify\.substitute\[0\]\.from': not a valid regular"),
    ('launch = "chevron"', r"key 'hipify\.launch': unknown key"),
])
def test_settings_errors_name_the_key(tmp_path, body, message):
    with pytest.raises(RecipeError, match=message):
        read(HipifySettings, _table(tmp_path, "[hipify]\n" + body + "\n"))


def test_glob_match():
    assert glob_match("**/*.cu", "a.cu") and glob_match("**/*.cu", "a/b/c.cu")
    assert not glob_match("*.cu", "a/b.cu")
    assert glob_match("contrib/**", "contrib/x/y.h") and not glob_match("contrib/**", "core/contrib/y.h")
