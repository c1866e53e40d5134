"""The shared compile cache: one URL -> ccache with remote storage; a real redis-server on 127.0.0.1 and
two clean CMake builds in different folders, each with its own empty local cache."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.tools import need
from toolkit.release import compile_cache
from toolkit.release.compile_cache import compile_cache_config, resolve_url
from toolkit.util.errors import ToolkitError


def _need(tool: str) -> str:
    return need(tool)


def _cmake() -> Path:
    import cmake  # PyPI cmake

    return Path(cmake.CMAKE_BIN_DIR) / "cmake"


# -- one setting, checked ------------------------------------------------------------------------------

def test_redis_url_gives_ccache_env_and_launchers(tmp_path):
    _need("ccache")
    cfg = compile_cache_config("redis://127.0.0.1:6379", basedir=tmp_path)
    assert cfg.env["CCACHE_REMOTE_STORAGE"] == "redis://127.0.0.1:6379"
    assert cfg.env["CCACHE_BASEDIR"] == str(tmp_path.resolve())
    assert cfg.env["CCACHE_NOHASHDIR"] == "true"
    assert cfg.cmake_defines["CMAKE_CXX_COMPILER_LAUNCHER"] == shutil.which("ccache")
    assert f"-DCMAKE_HIP_COMPILER_LAUNCHER={shutil.which('ccache')}" in cfg.cmake_args()
    assert cfg.build_env()["CMAKE_C_COMPILER_LAUNCHER"] == shutil.which("ccache")


@pytest.mark.parametrize("url, message", [
    ("memcached://cache:11211", "unsupported scheme 'memcached'"),
    ("redis://", "the URL names no host"),
    ("redis://host:port", "the port is not a number"),
])
def test_bad_cache_url_names_the_setting(url, message):
    with pytest.raises(ToolkitError, match=message) as info:
        compile_cache_config(url)
    assert "release.compile_cache" in str(info.value)


def test_env_overrides_recipe_and_off_disables(monkeypatch):
    monkeypatch.delenv(compile_cache.ENV_VAR, raising=False)
    assert resolve_url("redis://a:1") == ("redis://a:1", "release.compile_cache")
    monkeypatch.setenv(compile_cache.ENV_VAR, "http://b:8080/cache")
    assert resolve_url("redis://a:1") == ("http://b:8080/cache", "env TOOLKIT_COMPILE_CACHE")
    monkeypatch.setenv(compile_cache.ENV_VAR, "off")
    url, origin = resolve_url("redis://a:1")
    assert url is None and origin == "env TOOLKIT_COMPILE_CACHE"
    assert not compile_cache_config(None).enabled


def test_password_is_not_shown(monkeypatch):
    assert compile_cache.redact("redis://:s3cret@cache:6379") == "redis://:***@cache:6379"
    with pytest.raises(ToolkitError) as info:
        compile_cache_config("ftp://user:s3cret@cache")
    assert "s3cret" not in str(info.value)


def test_ccache_without_remote_storage_is_reported(tmp_path):
    fake = tmp_path / "ccache"
    fake.write_text("#!/bin/sh\necho 'ccache version 4.2'\necho 'Features: file-storage'\n")
    fake.chmod(0o755)
    with pytest.raises(ToolkitError, match="built without redis-storage"):
        compile_cache_config("redis://127.0.0.1:6379", ccache=str(fake))


# -- two machines, one cache ---------------------------------------------------------------------------

SOURCES = {
    "CMakeLists.txt": (
        "cmake_minimum_required(VERSION 3.20)\n"
        "project(cachedemo CXX)\n"
        "add_library(shapes STATIC src/area.cpp src/perimeter.cpp)\n"
        "target_include_directories(shapes PUBLIC include)\n"
        "add_executable(demo src/main.cpp)\n"
        "target_link_libraries(demo PRIVATE shapes)\n"),
    "include/shapes.hpp": (
        "#pragma once\n"
        "double area(double w, double h);\n"
        "double perimeter(double w, double h);\n"),
    "src/area.cpp": '#include "shapes.hpp"\ndouble area(double w, double h) { return w * h; }\n',
    "src/perimeter.cpp": '#include "shapes.hpp"\ndouble perimeter(double w, double h) { return 2 * (w + h); }\n',
    "src/main.cpp": (
        "#include <cstdio>\n#include \"shapes.hpp\"\n"
        "int main() { std::printf(\"%g %g\\n\", area(3, 4), perimeter(3, 4)); return 0; }\n"),
}
OBJECTS = 3


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _redis_ready(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


@pytest.fixture
def redis_url(tmp_path):
    server = _need("redis-server")
    port = _free_port()
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--daemonize", "no", "--dir", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not _redis_ready(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"redis-server on port {port} did not start")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _clean_build(root: Path, url: str, use_basedir: bool = True) -> dict[str, int]:
    """Copy the sources to root/src, build in root/build with a fresh local ccache; return its stats."""
    for rel, text in SOURCES.items():
        path = root / "src" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "ccache.conf").write_text("")
    cfg = compile_cache_config(url, basedir=root if use_basedir else None)
    env = {**os.environ, **cfg.build_env(),
           "CCACHE_DIR": str(root / "ccache"), "CCACHE_CONFIGPATH": str(root / "ccache.conf")}
    cmake = str(_cmake())
    ninja_dir = os.path.dirname(shutil.which("ninja") or sys.executable)
    env["PATH"] = ninja_dir + os.pathsep + env["PATH"]
    subprocess.run([cmake, "-S", root / "src", "-B", root / "build", "-G", "Ninja",
                    "-DCMAKE_BUILD_TYPE=Release"], env=env, check=True, capture_output=True)
    subprocess.run([cmake, "--build", root / "build", "-j", "2"], env=env, check=True, capture_output=True)
    out = subprocess.run([root / "build" / "demo"], capture_output=True, text=True, check=True).stdout
    assert out == "12 14\n"
    return compile_cache.ccache_stats({"CCACHE_DIR": str(root / "ccache"),
                                       "CCACHE_CONFIGPATH": str(root / "ccache.conf")})


def test_second_clean_build_elsewhere_hits_the_shared_redis_cache(redis_url, tmp_path):
    _need("ccache")
    _need("g++")
    first = _clean_build(tmp_path / "machine-a", redis_url)
    assert first["remote_storage_hit"] == 0
    # the project's objects, plus CMake's compiler-ABI probe, which goes through the launcher too
    compiled = first["cache_miss"]
    assert compiled >= OBJECTS
    assert first["remote_storage_miss"] == compiled

    second = _clean_build(tmp_path / "machine-b", redis_url)
    # every object of the second build came from Redis: its own local cache started empty
    assert second["remote_storage_hit"] == compiled
    assert second["cache_miss"] == 0
    assert second["local_storage_hit"] == 0


def test_without_basedir_another_folder_misses(redis_url, tmp_path):
    """The control: CCACHE_BASEDIR is what lets builds in different folders share entries."""
    _need("ccache")
    _need("g++")
    first = _clean_build(tmp_path / "machine-a", redis_url, use_basedir=False)
    second = _clean_build(tmp_path / "machine-b", redis_url, use_basedir=False)
    assert first["remote_storage_hit"] == 0
    assert second["cache_miss"] >= OBJECTS
