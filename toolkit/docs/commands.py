"""docs/reference/commands.md from the argument parser itself (toolkit.cli.main.build_parser): every command, nested
ones too, with its usage line, description and one row per argument."""

from __future__ import annotations

import argparse

from toolkit.docs.markdown import cell, table
from toolkit.util.errors import EXIT_CODES, RUN_TOOLKIT


def _commands(parser: argparse.ArgumentParser, name: str) -> list[tuple[str, argparse.ArgumentParser, str]]:
    """(full name, parser, one-line help) of every command below `parser`, depth first, in `--help` order."""
    found = []
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
        for sub_name, sub in action.choices.items():
            if sub_name not in helps:
                continue  # an alias
            full = f"{name} {sub_name}".strip()
            found.append((full, sub, helps[sub_name]))
            found += _commands(sub, full)
    return found


def _default(action: argparse.Action) -> str:
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._HelpAction,
                           argparse._VersionAction, argparse._CountAction, argparse._AppendAction)):
        return ""
    default = action.default
    if default in (None, argparse.SUPPRESS, [], "") or isinstance(default, bool):
        return ""
    return f"`{default}`"


def _argument(action: argparse.Action) -> str:
    if action.option_strings:
        flags = ", ".join(f"`{s}`" for s in action.option_strings)
        if action.nargs == 0:
            return flags
        metavar = action.metavar or (f"{{{','.join(map(str, action.choices))}}}" if action.choices
                                     else action.dest.upper())
        return f"{flags} {cell(str(metavar))}"
    metavar = action.metavar or action.dest
    if action.nargs in ("?", "*"):
        return cell(f"[{metavar}]")
    return cell(str(metavar)) + (" ..." if action.nargs in ("+", argparse.REMAINDER) else "")


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    text = parser._get_formatter()._expand_help(action) if action.help else ""
    if action.choices and not action.option_strings or action.choices and action.metavar:
        text += f" (one of: {', '.join(map(str, action.choices))})"
    if action.required:
        text += " Required."
    return cell(" ".join(text.split()))


def command_section(full: str, parser: argparse.ArgumentParser, summary: str) -> list[str]:
    usage = " ".join(parser.format_usage().split())[len("usage: "):]
    lines = [f"## `{full}`", "", summary + ("." if summary and not summary.endswith(".") else ""), "",
             "```text", usage, "```", ""]
    if parser.description:
        lines += [" ".join(parser.description.split()), ""]
    rows = [[_argument(a), _default(a), _help(parser, a)] for a in parser._actions
            if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))]
    if rows:
        lines += table(["argument", "default", "meaning"], rows) + [""]
    return lines


def render(parser: argparse.ArgumentParser) -> str:
    lines = ["# Commands", "",
             "Generated from the argument parser (`toolkit/cli/main.py`, each package's `cli.py`) by "
             f"`{RUN_TOOLKIT} docs reference`; do not edit.", "",
             f"Every command is `{RUN_TOOLKIT} COMMAND` after README's set-up (or the `ort-amdgpu COMMAND` console "
             "script that `pip install -e .` puts on `PATH`); the nox sessions run them (see [Sessions](sessions.md)). "
             "`-q`/`--quiet` and `-v`/`--verbose` are taken before or after the command. `--with-NAME` and "
             "`--without-NAME` are read as `--with NAME` and `--without NAME`.", ""]
    commands = _commands(parser, "")
    lines += table(["command", "what it does"], [[f"[`{full}`](#{anchor(full)})", cell(summary)]
                                                 for full, _, summary in commands]) + [""]
    lines += ["## Exit codes", "", "The same for every command (`toolkit/util/errors.py`):", ""]
    lines += table(["code", "meaning"], [[f"`{code}`", cell(meaning)] for code, meaning in EXIT_CODES.items()])
    lines += [""]
    for full, sub, summary in commands:
        lines += command_section(full, sub, summary)
    return "\n".join(lines).rstrip() + "\n"


def anchor(full: str) -> str:
    """MkDocs' anchor for the heading `## \\`full\\``."""
    return full.replace(" ", "-")
