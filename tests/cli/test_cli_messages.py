"""What the command line says, read as a user reads it: help text that fits the command it is on."""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys

import pytest

from tests.support.tools import ROOT
from toolkit.cli.main import build_parser


def toolkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def quiet_help(command: str) -> str:
    text = " ".join(toolkit(*command.split(), "--help").stdout.split())
    return text.split("-q, --quiet ", 1)[1].split(" -v, --verbose", 1)[0]


@pytest.mark.parametrize("command", ["publish", "bump", "clean", "root show"])
def test_quiet_help_of_a_command_that_runs_no_cmake_does_not_speak_of_it(command):
    assert quiet_help(command) == "print errors and warnings only"


@pytest.mark.parametrize("command", ["build", "compile-check"])
def test_quiet_help_of_a_command_that_builds_says_where_cmake_output_goes(command):
    assert quiet_help(command) == "print errors and warnings only; CMake's and Ninja's output goes to <work tree>/logs/"


def test_root_show_suggests_commands_that_run_as_printed(tmp_path):
    """README's set-up makes .nox/toolkit; the system's Python lacks the toolkit's dependencies, so a hint that
    says a bare `python -m toolkit` ends in ModuleNotFoundError."""
    spec = tmp_path / "showtest.toml"
    spec.write_text('[root]\nsuite = "sid"\n\n[packages]\ntiny = ["hello"]\n')
    proc = subprocess.run([sys.executable, "-m", "toolkit", "root", "show", str(spec)], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT),
                                          "TOOLKIT_CACHE_DIR": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr
    suggested = re.findall(r"`([^`]*-m toolkit [^`]*)`", proc.stdout)
    assert f".nox/toolkit/bin/python -m toolkit root make {spec}" in suggested
    assert f".nox/toolkit/bin/python -m toolkit root image {spec}" in suggested
    for command in suggested:
        program, _, args = command.partition(" -m toolkit ")
        assert program == ".nox/toolkit/bin/python", command
        build_parser().parse_args(shlex.split(args))  # and the rest is a command line the toolkit reads


def _hint_strings(tree: ast.Module) -> list[ast.AST]:
    """String constants and f-strings of a module but its docstrings and argparse's prog/usage."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)}
    skipped = {id(k.value) for node in ast.walk(tree) if isinstance(node, ast.Call) for k in node.keywords
               if k.arg in ("prog", "help", "description", "epilog")}
    return [node for node in ast.walk(tree) if isinstance(node, ast.Constant | ast.JoinedStr)
            and id(node) not in docstrings | skipped]


def test_no_message_suggests_a_bare_python_m_toolkit():
    said = []
    for path in sorted((ROOT / "toolkit").rglob("*.py")):
        for node in _hint_strings(ast.parse(path.read_text(encoding="utf-8"))):
            parts = node.values if isinstance(node, ast.JoinedStr) else [node]
            text = "".join(p.value for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str))
            if re.search(r"(?<![\w/.])python3? -m toolkit \w", text):
                said.append(f"{path.relative_to(ROOT)}:{node.lineno}: {text[:80]}")
    assert said == []


# -- exit codes: the input is wrong (2), a check failed (1), a bug (3), interrupted (130, tests/pipeline) ---------

TINY_RECIPE = """[recipe]
name = "tiny"

[source]
path = "src"

[build]
generator = "Ninja"
output_dir_define = "OUT"

[[outputs]]
library = "tiny"
exports = ["tiny_entry"]
"""


def test_a_failed_check_and_a_wrong_input_exit_apart(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.20)\nproject(tiny C)\nadd_library(tiny SHARED tiny.c)\n"
        "set_target_properties(tiny PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${OUT})\n")
    (tmp_path / "src" / "tiny.c").write_text("int tiny_other(void) { return 1; }\n")  # not the export promised
    recipe = tmp_path / "tiny.toml"
    recipe.write_text(TINY_RECIPE)
    checked = toolkit("build", "--recipe", str(recipe), "--build-dir", str(tmp_path / "b"))
    assert checked.returncode == 1, checked.stderr[-3000:]  # built, and the check stage said no
    assert "expected exactly ['tiny_entry']" in checked.stderr and "Traceback" not in checked.stderr
    wrong = toolkit("build", "--recipe", str(tmp_path / "none.toml"), "--build-dir", str(tmp_path / "b"))
    assert wrong.returncode == 2 and wrong.stderr.startswith("error: ") and "recipe file not found" in wrong.stderr
    assert toolkit("build", "--no-such-option").returncode == 2


def test_an_internal_error_is_one_line_and_exit_3(monkeypatch, capsys):
    """A bug (an exception no stage raised on purpose) is not a traceback: one line naming it; -v shows where."""
    import argparse

    from toolkit.cli import main as cli

    def broken(args):
        raise KeyError("no-such-entry")

    for verbose in (False, True):
        monkeypatch.setattr(cli, "parse", lambda argv, v=verbose: argparse.Namespace(
            func=broken, quiet=False, verbose=v))
        assert cli.main(["list"]) == 3
        err = capsys.readouterr().err
        assert "error: internal error: KeyError: 'no-such-entry'" in err
        assert "hint: a bug in the toolkit; rerun with -v for the traceback" in err
        assert ("Traceback" in err) is verbose


def test_the_command_reference_documents_the_exit_codes():
    text = (ROOT / "docs" / "reference" / "commands.md").read_text()
    section = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `(\d+)` \| (.+) \|$", section, re.M))
    assert set(rows) == {"0", "1", "2", "3", "130"}
    assert rows["1"].startswith("a check failed") and rows["2"].startswith("the input is wrong")
    assert rows["3"].startswith("internal error") and rows["130"].startswith("interrupted")
