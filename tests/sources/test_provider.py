"""The CMake dependency provider with real CMake: what it serves, what it reports, what it refuses, and the
content pins that accept upstream's and a mirror's archive alike."""

from __future__ import annotations

import gzip
import hashlib
import io
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.support.http import FaultServer
from tests.support.tools import need, require_tool
from toolkit.recipe.pinned import PinnedArchive
from toolkit.recipe.sources import FetchContentDep
from toolkit.sources.cache import Cache
from toolkit.sources.context import FetchContext
from toolkit.sources.download import DownloadOptions
from toolkit.sources.fetchcontent import prepare_dep, provider_defines, read_report
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import tree_digest

FAST = DownloadOptions(connect_timeout=2, read_timeout=2, retries=0, backoff=0.01, progress=False)


def _cmake() -> Path:
    try:
        import cmake
    except ImportError:
        require_tool(False, "PyPI cmake is not installed (pip install cmake)")
    return Path(cmake.CMAKE_BIN_DIR) / "cmake"


def _lib(root: Path, name: str, body: str = "") -> Path:
    root.mkdir(parents=True)
    (root / "CMakeLists.txt").write_text(
        f"cmake_minimum_required(VERSION 3.24)\nproject({name} C)\n{body}"
        f"add_library({name} STATIC {name}.c)\n"
    )
    (root / f"{name}.c").write_text(f"int {name}_value(void) {{ return 1; }}\n")
    return root


def _app(root: Path, body: str) -> Path:
    root.mkdir(parents=True)
    (root / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.24)\nproject(app C)\ninclude(FetchContent)\n" + body)
    return root


def _declare(name: str) -> str:
    # Unreachable URLs: anything CMake tried to download would fail loudly.
    return f"FetchContent_Declare({name} URL https://example.invalid/{name}.tar.gz)\n"


def _write_map(tmp: Path, dirs: dict[str, Path], find_package: tuple[str, ...] = (),
               served: tuple[str, ...] = ()) -> dict[str, str]:
    lines = [f'set(TOOLKIT_FC_DIR_{n} "{d.as_posix()}")' for n, d in dirs.items()]
    lines += [f'set(TOOLKIT_FC_NAMES "{";".join(dirs)}")', f'set(TOOLKIT_FP_NAMES "{";".join(find_package)}")',
              f'set(TOOLKIT_FP_SERVED "{";".join(served)}")', 'set(TOOLKIT_PROVIDER_RECIPE "recipes/demo.toml")']
    (tmp / "map.cmake").write_text("\n".join(lines) + "\n")
    from toolkit.sources.fetchcontent import PROVIDER

    return {"CMAKE_PROJECT_TOP_LEVEL_INCLUDES": PROVIDER.as_posix(),
            "TOOLKIT_PROVIDER_MAP": (tmp / "map.cmake").as_posix(),
            "TOOLKIT_PROVIDER_REPORT": (tmp / "build" / "toolkit-provider-report.txt").as_posix()}


def _configure(src: Path, build: Path, defines: dict[str, str]) -> subprocess.CompletedProcess:
    need("ninja")
    args = [str(_cmake()), "-S", str(src), "-B", str(build), "-G", "Ninja"]
    args += [f"-D{k}={v}" for k, v in defines.items()]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def test_provider_serves_every_request_nested_and_multi_name(tmp_path):
    # outer's own CMakeLists asks for inner (as protobuf asks for absl); a and b come in one call.
    dirs = {
        "outer": _lib(tmp_path / "src/outer", "outer", "include(FetchContent)\n" + _declare("inner")
                      + "FetchContent_MakeAvailable(inner)\n"),
        "inner": _lib(tmp_path / "src/inner", "inner"),
        "a": _lib(tmp_path / "src/a", "a"),
        "b": _lib(tmp_path / "src/b", "b"),
    }
    app = _app(tmp_path / "app", _declare("outer") + _declare("a") + _declare("b")
               + "FetchContent_MakeAvailable(outer)\nFetchContent_MakeAvailable(a b)\n"
               + "find_package(Threads)\nadd_library(everything INTERFACE)\n"
               + "target_link_libraries(everything INTERFACE outer inner a b)\n")
    defines = _write_map(tmp_path, dirs)
    for attempt in (1, 2):  # a second configure of the same folder asks again (nothing cached around it)
        proc = _configure(app, tmp_path / "build", defines)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        asked = read_report(tmp_path / "build")
        assert asked["fetchcontent"] == ["outer", "inner", "a", "b"], attempt
        assert asked["find_package"] == ["Threads"]
    cache = (tmp_path / "build" / "CMakeCache.txt").read_text()
    assert "FETCHCONTENT_FULLY_DISCONNECTED:BOOL=ON" in cache
    assert "FETCHCONTENT_SOURCE_DIR_OUTER:PATH=/" not in cache  # not left for a later configure to take


