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
    min_rate = 95                             # percent of units that must compile (else every failure counts)
    [[compile_check.expected_failure]]        # a unit known not to compile here, and why
    unit = "onnxruntime/core/providers/rocm/roctracer_manager.cc"    # a glob over the units
    reason = "needs roctracer, which Debian does not package"
    [[compile_check.dep]]                     # third-party headers at pinned versions
    name = "abseil"
    url = "https://github.com/abseil/abseil-cpp/archive/refs/tags/20240722.0.tar.gz"
    sha256 = "..."                            # and/or content (+ paths): toolkit.recipe.pinned
    include = ["."]                           # folders of the unpacked tree put on -I
    fallback = ["/usr/include"]               # the build root's copy when the archive cannot be had
    protoc = ["onnx/onnx-ml.proto"]           # generate these with the root's protoc (onnx-ml.pb.h)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal, get_args

from toolkit.recipe.pinned import PinnedArchive, require_pin
from toolkit.util.globs import glob_match
from toolkit.util.tomlfields import doc, inline, problem
from toolkit.util.tomlread import Site

Mode = Literal["syntax-only", "object"]
MODES: tuple[str, ...] = get_args(Mode)
# A .proto file of a dep's unpacked tree, handed to protoc as one argument: a relative path of plain characters.
_PROTO = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*(?:/[A-Za-z0-9_][A-Za-z0-9_.+-]*)*\.proto$")


def min_rate_problem(value: float) -> str | None:
    """Why `value` is no minimum compile rate, or None. The report prints percentages, so the rate is one:
    0 to 100. A value above 0 and at most 1 reads as a fraction as easily as a percent, so neither is guessed."""
    if not 0 <= value <= 100:
        return f"{value:g} is not a percentage from 0 to 100"
    if 0 < value <= 1:
        return (f"{value:g} is ambiguous: a percentage from 0 to 100 is expected (write {value * 100:g} for "
                f"{value * 100:g}%; a rate of 1% or less is not taken)")
    return None


def _proto_file(name: str, site: Site) -> None:
    """A `protoc` entry: a relative `.proto` path inside the unpacked tree (no `..`, no leading `-`, letters, digits
    and `_.+-` between the slashes), passed to protoc as one argument."""
    if not _PROTO.match(name) or ".." in name.split("/"):
        raise site.error(f"{name!r} is not a relative path to a .proto file in the dep's tree; expected e.g. "
                         "\"onnx/onnx-ml.proto\" (letters, digits and _.+- between slashes, no '..', no leading '-')")


def _says_why(reason: str, site: Site) -> None:
    if not reason.strip():
        raise site.error("must say why the unit does not compile")


def _inside(path: str, site: Site) -> None:
    if path.startswith("/") or ".." in path.split("/"):
        raise site.error("must be a relative path inside the generated-headers folder")


def _some_target(targets: tuple[str, ...], site: Site) -> None:
    if not targets:
        raise site.error("list at least one GPU target, e.g. [\"gfx942\"]")


@dataclass(frozen=True)
class ExpectedFailure:
    """Units (a glob) that do not compile in the check, for a reason the recipe states."""

    unit: str = field(metadata=doc("A glob over the check's units (paths in the hipified tree)."))
    reason: str = field(metadata=doc(
        "Why it cannot compile there, in words (the warning when it compiles after all repeats it).", check=_says_why))


@dataclass(frozen=True)
class Dep:
    """Third-party headers: a pinned archive (sha256 and/or content, as every archive a recipe names)."""

    name: str = field(metadata=doc("The dependency's name."))
    archive: PinnedArchive = field(metadata=inline(
        omit=("subdir",), check=require_pin, url="Its archive (a pin is required: `sha256` or `content`).",
        content="The digest of the unpacked tree (or of the `paths` it matches)."))
    include: tuple[str, ...] = field(default=(".",), metadata=doc("Folders of the unpacked tree put on `-I`."))
    fallback: tuple[str, ...] = field(default=(), metadata=doc(
        "The build root's copy, used when the archive cannot be had."))
    protoc: tuple[str, ...] = field(default=(), metadata=doc(
        "`.proto` files generated with the root's protoc: relative paths in the unpacked tree (no `..`, no leading "
        "`-`), each handed to protoc as an argument.", each=_proto_file))


@dataclass(frozen=True)
class Generated:
    path: str = field(metadata=doc("Relative path in the generated-headers folder.", check=_inside))
    text: str = field(metadata=doc("Its contents."))


@dataclass(frozen=True)
class CompileCheckSettings:
    targets: tuple[str, ...] = field(metadata=doc(
        "GPU targets (`--offload-arch`) for HIP units; checked before a build starts (dry run too) with the build "
        "root's compiler, or by their form while the root is not made.", check=_some_target))
    units: tuple[str, ...] = field(metadata=doc(
        "Globs over the hipified output: the translation units compiled."))
    mode: Mode = field(default="syntax-only", metadata=doc("`syntax-only` or `object` (`-c`)."))
    hip_units: tuple[str, ...] = field(default=("**/*.cu",), metadata=doc(
        "Which units compile as HIP (`-x hip`); the rest as C++."))
    sample: tuple[str, ...] = field(default=(), metadata=doc("The fixed set of units `--sample` checks."))
    flags: tuple[str, ...] = field(default=(), metadata=doc("Flags for every unit."))
    include: tuple[str, ...] = field(default=(), metadata=doc(
        "Include folders; `{output}` and `{source}` are the hipified and source trees."))
    deps: tuple[Dep, ...] = field(default=(), metadata=doc("Third-party headers at pinned versions.", key="dep"))
    generated: tuple[Generated, ...] = field(default=(), metadata=doc(
        "Headers the tree's configure step would write."))
    compiler: str = field(default="hipcc", metadata=doc("The compiler run in the build root."))
    hip_flags: tuple[str, ...] = field(default=(), metadata=doc("Flags for HIP units only."))
    cxx_flags: tuple[str, ...] = field(default=(), metadata=doc("Flags for C++ units only."))
    expected_failures: tuple[ExpectedFailure, ...] = field(default=(), metadata=doc(
        "Units known not to compile in the check: `unit` (a glob over the units) and `reason` (why), both "
        "required; any other unit that fails fails the check (unless `min_rate` is set).", key="expected_failure"))
    # Percent; None: no failure is allowed but the expected ones.
    min_rate: float | None = field(default=None, metadata=doc(
        "The percentage of units (0 to 100; 0 < rate <= 1 is refused as ambiguous) that must compile; set, it "
        "replaces `expected_failure` as the rule; `compile-check --min-rate` overrides it.",
        check=problem(min_rate_problem)))

    def expected_failure(self, unit: str) -> ExpectedFailure | None:
        return next((e for e in self.expected_failures if glob_match(e.unit, unit)), None)

