"""The guide to moving to a new upstream revision (docs/guides/new-upstream-revision.md): every command it
shows parses with the real CLI."""

from __future__ import annotations

import re
import shlex

from tests.support.tools import ROOT
from toolkit.cli.main import build_parser, expand_feature_flags


def _guide() -> str:
    return (ROOT / "docs" / "guides" / "new-upstream-revision.md").read_text()


def _commands(section: str) -> list[list[str]]:
    out = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            argv = shlex.split(line, comments=True)
            if argv[:3] in (["python", "-m", "toolkit"], [".nox/toolkit/bin/python", "-m", "toolkit"]):
                out.append(argv[3:])
            elif argv[:4] == ["nox", "-s", "bump", "--"]:
                out.append(["bump", *argv[4:]])
    out += [shlex.split(m)[3:] for m in re.findall(r"`((?:\.nox/toolkit/bin/)?python -m toolkit [^`]*)`", section)]
    return out


def test_every_command_of_the_guide_parses():
    commands = _commands(_guide())
    assert {argv[0] for argv in commands} >= {"bump", "survey", "patch"}
    for argv in commands:
        args = build_parser().parse_args(expand_feature_flags(argv))
        assert callable(args.func), argv
    bump = build_parser().parse_args(["bump", "--recipe", "umbrella-ep-real", "--to", "main", "--check"])
    assert (bump.recipe, bump.to, bump.check, bump.root) == ("umbrella-ep-real", "main", True, None)


def test_the_guide_shows_a_real_report_of_the_real_recipe():
    guide = _guide()
    assert "# bump umbrella-ep-real: a2ea3b25f420 -> aa9cf1d27652" in guide
    assert "| 0006-guard-advance-backend-option-before-nchw.patch | keep | applies cleanly |" in guide
    assert "| 0002-runpath-for-bare-name-backends.patch | keep | applies cleanly |" in guide
