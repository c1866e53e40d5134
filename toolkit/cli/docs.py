"""`python -m toolkit docs reference [--check]`: the reference pages of docs/ written from the code."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from pathlib import Path

from toolkit.util import log
from toolkit.util.errors import RUN_TOOLKIT


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser],
             command_line: Callable[[], argparse.ArgumentParser]) -> None:
    """`command_line` builds the whole command line, for commands.md (toolkit.cli.main.build_parser)."""
    p = sub.add_parser("docs", help="write the documentation's reference pages from the code")
    actions = p.add_subparsers(dest="docs_action", metavar="ACTION", required=True)
    ref = actions.add_parser("reference", help="write docs/reference/*.md (commands, recipe keys, environment, "
                                               "stages, sessions) from the code")
    ref.add_argument("--check", action="store_true",
                     help="write nothing; exit 1 naming the pages that differ from what the code gives")
    ref.add_argument("--out", type=Path, metavar="DIR", help="write into DIR (default: docs/reference)")
    ref.set_defaults(func=functools.partial(_reference, command_line))


def _reference(command_line: Callable[[], argparse.ArgumentParser], args: argparse.Namespace) -> int:
    from toolkit.docs import reference

    parser = command_line()
    if args.check:
        stale = reference.stale_pages(parser, args.out)
        for name in stale:
            where = reference.first_difference(name, parser, args.out)
            print(f"error: docs/reference/{name} differs from the code ({where}): "
                  f"run `{RUN_TOOLKIT} docs reference`", file=sys.stderr)
        return 1 if stale else 0
    written = reference.write_pages(parser, args.out)
    for path in written:
        log.info(f"wrote {path}")
    if not written:
        log.info("reference pages up to date")
    return 0
