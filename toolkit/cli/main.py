"""`python -m toolkit <command>`: the same stages the Nox sessions run, without Nox.

Each area of the toolkit contributes its commands through a `register(subparsers)` function, called in
`_register_commands`; the parser sets `func`, which returns an exit code. `-q`/`-v` are accepted before or
after the command (nox passes its `-- ARGS` after it).
"""

from __future__ import annotations

import argparse
import difflib
import functools
import os
import sys
import traceback
from typing import Any, cast

from toolkit import __version__
from toolkit.util import log
from toolkit.util import toolenv as tools
from toolkit.util.argcheck import expand_feature_flags
from toolkit.util.dependencies import missing_dependency
from toolkit.util.errors import EXIT_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED, RUN_TOOLKIT, ToolkitError
from toolkit.util.redact import redact_text

# Commands whose module is imported alone when one of them is the command given (anything else, `--help`
# included, builds the whole parser): for these the start-up is most of what a user waits for (hipify
# converts a large tree in a fraction of a second; importing every command's module takes about 0.3 s).
QUICK_COMMANDS = ("hipify", "publish")


# Commands that run CMake and Ninja (a configure, a build, or builds of release entries): their -q help says
# where that output goes; the others' does not speak of it.
CMAKE_COMMANDS = ("build", "compile-check", "survey", "release", "container")


class Parser(argparse.ArgumentParser):
    """Every parser of the command line: no option is taken by a prefix of its name (`--gpu` is not
    `--gpu-targets`, `clean --ca` not `clean --cache`), for this parser and every command parser under it
    (argparse makes those of the class of the parser they are added to)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)


def _add_verbosity(parser: argparse.ArgumentParser, top: bool, cmake: bool = False) -> None:
    # Below the top level the default is SUPPRESS, so `-q build` is not undone by build's own default.
    default = False if top else argparse.SUPPRESS
    group = parser.add_mutually_exclusive_group()
    quiet = "print errors and warnings only"
    if top:
        quiet += " (a command that builds sends CMake's and Ninja's output to <work tree>/logs/)"
    elif cmake:
        quiet += "; CMake's and Ninja's output goes to <work tree>/logs/"
    group.add_argument("-q", "--quiet", action="store_true", default=default, help=quiet)
    group.add_argument("-v", "--verbose", action="store_true", default=default,
                       help="also print every command the toolkit runs, and every compiler command line")


def _subparsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every command parser below `parser`, nested ones too (`patch check`)."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                found += [sub, *_subparsers(sub)]
    return found


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or (command in QUICK_COMMANDS) that command's alone."""
    parser = Parser(
        prog="python -m toolkit",
        description="Build and packaging toolkit for ONNX Runtime on AMD GPUs.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    _add_verbosity(parser, top=True)
    # Its command parsers are Parsers too (argparse makes them of the parent's class); the commands' register
    # functions take the plain type.
    sub = cast("argparse._SubParsersAction[argparse.ArgumentParser]",
               parser.add_subparsers(dest="command", metavar="COMMAND", required=True))
    _register_commands(sub, command if command in QUICK_COMMANDS else None)
    for command_parser in _subparsers(parser):
        name = command_parser.prog.removeprefix(f"{parser.prog} ")
        _add_verbosity(command_parser, top=False, cmake=name in CMAKE_COMMANDS)
    return parser


def _register_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser], quick: str | None) -> None:
    """Every command in the order of `--help`, or the quick command alone. The imports are here, written out,
    so that a quick command imports its own module only and the import-cycle test sees every command module."""
    if quick == "hipify":
        from toolkit.cli import hipify

        hipify.register(sub)
        return
    if quick == "publish":
        from toolkit.cli import publish

        publish.register(sub)
        return
    from toolkit.cli import (
        build,
        compile_check,
        docs,
        hipify,
        patching,
        publish,
        release,
        root,
        sources,
        upstream,
        wheel,
        workdirs,
    )

    release_register = functools.partial(release.register, command_parser=command_parser)
    for register in (build.register, patching.register, release_register, publish.register, wheel.register,
                     sources.register, hipify.register, root.register, workdirs.register,
                     compile_check.register, upstream.register):
        register(sub)
    # `docs reference` documents this whole command line and `container` reads a session's arguments with that
    # session's parser: both are handed what they need (they cannot import this module, which imports them).
    docs.register(sub, command_line=build_parser)


