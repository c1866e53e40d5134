"""The sections of a recipe every build reads: [build], [features] and [[outputs]], each a frozen dataclass read by
its fields (toolkit/util/tomlclass.py; the other sections have a module each here: see Recipe in
toolkit/recipe/load.py). What each key means is declared on the field it fills.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal, Self, get_args

from toolkit.util.tomlfields import doc, problem
from toolkit.util.tomlread import Site

# A recipe's or a feature's name: it becomes a folder name and a --with-NAME option.
NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_DEFINE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
Platform = Literal["linux", "windows"]
PLATFORMS: tuple[str, ...] = get_args(Platform)


# The operating systems a build targets, and how each names a library file: the prefix and suffix CMake gives a
# MODULE there (AMD names its Windows DLLs without MinGW's "lib": amdgpu-ep.dll).
LIBRARY_AFFIXES = {"linux": ("lib", ".so"), "windows": ("", ".dll")}
# What Python's sys.platform is on each (a requirement's environment marker names it).
SYS_PLATFORMS = {"linux": "linux", "windows": "win32"}


def library_file(name: str, platform: str = "linux") -> str:
    """The file of a library a recipe names by its name (`amdgpu-ep`: libamdgpu-ep.so, on Windows amdgpu-ep.dll)."""
    prefix, suffix = LIBRARY_AFFIXES[platform]
    return f"{prefix}{name}{suffix}"


# The toolchains a build compiles with (toolkit/cmake/toolchain.py makes them), each with the operating system
# it builds for (a key of LIBRARY_AFFIXES; features.<name>.platforms names them too), and the glibc floor zig
# targets. mingw is clang with MinGW-w64's runtime: Windows DLLs, cross-compiled in the debian-sid-windows build root.
Toolchain = Literal["system", "zig", "mingw"]
TOOLCHAINS: tuple[str, ...] = get_args(Toolchain)
TOOLCHAIN_PLATFORMS: dict[str, str] = {"system": "linux", "zig": "linux", "mingw": "windows"}
_FLOOR = re.compile(r"2\.(\d+)")


def floor_problem(floor: str) -> str | None:
    """What is wrong with a glibc floor, or None: it is `2.N` (as zig's target suffix and a manylinux_2_N tag
    spell it), N >= 17 (manylinux2014's glibc, the oldest auditwheel still tags)."""
    match = _FLOOR.fullmatch(floor)
    if match is None or int(match.group(1)) < 17:
        return f"expected a glibc version 2.N with N >= 17 (e.g. \"2.28\"), got {floor!r}"
    return None


def _option_name(value: str, site: Site) -> None:
    if not _DEFINE.match(value):
        raise site.error(f"expected a CMake option name like USE_MIGRAPHX, got {value!r}")


def _variable_name(value: str, site: Site) -> None:
    if not _DEFINE.match(value):
        raise site.error(f"expected a CMake variable name, got {value!r}")


def _section_name(value: str, site: Site) -> None:
    if not _DEFINE.match(value):
        raise site.error(f"expected a section name that is a C identifier, got {value!r} (only those get "
                         "__start_/__stop_ symbols)")


# [build] defines, a feature's on_defines and off_defines: NAME = "value" (one line, no ';') or NAME = ["a", "b"]
# (a CMake list, joined with ';').
DEFINES = dict[str, str | tuple[str, ...]]


def _define(value: str | tuple[str, ...], site: Site) -> None:
    if not _DEFINE.match(site.name):
        raise site.error("expected a CMake variable name")
    items = [(value, site)] if isinstance(value, str) else [(item, site.item(i)) for i, item in enumerate(value)]
    for item, where in items:
        if "\n" in item or "\r" in item or "\x00" in item:
            raise where.error(f"{item!r} holds a newline or NUL; expected a one-line value")
        if ";" in item:
            raise where.error(f"{item!r} holds ';', which CMake reads as a list separator; expected a value without "
                              f"';' (write a CMake list as an array: {site.name} = [\"a\", \"b\"])")


def _joined(defines: dict[str, str | tuple[str, ...]], site: Site) -> dict[str, str]:
    return {name: value if isinstance(value, str) else ";".join(value) for name, value in defines.items()}


def lists_among(defines: dict[str, str]) -> tuple[str, ...]:
    """The defines given as arrays: CMake lists, whose value holds ';' on purpose (a single value may not)."""
    return tuple(name for name, value in defines.items() if ";" in value)


@dataclass(frozen=True)
class Spelling:
    """One way a source revision names a feature: its CMake option and the library it builds."""

    define: str = field(metadata=doc("The CMake option of this spelling.", check=_option_name))
    library: str | None = field(default=None, metadata=doc("The library it builds under this spelling."))


@dataclass(frozen=True)
class Feature:
    name: str = ""  # the table's: [features.NAME]
    summary: str = field(default="", metadata=doc("One line shown by `list`."))
    default: bool = field(default=False, metadata=doc("On unless `--without-NAME`."))
    spellings: tuple[Spelling, ...] = field(default=(), metadata=doc(
        "Spellings in order of preference: the first whose option the tree declares is used.", key="spelling"))
    implies: tuple[str, ...] = field(default=(), metadata=doc("Features turned on with this one."))
    platforms: tuple[Platform, ...] = field(default=get_args(Platform), metadata=doc(
        "Platforms the feature can be on for: `linux`, `windows`."))
    # hip-ep's real runtime (mock off) needs the HIP compiler and GPU targets its kernels compile for.
    on_defines: dict[str, str] = field(default_factory=dict, metadata=doc(
        "Extra CMake defines while the feature is on, `{ NAME = \"value\" }`.", toml=DEFINES, each=_define,
        convert=_joined))
    off_defines: dict[str, str] = field(default_factory=dict, metadata=doc(
        "Extra CMake defines while the feature is off.", toml=DEFINES, each=_define, convert=_joined))
    # A feature of one spelling gives it in its own table: `spellings` holds it then.
    define: str | None = field(default=None, metadata=doc(
        "The CMake option it turns on (one spelling); or give `[[spelling]]` tables.", check=_option_name))
    library: str | None = field(default=None, metadata=doc(
        "With `define`: the library the option builds (without `lib` and `.so`)."))

    @property
    def list_defines(self) -> tuple[str, ...]:
        return lists_among({**self.on_defines, **self.off_defines})

    def validated(self, site: Site) -> Self:
        spellings = self.spellings
        if self.define is not None:
            if spellings:
                raise site.key("spelling").error("give either 'define' (one spelling) or [[spelling]] tables, not "
                                                 "both")
            spellings = (Spelling(self.define, self.library),)
        elif self.library is not None:
            raise site.key("library").error("only with 'define': a [[spelling]] names its own library")
        if not spellings:
            raise site.key("define").error("required: the CMake option this feature turns on (or [[spelling]] "
                                           "tables)")
        return replace(self, name=site.name, spellings=spellings)


@dataclass(frozen=True)
class Output:
    """A library the build must produce; `feature` set means only when that feature is on."""

    library: str | None = field(default=None, metadata=doc(
        "The library name (`amdgpu-ep` for `libamdgpu-ep.so`); may be left out when `feature` names a feature "
        "whose spelling gives one."))
    feature: str | None = field(default=None, metadata=doc("Only when this feature is on."))
    exports: tuple[str, ...] = field(default=(), metadata=doc(
        "Exactly the dynamic symbols it must export: names, and globs (`*`, `?`, `[`) as a version script's "
        "`global:` patterns are, which every export not named must match."))
    # libmigraphx_c.so.3 for the MIGraphX backend: linked to MIGraphX, not loading it late.
    needs: tuple[str, ...] = field(default=(), metadata=doc("Libraries its ELF must list as NEEDED."))
    # hip-ep's GPU kernel libraries: built by the real runtime, that is with its mock feature off.
    unless: str | None = field(default=None, metadata=doc("Only when this feature is off."))
    # DirectML.dll: Microsoft's build, which AMD's tree installs beside the DirectX EP.
    carried: bool = field(default=False, metadata=doc(
        "A library the tree installs but does not build: collected into lib/ for the wheel (which then needs its "
        "license), and not checked as the tree's own (exports, imports, link time)."))

    def validated(self, site: Site) -> Self:
        if self.carried and (self.library is None or self.exports):
            raise site.key("carried").error("a carried library is named by `library` and has no `exports` to check")
        return self


@dataclass(frozen=True)
class BuildSettings:
    build_type: Literal["Release", "RelWithDebInfo", "Debug", "MinSizeRel"] = field(
        default="Release", metadata=doc("`CMAKE_BUILD_TYPE`."))
    generator: Literal["Ninja"] = field(default="Ninja", metadata=doc("The CMake generator."))
    defines: dict[str, str] = field(default_factory=dict, metadata=doc(
        "Extra CMake defines, `{ NAME = \"value\" }`; an array is a CMake list.", toml=DEFINES, each=_define,
        convert=_joined))
    option_files: tuple[str, ...] = field(default=("CMakeLists.txt", "cmake"), metadata=doc(
        "Files and folders (relative to the tree) searched for `option(...)` declarations: how feature spellings "
        "are matched."))
    strip_runpath: bool = field(default=False, metadata=doc(
        "Remove build-machine RUNPATH entries from the collected libraries (`$ORIGIN` ones stay)."))
    # "output-dir" suits a tree like the sample; "install" is `cmake --install` into a staging prefix.
    collect: Literal["output-dir", "install"] = field(default="install", metadata=doc(
        "Where libraries come from: `output-dir` (the folder `output_dir_define` names) or `install` (the tree's "
        "own install rules).", computed="`output-dir` when `output_dir_define` is given, else `install`"))
    # The tree's own CMake variables for what the toolkit hands it: part of the tree's CMake surface, so recipe data.
    output_dir_define: str | None = field(default=None, metadata=doc(
        "The tree's CMake variable naming the folder it writes libraries to.", check=_variable_name))
    kernels_define: str | None = field(default=None, metadata=doc(
        "The tree's CMake variable naming the folder of hipified kernel sources it compiles.", check=_variable_name))
    # hip-ep's HIP_ARCHITECTURES: a tree that compiles GPU kernels of its own with its own HIP set-up.
    gpu_targets_define: str | None = field(default=None, metadata=doc(
        "The tree's CMake variable naming the GPU targets it compiles its own kernels for (a CMake list): "
        "`--gpu-targets` sets it, else a feature's defines may; the build facts and the check stage take the "
        "targets from it.", check=_variable_name))
    # toolkit/cmake/toolchains.toml; zig links libc++ in statically.
    toolchain: Toolchain = field(default="system", metadata=doc(
        "C/C++ compilers: `system` (what CMake finds), `zig` (a glibc floor, libc++ linked in statically) or "
        "`mingw` (Windows DLLs from MinGW-w64's GCC for UCRT, in the debian-sid-windows root); `--toolchain` "
        "overrides."))
    glibc_floor: str | None = field(default=None, metadata=doc(
        "With `zig`: the oldest glibc the libraries may need, e.g. \"2.28\"; left out: "
        "`toolkit/cmake/toolchains.toml`'s default.", check=problem(floor_problem)))
    # zig's lld would export them (toolkit/cmake/toolchain.py).
    hide_section_bounds: tuple[str, ...] = field(default=(), metadata=doc(
        "With `zig`: sections whose linker-made `__start_`/`__stop_` symbols must stay hidden (protobuf's "
        "`pb_defaults`).", each=_section_name))
    # The CMake lists among the defines (the recipe's, its features', the GPU targets variable): their value holds
    # ';' on purpose. Set by the readers of [build] and of the recipe.
    list_defines: tuple[str, ...] = ()

    def validated(self, site: Site) -> Self:
        collect = self.collect if site.has("collect") or self.output_dir_define is None else "output-dir"
        if collect == "output-dir" and self.output_dir_define is None:
            raise site.key("collect").error("\"output-dir\" needs output_dir_define: the CMake variable naming the "
                                            "folder the tree writes its libraries to")
        lists = lists_among(self.defines) + ((self.gpu_targets_define,) if self.gpu_targets_define else ())
        return replace(self, collect=collect, list_defines=lists)
