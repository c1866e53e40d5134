"""CMake's steps run with git stopped at the work tree: a tree that asks git for its own commit (hip-ep's version
info does, at configure) gets no answer, not the commit of a checkout the build folder sits in."""

from __future__ import annotations

import subprocess

from tests.support.tools import require_tool
from tests.support.tools import run_toolkit as toolkit

RECIPE = """
[recipe]
name = "asks-git"
summary = "a tree that asks git for its commit at configure"

[[outputs]]
library = "asks-git"
"""

TREE = """cmake_minimum_required(VERSION 3.20)
project(asks_git NONE)
execute_process(COMMAND git rev-parse HEAD WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}" OUTPUT_VARIABLE commit
                RESULT_VARIABLE result ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
file(WRITE "${CMAKE_BINARY_DIR}/commit.txt" "${result}:${commit}")
"""


def test_a_tree_asking_git_for_its_commit_does_not_get_the_checkout_around_the_build_folder(tmp_path):
    require_tool("git", "the tree asks git for its commit inside a git checkout")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    git = ["git", "-C", str(checkout), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "outer"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "CMakeLists.txt").write_text(TREE)
    recipe = tmp_path / "asks-git.toml"
    recipe.write_text(RECIPE)
    build = checkout / "build"   # a build folder inside a git checkout, as ./build is inside the toolkit's
    toolkit("build", "--recipe", str(recipe), "--source", str(tree), "--build-dir", str(build), "--until", "configure")
    said = (build / "asks-git" / "release" / "cmake" / "commit.txt").read_text()
    assert head not in said and not said.startswith("0:"), said
