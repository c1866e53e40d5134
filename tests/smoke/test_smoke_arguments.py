"""The smoke checker's command line: recipe values that look like options (a log pattern, an error pattern, an
environment value starting with '-') are glued to their option, so the checker reads each back exactly."""

from __future__ import annotations

import sys
from pathlib import Path

from toolkit.recipe.smoke import SmokeSettings
from toolkit.smoke.inside import smoke_check
from toolkit.smoke.run import checker_command


def test_option_looking_recipe_values_reach_the_checker_as_values():
    settings = SmokeSettings(expect_log=("-x", "--require-gpu"), provider_options={"k": "-v"},
                             session_config={"-s": "1"}, wrong_provider_options={"w": "--z"}, wrong_error="--package")
    cmd = checker_command(Path(sys.executable), Path(smoke_check.__file__), ["pkg"], settings, {"E": "-y=1"}, False)
    args = smoke_check.parse_args(cmd[3:])
    assert args.package == ["pkg"] and args.env == ["E=-y=1"] and args.expect_log == ["-x", "--require-gpu"]
    assert args.provider_option == ["k=-v"] and args.session_config == ["-s=1"]
    assert args.wrong_provider_option == ["w=--z"] and args.wrong_error == "--package"
    assert args.require_gpu is False
