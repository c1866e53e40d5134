"""`python -m toolkit hipify SRC OUT`: convert any CUDA tree with the built-in engine (or hipify-perl)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from toolkit.hipify.tree import hipify_tree
from toolkit.pipeline.options import positive_int
from toolkit.recipe.hipify import DNN_TARGETS, ENGINES, LAUNCH_SYNTAXES, HipifySettings
from toolkit.util import log


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "hipify", help="convert a CUDA source tree to HIP, out of tree",
        description="Convert every C/C++/CUDA file under SRC into OUT (one output per input, same names). "
                    "Reruns convert only changed files. Unmapped CUDA names are listed with file:line.")
    p.add_argument("src", type=Path, help="source tree")
    p.add_argument("out", type=Path, help="output folder (outside SRC)")
    p.add_argument("--strict", action="store_true", help="exit 1 when any CUDA name is left unmapped")
    p.add_argument("--jobs", "-j", type=positive_int, default=None, help="worker processes (default: all cores)")
    p.add_argument("--engine", choices=ENGINES, default="builtin")
    p.add_argument("--launch-syntax", choices=LAUNCH_SYNTAXES, default="chevron",
                   help="keep <<<>>> launches (chevron) or write hipLaunchKernelGGL")
    p.add_argument("--dnn", choices=DNN_TARGETS, default="miopen", help="map cuDNN to MIOpen or hipDNN")
    p.add_argument("--hipify-perl", default="hipify-perl", help="hipify-perl executable (engine hipify-perl)")
    p.add_argument("--no-warnings", action="store_true", help="do not list warp-size warnings")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = HipifySettings(engine=args.engine, launch_syntax=args.launch_syntax, dnn=args.dnn,
                              hipify_perl=args.hipify_perl)
    quiet = log.is_quiet()
    perl_cache = None
    if args.engine == "hipify-perl":   # the built-in engine's start-up does without the cache's imports
        from toolkit.util.cachedir import default_cache_dir
        perl_cache = default_cache_dir() / "hipify-perl"
    report = hipify_tree(dataclasses.replace(settings, strict=False), args.src, args.out,
                         jobs=args.jobs, progress=not (args.no_progress or quiet), perl_cache=perl_cache)
    failed = args.strict and report.unmapped
    if not quiet:
        for line in report.lines(warnings=not args.no_warnings):
            print(line)
    elif failed:  # -q prints errors only: under --strict every unmapped name is one
        for finding in report.unmapped:
            print(finding, file=sys.stderr)
    if failed:
        print(f"error: {len(report.unmapped)} CUDA identifier(s) left unmapped (--strict)", file=sys.stderr)
        return 1
    return 0
