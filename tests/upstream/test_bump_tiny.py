"""`bump` end to end on a small upstream made here: a bare git repository with one revision per kind of drift
(patch context moved, patch upstreamed, option renamed, FetchContent dependency re-versioned and added,
library renamed, patch in conflict), a file:// mirror holding it and the dependency archives, and a recipe
pinned to the first revision. Every bump runs the real command, offline, with a real CMake configure on this
machine (the survey), and the bumped recipe is then built (or refused) exactly as the report says.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from tests.support.tools import ROOT, need

CMAKE = """cmake_minimum_required(VERSION 3.24)
project(tiny C)
option(USE_EXTRA "the extra backend" OFF)
include(FetchContent)
FetchContent_Declare(dep URL https://example.org/dep/releases/download/v1.0.0/dep-1.0.0.zip)
FetchContent_MakeAvailable(dep)
add_library(tiny MODULE tiny.c)
target_link_libraries(tiny PRIVATE dep)
install(TARGETS tiny LIBRARY DESTINATION lib)
if(USE_EXTRA)
  add_library(extra MODULE extra.c)
  install(TARGETS extra LIBRARY DESTINATION lib)
endif()
"""
TINY_C = '#include "dep.h"\nint tiny(void)\n{\n    return DEP_VALUE;\n}\n'
PATCH = """--- a/tiny.c
+++ b/tiny.c
@@ -1,5 +1,6 @@
 #include "dep.h"
 int tiny(void)
 {
+    /* the toolkit's fix */
     return DEP_VALUE;
 }
"""
RECIPE = """[recipe]
name = "tiny"

[source]
git = "https://example.org/tiny.git"
commit = "{commit}"

[build]
collect = "install"

[features.extra]
summary = "the extra backend (opt-in)"
default = false
define = "USE_EXTRA"
library = "extra"

[[outputs]]
library = "tiny"

[[outputs]]
feature = "extra"

[patches]
series = "patches/series"

# The tree declares a release asset; the mirror serves the tag archive of the same version.
[[fetchcontent]]
name = "dep"
url = "https://example.org/dep/archive/refs/tags/v1.0.0.tar.gz"
"""


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def dep_archive(path: Path, name: str, version: str, value: int) -> None:
    """A CMake dependency's tag archive, laid out as GitHub's (one top folder)."""
    files = {"CMakeLists.txt": f"add_library({name} INTERFACE)\n"
                               f"target_include_directories({name} INTERFACE ${{CMAKE_CURRENT_SOURCE_DIR}})\n",
             f"{name}.h": f"#define {name.upper()}_VALUE {value}\n"}
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for rel, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{name}-{version}/{rel}")
            info.size, info.mtime = len(data), 0
            tar.addfile(info, io.BytesIO(data))


def commit_change(work: Path, branch: str, edits: dict[str, str]) -> str:
    git(work, "checkout", "-q", "-B", branch, "main")
    for rel, text in edits.items():
        (work / rel).write_text(text)
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", branch)
    git(work, "push", "-q", "origin", branch)
    return git(work, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    """The mirror (BASE/<host>/<path>) with the tiny repository and its dependency archives; the revisions."""
    need("git")
    need("cc", "gcc")
    base = tmp_path_factory.mktemp("upstream")
    mirror = base / "mirror"
    bare = mirror / "example.org" / "tiny.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    work = base / "work"
    subprocess.run(["git", "clone", "-q", str(bare), str(work)], check=True, capture_output=True)
    for rel, text in {"CMakeLists.txt": CMAKE, "tiny.c": TINY_C, "extra.c": "int extra(void) { return 3; }\n"}.items():
        (work / rel).write_text(text)
    git(work, "add", ".")
    git(work, "commit", "-q", "-m", "first")
    git(work, "push", "-q", "origin", "HEAD:main")
    revs = {"first": git(work, "rev-parse", "HEAD")}
    revs["shifted"] = commit_change(work, "shifted", {"tiny.c": "/* a licence header */\n\n" + TINY_C})
    revs["upstreamed"] = commit_change(work, "upstreamed", {"tiny.c": TINY_C.replace(
        "{\n    return", "{\n    /* the toolkit's fix */\n    return")})
    revs["renamed"] = commit_change(work, "renamed",
                                    {"CMakeLists.txt": CMAKE.replace("USE_EXTRA", "USE_EXTRA_BACKEND")})
    revs["deps"] = commit_change(work, "deps", {"CMakeLists.txt": CMAKE.replace("v1.0.0/dep-1.0.0", "v1.1.0/dep-1.1.0")
                                 .replace("FetchContent_MakeAvailable(dep)", "FetchContent_Declare(other URL "
                                          "https://example.org/other/archive/refs/tags/v2.0.0.zip)\n"
                                          "FetchContent_MakeAvailable(dep other)")})
    revs["conflict"] = commit_change(work, "conflict", {"tiny.c": TINY_C.replace(
        "int tiny(void)\n{\n    return DEP_VALUE;\n}", "int tiny(void) { return DEP_VALUE + 1; }")})
    revs["library"] = commit_change(work, "library", {"CMakeLists.txt": CMAKE.replace(
        "install(TARGETS tiny ", "set_target_properties(tiny PROPERTIES OUTPUT_NAME tiny-ep)\ninstall(TARGETS tiny ")})
    revs["nodep"] = commit_change(work, "nodep", {"dep.h": "#define DEP_VALUE 1\n", "CMakeLists.txt": CMAKE.replace(
        "FetchContent_Declare(dep URL https://example.org/dep/releases/download/v1.0.0/dep-1.0.0.zip)\n"
        "FetchContent_MakeAvailable(dep)\n", "").replace("target_link_libraries(tiny PRIVATE dep)\n", "")})
    revs["exports"] = commit_change(work, "exports", {
        "tiny.c": TINY_C + "int tiny_version(void)\n{\n    return 2;\n}\n",
        "tiny.map": "/* what the module shows */\nTINY_1 {\n  global:\n    tiny;\n    tiny_version;\n"
                    "  local:\n    *;\n};\n",
        "CMakeLists.txt": CMAKE.replace("install(TARGETS tiny ", "set_target_properties(tiny PROPERTIES LINK_FLAGS "
                                        "\"-Wl,--version-script=${CMAKE_CURRENT_SOURCE_DIR}/tiny.map\")\n"
                                        "install(TARGETS tiny ")})
    git(work, "tag", "v2", revs["deps"])
    git(work, "push", "-q", "origin", "v2")
    for version, value in (("1.0.0", 1), ("1.1.0", 2)):
        dep_archive(mirror / "example.org/dep/archive/refs/tags" / f"v{version}.tar.gz", "dep", version, value)
    dep_archive(mirror / "example.org/other/archive/refs/tags/v2.0.0.tar.gz", "other", "2.0.0", 5)
    return mirror, revs


@pytest.fixture
def recipe(upstream, tmp_path):
    """A fresh copy of the tiny recipe pinned to the first revision, its series and its lock file."""
    mirror, revs = upstream
    (tmp_path / "patches").mkdir()
    (tmp_path / "patches" / "0001-fix.patch").write_text(PATCH)
    import hashlib

    sha = hashlib.sha256(PATCH.encode()).hexdigest()
    (tmp_path / "patches" / "series").write_text(
        f"# The toolkit's fix to tiny().\n0001-fix.patch phase=base sha256={sha}\n")
    path = tmp_path / "tiny.toml"
    path.write_text(RECIPE.format(commit=revs["first"]))
    toolkit("lock", "--recipe", str(path), "--mirror", mirror.as_uri())
    return path


def toolkit(*args: str, ok: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    if ok:
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def bump(recipe: Path, mirror: Path, to: str, *extra: str) -> subprocess.CompletedProcess:
    return toolkit("bump", "--recipe", str(recipe), "--to", to, "--mirror", mirror.as_uri(), "--offline",
                   "--build-dir", str(recipe.parent / "build"), *extra, ok=False)


def build(recipe: Path, mirror: Path, *extra: str) -> subprocess.CompletedProcess:
    return toolkit("build", "--recipe", str(recipe), "--mirror", mirror.as_uri(), "--offline", "--build-dir",
                   str(recipe.parent / "build"), *extra, ok=False)


def test_moved_context_is_refreshed_and_the_new_pin_written(upstream, recipe):
    mirror, revs = upstream
    before = recipe.read_text()
    proc = bump(recipe, mirror, "shifted")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = proc.stdout
    assert "verdict: **automatic**" in report
    assert "| 0001-fix.patch | refresh (regenerated) | applies with offset +2 (tiny.c hunk #1) |" in report
    assert recipe.read_text() == before.replace(revs["first"], revs["shifted"])
    patch = (recipe.parent / "patches" / "0001-fix.patch").read_text()
    assert "@@ -3,5 +3,6 @@" in patch  # three lines of context, on the new line numbers
    survey_copy = recipe.parent / "build" / "tiny" / "bump" / "source"
    again = toolkit("patch", "check", str(recipe.parent / "patches" / "series"), str(survey_copy), ok=False)
    assert "0001-fix.patch: already applied" in again.stdout  # the survey's patched copy holds the refreshed fix
    built = build(recipe, mirror)
    assert built.returncode == 0, built.stderr[-3000:]


def test_an_upstreamed_patch_is_dropped(upstream, recipe):
    mirror, revs = upstream
    proc = bump(recipe, mirror, "upstreamed")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "| 0001-fix.patch | drop (upstream has it) | already applied, skipping |" in proc.stdout
    series = (recipe.parent / "patches" / "series").read_text()
    assert "0001-fix.patch" not in series and "toolkit's fix" not in series
    assert not (recipe.parent / "patches" / "0001-fix.patch").exists()
    assert revs["upstreamed"] in recipe.read_text()
    assert build(recipe, mirror).returncode == 0


def test_a_renamed_option_loses_the_feature_and_names_the_candidate(upstream, recipe):
    mirror, revs = upstream
    proc = bump(recipe, mirror, "renamed")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = proc.stdout
    assert "- added: `USE_EXTRA_BACKEND`" in report and "- removed: `USE_EXTRA`" in report
    assert ("feature extra: the tree no longer declares USE_EXTRA (maybe USE_EXTRA_BACKEND); builds with "
            "--with-extra fail up front") in report
    assert revs["renamed"] in recipe.read_text()  # written: the default build does not need the feature
    refused = build(recipe, mirror, "--with-extra")
    assert refused.returncode == 2
    assert "feature 'extra' is on, but the source tree" in refused.stderr
    assert build(recipe, mirror).returncode == 0


def test_dependencies_re_versioned_and_added_are_pinned_from_the_mirror(upstream, recipe):
    mirror, revs = upstream
    proc = bump(recipe, mirror, "v2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = proc.stdout
    assert "2 configure(s)" in report  # the second one served the new versions
    assert ("| dep | 1.0.0 -> 1.1.0 | https://example.org/dep/releases/download/v1.1.0/dep-1.1.0.zip | "
            "https://example.org/dep/archive/refs/tags/v1.1.0.tar.gz |") in report
    assert "| other | added | https://example.org/other/archive/refs/tags/v2.0.0.zip | " \
           "https://example.org/other/archive/refs/tags/v2.0.0.tar.gz |" in report
    text = recipe.read_text()
    assert 'url = "https://example.org/dep/archive/refs/tags/v1.1.0.tar.gz"' in text
    assert 'name = "other"' in text and "v1.0.0" not in text
    lock = recipe.with_name("tiny.lock.toml").read_text()
    assert "v1.1.0.tar.gz" in lock and "v2.0.0.tar.gz" in lock and "v1.0.0" not in lock
    built = build(recipe, mirror)
    assert built.returncode == 0, built.stderr[-3000:]
    assert "CMake asked the dependency provider for: FetchContent dep, other" in built.stderr


def test_a_conflict_writes_nothing_and_shows_the_hunk(upstream, recipe):
    mirror, revs = upstream
    files = {p: p.read_bytes() for p in recipe.parent.rglob("*") if p.is_file() and "build" not in p.parts}
    proc = bump(recipe, mirror, revs["conflict"][:10])
    assert proc.returncode == 1
    assert "| 0001-fix.patch | **conflict** | FAILS: tiny.c hunk #1 @@ -1,5 +1,6 @@ |" in proc.stdout
    assert "found near there (lines 1-2 of tiny.c):" in proc.stdout
    # The way out it shows picks the patches a build of the recipe picks.
    assert ("run `.nox/toolkit/bin/python -m toolkit patch apply --partial --recipe tiny COPY`, make its failed "
            "hunks by hand, then `.nox/toolkit/bin/python -m toolkit patch refresh --recipe tiny PRISTINE COPY`"
            ) in proc.stdout
    assert "nothing written (the series does not apply)" in proc.stdout
    assert {p: p.read_bytes() for p in files} == files


def test_check_only_reports_and_a_renamed_library_needs_a_person(upstream, recipe):
    mirror, revs = upstream
    before = recipe.read_text()
    proc = bump(recipe, mirror, "library", "--check")
    assert proc.returncode == 1
    assert "library libtiny.so is now libtiny-ep.so" in proc.stdout
    assert "nothing written (--check)" in proc.stdout
    assert recipe.read_text() == before
    assert bump(recipe, mirror, "shifted", "--check").returncode == 0
    assert recipe.read_text() == before


def test_an_unknown_revision_names_the_repository(upstream, recipe):
    mirror, _ = upstream
    proc = bump(recipe, mirror, "no-such-branch")
    assert proc.returncode == 2
    assert "revision 'no-such-branch' is not in file://" in proc.stderr
    assert "example.org/tiny.git" in proc.stderr


def test_offline_reads_a_local_git_repository_not_in_the_cache(upstream, tmp_path):
    mirror, revs = upstream
    from toolkit.sources.cache import Cache
    from toolkit.sources.git import fetch_git

    checkout = fetch_git((mirror / "example.org" / "tiny.git").as_uri(), revs["first"], Cache(tmp_path / "cache"),
                         offline=True)
    assert (checkout / "tiny.c").read_text() == TINY_C


def test_offline_reads_a_pinned_archive_from_a_local_mirror(upstream, tmp_path):
    mirror, _ = upstream
    import hashlib

    from toolkit.sources.cache import Cache
    from toolkit.sources.download import fetch
    from toolkit.util.errors import ToolkitError

    url = "https://example.org/dep/archive/refs/tags/v1.1.0.tar.gz"
    sha = hashlib.sha256((mirror / "example.org/dep/archive/refs/tags/v1.1.0.tar.gz").read_bytes()).hexdigest()
    got = fetch(url, sha, Cache(tmp_path / "cache"), (mirror.as_uri(),), offline=True)
    assert hashlib.sha256(got.read_bytes()).hexdigest() == sha
    with pytest.raises(ToolkitError, match="offline: .* is not in the download cache"):
        fetch(url.replace("v1.1.0", "v9"), sha.replace(sha[0], "0" if sha[0] != "0" else "1", 1),
              Cache(tmp_path / "other"), (mirror.as_uri(),), offline=True)


def test_a_dependency_the_tree_no_longer_asks_for_is_dropped(upstream, recipe):
    mirror, revs = upstream
    proc = bump(recipe, mirror, "nodep")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "| dep | removed | - | https://example.org/dep/archive/refs/tags/v1.0.0.tar.gz |" in proc.stdout
    assert "[[fetchcontent]]" not in recipe.read_text()
    assert "example.org/dep" not in recipe.with_name("tiny.lock.toml").read_text()
    built = build(recipe, mirror)
    assert built.returncode == 0, built.stderr[-3000:]
    assert "CMake asked the dependency provider for: FetchContent none" in built.stderr


def test_exports_the_version_script_changed_are_reported_and_the_check_refuses_them(upstream, recipe):
    """The recipe says libtiny.so exports exactly `tiny`; the new revision's version script (named in the link
    flags CMake wrote to build.ninja) adds `tiny_version`: a person must decide, and the build stops at check."""
    mirror, revs = upstream
    recipe.write_text(recipe.read_text().replace('[[outputs]]\nlibrary = "tiny"\n',
                                                 '[[outputs]]\nlibrary = "tiny"\nexports = ["tiny"]\n'))
    proc = bump(recipe, mirror, "exports")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    report = proc.stdout
    assert "- `libtiny.so`: `tiny`, `tiny_version`" in report
    assert "- **changed** `libtiny.so` against the recipe: added `tiny_version`, removed none" in report
    assert "library libtiny.so: its version script adds `tiny_version` and drops nothing" in report
    assert revs["exports"] in recipe.read_text()
    built = build(recipe, mirror)
    assert built.returncode == 1  # built, and the check stage refuses it: a failed check
    assert "exports 2 symbol(s), expected exactly ['tiny']; unexpected: tiny_version" in built.stderr


def test_a_survey_that_fails_in_the_named_root_does_not_advise_passing_root(upstream, recipe):
    mirror, revs = upstream
    proc = bump(recipe, mirror, "shifted", "--check", "--root", "no-such-root")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "the CMake surface was not surveyed in build root no-such-root" in proc.stdout
    assert "pass --root" not in proc.stdout  # it was given
