"""The zig toolchain's wrappers compiling real code with the pinned ziglang: a C++ plugin-style library built
for glibc 2.28 needs no newer glibc symbol and no libstdc++, lld's -rpath-link warning is gone, and protobuf's
linker-made section bounds stay inside the library. (The first compile with a fresh zig cache builds libc++:
a minute or more; the wrappers keep it in the toolkit cache.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from toolkit.binary.elf import highest_version, read_elf, version_needs
from toolkit.cmake import toolchain as tc
from toolkit.pipeline.adapters.check import _exports_hint
from toolkit.pipeline.build import prepared
from toolkit.pipeline.options import BuildOptions
from toolkit.util.cachedir import default_cache_dir

# A registry read through linker-made section bounds, as protobuf's generated code reads `pb_defaults`.
SOURCE = r"""
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
__attribute__((section("pb_defaults"), used)) static int registered = 3;
extern "C" char __start_pb_defaults[] __attribute__((weak));
extern "C" char __stop_pb_defaults[] __attribute__((weak));
static std::mutex lock;
extern "C" int CreateEpFactories(int key) {
  std::lock_guard<std::mutex> hold(lock);
  std::map<int, std::string> names{{1, "one"}};
  if (key < 0) throw std::runtime_error("negative");
  return static_cast<int>(names.size() + (__stop_pb_defaults - __start_pb_defaults)) + registered;
}
"""


def build(tmp_path, hidden: tuple[str, ...]):
    toolchain = tc.resolve("zig", "2.28", hidden)
    tools = tmp_path / "toolchain"
    toolchain.prepare(tools, default_cache_dir())
    (tmp_path / "ep.cc").write_text(SOURCE)
    (tmp_path / "exports.map").write_text("{ global: CreateEpFactories; local: *; };\n")
    out = tmp_path / f"libep-{len(hidden)}.so"
    cmd = [str(toolchain.wrapper(tools, "CXX")), "-std=c++17", "-O2", "-fPIC", "-shared", "-o", str(out),
           str(tmp_path / "ep.cc"), f"-Wl,--version-script={tmp_path / 'exports.map'}",
           f"-Wl,-rpath-link,{tmp_path}", "-ldl"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr
    return out, proc.stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build(tmp_path_factory.mktemp("zig"), ("pb_defaults",))


def test_library_needs_glibc_2_28_at_most_and_no_libstdcxx(built):
    library, _ = built
    needs = version_needs(library)
    glibc = highest_version(needs, "GLIBC")
    assert glibc is not None and tuple(map(int, glibc.split("."))) <= (2, 28), needs
    assert highest_version(needs, "GLIBCXX") is None and highest_version(needs, "CXXABI") is None
    needed = read_elf(library).needed
    assert not [n for n in needed if "stdc++" in n or "c++" in n], needed  # libc++ is linked in


def test_prepare_writes_the_outputs_the_configure_stage_records(tmp_path):
    toolchain = tc.resolve("zig", "2.28", ("pb_defaults",))
    toolchain.prepare(tmp_path, default_cache_dir())
    assert all(path.is_file() for path in toolchain.outputs(tmp_path))
    assert "__cxa_finalize" in (tmp_path / toolchain.key / "shared-library.c").read_text()
    assert tc.resolve("system").outputs(tmp_path) == []


def test_wrapper_drops_rpath_link_and_hides_section_bounds(built):
    library, stderr = built
    assert "rpath-link" not in stderr
    assert read_elf(library).defined == ("CreateEpFactories",)


def test_without_the_hidden_reference_lld_exports_the_bounds(tmp_path):
    """Why hide_section_bounds exists: lld exports __start_/__stop_ (protected) despite `local: *`."""
    library, _ = build(tmp_path, ())
    assert set(read_elf(library).defined) == {"CreateEpFactories", "__start_pb_defaults", "__stop_pb_defaults"}


# A library with a C++ static object: its destructor is registered with __cxa_atexit under the library's handle.
STATIC = r"""
#include <cstdio>
#include <string>
struct Noisy { std::string name{"a static object with a destructor, long enough to live on the heap"};
               ~Noisy() { std::printf("destroyed at unload\n"); std::fflush(stdout); } };
