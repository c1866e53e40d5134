"""`python -m toolkit survey` as a person runs it: --dry-run prints the plan and makes nothing; a configure
that fails still writes the JSON, then exits 1 with one error line naming the log. The configures are real:
trees of `project(... NONE)`, so no compiler is needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.sample_tree import cmake_and_ninja
from toolkit.cli.main import main

RECIPE = """[recipe]
name = "tiny"

[source]
path = "src"

[build]
collect = "install"

[[outputs]]
library = "tiny"
"""


def tiny(tmp_path: Path, cmake: str) -> Path:
    """A recipe whose tree is one CMakeLists.txt written here; returns the recipe file."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.20)\nproject(tiny NONE)\n"
                                                     + cmake)
    recipe = tmp_path / "tiny.toml"
    recipe.write_text(RECIPE)
    return recipe


@pytest.mark.parametrize("recipe", ["amdgpu-ep", "tiny"])
def test_survey_dry_run_prints_the_plan_and_creates_nothing(tmp_path, capsys, recipe):
    if recipe == "tiny":
        recipe = str(tiny(tmp_path, 'option(USE_X "x" OFF)\n'))
    before = sorted(tmp_path.rglob("*"))
    build, out = tmp_path / "build", tmp_path / "survey.json"
    assert main(["survey", "--recipe", recipe, "--dry-run", "--build-dir", str(build), "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "survey: would run: a configure with the dependency provider in survey mode" in printed.err
    # The work tree's source: the source stage's copy (every recipe), which the patch stage patches (a series).
    work = next(Path(line.split(" -> ")[1]) for line in printed.out.splitlines() if "  source: copy -> " in line)
    assert f"  survey: fresh CMake folder {work.parent / 'survey'} (removed first)" in printed.out.splitlines()
    assert f"  survey: its output -> {work.parent / 'logs' / 'survey.log'}" in printed.out.splitlines()
    assert f"  survey: JSON -> {out}" in printed.out.splitlines()
    assert any(line.startswith("  survey: $ ") and f"-B {work.parent / 'survey'}" in line
               for line in printed.out.splitlines())
    assert sorted(tmp_path.rglob("*")) == before  # no build dir, no log, no JSON


def test_a_survey_whose_configure_fails_writes_its_json_and_exits_1_naming_the_log(tmp_path, capsys):
    cmake_and_ninja()
    recipe = tiny(tmp_path, 'message(FATAL_ERROR "tiny: this revision needs a person")\n')
    out = tmp_path / "survey.json"
    assert main(["survey", "--recipe", str(recipe), "--build-dir", str(tmp_path / "build"), "--out", str(out)]) == 1
    log = tmp_path / "build" / "tiny" / "release" / "logs" / "survey.log"
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert errors == [f"error: survey: the configure of {recipe} failed; its output is in {log}"]
    assert "tiny: this revision needs a person" in log.read_text()
    result = json.loads(out.read_text())
    assert result["configure"]["ok"] is False and result["configure"]["log"] == str(log)
    assert "  tiny: this revision needs a person" in result["configure"]["tail"]


def test_a_survey_that_configures_exits_0(tmp_path, capsys):
    cmake_and_ninja()
    recipe = tiny(tmp_path, 'option(USE_X "x" OFF)\n')
    assert main(["survey", "--recipe", str(recipe), "--build-dir", str(tmp_path / "build")]) == 0
    printed = capsys.readouterr()
    result = json.loads(printed.out)
    assert result["configure"]["ok"] is True and result["options"] == ["USE_X"]
    assert "error:" not in printed.err
