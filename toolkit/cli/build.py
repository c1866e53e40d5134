"""`python -m toolkit build`: run the build pipeline for a recipe."""

from __future__ import annotations

import argparse
import functools

from toolkit.cmake.commands import describe_tools
from toolkit.pipeline import stages
from toolkit.pipeline.adapters import smoke as smoke_stage
from toolkit.pipeline.options import BUILD_ONLY, add_build_arguments, add_options, options_from_args
from toolkit.util import log


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("build", help="patch, configure and build a recipe's libraries")
    add_build_arguments(p)
    p.add_argument("--until", metavar="STAGE", choices=stages.STAGE_NAMES,
                   help=f"stop after this stage ({', '.join(stages.STAGE_NAMES)}; a recipe runs those it has)")
    add_options(p, BUILD_ONLY)
    p.add_argument("--wheel", action="store_true",
                   help="also package the libraries as a wheel and repair it (build/<recipe>/<variant>/wheelhouse)")
    p.add_argument("--smoke", action="store_true",
                   help="then install the wheel in a fresh venv and smoke-test it with onnxruntime (implies --wheel)")
    p.add_argument("--require-gpu", action="store_true", help="with --smoke: no GPU device is a failure")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    options = options_from_args(args)
    if log.is_verbose():
        for line in describe_tools():
            log.debug(line)
    if args.smoke:
        return stages.build_then(options, functools.partial(smoke_stage.smoke, require_gpu=args.require_gpu),
                                 until=args.until, package=True)
    stages.run_build(options, until=args.until, package=args.wheel)
    return 0