def test_unlisted_dependency_fails_configure_naming_it_and_the_recipe_key(tmp_path):
    dirs = {"outer": _lib(tmp_path / "src/outer", "outer", "include(FetchContent)\n" + _declare("inner")
                          + "FetchContent_MakeAvailable(inner)\n")}
    app = _app(tmp_path / "app", _declare("outer") + "FetchContent_MakeAvailable(outer)\n")
    proc = _configure(app, tmp_path / "build", _write_map(tmp_path, dirs))
    assert proc.returncode != 0
    text = " ".join((proc.stdout + proc.stderr).split())
    assert "FetchContent dependency 'inner'" in text and "is not listed in recipes/demo.toml" in text
    assert '[[fetchcontent]] name = "inner"' in text and "nox -s lock" in text
    assert read_report(tmp_path / "build")["fetchcontent"] == ["outer", "inner"]


def test_find_package_of_a_pinned_name_is_not_found_so_the_pin_is_used(tmp_path):
    # A system copy that find_package would find: the provider must not let the tree use it.
    system = tmp_path / "system/lib/cmake/zz"
    system.mkdir(parents=True)
    (system / "zzConfig.cmake").write_text("set(zz_FOUND TRUE)\nadd_library(zz_system INTERFACE IMPORTED)\n")
    dirs = {"zz": _lib(tmp_path / "src/zz", "zz")}
    app = _app(tmp_path / "app", "find_package(zz CONFIG)\nif(NOT zz_FOUND)\n" + _declare("zz")
               + "FetchContent_MakeAvailable(zz)\nendif()\nif(TARGET zz_system)\n"
               "message(FATAL_ERROR \"system zz used\")\nendif()\n"
               "if(NOT TARGET zz)\nmessage(FATAL_ERROR \"no zz\")\nendif()\n")
    defines = {**_write_map(tmp_path, dirs, find_package=("zz",)), "CMAKE_PREFIX_PATH": str(tmp_path / "system")}
    proc = _configure(app, tmp_path / "build", defines)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert read_report(tmp_path / "build")["fetchcontent"] == ["zz"]
    # Without the pin's find_package answer, the same tree takes the system copy (the control).
    _write_map(tmp_path, dirs)
    proc = _configure(app, tmp_path / "build2", {**defines, "TOOLKIT_PROVIDER_REPORT": str(tmp_path / "r2.txt")})
    assert proc.returncode != 0 and "system zz used" in proc.stdout + proc.stderr


def test_served_find_package_answers_a_required_find_after_the_trees_own_declaration(tmp_path):
    """morphizen's GSL: find_package(QUIET) first, then FetchContent_Declare(... OVERRIDE_FIND_PACKAGE) and
    find_package(REQUIRED), which a not-found answer (find_package = true) would fail; served, the pin answers
    both, and a system copy is never taken."""
    system = tmp_path / "system/lib/cmake/zz"
    system.mkdir(parents=True)
    (system / "zzConfig.cmake").write_text("set(zz_FOUND TRUE)\nadd_library(zz_system INTERFACE IMPORTED)\n")
    dirs = {"zz": _lib(tmp_path / "src/zz", "zz")}
    app = _app(tmp_path / "app", "find_package(zz QUIET)\nif(NOT TARGET zz)\n"
               "FetchContent_Declare(zz URL https://example.invalid/zz.tar.gz OVERRIDE_FIND_PACKAGE)\n"
               "find_package(zz REQUIRED)\nendif()\nif(TARGET zz_system)\n"
               "message(FATAL_ERROR \"system zz used\")\nendif()\n"
               "if(NOT TARGET zz)\nmessage(FATAL_ERROR \"no zz\")\nendif()\n")
    system_prefix = {"CMAKE_PREFIX_PATH": str(tmp_path / "system")}
    proc = _configure(app, tmp_path / "build", {**_write_map(tmp_path, dirs, served=("zz",)), **system_prefix})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert read_report(tmp_path / "build") == {"fetchcontent": ["zz"], "find_package": ["zz"]}
    # Answered not-found instead, the tree's REQUIRED find cannot be satisfied: why the served kind exists.
    defines = {**_write_map(tmp_path, dirs, find_package=("zz",)), **system_prefix,
               "TOOLKIT_PROVIDER_REPORT": str(tmp_path / "r2.txt")}
    proc = _configure(app, tmp_path / "build2", defines)
    text = " ".join((proc.stdout + proc.stderr).split())
    assert proc.returncode != 0 and "A REQUIRED package cannot be disabled" in text


