"""FetchContent mirror with real CMake (network cut), the dry-run plan, and preflight of ORT/ROCm/MIGraphX."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import socket
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.support.http import FaultServer
from tests.support.tools import ROOT, require_tool
from toolkit.recipe.load import load_recipe
from toolkit.recipe.pinned import PinnedArchive
from toolkit.recipe.sources import (
    FetchContentDep,
    OrtPackage,
    OrtSettings,
    Requirements,
    SourceSettings,
    active_deps,
)
from toolkit.sources.cache import Cache
from toolkit.sources.context import FetchContext
from toolkit.sources.download import DownloadOptions
from toolkit.sources.fetchcontent import provider_defines
from toolkit.sources.lock import LockFile
from toolkit.sources.plan import plan_lines
from toolkit.sources.preflight import PreflightOptions, check, preflight
from toolkit.util.errors import ToolkitError

FAST = DownloadOptions(connect_timeout=2, read_timeout=2, retries=1, backoff=0.01, progress=False)


def _cmake() -> Path:
    try:
        import cmake
    except ImportError:
        require_tool(False, "PyPI cmake is not installed (pip install cmake)")
    return Path(cmake.CMAKE_BIN_DIR) / "cmake"


def _tarball(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


DEP = {
    "greet-1.0/CMakeLists.txt": "cmake_minimum_required(VERSION 3.20)\nproject(greet C)\n"
                                "add_library(greet STATIC greet.c)\n"
                                "target_include_directories(greet PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)\n",
    "greet-1.0/greet.c": "#include \"greet.h\"\nint greet_answer(void) { return 42; }\n",
    "greet-1.0/include/greet.h": "int greet_answer(void);\n",
}


def _project(root: Path, url: str) -> Path:
    root.mkdir(parents=True)
    (root / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.24)\nproject(app C)\ninclude(FetchContent)\n"
        f"FetchContent_Declare(greet URL {url})\nFetchContent_MakeAvailable(greet)\n"
        "add_executable(app main.c)\ntarget_link_libraries(app PRIVATE greet)\n"
    )
    (root / "main.c").write_text("#include \"greet.h\"\nint main(void) { return greet_answer() == 42 ? 0 : 1; }\n")
    return root


def _configure(cmake: Path, src: Path, build: Path, defines: dict[str, str]):
    args = [str(cmake), "-S", str(src), "-B", str(build), "-G", "Ninja"]
    args += [f"-D{k}={v}" for k, v in defines.items()]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def test_fetchcontent_project_builds_from_mirror_with_network_cut(tmp_path):
    cmake = _cmake()
    require_tool(shutil.which("ninja") is not None, "ninja is not installed (pip install ninja)")
    server = FaultServer()
    archive = _tarball(DEP)
    url = server.add("/greet-1.0.tar.gz", archive)
    project = _project(tmp_path / "app", url)
    dep = FetchContentDep(name="greet", archive=PinnedArchive(url, sha256=hashlib.sha256(archive).hexdigest()))
    cache = Cache(tmp_path / "cache")
    provider_defines([dep], FetchContext(cache, options=FAST), tmp_path / "warm", Path("demo.toml"),
                     tmp_path / "build")  # fills the cache
    server.stop()  # from here on the URL is unreachable: connection refused

    # Proof the URL really is unreachable now. (A configure without the mirror fails too, but CMake's
    # download retries make it take about 90 s, too slow for a test.)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", server.port), timeout=2)

    defines = provider_defines([dep], FetchContext(cache, offline=True), tmp_path / "deps", Path("demo.toml"),
                               tmp_path / "build")
    assert defines["FETCHCONTENT_FULLY_DISCONNECTED"] == "ON"
    assert f'set(TOOLKIT_FC_DIR_greet "{(tmp_path / "deps" / "greet").as_posix()}")' in \
        Path(defines["TOOLKIT_PROVIDER_MAP"]).read_text()
    configured = _configure(cmake, project, tmp_path / "build", defines)
    assert configured.returncode == 0, configured.stdout + configured.stderr
    built = subprocess.run([str(cmake), "--build", str(tmp_path / "build")], capture_output=True, text=True,
                           timeout=120)
    assert built.returncode == 0, built.stdout + built.stderr
    assert subprocess.run([str(tmp_path / "build" / "app")]).returncode == 0


def test_fetchcontent_offline_names_missing_dependency(tmp_path):
    dep = FetchContentDep(name="zlib", archive=PinnedArchive(
        "https://github.com/madler/zlib/archive/refs/tags/v1.3.1.tar.gz", sha256="a" * 64))
    with pytest.raises(ToolkitError) as err:
        provider_defines([dep], FetchContext(Cache(tmp_path / "c"), offline=True), tmp_path / "deps",
                         Path("demo.toml"), tmp_path / "b")
    assert "offline" in str(err.value) and dep.archive.url in str(err.value)
    assert not (tmp_path / "deps").exists()


# The real umbrella EP's FetchContent names (its src/CMakeLists.txt), plus protobuf's own absl.
UMBRELLA_NAMES = ["fmt", "gsl", "json", "zlib", "flatbuffers", "protobuf", "absl", "onnx", "range-v3"]


def _umbrella_tree(root: Path) -> Path:
    (root / "cmake").mkdir(parents=True)
    (root / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 4.2)\nproject(amdgpu_ep CXX)\n"
        "option(USE_AMDGPU \"\" ON)\noption(USE_MIGRAPHX \"\" ON)\ninclude(cmake/deps.cmake)\n"
    )
    decls = "".join(f"FetchContent_Declare(\n  {n}\n  URL https://example.invalid/{n}.tar.gz\n)\n"
                    for n in UMBRELLA_NAMES)
    (root / "cmake" / "deps.cmake").write_text("include(FetchContent)\n" + decls)
    return root


def test_dry_run_plan_for_umbrella_shaped_tree(tmp_path):
    recipe = ROOT / "recipes" / "umbrella-ep-real.toml"
    all_deps = load_recipe(recipe).fetchcontent
    deps = active_deps(all_deps, ["amdgpu", "migraphx"])  # a Linux build: the DML-only deps drop out
    assert [d.name for d in deps] == UMBRELLA_NAMES and len(all_deps) == 15
    tree = _umbrella_tree(tmp_path / "amdgpu-ep")

    rocm = tmp_path / "rocm"
    for rel in ["include/hip/hip_runtime.h", "lib/cmake/hip/hip-config.cmake", "include/migraphx/migraphx.h",
                "lib/cmake/migraphx/migraphx-config.cmake"]:
        (rocm / rel).parent.mkdir(parents=True, exist_ok=True)
        (rocm / rel).write_text("")
    ort = tmp_path / "ort"
    for rel in ["include/onnxruntime_c_api.h", "lib/cmake/onnxruntime/onnxruntimeConfig.cmake"]:
        (ort / rel).parent.mkdir(parents=True, exist_ok=True)
        (ort / rel).write_text("")
    cache = Cache(tmp_path / "cache")
    pinned = {deps[0].archive.url: "b" * 64}
    ctx = FetchContext(cache, lock=LockFile(tmp_path / "x.lock.toml", pinned))
    reqs = load_recipe(recipe).requires
    resolved = check(reqs, ["migraphx"], PreflightOptions(ort_home=ort, rocm_path=rocm, env={}))
    before = sorted(p.as_posix() for p in tmp_path.rglob("*"))

    lines = plan_lines(SourceSettings(path=tree), deps, ctx, tmp_path / "b/source", tmp_path / "b/deps", resolved)
    text = "\n".join(lines)
    assert f"CMake will ask the dependency provider for: {', '.join(UMBRELLA_NAMES)}" in text
    for dep in deps:
        assert f"{dep.name} " in text
        assert f"-> {(tmp_path / 'b/deps' / dep.name.lower()).as_posix()}  <- {dep.archive.url}" in text
    assert "absl (asked by protobuf)" in text and "-DFETCHCONTENT_FULLY_DISCONNECTED=ON" in text
    assert "sha256 bbbbbbbbbbbb..." in text and "from upstream https://" in text
    assert f"dependency ort: {ort.resolve()} (from --ort-home)" in text
    assert f"dependency rocm: {rocm.resolve()} (from --rocm-path)" in text
    assert f"dependency migraphx: {rocm.resolve()} (from next to rocm)" in text
    assert f"-DCMAKE_PREFIX_PATH={ort.resolve().as_posix()};{rocm.resolve().as_posix()}" in text
    assert sorted(p.as_posix() for p in tmp_path.rglob("*")) == before  # the plan wrote nothing


def test_preflight_lists_everything_missing_at_once(tmp_path):
    reqs = Requirements(always=("ort",), features=(("migraphx", ("rocm", "migraphx")),))
    options = PreflightOptions(rocm_path=tmp_path / "nope", env={"MIGRAPHX_HOME": str(tmp_path)})
    with pytest.raises(ToolkitError) as err:
        preflight(reqs, ["migraphx"], options)
    text = str(err.value)
    assert "ONNX Runtime" in text and "--ort-home" in text
    assert f"--rocm-path={tmp_path / 'nope'}: no such folder" in text
    assert f"MIGRAPHX_HOME={tmp_path} lacks: header migraphx/migraphx.h" in text
    # The bundled sample requires nothing; a feature that is off adds nothing.
    assert preflight(Requirements(), ["migraphx"], options).needed == ()
    assert preflight(Requirements(features=(("migraphx", ("rocm",)),)), [], options).needed == ()


def test_preflight_ort_from_recipe_package(tmp_path):
    ort = OrtSettings(version="1.24.1", packages=(OrtPackage("linux-x64", PinnedArchive("https://e/ort.tgz")),))
    reqs = Requirements(always=("ort",))
    ok = preflight(reqs, [], PreflightOptions(platform="linux-x64", env={}), ort)
    assert ok.ort_package is not None and "release package https://e/ort.tgz" in ok.lines()[0]
    release = FetchContext(Cache(tmp_path / "c"), release=True)
    with pytest.raises(ToolkitError, match="https://e/ort.tgz has no sha256"):
        preflight(reqs, [], PreflightOptions(platform="linux-x64", env={}), ort, release)
    with pytest.raises(ToolkitError, match="no package for win-x64"):
        preflight(reqs, [], PreflightOptions(platform="win-x64", env={}), ort)


def test_preflight_finds_debian_hip_under_usr():
    require_tool(Path("/usr/include/hip/hip_runtime.h").is_file(),
                 "Debian HIP is not installed (apt-get install -y libamdhip64-dev)")
    resolved = preflight(Requirements(always=("rocm",)), [], PreflightOptions(env={"ROCM_PATH": "/usr"}))
    assert resolved.path("rocm") == Path("/usr")
    assert resolved.cmake_defines() == {"CMAKE_PREFIX_PATH": "/usr", "ROCM_PATH": "/usr"}


def test_build_dry_run_on_real_tree_shows_provider_and_paths(tmp_path):
    """`nox -s build -- --recipe umbrella-ep-real --source DIR --dry-run`, through the real CLI, on AMD's tree
    unpacked from the shared mirror (the recipe's patches are checked against it first)."""
    from tests.support.real_umbrella_support import MIRROR
    from toolkit.sources.extract import extract_archive

    archive = MIRROR / ("github.com/onnxruntime/onnxruntime-ep-amdgpu/archive/"
                        "a2ea3b25f420c5eb8d25edc366fbc17d6de4fe22.tar.gz")
    require_tool(archive.is_file(), f"the upstream mirror does not hold {archive}")
    root = ROOT
    tree = extract_archive(archive, tmp_path / "amdgpu-ep")
    rocm, ort = tmp_path / "rocm", tmp_path / "ort"
    for base, rels in ((rocm, ["include/hip/hip_runtime.h", "lib/cmake/hip/hip-config.cmake",
                               "include/migraphx/migraphx.h", "lib/cmake/migraphx/migraphx-config.cmake"]),
                       (ort, ["include/onnxruntime_c_api.h", "lib/cmake/onnxruntime/onnxruntimeConfig.cmake"])):
        for rel in rels:
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / rel).write_text("")
    build = tmp_path / "build"
    before = sorted(p.as_posix() for p in tmp_path.rglob("*"))
    proc = subprocess.run(
        [sys.executable, "-m", "toolkit", "build", "--recipe", "umbrella-ep-real", "--source", str(tree),
         "--ort-home", str(ort), "--rocm-path", str(rocm), "--build-dir", str(build), "--dry-run"],
        cwd=root, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(root),
                                                       "TOOLKIT_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr
    plan = proc.stdout
    deps_dir = build / "umbrella-ep-real" / "release" / "deps"
    assert f"CMake will ask the dependency provider for: {', '.join(UMBRELLA_NAMES)}" in plan
    for name in UMBRELLA_NAMES:
        assert f"{name} " in plan and f"-> {(deps_dir / name.lower()).as_posix()}  <-" in plan
    assert "-DFETCHCONTENT_FULLY_DISCONNECTED=ON" in plan
    assert f"dependency ort: {ort.resolve()} (from --ort-home)" in plan
    assert f"dependency rocm: {rocm.resolve()} (from --rocm-path)" in plan
    assert f"dependency migraphx: {rocm.resolve()}" in plan
    assert f"define CMAKE_PREFIX_PATH={ort.resolve().as_posix()};{rocm.resolve().as_posix()}" in plan
    assert "define USE_AMDGPU=ON" in plan and "define USE_MIGRAPHX=ON" in plan
    assert sorted(p.as_posix() for p in tmp_path.rglob("*")) == before  # created nothing


def test_build_preflight_lists_everything_missing(tmp_path):
    root = ROOT
    tree = _umbrella_tree(tmp_path / "amdgpu-ep")
    proc = subprocess.run(
        [sys.executable, "-m", "toolkit", "build", "--recipe", "umbrella-ep-real", "--source", str(tree),
         "--rocm-path", str(tmp_path / "no-rocm"), "--build-dir", str(tmp_path / "b"), "--offline"],
        cwd=root, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(root), "TOOLKIT_CACHE_DIR": str(tmp_path / "cache"),
             "ROCM_PATH": "", "ORT_HOME": ""})
    assert proc.returncode == 2
    assert "preflight: missing before anything is built" in proc.stderr
    assert "rocm" in proc.stderr.lower() and "migraphx" in proc.stderr.lower()
    assert not (tmp_path / "b").exists()
