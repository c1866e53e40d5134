"""What the command line says, read as a user reads it: help text that fits the command it is on."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.tools import ROOT


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
