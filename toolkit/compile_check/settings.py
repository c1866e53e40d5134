"""The recipe's [compile_check] section: which units of the hipified tree to compile, how, and with what.

    [compile_check]
    targets = ["gfx942"]                      # --offload-arch for .cu units
    mode = "syntax-only"                      # or "object" (-c)
    units = ["onnxruntime/core/providers/rocm/**/*.cc", ...]   # globs over the hipified output
    hip_units = ["**/*.cu"]                   # compiled as HIP (-x hip); the rest as C++
    hip_flags = ["-include", "hip/hip_runtime.h"]   # added for the HIP units only
    cxx_flags = ["-include", "format"]        # added for the C++ units only
    sample = ["onnxruntime/core/providers/rocm/math/clip.cc", ...]   # the fixed set --sample checks
    flags = ["-std=c++20", "-DUSE_ROCM=1"]
    include = ["{output}/onnxruntime", "{source}/include/onnxruntime"]
    [[compile_check.generated]]               # headers CMake's configure step would write
    path = "onnxruntime_config.h"
    text = "#pragma once\n"
    [[compile_check.dep]]                     # third-party headers at pinned versions
    name = "abseil"
    url = "https://github.com/abseil/abseil-cpp/archive/refs/tags/20240722.0.tar.gz"
    sha256 = "..."                            # and/or content (+ paths): toolkit.sources.pinned
    include = ["."]                           # folders of the unpacked tree put on -I
    fallback = ["/usr/include"]               # the build root's copy when the archive cannot be had
    protoc = ["onnx/onnx-ml.proto"]           # generate these with the root's protoc (onnx-ml.pb.h)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from toolkit.sources.pinned import PinnedArchive
from toolkit.util.tomlread import Table

MODES = ("syntax-only", "object")


@dataclass(frozen=True)
class Dep:
    """Third-party headers: a pinned archive (sha256 and/or content, as every archive a recipe names)."""

    name: str
    archive: PinnedArchive
    include: tuple[str, ...]
    fallback: tuple[str, ...]
    protoc: tuple[str, ...] = ()


@dataclass(frozen=True)
class Generated:
    path: str
    text: str


@dataclass(frozen=True)
class CompileCheckSettings:
    targets: tuple[str, ...]
    mode: str
    units: tuple[str, ...]
    hip_units: tuple[str, ...]
    sample: tuple[str, ...]
    flags: tuple[str, ...]
    include: tuple[str, ...]
    deps: tuple[Dep, ...]
    generated: tuple[Generated, ...]
    compiler: str = "hipcc"
    hip_flags: tuple[str, ...] = ()
    cxx_flags: tuple[str, ...] = ()


def from_table(t: Table, recipe_dir: Path) -> CompileCheckSettings:
    targets = tuple(t.str_list("targets"))
    if not targets:
        raise t.error("targets", "list at least one GPU target, e.g. [\"gfx942\"]")
    mode = t.str("mode", "syntax-only", choices=MODES)
    units = tuple(t.str_list("units"))
    hip_units = tuple(t.str_list("hip_units", ["**/*.cu"]))
    sample = tuple(t.str_list("sample", []))
    flags = tuple(t.str_list("flags", []))
    hip_flags = tuple(t.str_list("hip_flags", []))
    cxx_flags = tuple(t.str_list("cxx_flags", []))
    include = tuple(t.str_list("include", []))
    compiler = t.str("compiler", "hipcc")
    deps = []
    for sub in t.tables("dep", []):
        name = sub.str("name")
        archive = PinnedArchive.from_table(sub, subdir=False, require_pin=True)
        deps.append(Dep(name, archive, tuple(sub.str_list("include", ["."])),
                        tuple(sub.str_list("fallback", [])), tuple(sub.str_list("protoc", []))))
        sub.done()
    generated = []
    for sub in t.tables("generated", []):
        path = sub.str("path")
        if path.startswith("/") or ".." in path.split("/"):
            raise sub.error("path", "must be a relative path inside the generated-headers folder")
        generated.append(Generated(path, sub.str("text")))
        sub.done()
    t.done()
    return CompileCheckSettings(targets, mode, units, hip_units, sample, flags, include, tuple(deps),
                                tuple(generated), compiler, hip_flags, cxx_flags)
