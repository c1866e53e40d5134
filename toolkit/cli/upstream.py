"""`python -m toolkit bump` and `python -m toolkit survey`."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from toolkit.pipeline.options import add_build_arguments, add_option, options_from_args
from toolkit.util import argcheck, log

# The build options `bump` takes: how the sources are fetched, and where the survey's work tree goes.
BUMP_OPTIONS = ("mirrors", "insecure_mirror", "offline", "build_folder")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("bump", help="move a recipe to another revision of its git source; report what changed",
                       description="Resolve REV, judge the patch series on it, survey the new tree's CMake surface "
                                   "(options, FetchContent dependencies, libraries, system APIs) with a real "
                                   "configure, then write the new pin, re-locked dependencies and refreshed series "
                                   "all at once. Prints a Markdown report. Exit 0: written (or, with --check, "
                                   "nothing needs a person); 1: something needs a person (the report says what; "
                                   "a conflicting series writes nothing).")
    add_option(p, "recipe", required=True, default=None)
    p.add_argument("--to", required=True, metavar="REV",
                   help="commit, branch or tag of the recipe's git source or its mirror (a local repository also "
                        "takes short ids and main~1)")
    add_option(p, "mirrors", help="mirror tried before upstream (BASE/<host>/<path>); also $TOOLKIT_MIRRORS")
    add_option(p, "insecure_mirror")
    add_option(p, "offline", help="no network: read only the cache and local (file://) mirrors")
    p.add_argument("--check", action="store_true",
                   help="only report; exit 1 when the revision needs a person (for a scheduled CI job)")
    p.add_argument("--root", metavar="NAME", default=None,
                   help="configure in this build root (debian-sid-rocm): its ROCm, MIGraphX and ORT are the system")
    add_option(p, "build_folder",
               help="build folder for the survey's work tree (default: $TOOLKIT_BUILD_DIR or ./build)")
    p.add_argument("--report", type=Path, default=None, metavar="FILE", help="also write the report to FILE")
    p.set_defaults(func=_bump)

    s = sub.add_parser("survey", help="configure a recipe's tree with the dependency provider in survey mode; "
                                      "print what it asks for as JSON",
                       description="Fetch and patch the recipe's tree as a build does, configure it into "
                                   "<work tree>/survey with the dependency provider in survey mode, and print (or "
                                   "write to --out) every FetchContent request with what the tree declared, the "
                                   "options, the installed libraries and the API check. It configures on this "
                                   "machine; `python -m toolkit container --root NAME survey ...` surveys in a build "
                                   "root. Exit 0: configured; 1: the configure failed (the JSON is still written, "
                                   "the error names the log).")
    add_build_arguments(s)
    s.add_argument("--out", type=Path, default=None, metavar="FILE", help="write the JSON here instead of stdout")
    s.set_defaults(func=_survey)


def _bump(args: argparse.Namespace) -> int:
    from toolkit.upstream.bump import BumpRequest, bump
    from toolkit.upstream.report import human_items, markdown
    from toolkit.util.fsutil import atomic_write_text

    argcheck.git_revision(args.to, "--to")  # before the recipe is even read
    started = time.monotonic()
    result = bump(BumpRequest(args.recipe, args.to, args.check, args.root,
                              build=options_from_args(args, BUMP_OPTIONS)))
    text = markdown(result, args.check)
    print(text, end="")
    if args.report is not None:
        atomic_write_text(args.report, text)
    log.info(f"bump took {time.monotonic() - started:.0f} s")
    return 1 if human_items(result) else 0


def _survey(args: argparse.Namespace) -> int:
    from toolkit.upstream.survey import survey, write

    result = survey(options_from_args(args))
    if result is None:  # a dry run: the plan is printed, nothing made
        print(f"  survey: JSON -> {args.out or 'stdout'}")
        return 0
    write(result, args.out)
    if not result["configure"]["ok"]:
        # The JSON is still written: what the configure asked for before it stopped is what a person needs.
        print(f"error: survey: the configure of {result['recipe']} failed; its output is in "
              f"{result['configure']['log']}", file=sys.stderr)
        return 1
    return 0
