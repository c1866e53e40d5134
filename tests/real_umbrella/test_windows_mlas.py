"""MLAS of AMD's tree for Windows (patch 0011): its GNU-assembler x64 kernels, called through sysv_abi declarations,
give the right answers in a Windows program under Wine. The sources and per-unit flags are the ones the patched
src/directx/CMakeLists.txt lists for a non-MSVC build, compiled by the mingw toolchain's clang; a kernel the list
leaves out fails the link, a declaration with the wrong convention fails the compile or the numbers.

MLAS is built in its own standalone mode (BUILD_MLAS_NO_ONNXRUNTIME, which MLAS keeps for building outside ORT):
the three 4-bit GEMM units include ORT's plugin utilities and fmt, so they are left out and their two dispatch
tables, which the program never reaches, are empty data."""

from __future__ import annotations

import re
import subprocess
import sys
import tarfile
from pathlib import Path

from tests.support.real_umbrella_support import MIRROR
from tests.support.tools import ROOT
from tests.support.windows_support import inside, windows_path
from toolkit.cmake.mingw import cxx_search_folders, runtime_search_command
from toolkit.cmake.toolchain import resolve

ARCHIVE = (MIRROR / "github.com/onnxruntime/onnxruntime-ep-amdgpu/archive"
           / "a2ea3b25f420c5eb8d25edc366fbc17d6de4fe22.tar.gz")
NEEDS_ORT = ("q4_dq.cpp", "q4gemm.cpp", "q4gemm_avx512.cpp", "q4_dq_cli.cpp")

PROGRAM = r"""
#include "mlas.h"
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

static int gemm(size_t M, size_t N, size_t K, bool transB) {
  std::mt19937 rng(unsigned(M * 131 + N * 7 + K));
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> A(M * K), B(K * N), C(M * N, 0.5f);
  for (auto& v : A) v = d(rng);
  for (auto& v : B) v = d(rng);
  MlasGemm(CblasNoTrans, transB ? CblasTrans : CblasNoTrans, M, N, K, 1.0f, A.data(), K, B.data(), transB ? K : N,
           0.0f, C.data(), N, nullptr);
  double worst = 0;
  for (size_t m = 0; m < M; ++m)
    for (size_t n = 0; n < N; ++n) {
      double s = 0;
      for (size_t k = 0; k < K; ++k) s += double(A[m * K + k]) * (transB ? B[n * K + k] : B[k * N + n]);
      worst = std::fmax(worst, std::fabs(s - C[m * N + n]));
    }
  std::printf("sgemm %zux%zux%zu%s %s\n", M, N, K, transB ? "T" : "", worst < 1e-4 ? "ok" : "WRONG");
  return worst < 1e-4;
}

template <typename F, typename R>
static int unary(const char* name, F mlas, R reference) {
  std::vector<float> x(37), y(37);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -3.f + 0.17f * float(i);
  mlas(x.data(), y.data(), x.size());
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::fmax(worst, std::fabs(y[i] - reference(x[i])));
  std::printf("%s %s\n", name, worst < 1e-5 ? "ok" : "WRONG");
  return worst < 1e-5;
}

int main() {
  gemm(1, 64, 33, false); gemm(1, 50, 40, true); gemm(17, 31, 45, false); gemm(64, 64, 64, true);
  unary("logistic", MlasComputeLogistic, [](float v) { return 1.f / (1.f + std::exp(-v)); });
  unary("tanh", MlasComputeTanh<float>, [](float v) { return std::tanh(v); });
  unary("erf", MlasComputeErf, [](float v) { return std::erf(v); });
  std::vector<float> x(37), y(37);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.1f * float(i);
  MlasComputeSoftmax<float>(x.data(), y.data(), 1, x.size(), false, false, 0.0f, nullptr);
  double sum = 0;
  for (float v : y) sum += v;
  std::printf("softmax %s\n", std::fabs(sum - 1) < 1e-4 && y[36] > y[0] ? "ok" : "WRONG");
  return 0;
}
"""

# The 4-bit GEMM dispatch tables platform.cpp names (their units are left out: see above).
EMPTY_TABLES = "".join(f".data\n.globl {name}\n{name}: .zero 256\n"
                       for name in ("MlasFpQ4GemmDispatchAvx512", "MlasQ8Q4GemmDispatchAvx512vnni"))