def command_parser(command: str) -> argparse.ArgumentParser:
    """The parser of one command, as `python -m toolkit COMMAND ...` reads the arguments after COMMAND (a fresh
    one: the caller may change its defaults)."""
    parser = build_parser(command)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            chosen: argparse.ArgumentParser = action.choices[command]
            return chosen
    raise ToolkitError(f"no command named {command!r}")



def _chosen(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The deepest command parser `args` went through (`build`, `root make`)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            name = getattr(args, action.dest, None)
            if name in action.choices:
                return _chosen(action.choices[name], args)
    return parser


def parse(argv: list[str]) -> argparse.Namespace:
    """argv parsed; an unknown option is reported by the command it was given to, with the option it most
    likely meant and where its options are listed: one line, not the usage (argparse would print the
    top-level usage, with no suggestion, above the line that matters)."""
    parser = build_parser(next((a for a in argv if not a.startswith("-")), None))  # top level: no values
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        command = _chosen(parser, args)
        options = [o for action in command._actions for o in action.option_strings]
        said = []
        for arg in unknown:
            close = _meant(arg.split("=", 1)[0], options) if arg.startswith("-") else []
            said.append(f"{arg} (did you mean {' or '.join(close)}?)" if close else arg)
        command.exit(2, f"{command.prog}: error: unrecognized arguments: {' '.join(said)}\n"
                        f"  hint: `{command.prog.replace(parser.prog, RUN_TOOLKIT, 1)} --help` lists its options\n")
    return args


def _meant(option: str, options: list[str]) -> list[str]:
    """The options `option` most likely stands for: those it begins (an abbreviation, which is not taken),
    else the closest spelling."""
    longer = [o for o in options if o.startswith(option) and option.startswith("--") and o != option]
    return sorted(dict.fromkeys(longer))[:3] if longer else difflib.get_close_matches(option, options, n=1)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = parse(expand_feature_flags(argv))
        log.set_quiet(args.quiet)
        log.set_verbose(args.verbose)
        if args.verbose:
            log.show_every_command()
        tools.prefer_own_tools()
        return int(args.func(args) or 0)
    except ToolkitError as exc:
        print(f"error: {log.shown(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:   # a file system refusal no stage foresaw: still one line, not a traceback
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {log.shown(where + (exc.strerror or str(exc)))}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        # Inside a build root the toolkit that started this one says it (its own run of this process sees the
        # exit code 130): the line comes once, and from the process that lives to print it (bwrap, which gets
        # the same Ctrl-C, may end this one first).
        if not os.environ.get("TOOLKIT_IN_ROOT"):
            print("error: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ModuleNotFoundError as exc:  # a declared dependency this Python lacks is no bug: say what installs it
        missing = missing_dependency(exc)
        if missing is None:
            return _internal_error(exc)
        print(f"error: {log.shown(str(missing))}", file=sys.stderr)
        return missing.exit_code
    except Exception as exc:
        return _internal_error(exc)


def _internal_error(exc: Exception) -> int:
    """A bug: one line that says so, the traceback only when asked for."""
    if log.is_verbose():
        traceback.print_exception(exc)
    said = redact_text(" ".join(str(exc).split()))[:300]
    print(f"error: internal error: {type(exc).__name__}{': ' + said if said else ''}\n"
          f"  hint: a bug in the toolkit; rerun with -v for the traceback and report it with that output",
          file=sys.stderr)
    return EXIT_INTERNAL