static Noisy noisy;
extern "C" int answer() { return static_cast<int>(noisy.name.size()); }
"""
UNLOAD = ("import ctypes, _ctypes, sys; h = ctypes.CDLL(sys.argv[1]); h.answer(); _ctypes.dlclose(h._handle); "
          "print('closed')")


def unload_and_exit(library) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", UNLOAD, str(library)], capture_output=True, text=True, timeout=120)


def test_unloaded_library_runs_its_destructors_and_the_process_exits_cleanly(tmp_path):
    toolchain = tc.resolve("zig", "2.28")
    tools = tmp_path / "toolchain"
    toolchain.prepare(tools, default_cache_dir())
    (tmp_path / "static.cc").write_text(STATIC)
    wrapped, bare = tmp_path / "libwrapped.so", tmp_path / "libbare.so"
    base = ["-std=c++17", "-fPIC", "-shared", str(tmp_path / "static.cc")]
    subprocess.run([str(toolchain.wrapper(tools, "CXX")), *base, "-o", str(wrapped)], check=True)
    assert "__cxa_finalize" in _undefined(wrapped)
    proc = unload_and_exit(wrapped)
    assert proc.returncode == 0 and proc.stdout == "destroyed at unload\nclosed\n", proc
    # zig on its own: the destructor stays in the exit list after dlclose, and exit jumps into unmapped code.
    zig_cache = tc.zig_cache_dir(default_cache_dir(), tc.installed_zig(toolchain.zig))  # the wrappers' cache
    env_cache = {"ZIG_GLOBAL_CACHE_DIR": str(zig_cache)}
    subprocess.run([sys.executable, "-m", "ziglang", "c++", "-target", toolchain.target, *base, "-o", str(bare)],
                   check=True, env={**os.environ, **env_cache})
    assert unload_and_exit(bare).returncode == -11


def _undefined(library) -> list[str]:
    from elftools.elf.elffile import ELFFile

    with open(library, "rb") as handle:
        dynsym = ELFFile(handle).get_section_by_name(".dynsym")
        return [s.name for s in dynsym.iter_symbols() if s["st_shndx"] == "SHN_UNDEF"]


def test_check_stage_names_the_recipe_key_for_section_bounds(tmp_path):
    with prepared(BuildOptions(build_folder=tmp_path, dry_run=True, jobs=1)) as b:
        hint = _exports_hint(b, ["__start_pb_defaults", "__stop_pb_defaults"])
        assert "section(s) pb_defaults" in hint and "[build] hide_section_bounds" in hint
        assert str(b.recipe.file) in hint and "version script" in _exports_hint(b, ["OrtGetApiBase"])


def _debug_sections(library) -> list[str]:
    from elftools.elf.elffile import ELFFile

    with open(library, "rb") as handle:
        return [s.name for s in ELFFile(handle).iter_sections() if s.name.startswith(".debug")]


def test_shared_library_has_debug_info_only_when_the_link_asks(tmp_path):
    """zig links its libc++ with debug info whatever the build asks: the wrapper strips it from a link without
    -g (a Release build), and with it the build machine's paths; a link with -g keeps it."""
    toolchain = tc.resolve("zig", "2.28")
    tools = tmp_path / "toolchain"
    toolchain.prepare(tools, default_cache_dir())
    (tmp_path / "ep.cc").write_text(SOURCE)
    base = ["-std=c++17", "-O2", "-fPIC", "-shared", str(tmp_path / "ep.cc")]
    libs = {name: tmp_path / f"lib{name}.so" for name in ("release", "g", "g0", "bare")}
    wrapper = str(toolchain.wrapper(tools, "CXX"))
    for name, flags in (("release", ["-DNDEBUG"]), ("g", ["-g"]), ("g0", ["-g", "-g0"])):
        subprocess.run([wrapper, *base, *flags, "-o", str(libs[name])], check=True, timeout=1200)
    zig_cache = tc.zig_cache_dir(default_cache_dir(), tc.installed_zig(toolchain.zig))  # the wrappers' cache
    env = {**os.environ, "ZIG_GLOBAL_CACHE_DIR": str(zig_cache)}
    subprocess.run([sys.executable, "-m", "ziglang", "c++", "-target", toolchain.target, *base, "-o",
                    str(libs["bare"])], check=True, env=env, timeout=1200)
    assert _debug_sections(libs["release"]) == [] and _debug_sections(libs["g0"]) == []
    assert ".debug_info" in _debug_sections(libs["g"])
    assert ".debug_info" in _debug_sections(libs["bare"])      # zig on its own, no -g asked
    data = libs["release"].read_bytes()
    for path in (str(tmp_path), str(default_cache_dir()), sys.prefix):
        assert path.encode() not in data, path
    assert libs["release"].stat().st_size * 3 < libs["bare"].stat().st_size


def test_executable_has_debug_info_only_when_the_link_asks(tmp_path):
    """The same for an executable (protoc, flatc, every CMake check): stripped unless its link asks for -g. A
    compile (-c) has debug info only when it asks too: zig's clang emits it by default, GCC does not."""
    toolchain = tc.resolve("zig", "2.28")
    tools = tmp_path / "toolchain"
    toolchain.prepare(tools, default_cache_dir())
    (tmp_path / "main.cc").write_text("#include <string>\n"
                                      "int main(int argc, char**) { return int(std::to_string(argc).size()) - 1; }\n")
    wrapper, obj = str(toolchain.wrapper(tools, "CXX")), tmp_path / "main.o"
    plain = tmp_path / "plain.o"
    subprocess.run([wrapper, "-O2", "-c", str(tmp_path / "main.cc"), "-o", str(plain)], check=True, timeout=1200)
    subprocess.run([wrapper, "-g", "-c", str(tmp_path / "main.cc"), "-o", str(obj)], check=True, timeout=1200)
    assert _debug_sections(plain) == [] and ".debug_info" in _debug_sections(obj)
    assert plain.stat().st_size * 5 < obj.stat().st_size
    # ccache keys zig's objects by what the wrappers do too: their text without the work tree's folders.
    check = toolchain.ccache_env()["CCACHE_COMPILERCHECK"]
    assert re.fullmatch(rf"string:zig {toolchain.zig.zig_sha256} {re.escape(str(toolchain.target))} "
                        r"-idirafter /usr/include wrappers [0-9a-f]{16}", check), check
    assert str(tmp_path) not in check
    release, debug = tmp_path / "release", tmp_path / "debug"
    subprocess.run([wrapper, str(obj), "-o", str(release)], check=True, timeout=1200)
    subprocess.run([wrapper, "-g", str(obj), "-o", str(debug)], check=True, timeout=1200)
    assert _debug_sections(release) == [] and ".debug_info" in _debug_sections(debug)
    assert subprocess.run([str(release)]).returncode == 0