def patched_tree(tmp_path: Path) -> Path:
    with tarfile.open(ARCHIVE) as tar:
        tar.extractall(tmp_path / "src", filter="data")
    tree = next((tmp_path / "src").iterdir())
    applied = subprocess.run([sys.executable, "-m", "toolkit", "patch", "--recipe", "umbrella-ep-real", "--toolchain",
                              "mingw", "apply", str(tree)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    return tree


def mlas_units(cmake: str) -> tuple[list[str], list[str], dict[str, str]]:
    """C++ units, assembler units and per-unit flags of MLAS as the non-MSVC branch of the CMakeLists gives them."""
    cxx = sorted(set(re.findall(r"\$\{MLAS_SRC_DIR\}/([\w/]+\.cpp)", cmake)) - set(NEEDS_ORT))
    gnu = cmake.split("if(MSVC)\nenable_language(ASM_MASM)", 1)[1].split("else()", 1)[1].split("endif()", 1)[0]
    asm = re.findall(r"\$\{MLAS_SRC_DIR\}/(x86_64/\w+\.S)", gnu)
    arch_branch = cmake.split("# AVX/AVX2/AVX512 intrinsic files", 1)[1].split("else()", 1)[1].split("endif()", 1)[0]
    arch = dict(re.findall(r'set\((MLAS_ARCH_\w+) "([^"]+)"\)', arch_branch))
    flags: dict[str, str] = {}
    for files, value in re.findall(r"set_source_files_properties\(([^)]*?)PROPERTIES COMPILE_FLAGS\s+\"([^\"]+)\"",
                                   cmake):
        value = re.sub(r"\$\{(MLAS_ARCH_\w+)\}", lambda m: arch[m.group(1)], value)
        for unit in re.findall(r"\$\{MLAS_SRC_DIR\}/([\w/]+\.cpp)", files):
            flags[unit] = value
    return cxx, asm, flags


def test_mlas_gnu_assembler_kernels_compute_right_under_wine(windows_root: Path, tmp_path: Path) -> None:
    tree = patched_tree(tmp_path)
    directx = tree / "src" / "directx"
    lib = directx / "core" / "mlas" / "lib"
    cxx, asm, flags = mlas_units((directx / "CMakeLists.txt").read_text())
    assert len(asm) >= 30 and "x86_64/SgemmKernelAvx512F.S" in asm and "qgemm_kernel_amx.cpp" in flags, (asm, flags)
    pin = resolve("mingw").mingw
    assert pin is not None
    search = inside(windows_root, runtime_search_command(pin), [tmp_path])
    includes = [f"-isystem{folder}" for folder in cxx_search_folders(search.stderr)]
    out = tmp_path / "obj"
    out.mkdir()
    (tmp_path / "check.cc").write_text(PROGRAM)
    (tmp_path / "tables.s").write_text(EMPTY_TABLES)
    target = f"--target={pin.triplet}"
    cxx_cmd = [pin.program("CXX"), target, "-nostdinc++", *includes, *pin.compile_flags, "-O2", "-std=c++17",
               "-DBUILD_MLAS_NO_ONNXRUNTIME",
               # ORT's headers bring <cstring> to every unit; qgemm_kernel_amx.cpp relies on it.
               "-include", "cstring", f"-I{directx / 'core' / 'mlas' / 'inc'}", f"-I{lib}", f"-I{directx}"]
    lines = [[*cxx_cmd, *flags.get(unit, "").split(), "-c", str(lib / unit), "-o", str(out / f"{i}.o")]
             for i, unit in enumerate(cxx)]
    lines += [[pin.program("C"), target, "-c", str(lib / unit), "-o", str(out / f"s{i}.o")]
              for i, unit in enumerate(asm)]
    lines += [[*cxx_cmd, "-c", str(tmp_path / "check.cc"), "-o", str(out / "check.o")],
              [pin.program("C"), target, "-c", str(tmp_path / "tables.s"), "-o", str(out / "tables.o")]]
    script = tmp_path / "build.sh"  # two compiles at a time; the first failure stops it with its status
    pairs = [lines[i:i + 2] for i in range(0, len(lines), 2)]
    script.write_text("set -e\n" + "".join(
        "".join(f"{' '.join(cmd)} & p{j}=$!\n" for j, cmd in enumerate(pair))
        + "".join(f"wait $p{j}\n" for j in range(len(pair))) for pair in pairs))
    built = inside(windows_root, ["bash", str(script)], [tmp_path])
    assert built.returncode == 0, built.stderr[-4000:]
    exe = tmp_path / "mlas_check.exe"
    linked = inside(windows_root, [pin.program("CXX"), target, "-o", str(exe), *sorted(map(str, out.glob("*.o"))),
                                   *pin.link_flags], [tmp_path])
    assert linked.returncode == 0, linked.stderr[-4000:]
    ran = inside(windows_root, ["wine", windows_path(exe)], [tmp_path],
                 env={"WINEDEBUG": "-all", "WINEPREFIX": str(tmp_path / "prefix")}, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-4000:]
    assert ran.stdout.replace("\r", "").splitlines() == [
        "sgemm 1x64x33 ok", "sgemm 1x50x40T ok", "sgemm 17x31x45 ok", "sgemm 64x64x64T ok",
        "logistic ok", "tanh ok", "erf ok", "softmax ok"]
