"""Issue 35, item 14: the zig configure says first when zig is about to build its C++ runtime (a silent minute),
CMake's configure with the zig toolchain warns of no unused command-line variable, and `-v`'s tool lines print a
tool's version whole. Real zig, real CMake, the toolkit cache's own zig cache (warm after the first run)."""

from __future__ import annotations

import os
import shutil
import subprocess

from toolkit.cmake import toolchain as tc
from toolkit.cmake.commands import describe_tools, find_cmake, find_ninja
from toolkit.util import toolenv
from toolkit.util.cachedir import default_cache_dir


def test_the_first_link_note_follows_the_zig_caches_own_state(tmp_path):
    """A cache whose zig folder has no mark: the line is due, naming the target and where zig keeps the runtime.
    The mark a finished configure writes (inside zig's own cache folder, so removing that cache brings the line
    back) silences it."""
    toolchain = tc.resolve("zig", "2.28", ())
    cache = tmp_path / "cache"
    mark = tc.runtime_mark(toolchain, cache)
    assert mark is not None and mark.parent.parent == cache / "zig"
    assert tc.first_link_note(toolchain, cache) == (
        "zig builds libc++, libc++abi and libunwind for x86_64-linux-gnu.2.28 during CMake's first test link: "
        f"about a minute with no output, once per zig installation and target (kept in {mark.parent})")
    mark.parent.mkdir(parents=True)
    mark.write_text("")
    assert tc.first_link_note(toolchain, cache) is None
    other_floor = tc.resolve("zig", "2.17", ())
    assert tc.first_link_note(other_floor, cache) is not None  # another target: its own runtime, its own minute
    shutil.rmtree(mark.parent)
    assert tc.first_link_note(toolchain, cache) is not None
    assert tc.first_link_note(tc.resolve("system", None, ()), cache) is None


def _configure(tmp_path, languages: str) -> str:
    toolchain = tc.resolve("zig", "2.28", ())
    tools = tmp_path / "toolchain"
    toolchain.prepare(tools, default_cache_dir())
    src = tmp_path / f"src-{languages.replace(' ', '-')}"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(
        f"cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES {languages})\n"
        'message(STATUS "C compiler: ${CMAKE_C_COMPILER}, libraries: ${CMAKE_LIBRARY_ARCHITECTURE}")\n')
    defines = [f"-D{k}={v}" for k, v in sorted(toolchain.defines(tools).items())]
    proc = subprocess.run([str(find_cmake()), "-S", str(src), "-B", str(src / "build"), "-G", "Ninja",
                           f"-DCMAKE_MAKE_PROGRAM={find_ninja()}", *defines], capture_output=True, text=True,
                          timeout=1200, env={**os.environ, "CCACHE_DISABLE": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def test_a_cxx_only_project_configured_with_zig_warns_of_no_unused_variable(tmp_path):
    output = _configure(tmp_path, "CXX")
    assert "unused-cli" not in output and "were not used by the project" not in output, output
    # The C compiler still reaches a project (or a FetchContent dependency) that enables C.
    wrapper = tc.resolve("zig", "2.28", ()).wrapper(tmp_path / "toolchain", "C")
    both = _configure(tmp_path, "C CXX")
    assert f"-- C compiler: {wrapper}, libraries: x86_64-linux-gnu" in both and "unused-cli" not in both


def test_verbose_tool_lines_print_auditwheels_version_whole(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    toolenv.prefer_own_tools()
    [line] = [line for line in describe_tools() if line.startswith("tool auditwheel:")]
    path = shutil.which("auditwheel")
    package = subprocess.run([path, "--version"], capture_output=True, text=True, env={**os.environ,
                             "COLUMNS": "1000"}).stdout.strip()
    assert package.startswith("auditwheel ") and " installed at " in package and package.endswith(")")
    assert line == f"tool auditwheel: {path} ({package})"
