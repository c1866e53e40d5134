"""Ctrl-C during a build in a build root (`container --root NAME build`): the toolkit inside stops its tools and
exits 130 without a word; the toolkit outside, which sees that exit (or the Ctrl-C itself), says `error:
interrupted`: the line comes once, whether the whole process group got the signal or only the build tools."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.support.interrupt import interrupt_build
from tests.support.tools import ROOT

RECIPE = """[recipe]
name = "slow"

[source]
path = "src"

[build]
generator = "Ninja"
output_dir_define = "OUT"

[[outputs]]
library = "slow"
exports = []
"""

CMAKE = """cmake_minimum_required(VERSION 3.20)
project(slow C)
add_library(slow SHARED slow.c)
set_target_properties(slow PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${OUT})
add_custom_target(wait ALL COMMAND sleep 120)
"""


def _tools(session: int) -> list[int]:
    """The build tool of a session (ninja, which stops what it runs), as the host sees it."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)
            comm = fields[0].split("(", 1)[1]
            if int(fields[1].split()[3]) == session and comm == "ninja":
                found.append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    return found


@pytest.mark.parametrize("whom", ["group", "tools"])
def test_ctrl_c_in_a_root_says_interrupted_once(sid_root, tmp_path, whom):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "CMakeLists.txt").write_text(CMAKE)
    (tmp_path / "src" / "slow.c").write_text("int slow(void) { return 1; }\n")
    recipe = tmp_path / "slow.toml"
    recipe.write_text(RECIPE)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOOLKIT_BUILD_DIR": str(tmp_path / "build")}
    argv = [sys.executable, "-m", "toolkit", "container", "--root", "debian-sid-rocm", "build", "--recipe",
            str(recipe), "--source", str(tmp_path / "src")]
    # 3 s after the build step starts, ninja is running `sleep 120`; a CI runner or an IDE may stop only ninja.
    code, out = interrupt_build(argv, env, whom, _tools, start_within=600, settle=3, wait=120)
    assert code == 130, out
    assert out.count("error: interrupted") == 1, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
