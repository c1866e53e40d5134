"""The sections of a recipe every build reads: [build], [features] and [[outputs]], each read strictly through
tomlread.Table into a frozen dataclass (the other sections have a module each here: see Recipe in
toolkit/recipe/load.py). What each key means is declared on the field it fills (toolkit/recipe/schema.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from toolkit.recipe.schema import doc, recipe_table
from toolkit.util.tomlread import Table

# A recipe's or a feature's name: it becomes a folder name and a --with-NAME option.
NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_DEFINE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
PLATFORMS = ("linux", "windows")


# The operating systems a build targets, and how each names a library file: the prefix and suffix CMake gives a
# MODULE there (AMD names its Windows DLLs without MinGW's "lib": amdgpu-ep.dll).
LIBRARY_AFFIXES = {"linux": ("lib", ".so"), "windows": ("", ".dll")}


def library_file(name: str, platform: str = "linux") -> str:
    """The file of a library a recipe names by its name (`amdgpu-ep`: libamdgpu-ep.so, on Windows amdgpu-ep.dll)."""
    prefix, suffix = LIBRARY_AFFIXES[platform]
    return f"{prefix}{name}{suffix}"


# The toolchains a build compiles with (toolkit/cmake/toolchain.py makes them), each with the operating system
# it builds for (a key of LIBRARY_AFFIXES; features.<name>.platforms names them too), and the glibc floor zig
# targets. mingw is MinGW-w64's GCC: Windows DLLs, cross-compiled in the debian-sid-windows build root.
TOOLCHAIN_PLATFORMS = {"system": "linux", "zig": "linux", "mingw": "windows"}
TOOLCHAINS = tuple(TOOLCHAIN_PLATFORMS)
_FLOOR = re.compile(r"2\.(\d+)")


def floor_problem(floor: str) -> str | None:
    """What is wrong with a glibc floor, or None: it is `2.N` (as zig's target suffix and a manylinux_2_N tag
    spell it), N >= 17 (manylinux2014's glibc, the oldest auditwheel still tags)."""
    match = _FLOOR.fullmatch(floor)
    if match is None or int(match.group(1)) < 17:
        return f"expected a glibc version 2.N with N >= 17 (e.g. \"2.28\"), got {floor!r}"
    return None


@recipe_table("features.<name>.spelling[]")
@dataclass(frozen=True)
class Spelling:
    """One way a source revision names a feature: its CMake option and the library it builds."""

    define: str = field(metadata=doc("The CMake option of this spelling."))
    library: str | None = field(metadata=doc("The library it builds under this spelling."))


# A feature of one spelling gives it in the feature's own table, read into `spellings`.
@recipe_table("features.<name>", keys={
    "define": "The CMake option it turns on (one spelling); or give `[[spelling]]` tables.",
    "library": "With `define`: the library the option builds (without `lib` and `.so`).",
})
@dataclass(frozen=True)
class Feature:
    name: str
    summary: str = field(metadata=doc("One line shown by `list`."))
    default: bool = field(metadata=doc("On unless `--without-NAME`."))
    spellings: tuple[Spelling, ...] = field(metadata=doc(
        "Spellings in order of preference: the first whose option the tree declares is used.", key="spelling"))
    implies: tuple[str, ...] = field(default=(), metadata=doc("Features turned on with this one."))
    platforms: tuple[str, ...] = field(default=PLATFORMS, metadata=doc(
        "Platforms the feature can be on for: `linux`, `windows`."))
    # hip-ep's real runtime (mock off) needs the HIP compiler and GPU targets its kernels compile for.
    on_defines: dict[str, str] = field(default_factory=dict, metadata=doc(
        "Extra CMake defines while the feature is on, `{ NAME = \"value\" }`."))
    off_defines: dict[str, str] = field(default_factory=dict, metadata=doc(
        "Extra CMake defines while the feature is off."))
    list_defines: tuple[str, ...] = ()  # those given as arrays (CMake lists), as in [build] defines


@recipe_table("outputs[]")
@dataclass(frozen=True)
class Output:
    """A library the build must produce; `feature` set means only when that feature is on."""

    library: str | None = field(metadata=doc(
        "The library name (`amdgpu-ep` for `libamdgpu-ep.so`); may be left out when `feature` names a feature "
        "whose spelling gives one."))
    feature: str | None = field(metadata=doc("Only when this feature is on."))
    exports: tuple[str, ...] = field(metadata=doc(
        "Exactly the dynamic symbols it must export: names, and globs (`*`, `?`, `[`) as a version script's "
        "`global:` patterns are, which every export not named must match."))
    # libmigraphx_c.so.3 for the MIGraphX backend: linked to MIGraphX, not loading it late.
    needs: tuple[str, ...] = field(default=(), metadata=doc("Libraries its ELF must list as NEEDED."))
    # hip-ep's GPU kernel libraries: built by the real runtime, that is with its mock feature off.
    unless: str | None = field(default=None, metadata=doc("Only when this feature is off."))


@recipe_table("build")
@dataclass(frozen=True)
class BuildSettings:
    build_type: str = field(metadata=doc("`CMAKE_BUILD_TYPE`."))
    generator: str = field(metadata=doc("The CMake generator."))
    defines: dict[str, str] = field(metadata=doc("Extra CMake defines, `{ NAME = \"value\" }`."))
    option_files: tuple[str, ...] = field(metadata=doc(
        "Files and folders (relative to the tree) searched for `option(...)` declarations: how feature spellings "
        "are matched."))
    strip_runpath: bool = field(default=False, metadata=doc(
        "Remove build-machine RUNPATH entries from the collected libraries (`$ORIGIN` ones stay)."))
    # "output-dir" suits a tree like the sample; "install" is `cmake --install` into a staging prefix.
    collect: str = field(default="install", metadata=doc(
        "Where libraries come from: `output-dir` (the folder `output_dir_define` names) or `install` (the tree's "
        "own install rules).", default="`output-dir` when `output_dir_define` is given, else `install`"))
    # The tree's own CMake variables for what the toolkit hands it: part of the tree's CMake surface, so recipe data.
    output_dir_define: str | None = field(default=None, metadata=doc(
        "The tree's CMake variable naming the folder it writes libraries to."))
    kernels_define: str | None = field(default=None, metadata=doc(
        "The tree's CMake variable naming the folder of hipified kernel sources it compiles."))
    # hip-ep's HIP_ARCHITECTURES: a tree that compiles GPU kernels of its own with its own HIP set-up.
    gpu_targets_define: str | None = field(default=None, metadata=doc(
        "The tree's CMake variable naming the GPU targets it compiles its own kernels for (a CMake list): "
        "`--gpu-targets` sets it, else a feature's defines may; the build facts and the check stage take the "
        "targets from it."))
    # toolkit/cmake/toolchains.toml; zig links libc++ in statically.
    toolchain: str = field(default="system", metadata=doc(
        "C/C++ compilers: `system` (what CMake finds), `zig` (a glibc floor, libc++ linked in statically) or "
        "`mingw` (Windows DLLs from MinGW-w64's GCC for UCRT, in the debian-sid-windows root); `--toolchain` "
        "overrides."))
    glibc_floor: str | None = field(default=None, metadata=doc(
        "With `zig`: the oldest glibc the libraries may need, e.g. \"2.28\"; left out: "
        "`toolkit/cmake/toolchains.toml`'s default."))
    # zig's lld would export them (toolkit/cmake/toolchain.py).
    hide_section_bounds: tuple[str, ...] = field(default=(), metadata=doc(
        "With `zig`: sections whose linker-made `__start_`/`__stop_` symbols must stay hidden (protobuf's "
        "`pb_defaults`)."))
    # The `defines` given as arrays: CMake lists, whose value holds ';' on purpose.
    list_defines: tuple[str, ...] = ()


def read_build(t: Table | None) -> BuildSettings:
    if t is None:
        return BuildSettings("Release", "Ninja", {}, ("CMakeLists.txt", "cmake"))
    build_type = t.str("build_type", "Release", choices=["Release", "RelWithDebInfo", "Debug", "MinSizeRel"])
    generator = t.str("generator", "Ninja", choices=["Ninja"])
    defines, lists = _read_defines(t)
    option_files = tuple(t.str_list("option_files", ["CMakeLists.txt", "cmake"]))
    strip_runpath = t.bool("strip_runpath", False)
    output_dir_define = t.str("output_dir_define", None)
    kernels_define = t.str("kernels_define", None)
    gpu_targets_define = t.str("gpu_targets_define", None)
    for key, value in (("output_dir_define", output_dir_define), ("kernels_define", kernels_define),
                       ("gpu_targets_define", gpu_targets_define)):
        if value is not None and not _DEFINE.match(value):
            raise t.error(key, f"expected a CMake variable name, got {value!r}")
    collect = t.str("collect", "output-dir" if output_dir_define else "install", choices=["output-dir", "install"])
    if collect == "output-dir" and output_dir_define is None:
        raise t.error("collect", "\"output-dir\" needs output_dir_define: the CMake variable naming the folder "
                                 "the tree writes its libraries to")
    toolchain, floor, hidden = _read_toolchain(t)
    t.done()
    lists = (*lists, gpu_targets_define) if gpu_targets_define else lists
    return BuildSettings(build_type, generator, defines, option_files, strip_runpath, collect,
                         output_dir_define, kernels_define, gpu_targets_define, toolchain, floor, hidden, lists)


def _read_defines(t: Table, section: str = "defines") -> tuple[dict[str, str], tuple[str, ...]]:
    """[build] defines (and a feature's on_defines, off_defines): NAME = "value" (one line, no ';') or
    NAME = ["a", "b"] (a CMake list, joined with ';')."""
    table = t.table(section, None)
    if table is None:
        return {}, ()
    defines, lists = {}, []
    for key in table.keys():
        if not _DEFINE.match(key):
            raise t.error(f"{section}.{key}", "expected a CMake variable name")
        items = table.str_or_list(key)
        is_list = not isinstance(table.data[key], str)
        for i, item in enumerate(items):
            where = f"{section}.{key}" + (f"[{i}]" if is_list else "")
            if "\n" in item or "\r" in item or "\x00" in item:
                raise t.error(where, f"{item!r} holds a newline or NUL; expected a one-line value")
            if ";" in item:
                raise t.error(where, f"{item!r} holds ';', which CMake reads as a list separator; expected a value "
                                     f"without ';' (write a CMake list as an array: {key} = [\"a\", \"b\"])")
        defines[key] = ";".join(items)
        if is_list:
            lists.append(key)
    table.done()
    return defines, tuple(lists)


def _read_toolchain(t: Table) -> tuple[str, str | None, tuple[str, ...]]:
    """[build] toolchain, glibc_floor and hide_section_bounds (see toolkit/cmake/toolchain.py)."""
    toolchain = t.str("toolchain", "system", choices=TOOLCHAINS)
    floor = t.str("glibc_floor", None)
    problem = floor_problem(floor) if floor is not None else None
    if problem:
        raise t.error("glibc_floor", problem)
    hidden = tuple(t.str_list("hide_section_bounds", []))
    for i, section in enumerate(hidden):
        if not _DEFINE.match(section):
            raise t.error(f"hide_section_bounds[{i}]", f"expected a section name that is a C identifier, got "
                                                       f"{section!r} (only those get __start_/__stop_ symbols)")
    return toolchain, floor, hidden


def read_features(t: Table | None, inherited: dict[str, Feature] | None = None) -> dict[str, Feature]:
    features: dict[str, Feature] = {}
    if t is None:
        return features
    inherited = inherited or {}
    for name, ft in t.subtables():
        if not NAME.match(name):
            raise t.error(name, "feature names use lowercase letters, digits, '-' or '_'")
        summary = ft.str("summary", "")
        default = ft.bool("default", False)
        spellings: list[Spelling] = []
        if ft.has("define"):
            define = ft.str("define")
            spellings.append(Spelling(_check_define(ft, "define", define), ft.str("library", None)))
        if ft.has("spelling"):
            if spellings:
                raise ft.error("spelling", "give either 'define' (one spelling) or [[spelling]] tables, not both")
            for st in ft.tables("spelling"):
                define = _check_define(st, "define", st.str("define"))
                spellings.append(Spelling(define, st.str("library", None)))
                st.done()
        if not spellings:
            raise ft.error("define", "required: the CMake option this feature turns on (or [[spelling]] tables)")
        implies = tuple(ft.str_list("implies", []))
        platforms = tuple(ft.str_list("platforms", list(PLATFORMS)))
        for i, plat in enumerate(platforms):
            if plat not in PLATFORMS:
                raise ft.error(f"platforms[{i}]", f"expected one of {', '.join(PLATFORMS)}, got {plat!r}")
        on_defines, on_lists = _read_defines(ft, "on_defines")
        off_defines, off_lists = _read_defines(ft, "off_defines")
        ft.done()
        features[name] = Feature(name, summary, default, tuple(spellings), implies, platforms, on_defines, off_defines,
                                 on_lists + off_lists)
    known = {**inherited, **features}
    for name, feature in features.items():
        for i, other in enumerate(feature.implies):
            if other not in known:
                raise t.error(f"{name}.implies[{i}]", f"no feature named {other!r} (features: {', '.join(known)})")
    return features


def _check_define(t: Table, key: str, value: str) -> str:
    if not _DEFINE.match(value):
        raise t.error(key, f"expected a CMake option name like USE_MIGRAPHX, got {value!r}")
    return value


def read_outputs(root: Table, features: dict[str, Feature]) -> tuple[Output, ...]:
    outputs = []
    for ot in root.tables("outputs", []):
        feature = ot.str("feature", None)
        if feature is not None and feature not in features:
            raise ot.error("feature", f"no feature named {feature!r} (features: {', '.join(features)})")
        library = ot.str("library", None)
        if library is None:
            if feature is None:
                raise ot.error("library", "required when no 'feature' names where the library comes from")
            if not any(s.library for s in features[feature].spellings):
                raise ot.error("library", f"required: feature {feature!r} declares no library")
        exports = tuple(ot.str_list("exports", []))
        needs = tuple(ot.str_list("needs", []))
        unless = ot.str("unless", None)
        if unless is not None and unless not in features:
            raise ot.error("unless", f"no feature named {unless!r} (features: {', '.join(features)})")
        ot.done()
        outputs.append(Output(library, feature, exports, needs, unless))
    return tuple(outputs)
