"""Engine fixes found by compiling ORT 1.22.1's CUDA EP: each name the trial tripped on, and --strict's
rule that names the tree declares itself are the tree's (never reported), while every CUDA name left is."""

from __future__ import annotations

import textwrap
from pathlib import Path

from toolkit.hipify import hipify_tree
from toolkit.hipify.engine import convert_text
from toolkit.hipify.tables import load_tables
from toolkit.recipe.hipify import Exclude, HipifySettings, Rename, Substitution


def convert(src: str, **kw):
    settings = HipifySettings(**kw)
    return convert_text(textwrap.dedent(src), "f.cu", settings, load_tables(settings.options()))


def test_cublas_tf32_math_mode_maps_to_hipblas():
    r = convert("cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH); m = CUBLAS_TENSOR_OP_MATH;\n")
    assert r.text == "hipblasSetMathMode(h, HIPBLAS_TF32_TENSOR_OP_MATH); m = HIPBLAS_TENSOR_OP_MATH;\n"
    assert r.unmapped == []


def test_cuda_error_enum_tag_maps_to_hip_error_t():
    r = convert("inline const char* Name(cudaError e);\ncudaError_t x = cudaSuccess;\n")
    assert r.text == "inline const char* Name(hipError_t e);\nhipError_t x = hipSuccess;\n"
    assert r.unmapped == []


def test_cudart_float_constants_use_hip_spelling():
    r = convert("float a = CUDART_INF_F; double b = CUDART_NAN; __half c = CUDART_INF_FP16;\n")
    # HIP defines HIP_INF_F / HIP_NAN (hip_math_constants.h); only the half constants are HIPRT_*.
    assert r.text == "float a = HIP_INF_F; double b = HIP_NAN; __half c = HIPRT_INF_FP16;\n"
    assert "HIPRT_INF_F;" not in r.text


def test_float2bfloat16_rn_maps_to_hip_round_to_nearest():
    r = convert("__nv_bfloat16 v = __float2bfloat16_rn(x);\n")
    assert r.text == "__hip_bfloat16 v = __float2bfloat16(x);\n"
    assert r.unmapped == []


def test_cudnn_lrn_mode_maps_to_miopen_cross_channel():
    # Left unmapped, ORT's fix-up rules (CUDNN -> MIOPEN, MIOPEN_LRN_CROSS_CHANNEL -> miopenLRNCrossChannel)
    # made it miopenLRNCrossChannel_DIM1, which MIOpen does not have (lrn.cc failed to compile).
    r = convert("cudnnLRNCrossChannelForward(h, d, CUDNN_LRN_CROSS_CHANNEL_DIM1, a);\n", dnn="miopen")
    assert r.text == "miopenLRNForward(h, d, miopenLRNCrossChannel, a);\n"
    assert r.unmapped == []


def test_device_atomic_functions_header_maps_to_the_hip_runtime():
    r = convert('#include "device_atomic_functions.h"\n#include <sm_60_atomic_functions.h>\n')
    assert r.text == '#include "hip/hip_runtime.h"\n#include <hip/hip_runtime.h>\n'
    assert r.unmapped == []


def test_unknown_device_header_is_reported_not_left_silently():
    r = convert("#include <device_double_functions.h>\n#include <math_functions.h>\n")
    assert [(f.line, f.name) for f in r.unmapped] == [(1, "device_double_functions.h"), (2, "math_functions.h")]


def test_names_the_file_declares_are_not_reported():
    r = convert('''\
        cublasStatus_t cublasGemmHelper(cublasHandle_t h, int m);
        __device__ void cuWelfordOnlineSum(float v, float* mean) {}
        template <typename T> void run() { T cudaT = 0; auto* cublasLt = nullptr; }
        #define CUDA_CHECK_LAST() 0
        void f() { cublasGemmHelper(h, 1); cuWelfordOnlineSum(v, &m); CUDA_CHECK_LAST(); }
        ''')
    assert r.unmapped == [], r.unmapped
    assert {"cublasGemmHelper", "cuWelfordOnlineSum", "cudaT", "cublasLt", "CUDA_CHECK_LAST"} <= set(r.defines)
    assert "hipblasStatus_t cublasGemmHelper(hipblasHandle_t h, int m);" in r.text


def test_cuda_names_used_but_not_declared_are_still_reported():
    r = convert('''\
        int n = cudaMagicCount(x);
        if (a > 0) cudaSomethingNew(s);
        return __nv_cvt_halfraw_to_fp8(h, __NV_SATFINITE, __NV_E4M3);
        ''')
    assert [(f.line, f.name) for f in r.unmapped] == [
        (1, "cudaMagicCount"), (2, "cudaSomethingNew"), (3, "__nv_cvt_halfraw_to_fp8")]


def test_a_name_a_substitution_rewrites_is_not_reported():
    subs = (Substitution("CUDA_LONG", "HIP_LONG"),)
    r = convert("CUDA_LONG id = CUDA_KERNEL_ID; cudaOther(x);\n", substitutions=subs)
    assert r.text.startswith("HIP_LONG id")
    assert [f.name for f in r.unmapped] == ["CUDA_KERNEL_ID", "cudaOther"]


def test_strict_tree_ignores_helpers_defined_in_another_file(tmp_path: Path):
    src = tmp_path / "src"
    (src / "cuda").mkdir(parents=True)
    (src / "cuda/helpers.h").write_text("cublasStatus_t cublasFooHelper(cublasHandle_t h);\n")
    (src / "cuda/use.cu").write_text('#include "cuda/helpers.h"\nvoid g() { cublasFooHelper(h); cudaNotReal(); }\n')
    settings = HipifySettings(include=("**/*.cu", "**/*.h"), renames=(Rename("cuda", "rocm"),))
    report = hipify_tree(settings, src, tmp_path / "out", jobs=1, progress=False)
    assert [(u.file, u.line, u.name) for u in report.unmapped] == [("cuda/use.cu", 2, "cudaNotReal")]
    assert (tmp_path / "out/rocm/use.cu").read_text().startswith('#include "rocm/helpers.h"')


def test_overlay_files_take_the_place_of_converted_ones(tmp_path: Path):
    src = tmp_path / "src"
    (src / "cuda").mkdir(parents=True)
    (src / "rocm").mkdir()
    (src / "cuda/a.cu").write_text("cudaMalloc(&p, 4);\n")
    (src / "cuda/b.cu").write_text("cudaFree(p);\n")
    (src / "rocm/b.cu").write_text("// hand-written\nhipFree(p); cudaLeftInHandWritten();\n")
    settings = HipifySettings(include=("cuda/**",), overlay=("rocm/**",), renames=(Rename("cuda", "rocm"),),
                              exclude=(Exclude("cuda/nothing", "none"),))
    report = hipify_tree(settings, src, tmp_path / "out", jobs=1, progress=False)
    assert (tmp_path / "out/rocm/a.cu").read_text() == "hipMalloc(&p, 4);\n"
    assert (tmp_path / "out/rocm/b.cu").read_text() == "// hand-written\nhipFree(p); cudaLeftInHandWritten();\n"
    assert ("cuda/b.cu", "the hand-written rocm/b.cu takes its place (overlay)") in report.excluded
    assert report.unmapped == []