def test_files_only_dependency_needs_no_cmakelists(tmp_path):
    """hash-library: sources the tree compiles itself. Without `files_only` its top must hold a CMakeLists.txt."""
    archive = tmp_path / "hash.tar.gz"
    archive.write_bytes(_tar({"hash-1.0/crc32.cpp": b"int crc(void) { return 0; }\n"}, 1, 9))
    pinned = PinnedArchive(url=archive.as_uri(), sha256=hashlib.sha256(archive.read_bytes()).hexdigest())
    ctx = FetchContext.create(offline=True, cache=Cache(tmp_path / "cache"))
    with pytest.raises(ToolkitError, match="has no CMakeLists.txt at its top") as err:
        prepare_dep(FetchContentDep(name="hash", archive=pinned), ctx, tmp_path / "deps")
    assert "files_only = true" in (err.value.hint or "")
    folder = prepare_dep(FetchContentDep(name="hash", archive=pinned, files_only=True), ctx, tmp_path / "deps2")
    assert (folder / "crc32.cpp").is_file()


def _tar(files: dict[str, bytes], mtime: int, level: int) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), mtime
            tf.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), compresslevel=level, mtime=mtime)


FILES = {"dep-1.0/CMakeLists.txt": b"project(dep C)\n", "dep-1.0/dep.c": b"int dep(void) { return 0; }\n"}


def test_content_pin_accepts_upstream_and_mirror_archives_and_refuses_other_content(tmp_path):
    upstream_bytes, mirror_bytes = _tar(FILES, 1, 9), _tar(dict(reversed(FILES.items())), 2, 1)
    assert upstream_bytes != mirror_bytes
    server = FaultServer()
    url = server.add("/dep/archive/v1.0.tar.gz", upstream_bytes)
    host_path = url.split("://", 1)[1].split("/", 1)[1]
    mirror = tmp_path / "mirror"
    (mirror / "127.0.0.1" / host_path).parent.mkdir(parents=True)
    (mirror / "127.0.0.1" / host_path).write_bytes(mirror_bytes)
    unpacked = tmp_path / "ref"
    unpacked.mkdir()
    for name, data in FILES.items():
        (unpacked / name.split("/", 1)[1]).write_bytes(data)
    pin = tree_digest(unpacked)
    dep = FetchContentDep(name="dep", archive=PinnedArchive(url, content=pin))

    from_upstream = prepare_dep(dep, FetchContext(Cache(tmp_path / "c1"), options=FAST), tmp_path / "d1")
    offline_mirror = FetchContext(Cache(tmp_path / "c2"), offline=True, mirrors=(mirror.as_uri(),), options=FAST)
    server.stop()
    from_mirror = prepare_dep(dep, offline_mirror, tmp_path / "d2")
    assert tree_digest(from_upstream) == tree_digest(from_mirror) == pin

    wrong = FetchContentDep(name="dep", archive=PinnedArchive(url, content="0" * 64))
    with pytest.raises(ToolkitError) as err:
        prepare_dep(wrong, FetchContext(Cache(tmp_path / "c3"), offline=True, mirrors=(mirror.as_uri(),),
                                        options=FAST), tmp_path / "d3")
    assert f"unpacks to content {pin}, but the pin is {'0' * 64}" in str(err.value) and url in str(err.value)
    assert not (tmp_path / "d3" / "dep").exists()

    # The build's defines: the provider and its map, naming the verified folder.
    defines = provider_defines([dep], offline_mirror, tmp_path / "d2", Path("recipes/demo.toml"), tmp_path / "b")
    assert defines["FETCHCONTENT_FULLY_DISCONNECTED"] == "ON"
    assert f'set(TOOLKIT_FC_DIR_dep "{from_mirror.as_posix()}")' in Path(defines["TOOLKIT_PROVIDER_MAP"]).read_text()
