"""`bump` on AMD's real umbrella tree, in the Debian sid build root, to revisions made here.

A copy of the shared bare repository gets four branches off the pinned commit a2ea3b25, one drift each:
- `upstreamed`: upstream takes our patch 0004 (its change committed as is);
- `renamed`: the hip backend's option USE_HIP becomes USE_HIP_BACKEND;
- `deps`: nlohmann json 3.12.0 -> 3.11.3, and a new dependency SafeInt 3.0.28 (both archives in the shared mirror);
- `compile-mode`: the MIGraphX backend asks for eager compilation (migraphx_compile_mode_eager), which
  Debian's MIGraphX 7.1.1 lacks.
Each test bumps a fresh copy of recipes/umbrella-ep-real.toml (its lock file, series and patches) to one branch
with the real command, checks the report, then builds the bumped recipe in the root: it must pass or fail
exactly as the report said. The builds share one work tree (build/bump-tests), so after the first only what a
revision changed is compiled again (ccache holds the rest).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tools import ROOT, require_tool

pytestmark = pytest.mark.buildroot

SHARED = ROOT.parent / "shared" / "upstream" / "mirror"
REPO = "github.com/onnxruntime/onnxruntime-ep-amdgpu.git"
PINNED = "a2ea3b25f420c5eb8d25edc366fbc17d6de4fe22"
WORK = ROOT / "build" / "bump-tests"  # kept between runs: the next run's builds are incremental
MGX_EP = "src/migraphx/mgx_ep.cc"


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def _branch(work: Path, name: str, change) -> str:
    git(work, "checkout", "-q", "-B", name, PINNED)
    change(work)
    git(work, "commit", "-q", "-am", name)
    git(work, "push", "-q", "-f", "origin", name)
    return git(work, "rev-parse", "HEAD")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{path}: {old!r} not found"
    path.write_text(text.replace(old, new))


def _rename(work: Path) -> None:
    _edit(work / "CMakeLists.txt", "option(USE_HIP ", "option(USE_HIP_BACKEND ")
    _edit(work / "src/CMakeLists.txt", "if(USE_HIP)", "if(USE_HIP_BACKEND)")
    _edit(work / "src/amdgpu/CMakeLists.txt", "${USE_HIP}", "${USE_HIP_BACKEND}")


def _deps(work: Path) -> None:
    _edit(work / "src/CMakeLists.txt", "download/v3.12.0/json.tar.xz", "download/v3.11.3/json.tar.xz")
    _edit(work / "src/CMakeLists.txt", "FetchContent_MakeAvailable(json)\n",
          "FetchContent_MakeAvailable(json)\n\nFetchContent_Declare(\n        safeint\n"
          "        URL https://github.com/dcleblanc/SafeInt/archive/refs/tags/3.0.28.zip\n"
          "        DOWNLOAD_NO_PROGRESS TRUE\n        SYSTEM\n        EXCLUDE_FROM_ALL)\n"
          "FetchContent_MakeAvailable(safeint)\n")


def _compile_mode(work: Path) -> None:
    _edit(work / MGX_EP, "    options.set_exhaustive_tune_flag(exhaustive_tune);\n",
          "    options.set_exhaustive_tune_flag(exhaustive_tune);\n"
          "    options.set_compile_mode(migraphx_compile_mode_eager);\n")


@pytest.fixture(scope="session")
def upstream(sid_root):  # noqa: F811  (the fixture imported above)
    """A mirror holding a copy of the real repository with the four synthetic branches."""
    require_tool((SHARED / REPO).is_dir(), f"the upstream mirror {SHARED} is not there")
    mirror = WORK / "mirror"
    shutil.rmtree(mirror, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(SHARED / REPO), str(mirror / REPO)], check=True)
    work = WORK / "clone"
    shutil.rmtree(work, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", str(mirror / REPO), str(work)], check=True)
    patch = ROOT / "patches/umbrella-ep-real/0004-no-device-is-zero-devices.patch"
    revs = {
        "upstreamed": _branch(work, "upstreamed", lambda w: git(w, "apply", str(patch))),
        "renamed": _branch(work, "renamed", _rename),
        "deps": _branch(work, "deps", _deps),
        "compile-mode": _branch(work, "compile-mode", _compile_mode),
    }
    return mirror, revs


@pytest.fixture
def recipe(request):
    """A copy of the real recipe (with its lock, the features it extends, its series) pinned at a2ea3b25."""
    top = WORK / request.node.name
    shutil.rmtree(top, ignore_errors=True)
    (top / "recipes").mkdir(parents=True)
    for name in ("umbrella-ep-real.toml", "umbrella-ep-real.lock.toml"):
        shutil.copy2(ROOT / "recipes" / name, top / "recipes" / name)
    shutil.copytree(ROOT / "recipes/shared", top / "recipes/shared")
    shutil.copytree(ROOT / "patches/umbrella-ep-real", top / "patches/umbrella-ep-real")
    assert PINNED in (top / "recipes/umbrella-ep-real.toml").read_text()
    return top / "recipes" / "umbrella-ep-real.toml"


def mirrors(mirror: Path) -> list[str]:
    return ["--mirror", mirror.as_uri(), "--mirror", SHARED.as_uri(), "--offline"]


def run(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "TOOLKIT_BUILD_DIR": str(WORK / "build")})
    print(proc.stdout[-4000:], proc.stderr[-4000:])
    return proc


def bump(recipe: Path, mirror: Path, to: str) -> subprocess.CompletedProcess:
    return run("bump", "--recipe", str(recipe), "--to", to, *mirrors(mirror), "--root", "debian-sid-rocm",
               "--build-dir", str(WORK))


def build(recipe: Path, mirror: Path, *extra: str) -> subprocess.CompletedProcess:
    """The bumped recipe built in the root, in the one work tree these tests share."""
    return run("container", "--root", "debian-sid-rocm", "--bind", str(recipe.parents[1]), "build", "--recipe",
               str(recipe), *mirrors(mirror), "--variant", "bumped", *extra)


def test_upstreamed_patch_is_dropped_and_the_recipe_builds(upstream, recipe):
    mirror, revs = upstream
    proc = bump(recipe, mirror, "upstreamed")
    assert proc.returncode == 0
    assert "verdict: **automatic**" in proc.stdout
    assert ("| 0004-no-device-is-zero-devices.patch | drop (upstream has it) | already applied, skipping |"
            in proc.stdout)
    assert "| 0001-probe-migraphx-apis.patch | keep | applies cleanly |" in proc.stdout
    assert "| 0006-guard-advance-backend-option-before-nchw.patch | skip (not needed here) |" in proc.stdout
    assert "Unchanged: 9 of 9 requests." in proc.stdout
    series = (recipe.parents[1] / "patches/umbrella-ep-real/series").read_text()
    assert "0004" not in series and "0003-missing-hip-backend-not-fatal.patch" in series
    assert f'commit = "{revs["upstreamed"]}"' in recipe.read_text()
    built = build(recipe, mirror)
    assert built.returncode == 0
    assert "0004-no-device-is-zero-devices.patch" not in built.stderr


def test_renamed_option_is_reported_and_only_the_feature_fails(upstream, recipe):
    mirror, revs = upstream
    proc = bump(recipe, mirror, "renamed")
    assert proc.returncode == 1
    assert "- added: `USE_HIP_BACKEND`" in proc.stdout and "- removed: `USE_HIP`" in proc.stdout
    assert ("feature hipdnn: the tree no longer declares USE_HIP (maybe USE_HIP_BACKEND); builds with --with-hipdnn "
            "fail up front") in proc.stdout
    assert "features amdgpu, migraphx)" in proc.stdout  # surveyed without the feature it lost
    refused = build(recipe, mirror, "--with-hipdnn")
    assert refused.returncode == 2
    assert "feature 'hipdnn' is on, but the source tree" in refused.stderr
    assert "declares none of its CMake options (USE_HIPDNN, USE_HIP, USE_HIPEP)" in refused.stderr
    assert "build: running" not in refused.stderr
    assert build(recipe, mirror).returncode == 0


def test_re_versioned_and_new_dependencies_are_pinned_and_the_recipe_builds(upstream, recipe):
    mirror, revs = upstream
    proc = bump(recipe, mirror, "deps")
    assert proc.returncode == 0
    assert ("| json | 3.12.0 -> 3.11.3 | https://github.com/nlohmann/json/releases/download/v3.11.3/json.tar.xz | "
            "https://github.com/nlohmann/json/archive/refs/tags/v3.11.3.tar.gz | content `") in proc.stdout
    assert ("| safeint | added | https://github.com/dcleblanc/SafeInt/archive/refs/tags/3.0.28.zip | "
            "https://github.com/dcleblanc/SafeInt/archive/refs/tags/3.0.28.tar.gz | content `") in proc.stdout
    assert "2 configure(s)" in proc.stdout
    text = recipe.read_text()
    assert 'url = "https://github.com/nlohmann/json/archive/refs/tags/v3.11.3.tar.gz"' in text
    assert 'name = "safeint"' in text and "v3.12.0" not in text
    lock = recipe.with_name("umbrella-ep-real.lock.toml").read_text()
    assert "json/archive/refs/tags/v3.11.3.tar.gz" in lock and "SafeInt/archive/refs/tags/3.0.28.tar.gz" in lock
    built = build(recipe, mirror)
    assert built.returncode == 0
    # What the configure was given and asked for (the work tree's records; a rerun may have nothing left to do).
    ws = WORK / "build" / "umbrella-ep-real" / "bumped"
    assert "json/archive/refs/tags/v3.11.3.tar.gz" in (ws / "deps" / ".json.fetchcontent.json").read_text()
    assert "fetchcontent safeint" in (ws / "cmake" / "toolkit-provider-report.txt").read_text().splitlines()


def test_an_api_the_roots_migraphx_lacks_stops_the_build_before_the_compile(upstream, recipe):
    mirror, revs = upstream
    proc = bump(recipe, mirror, "compile-mode")
    assert proc.returncode == 1
    assert "| 0005-guard-advance-backend-option.patch | refresh (regenerated) | applies with offset +1" in proc.stdout
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("- MIGraphX API `migraphx_compile_mode_eager`"))
    # The line is the patched copy's, which the compile reads (0001 adds lines above it).
    assert re.search(rf"\({MGX_EP}:\d+\) is not in the headers of MIGraphX 2.14.0 \(/usr/include/migraphx\)", line)
    assert "a MIGraphX newer than 7.1.1 (compile modes" in line
    assert "- MIGraphX API `set_compile_mode`" in proc.stdout
    assert "[libmigraphx-c-dev 7.1.1" in proc.stdout
    assert f'commit = "{revs["compile-mode"]}"' in recipe.read_text()  # written: the report says what fails
    built = build(recipe, mirror)
    assert built.returncode != 0
    assert "calls APIs the system's libraries lack" in built.stderr
    assert "MIGraphX API `migraphx_compile_mode_eager`" in built.stderr and "newer than 7.1.1" in built.stderr
    assert "build: running" not in built.stderr  # stopped at api-check, before the compile
