"""`python -m toolkit docs reference [--check]`: the reference pages of docs/ written from the code."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from toolkit.util import log


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("docs", help="write the documentation's reference pages from the code")
    actions = p.add_subparsers(dest="docs_action", metavar="ACTION", required=True)
    ref = actions.add_parser("reference", help="write docs/reference/*.md (commands, recipe keys, environment, "
                                               "stages, sessions) from the code")
    ref.add_argument("--check", action="store_true",
                     help="write nothing; exit 1 naming the pages that differ from what the code gives")
    ref.add_argument("--out", type=Path, metavar="DIR", help="write into DIR (default: docs/reference)")
    ref.set_defaults(func=_reference)


def _reference(args: argparse.Namespace) -> int:
    from toolkit.docs import reference

    if args.check:
        stale = reference.stale_pages(args.out)
        for name in stale:
            print(f"error: docs/reference/{name} differs from the code ({reference.first_difference(name, args.out)}): "
                  "run `python -m toolkit docs reference`", file=sys.stderr)
        return 1 if stale else 0
    written = reference.write_pages(args.out)
    for path in written:
        log.info(f"wrote {path}")
    if not written:
        log.info("reference pages up to date")
    return 0
