"""The C/C++ toolchain a build compiles with: the system's compilers, zig for a glibc floor, or MinGW-w64 for
Windows (toolkit/cmake/mingw.py).

zig (PyPI's `ziglang`, pinned in toolchains.toml) compiles the tree and every FetchContent dependency for
`<multiarch>.<glibc floor>` with libc++ linked in statically, so the libraries need no newer glibc than the
floor and no libstdc++; ROCm's and ORT's libraries are still linked by soname from the machine that builds.
CMake gets it as two small wrapper scripts the toolkit writes into the work tree (CMake wants one executable
per language; ccache stays the launcher in front of them).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import platform
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from toolkit.cmake.mingw import MingwPin, prepare_mingw
from toolkit.cmake.zigpin import TOOLCHAINS_FILE, ZigPin, zig_settings
from toolkit.recipe.core import TOOLCHAIN_PLATFORMS, TOOLCHAINS, floor_problem
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON, atomic_write_text, read_json
from toolkit.util.process import run
from toolkit.util.tomlclass import read
from toolkit.util.tomlread import load_toml

# Names contain "clang" so that ccache treats them as the clang they are (its option handling per compiler).
WRAPPERS = {"C": "zig-clang", "CXX": "zig-clang++"}
# What the wrappers add to a link (a shared library or an executable) that does not ask for debug info (no -g
# flag): zig builds the libc++ it links in statically with debug info whatever the build asks, which made a
# Release library fifteen times its size (AMD's umbrella: 98 MB, 6.6 MB without) and wrote the build machine's
# paths (the toolkit cache, the work tree) into it; an executable (protoc, flatc, every configure check) took a
# third longer to link and came out nine times its size. Stripped, a zig-built binary has debug info exactly
# when a system-built one would.
STRIP_UNLESS_DEBUG = "-Wl,--strip-debug"
# What the wrappers add to a compile that does not ask for debug info: zig's clang emits DWARF by default, -O3 or
# not, where GCC and clang emit none without -g. The real tree's objects were 13 times their size (libprotoc.a:
# 194 MB against GCC's 15 MB), and every ccache hit copied, every archive and link read, that much more.
NO_DEBUG_UNLESS_ASKED = "-g0"


@dataclass(frozen=True)
class Toolchain:
    name: str  # "system", "zig" or "mingw"
    glibc_floor: str | None = None
    zig: ZigPin | None = None
    # Sections whose linker-made __start_/__stop_ symbols must stay inside the library (see link_object_source).
    hide_section_bounds: tuple[str, ...] = ()
    mingw: MingwPin | None = None

    @property
    def target(self) -> str | None:
        if self.mingw:
            return self.mingw.triplet
        return f"{self.zig.multiarch}.{self.glibc_floor}" if self.zig else None

    @property
    def platform(self) -> str:
        """The operating system of what it builds: a key of recipe.core.LIBRARY_AFFIXES."""
        return TOOLCHAIN_PLATFORMS[self.name]

    @property
    def key(self) -> str:
        """A folder name per toolchain, target and link object: a changed floor, or a changed object every
        shared library links, is a changed compiler path to CMake, so everything is built and linked again
        (the wrappers' own text names no input of their own: only this key does)."""
        if self.mingw:
            return f"mingw-{self.mingw.triplet}"
        if self.zig is None:
            return "system"
        return f"zig-{self.zig.version}-{self.target}-{self.link_digest[:8]}"

    @property
    def link_digest(self) -> str:
        """What every shared library's link gets from the wrappers: the object and the flags they add."""
        added = f"{link_object_source(self.hide_section_bounds)}\0{STRIP_UNLESS_DEBUG}\0every link"
        return hashlib.sha256(added.encode()).hexdigest()

    def identity(self) -> JSON:
        """What the configure fingerprint, the build facts and the provenance record of the compiler."""
        if self.mingw:
            return self.mingw.identity()
        if self.zig is None:
            return {"name": "system"}
        return {"name": "zig", "distribution": self.zig.distribution, "version": self.zig.version,
                "target": self.target, "glibc_floor": self.glibc_floor, "wheel": self.zig.wheel,
                "wheel_sha256": self.zig.wheel_sha256, "zig_sha256": self.zig.zig_sha256,
                "cxx_runtime": "libc++ (static)", "hide_section_bounds": list(self.hide_section_bounds),
                "link_object_sha256": hashlib.sha256(link_object_source(self.hide_section_bounds).encode())
                .hexdigest(),
                "link_unless_debug": STRIP_UNLESS_DEBUG}

    def describe(self) -> str:
        if self.mingw:
            return self.mingw.describe()
        if self.zig is None:
            return "system compilers (as CMake finds them)"
        return (f"zig {self.zig.version} ({self.zig.distribution}, wheel sha256 {self.zig.wheel_sha256[:12]}...) "
                f"for {self.target}, libc++ linked statically")

    def wrapper(self, tools_root: Path, lang: str) -> Path:
        return tools_root / self.key / WRAPPERS[lang]

    def outputs(self, tools_root: Path) -> list[Path]:
        """The files prepare() writes, which builds use: removed, the configure stage runs again."""
        if self.mingw:
            return [self.toolchain_file(tools_root)]
        if self.zig is None:
            return []
        return [*(self.wrapper(tools_root, lang) for lang in WRAPPERS), tools_root / self.key / "shared-library.o",
                self.toolchain_file(tools_root)]

    def toolchain_file(self, tools_root: Path) -> Path:
        return tools_root / self.key / "toolchain.cmake"

    def defines(self, tools_root: Path) -> dict[str, str]:
        """The CMake defines that make CMake build with this toolchain (none for the system's).

        The C compiler and the library architecture are set in a toolchain file, not by -D: CMake reads
        CMAKE_C_COMPILER only where C is enabled, CMAKE_LIBRARY_ARCHITECTURE only where a find_* call looks,
        and a project without either (the sample is C++ only) would warn that the command line gave them for
        nothing; a toolchain file is read wherever a language is enabled (a FetchContent dependency's C too)."""
        if self.mingw:
            return {"CMAKE_TOOLCHAIN_FILE": str(self.toolchain_file(tools_root)),
                    "CMAKE_CXX_COMPILER": self.mingw.compiler_path("CXX")}
        if self.zig is None:
            return {}
        include = self.zig.system_include
        return {
            "CMAKE_TOOLCHAIN_FILE": str(self.toolchain_file(tools_root)),
            "CMAKE_CXX_COMPILER": str(self.wrapper(tools_root, "CXX")),
            "CMAKE_C_IMPLICIT_INCLUDE_DIRECTORIES": include,
            "CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES": include,
        }

    def ccache_env(self) -> dict[str, str]:
        """ccache identifies a compiler by its file's mtime by default: a wrapper written again (a fresh work
        tree) would miss every entry. The pinned zig, the target and what the wrappers do to the arguments
        ccache hashes (their text, with the folders that differ between work trees left out) say everything
        they compile with: a wrapper that changes what it adds misses the entries the old one made."""
        if self.zig is None:
            return {}
        placeholder = Path("/")
        texts = "".join(wrapper_text(self, lang, placeholder, placeholder, placeholder) for lang in sorted(WRAPPERS))
        return {"CCACHE_COMPILERCHECK": f"string:zig {self.zig.zig_sha256} {self.target} "
                                        f"-idirafter {self.zig.system_include} "
                                        f"wrappers {hashlib.sha256(texts.encode()).hexdigest()[:16]}"}

    def prepare(self, tools_root: Path, cache: Path) -> None:
        """Check the installed zig against the pin; write the wrappers and the object every shared library links.
        For MinGW: check its compilers are there and write the toolchain file."""
        if self.mingw:
            prepare_mingw(self.mingw, self.toolchain_file(tools_root), self.describe())
            return
        if self.zig is None:
            return
        zig = installed_zig(self.zig, stamps=Path(cache) / "zig")
        folder = tools_root / self.key
        extra = folder / "shared-library.o"
        for lang in WRAPPERS:
            text = wrapper_text(self, lang, zig_cache_dir(Path(cache), zig), extra, zig)
            path = self.wrapper(tools_root, lang)
            if not path.is_file() or path.read_text() != text:
                atomic_write_text(path, text, mode=0o755)
        chosen = (f"# Written by the ort-amdgpu toolkit (toolkit/cmake/toolchain.py): {self.describe()}.\n"
                  f'set(CMAKE_C_COMPILER "{self.wrapper(tools_root, "C")}")\n'
                  f'set(CMAKE_LIBRARY_ARCHITECTURE "{self.zig.multiarch}")\n')
        toolchain_file = self.toolchain_file(tools_root)
        if not toolchain_file.is_file() or toolchain_file.read_text() != chosen:
            atomic_write_text(toolchain_file, chosen)
        source = folder / "shared-library.c"
        text = link_object_source(self.hide_section_bounds)
        if not extra.is_file() or not source.is_file() or source.read_text() != text:
            atomic_write_text(source, text)
            _run([str(self.wrapper(tools_root, "C")), "-fPIC", "-O2", "-c", "-o", str(extra), str(source)],
                 "the shared-library object")


def runtime_mark(tc: Toolchain, cache: Path) -> Path | None:
    """The file a finished configure leaves in zig's cache for this installation and target: zig has built the
    libc++, libc++abi and libunwind that target links (None for the system's compilers). It lives in zig's
    own cache folder, so a cache removed takes the mark with it."""
    if tc.zig is None:
        return None
    zig = installed_zig(tc.zig, stamps=Path(cache) / "zig")
    return zig_cache_dir(Path(cache), zig) / f"toolkit-runtime-built-{tc.target}"


def first_link_note(tc: Toolchain, cache: Path) -> str | None:
    """The line to print before a configure whose first test link makes zig build its C++ runtime for the
    target: CMake prints nothing for that minute. None when a configure here already had it built."""
    mark = runtime_mark(tc, cache)
    if mark is None or mark.is_file():
        return None
    return (f"zig builds libc++, libc++abi and libunwind for {tc.target} during CMake's first test link: "
            f"about a minute with no output, once per zig installation and target (kept in {mark.parent})")


def zig_cache_dir(cache: Path, zig: Path) -> Path:
    """zig's global cache for this zig installation: `<toolkit cache>/zig/<digest of its folder>`.

    One folder per installation, because installations that share a cache undo each other's work: zig keys the
    libc++, libc++abi, libunwind and compiler_rt it builds by paths relative to its own lib folder, so two
    installations (the host's venv, a build root's venv, another work tree's .nox) find each other's entries,
    judge them stale and build them again over them, about 40 s of CPU on the first link after every switch
    (measured: alternating two venvs' zig on one cache, each link rebuilt them; each on its own, 0.1 s).
    """
    return cache / "zig" / hashlib.sha256(str(zig.resolve().parent).encode()).hexdigest()[:12]


def wrapper_text(tc: Toolchain, lang: str, zig_cache: Path, extra: Path, zig: Path) -> str:
    """A POSIX shell script running `ZIG cc|c++ -target TARGET` with the system headers last.

    ZIG is the executable installed_zig() checked against the pin, run as it is: `python -m ziglang` (which
    only execs it) started a Python for every compiler call, 40 ms each, and CMake's configure checks, the
    compiler-identification runs and every link call the compiler (ccache hits do not).

    It drops `-Wl,-rpath-link,DIR`: CMake passes it for GNU-style linkers, zig's lld ignores it with a warning on
    every link (lld needs no help finding the libraries a shared library itself links). With `-shared` it
    links the toolkit's shared-library object in (see link_object_source); a link (no -c, -S, -E or
    -fsyntax-only) is stripped (STRIP_UNLESS_DEBUG) and a compile gets -g0 (NO_DEBUG_UNLESS_ASKED) unless a -g
    flag asks for debug info (CMake puts the configuration's compile flags on link lines too).
    """
    assert tc.zig is not None
    driver = "cc" if lang == "C" else "c++"
    command = [str(zig), driver, "-target", str(tc.target), "-idirafter", tc.zig.system_include]
    lines = [
        "#!/bin/sh",
        f"# Written by the ort-amdgpu toolkit (toolkit/cmake/toolchain.py): {tc.describe()}.",
        "# zig keeps the libc++ it builds (about a minute, once per zig installation) in the toolkit cache,",
        "# not in $HOME.",
        f': "${{ZIG_GLOBAL_CACHE_DIR:={zig_cache}}}"',
        ': "${ZIG_LOCAL_CACHE_DIR:=$ZIG_GLOBAL_CACHE_DIR}"',
        "export ZIG_GLOBAL_CACHE_DIR ZIG_LOCAL_CACHE_DIR",
        "shared= debug= compile=",
        "for arg do",
        "  shift",
        '  case $arg in',
        "    -Wl,-rpath-link,*|-Wl,-rpath-link=*) continue ;;",
        "    -shared) shared=1 ;;",
        "    -c|-S|-E|-fsyntax-only) compile=1 ;;",
        "    -g0) debug= ;;",
        "    -g|-g[1-3]|-ggdb*|-gdwarf*|-gline-tables-only|-gline-directives-only|-gfull|-gcodeview) debug=1 ;;",
        "  esac",
        '  set -- "$@" "$arg"',
        "done",
    ]
    lines.append(f'[ -n "$shared" ] && set -- "$@" {shlex.quote(str(extra))}')
    lines.append(f'[ -z "$compile" ] && [ -z "$debug" ] && set -- "$@" {STRIP_UNLESS_DEBUG}')
    lines.append(f'[ -n "$compile" ] && [ -z "$debug" ] && set -- "$@" {NO_DEBUG_UNLESS_ASKED}')
    lines.append(f'exec {shlex.join(command)} "$@"')
    return "\n".join(lines) + "\n"


def link_object_source(sections: tuple[str, ...]) -> str:
    """C source of the object the wrappers link into every shared library: what zig's startup files for a
    glibc shared library lack, and hidden references to linker-made section bounds.

    __cxa_finalize: C++ static destructors (ours and libc++'s) are registered with __cxa_atexit under the
    library's __dso_handle; GCC's crtbeginS.o runs `__cxa_finalize(__dso_handle)` when the library is
    unloaded, zig's do not. A dlclose()d library (the umbrella unloads its backends) then leaves its destructors
    in the exit list, pointing into unmapped code, and the process crashes when it exits. A destructor of
    our own does what crtbeginS.o does.

    Section bounds: lld defines __start_SEC/__stop_SEC (protobuf reads its `pb_defaults` registry through them)
    with protected visibility, so a version script's `local: *` does not hide them and they would be
    exported; zig's driver refuses `-z start-stop-visibility=hidden`. ELF gives a symbol the most constraining
    visibility of all its references, so one hidden reference keeps them inside. Weak: a library without the
    section links as before.
    """
    out = ["/* Written by the ort-amdgpu toolkit (toolkit/cmake/toolchain.py); linked into shared libraries. */",
           'extern char __dso_handle[] __attribute__((visibility("hidden")));',
           "extern void __cxa_finalize(void *) __attribute__((weak));",
           '__attribute__((destructor, visibility("hidden"))) void toolkit_finalize(void) {',
           "  if (__cxa_finalize) __cxa_finalize(__dso_handle);",
           "}"]
    refs = []
    for section in sections:
        for edge in ("start", "stop"):
            out.append(f'extern char __{edge}_{section}[] __attribute__((weak, visibility("hidden")));')
            refs.append(f"__{edge}_{section}")
    if refs:
        out.append('__attribute__((used, visibility("hidden"))) char *const toolkit_section_bounds[] = {'
                   + ", ".join(refs) + "};")
    return "\n".join(out) + "\n"


def _run(cmd: list[str], what: str) -> None:
    run(cmd, f"zig toolchain: {what}", output="merge")


# -- settling and checking -------------------------------------------------------------------------

def resolve(name: str, glibc_floor: str | None = None, hide_section_bounds: tuple[str, ...] = (),
            file: Path = TOOLCHAINS_FILE) -> Toolchain:
    if name not in TOOLCHAINS:
        raise ToolkitError(f"no toolchain named {name!r}", hint=f"toolchains: {', '.join(TOOLCHAINS)}")
    if name == "system":
        return Toolchain("system")
    if name == "mingw":
        return Toolchain("mingw", mingw=read(MingwPin, load_toml(file).table("mingw")))
    pin, default = zig_settings(platform.machine(), file)
    # Checked again here, whoever asks: the floor becomes part of the wrapper scripts' text.
    floor = check_floor(glibc_floor, "glibc floor") if glibc_floor else default
    return Toolchain("zig", floor, pin, tuple(hide_section_bounds))


def check_floor(floor: str, where: str) -> str:
    problem = floor_problem(floor)
    if problem:
        raise ToolkitError(f"{where}: {problem}")
    return floor


@functools.cache
def installed_zig(pin: ZigPin, stamps: Path | None = None) -> Path:
    """The zig executable of the ziglang this Python imports, checked against the pin; the error says how to
    install the pinned one.

    stamps: a folder where a verified executable's file status is kept (`verified-<digest of its path>.json`):
    while size, mtime, ctime, inode and device are those it had when its sha256 matched the pin, it is not read
    again. Hashing its 185 MB took 0.6 s of every configure."""
    fix = (f"pip install '{pin.distribution}=={pin.version}' (pinned in {TOOLCHAINS_FILE}); in a build root the "
           "toolkit's venv installs it by hash")
    spec = importlib.util.find_spec(pin.distribution)
    if spec is None or spec.origin is None:
        raise ToolkitError(f"the zig toolchain needs the {pin.distribution} package, which {sys.executable} "
                           "cannot import", hint=fix)
    version = importlib.metadata.version(pin.distribution)
    if version != pin.version:
        raise ToolkitError(f"{pin.distribution} {version} is installed, the toolchain is pinned to {pin.version}",
                           hint=fix)
    zig = Path(spec.origin).parent / "zig"
    stamp = stamps / f"verified-{hashlib.sha256(str(zig.resolve()).encode()).hexdigest()[:12]}.json" \
        if stamps is not None else None
    status = _file_status(zig)
    if stamp is not None and read_json(stamp) == {"sha256": pin.zig_sha256, "status": status}:
        return zig
    digest = hashlib.sha256()
    with open(zig, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != pin.zig_sha256:
        raise ToolkitError(f"{zig}: sha256 {digest.hexdigest()} is not the pinned zig_sha256 {pin.zig_sha256} "
                           f"({TOOLCHAINS_FILE})",
                           hint=f"reinstall it: pip install --force-reinstall '{pin.distribution}=={pin.version}'")
    if stamp is not None and _file_status(zig) == status:  # unchanged while it was read
        atomic_write_text(stamp, json.dumps({"sha256": pin.zig_sha256, "status": status}) + "\n")
    return zig


def _file_status(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]
