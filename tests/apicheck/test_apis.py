"""The system API check: the names a tree's units use of a library, looked up in that library's headers as the
compile will find them (compile_commands.json from a real CMake configure). A stand-in MIGraphX header folder
is made here (its version macros, a token-pasted enum, no compile modes), so the test knows what is there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.tools import ROOT, need
from toolkit.apicheck import apis, compiledb, cxxscan

HEADER = """#pragma once
#define MIGRAPHX_VERSION_MAJOR 2
#define MIGRAPHX_VERSION_MINOR 14
#define MIGRAPHX_VERSION_PATCH 0
#define MIGRAPHX_SHAPE_VISIT_TYPES(m) m(float_type, float) m(half_type, half)
#define MIGRAPHX_SHAPE_GENERATE_ENUM_TYPES(x, t) migraphx_shape_##x,
typedef enum { MIGRAPHX_SHAPE_VISIT_TYPES(MIGRAPHX_SHAPE_GENERATE_ENUM_TYPES) } migraphx_shape_datatype_t;
int migraphx_program_compile(int);
namespace migraphx { struct compile_options { void set_fast_math(bool); }; }
"""
UNIT = r"""#include <migraphx/migraphx.h>
#include "local.h"
// migraphx_in_a_comment is not a use
static const char* key = "migraphx_fp16_enable";
int run(migraphx::compile_options& options)
{
    migraphx_shape_datatype_t t = migraphx_shape_float_type;
    int migraphx_own_counter = 0;
    options.set_fast_math(true);
#ifdef HAS_NEW_API
    options.set_compile_mode(1);
#endif
#ifdef _WIN32
    migraphx_windows_only();
#else
    migraphx_own_counter += migraphx_program_compile(migraphx_own_counter);
#endif
    return migraphx_own_counter + LOCAL_MODE + (int)t + (key != nullptr);
}
"""
LOCAL = "#pragma once\n#define LOCAL_MODE migraphx_compile_mode_eager\n"
CMAKE = """cmake_minimum_required(VERSION 3.20)
project(t CXX)
include(CheckCXXSourceCompiles)
check_cxx_source_compiles([[int main() { return NEW_API_PROBE; }]] HAS_NEW_API)
add_library(t MODULE unit.cc)
target_include_directories(t PRIVATE ${T_SYSTEM})
install(TARGETS t LIBRARY DESTINATION lib)
"""


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    system = tmp_path / "system"
    (system / "migraphx").mkdir(parents=True)
    (system / "migraphx" / "migraphx.h").write_text(HEADER)
    (system / "migraphx" / "version.h").write_text(HEADER)
    tree = tmp_path / "tree"
    tree.mkdir()
    for name, text in {"CMakeLists.txt": CMAKE, "unit.cc": UNIT, "local.h": LOCAL}.items():
        (tree / name).write_text(text)
    return system, tree


def test_code_lines_blank_literals_skip_other_platforms_and_mark_probe_guards():
    lines = cxxscan.code_lines(UNIT, {"HAS_NEW_API"}, {"_WIN32"})
    text = "\n".join(line.text for line in lines)
    assert "migraphx_in_a_comment" not in text and "migraphx_fp16_enable" not in text
    assert "migraphx_windows_only" not in text and "migraphx_program_compile(" in text
    guarded = [line for line in lines if line.guard]
    assert [(g.number, g.guard) for g in guarded] == [(11, "HAS_NEW_API")]
    assert "migraphx_own_counter" in cxxscan.declared_names(text)
    assert cxxscan.probe_macros([CMAKE]) == {"HAS_NEW_API"}


def test_missing_and_guarded_names_from_a_real_configure(tmp_path):
    need("c++", "g++")
    system, tree = _tree(tmp_path)
    binary = tmp_path / "b"
    subprocess.run(["cmake", "-S", str(tree), "-B", str(binary), "-G", "Ninja", f"-DT_SYSTEM={system}",
                    "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"], check=True, capture_output=True)
    files = compiledb.read(binary, tree)
    assert [p.name for p in files.paths] == ["unit.cc", "local.h"]
    result = apis.check(files, ["migraphx"], [CMAKE])
    facts = result.libraries["migraphx"]
    assert (facts.headers, facts.version) == (system / "migraphx", "2.14.0")
    assert [(m.api, m.where, m.has_it) for m in result.missing] == [
        ("migraphx_compile_mode_eager", "local.h:2",
         "a MIGraphX newer than 7.1.1 (compile modes; MIGraphX's develop branch, after ROCm 7.1)")]
    assert [(m.api, m.guard) for m in result.guarded] == [("set_compile_mode", "HAS_NEW_API")]
    assert result.problems() == [
        f"MIGraphX API `migraphx_compile_mode_eager` (local.h:2) is not in the headers of MIGraphX 2.14.0 "
        f"({system / 'migraphx'}); a MIGraphX newer than 7.1.1 (compile modes; MIGraphX's develop branch, after "
        f"ROCm 7.1) has it"]


RECIPE = """[recipe]
name = "t"

