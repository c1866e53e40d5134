"""A feature the recipe turns on but the tree at hand does not declare (an older revision without the hip
backend, say) is refused up front, naming the revision and the feature; without it the revision builds."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.tools import ROOT, need

RECIPE = """
[recipe]
name = "tiny"

[build]
output_dir_define = "TINY_OUTPUT_DIR"

[features.backend]
summary = "an opt-in backend the tree once spelled USE_BACKEND_OLD"
default = false
[[features.backend.spelling]]
define = "USE_BACKEND"
[[features.backend.spelling]]
define = "USE_BACKEND_OLD"

[[outputs]]
library = "tiny"
"""

CMAKE = """cmake_minimum_required(VERSION 3.20)
project(tiny C)
add_library(tiny SHARED tiny.c)
set_target_properties(tiny PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${TINY_OUTPUT_DIR})
"""


def git(repo, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def test_a_revision_without_the_features_option_refuses_it_and_builds_without(tmp_path):
    need("git")
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "CMakeLists.txt").write_text(CMAKE)
    (repo / "tiny.c").write_text("int tiny(void) { return 1; }\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "a revision before the backend existed")
    commit = git(repo, "rev-parse", "HEAD")
    recipe = tmp_path / "tiny.toml"
    recipe.write_text(RECIPE)

    def build(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "toolkit", "build", "--recipe", str(recipe), "--source",
                               f"git+file://{repo}@{commit}", "--build-dir", str(tmp_path / "b"), *extra],
                              cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})

    refused = build("--with-backend")
    assert refused.returncode == 2
    assert "feature 'backend' is on, but the source tree" in refused.stderr
    assert f"(git file://{repo} at {commit}) declares none of its CMake options (USE_BACKEND, USE_BACKEND_OLD)" \
        in refused.stderr
    assert not (tmp_path / "b" / "tiny" / "release" / "lib").exists()
    built = build()
    assert built.returncode == 0, built.stderr[-3000:]
    assert (tmp_path / "b" / "tiny" / "release" / "lib" / "libtiny.so").is_file()
