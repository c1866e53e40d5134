"""`python -m toolkit patch check|apply|refresh`: the patch stage on any tree, without a recipe.

check: prints one analysis line per patch (details under failures); exit 0 when every patch applies
(or is already applied), 1 when any would not. apply: all or nothing; a failure is an error (exit 2)
whose message is the analysis. refresh: rewrites the series from PRISTINE and EDITED trees.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from toolkit.patching.analysis import OK_STATUSES, format_report
from toolkit.patching.apply import analyze, apply_series
from toolkit.patching.hunks import MAX_FUZZ
from toolkit.patching.refresh import refresh_series
from toolkit.patching.series import PHASES, load_series
from toolkit.util import log


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("patch", help="check, apply or refresh a patch series",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="patch_command", metavar="ACTION", required=False)

    def common(p: argparse.ArgumentParser, phases: list[str], default: str) -> None:
        p.add_argument("--with", dest="features", action="append", default=[], metavar="FEATURE",
                       help="enable a feature for when= conditions (repeatable, or comma-separated)")
        p.add_argument("--phase", choices=phases, default=default,
                       help=f"which patches: {', '.join(phases)} (default: {default})")

    for name, func, text in (("check", _check, "analyse every patch; change nothing"),
                             ("apply", _apply, "apply every patch, or none")):
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument("series", type=Path, metavar="SERIES", help="the series file (patches/<recipe>/series)")
        p.add_argument("tree", type=Path, metavar="TREE", help="the source tree to check or patch in place")
        common(p, [*PHASES, "all"], "all")
        p.add_argument("--max-fuzz", type=int, default=MAX_FUZZ, choices=range(0, MAX_FUZZ + 1),
                       help=f"largest fuzz factor accepted (default {MAX_FUZZ}; 0: context must match)")
        if name == "apply":
            p.add_argument("--partial", action="store_true",
                           help="apply every hunk that applies and report the rest (to refresh a series "
                                "by hand; exit 1 when any hunk failed)")
        p.set_defaults(func=func)

    p = sub.add_parser("refresh", help="regenerate the series from an edited tree",
                       description="rewrite the series' patches so PRISTINE patched gives EDITED")
    p.add_argument("series", type=Path, metavar="SERIES", help="the series file to rewrite")
    p.add_argument("pristine", type=Path, metavar="PRISTINE", help="the unpatched source tree")
    p.add_argument("edited", type=Path, metavar="EDITED", help="a copy with the changes the series should make")
    common(p, list(PHASES), "base")
    p.add_argument("--dry-run", action="store_true", help="say what would change; write nothing")
    p.set_defaults(func=_refresh)


def _features(args: argparse.Namespace) -> list[str]:
    return [f for item in args.features for f in item.split(",") if f]


def _check(args: argparse.Namespace) -> int:
    analyses = analyze(load_series(args.series), args.tree, args.phase, _features(args), args.max_fuzz)
    print(format_report(analyses) if analyses else f"{args.series}: no patches for phase {args.phase}")
    return 0 if all(a.status in OK_STATUSES for a in analyses) else 1


def _apply(args: argparse.Namespace) -> int:
    analyses = apply_series(load_series(args.series), args.tree, args.phase, _features(args), args.max_fuzz,
                            partial=args.partial)
    print(format_report(analyses) if analyses else f"{args.series}: no patches for phase {args.phase}")
    if not all(a.status in OK_STATUSES for a in analyses):
        log.warn(f"{args.tree} is now partly patched (--partial): make the failed hunks' changes by hand, "
                 f"then run `python -m toolkit patch refresh {args.series} PRISTINE {args.tree}`")
        return 1
    log.info(f"applied {sum(1 for a in analyses if a.changes)} patch(es) to {args.tree}")
    return 0


def _refresh(args: argparse.Namespace) -> int:
    result = refresh_series(load_series(args.series), args.pristine, args.edited, args.phase,
                            _features(args), write=not args.dry_run)
    print(result.report())
    for path in result.written:
        log.info(f"wrote {path}")
    return 0