[build]
defines = {{ T_SYSTEM = "{system}" }}

[[outputs]]
library = "t"

[api_check]
libraries = ["migraphx"]
"""


def test_a_build_stops_before_the_compile_naming_the_api_and_the_release_with_it(tmp_path):
    need("c++", "g++")
    system, tree = _tree(tmp_path)
    recipe = tmp_path / "t.toml"
    recipe.write_text(RECIPE.format(system=system))
    proc = subprocess.run([sys.executable, "-m", "toolkit", "build", "--recipe", str(recipe), "--source", str(tree),
                           "--build-dir", str(tmp_path / "build")], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 2
    assert "stages: source -> configure -> api-check -> build -> check" in proc.stderr
    assert f"the source tree local path {tree} calls APIs the system's libraries lack" in proc.stderr
    assert ("MIGraphX API `migraphx_compile_mode_eager` (local.h:2) is not in the headers of MIGraphX 2.14.0"
            in proc.stderr)
    assert "a MIGraphX newer than 7.1.1 (compile modes" in proc.stderr
    assert "guarded by HAS_NEW_API: MIGraphX API `set_compile_mode`" in proc.stderr
    assert not list((tmp_path / "build").rglob("*.o")), "nothing may compile before the check"


ORT_HEADER = """#pragma once
#define ORT_API_VERSION 22
typedef struct OrtStatus OrtStatus;
struct OrtApi { OrtStatus*(*CreateStatus)(int code, const char* msg); void(*ReleaseStatus)(OrtStatus*); };
struct OrtEpApi { OrtStatus*(*CreateEpDevice)(void*); };
"""
ORT_UNIT = """#include <onnxruntime/onnxruntime_c_api.h>
struct Holder { const OrtApi& ort_api; const OrtEpApi* ep_api_; };
struct Other { int Helper(); };
OrtStatus* run(Holder& h, const OrtApi* api, Other thing)
{
    OrtStatus* s = h.ort_api.CreateStatus(1, "x");
    h.ort_api.ReleaseStatus(s);
    h.ep_api_->CreateEpDevice(nullptr);
    h.ep_api_->EpDevice_AddAllocatorInfo(nullptr);
    thing.Helper();
    s = api->CreateMemoryInfo_V2(nullptr);
    return Ort::GetApi().GetTensorSizeInBytes(s) + thing.Helper();
}
"""


def test_calls_through_the_function_tables_are_checked_member_by_member(tmp_path):
    """ORT's C API is tables of function pointers: `ort_api.Name(`, `ep_api_->Name(` through variables of the
    table types, and `Ort::GetApi().Name(`, use `Name`; the ones the headers' tables lack are missing, calls on
    other objects are not ORT's."""
    system = tmp_path / "system"
    (system / "onnxruntime").mkdir(parents=True)
    (system / "onnxruntime" / "onnxruntime_c_api.h").write_text(ORT_HEADER)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "unit.cc").write_text(ORT_UNIT)
    files = compiledb.TreeFiles(tree, [tree / "unit.cc"], [system])
    result = apis.check(files, ["ort"], [])
    assert result.libraries["ort"].version == "22"
    assert {(m.api, m.where) for m in result.missing} == {
        ("EpDevice_AddAllocatorInfo", "unit.cc:9"), ("CreateMemoryInfo_V2", "unit.cc:11"),
        ("GetTensorSizeInBytes", "unit.cc:12"), ("Ort::GetApi", "unit.cc:12")}
