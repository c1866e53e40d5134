"""`toolkit build` on the bundled sample, end to end: real patching, CMake, Ninja and ELF checks."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tools import ROOT
from toolkit.cmake.commands import read_cache

ENTRY_POINTS = ["CreateEpFactories", "ReleaseEpFactory"]


def toolkit(*args, cwd=ROOT, check=True, env=None):
    proc = subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    if check and proc.returncode != 0:
        raise AssertionError(f"toolkit {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def nm_defined(path: Path) -> list[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True, text=True,
                         check=True).stdout
    names = [line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()]
    # The version node itself (an absolute symbol) is not an entry point.
    return sorted(n for n in names if not n.startswith("VERS"))


@pytest.fixture(scope="module")
def build_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("build")


@pytest.fixture(scope="module")
def default_build(build_folder):
    proc = toolkit("build", "--build-dir", str(build_folder))
    return build_folder / "amdgpu-ep" / "release", proc


def test_the_compilers_leave_nothing_in_the_callers_tmpdir(tmp_path):
    # HIP's clang driver leaves two empty folders in TMPDIR per compile; the build's TMPDIR is in its work tree.
    host_tmp = tmp_path / "host-tmp"
    host_tmp.mkdir()
    proc = toolkit("build", "--build-dir", str(tmp_path / "build"), "--gpu-targets", "gfx90a",
                   env={"TMPDIR": str(host_tmp)})
    assert "compiling 1 HIP kernel source(s)" in proc.stdout + proc.stderr
    assert sorted(p.name for p in host_tmp.iterdir()) == []
    assert not (tmp_path / "build" / "amdgpu-ep" / "release" / "tmp").exists()   # removed after each step


def test_default_build_makes_umbrella_and_migraphx_only(default_build):
    work, _ = default_build
    assert sorted(p.name for p in (work / "lib").iterdir()) == ["libamdgpu-ep.so", "libmigraphx-backend.so"]
    cache = read_cache(work / "cmake")
    assert cache["USE_AMDGPU"] == "ON"
    assert cache["USE_MIGRAPHX"] == "ON"
    assert cache["USE_DML"] == "OFF"
    assert cache["USE_HIPDNN"] == "OFF"
    # The patch series renamed the pre-review spelling away.
    assert "USE_HIPEP" not in cache


def test_each_library_exports_exactly_the_entry_points(default_build):
    work, _ = default_build
    for lib in (work / "lib").iterdir():
        assert nm_defined(lib) == ENTRY_POINTS, lib


def test_second_build_skips_every_stage(default_build, build_folder):
    proc = toolkit("build", "--build-dir", str(build_folder))
    for stage in ("patch", "configure", "build", "check"):
        assert f"{stage}: skipped (inputs unchanged" in proc.stderr
    assert "stages run: none (everything up to date)" in proc.stderr


def _mtimes(work):
    """mtimes of the MIGraphX shim and every object file it is linked from."""
    cmake = work / "cmake"
    files = [cmake / "out" / "libmigraphx-backend.so"]
    files += sorted((cmake / "src" / "migraphx" / "CMakeFiles").rglob("*.o"))
    assert len(files) > 1
    return {str(p): p.stat().st_mtime_ns for p in files}


def test_turning_hipdnn_on_rebuilds_only_what_depends_on_it(default_build, build_folder):
    work, _ = default_build
    before = _mtimes(work)
    proc = toolkit("build", "--build-dir", str(build_folder), "--with-hipdnn")
    assert "patch: skipped (inputs unchanged" in proc.stderr
    assert "configure: running" in proc.stderr
    assert sorted(p.name for p in (work / "lib").iterdir()) == [
        "libamdgpu-ep.so", "libhipdnn-backend.so", "libmigraphx-backend.so"]
    assert read_cache(work / "cmake")["USE_HIPDNN"] == "ON"
    assert nm_defined(work / "lib" / "libhipdnn-backend.so") == ENTRY_POINTS
    # The MIGraphX shim does not depend on hipDNN: neither recompiled nor relinked. (The umbrella is
    # rebuilt: it compiles in which backends exist.)
    assert _mtimes(work) == before
    # And back off: the hipDNN backend leaves lib/ again.
    toolkit("build", "--build-dir", str(build_folder))
    assert sorted(p.name for p in (work / "lib").iterdir()) == ["libamdgpu-ep.so", "libmigraphx-backend.so"]
    assert read_cache(work / "cmake")["USE_HIPDNN"] == "OFF"


def test_dry_run_prints_plan_and_creates_nothing(tmp_path):
    root = tmp_path / "b"
    proc = toolkit("build", "--build-dir", str(root), "--with-hipdnn", "--dry-run")
    assert not root.exists()
    plan = proc.stdout
    assert "define USE_AMDGPU=ON" in plan
    assert "define USE_HIPDNN=ON" in plan
    assert "define USE_DML=OFF" in plan
    assert "-DUSE_HIPDNN=ON" in plan and " -G Ninja" in plan
    assert f"patched copy -> {root / 'amdgpu-ep' / 'release' / 'source'}" in plan
    assert "libhipdnn-backend.so must export exactly CreateEpFactories, ReleaseEpFactory" in plan


def test_broken_recipe_fails_naming_file_and_key(tmp_path):
    bad = tmp_path / "bad" / "amdgpu-ep.toml"  # its name is its file's stem: only the feature is wrong
    bad.parent.mkdir()
    text = (ROOT / "recipes" / "amdgpu-ep.toml").read_text()
    text = text.replace('path = "../samples/umbrella-ep"', f'path = "{ROOT / "samples" / "umbrella-ep"}"')
    text = text.replace('series = "../patches/amdgpu-ep/series"', f'series = "{ROOT / "patches/amdgpu-ep/series"}"')
    text = text.replace('extends = "shared/', f'extends = "{ROOT / "recipes/shared"}/')
    # The features come from the shared fragment; the recipe's own table for one overrides it.
    bad.write_text(text + '\n[features.dml]\ndefault = "no"\ndefine = "USE_DML"\n')
    proc = toolkit("build", "--recipe", str(bad), "--build-dir", str(tmp_path / "b"), check=False)
    assert proc.returncode == 2
    assert f"{bad}: key 'features.dml.default': expected a boolean, got string 'no'" in proc.stderr
    assert not (tmp_path / "b").exists()


def test_dml_is_refused_on_linux(tmp_path):
    proc = toolkit("build", "--build-dir", str(tmp_path / "b"), "--with-dml", check=False)
    assert proc.returncode == 2
    assert "feature 'dml' is not available on linux" in proc.stderr


def test_drifted_source_stops_the_build_naming_patch_and_file(tmp_path):
    drifted = tmp_path / "umbrella-ep"
    shutil.copytree(ROOT / "samples" / "umbrella-ep", drifted)
    cmakelists = drifted / "CMakeLists.txt"
    text = cmakelists.read_text()
    # Upstream reworded the option the first patch renames.
    assert 'option(USE_HIPEP "Build the HIP backend shim" OFF)' in text
    cmakelists.write_text(text.replace('option(USE_HIPEP "Build the HIP backend shim" OFF)',
                                       'option(USE_HIPEP "Build the HIP (hipep) backend shim" OFF)'))
    root = tmp_path / "b"
    proc = toolkit("build", "--build-dir", str(root), "--source", str(drifted), check=False)
    assert proc.returncode == 2
    assert "0001-rename-hipep-to-hipdnn.patch" in proc.stderr
    assert str(cmakelists) in proc.stderr or "CMakeLists.txt" in proc.stderr
    assert "what to do" in proc.stderr
    # Nothing was configured or built from the half-patched tree.
    assert not (root / "amdgpu-ep" / "release" / "cmake").exists()


def test_patches_check_on_the_recipe(tmp_path):
    ok = toolkit("patch", "--check")
    assert "0001-rename-hipep-to-hipdnn.patch: applies cleanly" in ok.stdout
    assert "0002-make-hipdnn-opt-in.patch: applies cleanly" in ok.stdout
    drifted = tmp_path / "umbrella-ep"
    shutil.copytree(ROOT / "samples" / "umbrella-ep", drifted)
    cmakelists = drifted / "CMakeLists.txt"
    cmakelists.write_text(cmakelists.read_text().replace("set(CACHE{USE_HIPEP}", "set(CACHE{USE_HIP_EP}"))
    bad = toolkit("patch", "--check", "--source", str(drifted), check=False)
    assert bad.returncode == 1
    assert "0002-make-hipdnn-opt-in.patch" in bad.stdout and "FAILS" in bad.stdout


def test_emptied_library_is_rebuilt_not_called_up_to_date(default_build, build_folder):
    work, _ = default_build
    lib = work / "lib" / "libamdgpu-ep.so"
    lib.write_bytes(b"")
    proc = toolkit("build", "--build-dir", str(build_folder))
    assert f"build: running (output changed: {lib})" in proc.stderr
    assert "everything up to date" not in proc.stderr
    assert lib.stat().st_size > 0
    assert nm_defined(lib) == ENTRY_POINTS
    # Same size, other bytes: the size does not tell, the content hash does.
    data = bytearray(lib.read_bytes())
    data[-1] ^= 0xFF
    lib.write_bytes(bytes(data))
    proc = toolkit("build", "--build-dir", str(build_folder))
    assert f"build: running (output changed: {lib})" in proc.stderr
    assert lib.read_bytes()[-1] != data[-1]
    # Only touched: the content is checked once, and nothing runs.
    os.utime(lib)
    proc = toolkit("build", "--build-dir", str(build_folder))
    assert "stages run: none (everything up to date)" in proc.stderr


def test_removed_or_edited_patched_file_is_patched_again(default_build, build_folder):
    work, _ = default_build
    source = work / "source"
    cmakelists = source / "CMakeLists.txt"
    patched = cmakelists.read_text()
    assert "USE_HIPDNN" in patched
    removed = sorted((source / "src" / "umbrella").iterdir())
    for path in removed:
        path.unlink()
    proc = toolkit("build", "--build-dir", str(build_folder))
    assert f"patch: running (output changed: files in {source}" in proc.stderr
    assert all(path.is_file() for path in removed)
    cmakelists.write_text(patched.replace("USE_HIPDNN", "USE_HIPEP"))
    proc = toolkit("build", "--build-dir", str(build_folder))
    assert "patch: running (output changed" in proc.stderr
    assert cmakelists.read_text() == patched
    for lib in (work / "lib").iterdir():
        assert nm_defined(lib) == ENTRY_POINTS, lib


def test_the_dry_run_shows_the_configure_the_build_ran(default_build, build_folder):
    """Every -D of the dry run's cmake command is what the real configure left in the CMake cache, and the
    provider's defines and ORT's prefix are among them (not empty placeholders)."""
    work, _ = default_build
    plan = toolkit("build", "--dry-run", "--build-dir", str(build_folder)).stdout
    command = next(line for line in plan.splitlines() if line.startswith("  configure: $ "))
    defines = dict(arg[2:].partition("=")[::2] for arg in command.split() if arg.startswith("-D"))
    for name in ("CMAKE_PROJECT_TOP_LEVEL_INCLUDES", "TOOLKIT_PROVIDER_MAP", "TOOLKIT_PROVIDER_REPORT"):
        assert defines.get(name), f"{name} missing from the dry run's command"
    assert defines["CMAKE_PREFIX_PATH"], "the dry run leaves ORT's prefix out"
    cache = read_cache(work / "cmake")
    assert {k: v for k, v in defines.items() if cache.get(k) != v} == {}


def test_the_sample_builds_without_warnings(tmp_path):
    """Neither the compiler (-Wunused-result in factory.cc) nor CMake (-D variables the project never reads,
    passed only to clear a cache no configure filled) warns on a fresh build of the sample."""
    proc = toolkit("build", "--build-dir", str(tmp_path), "-v")
    said = proc.stdout + proc.stderr
    assert "Manually-specified variables were not used" not in said
    assert [line for line in said.splitlines() if "warning:" in line] == []
    assert "stages run: source, patch, hipify, configure, build, check" in said
