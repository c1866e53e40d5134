"""`python -m toolkit build`: run the build pipeline for a recipe."""

from __future__ import annotations

import argparse
import functools

from toolkit.cmake.commands import describe_tools
from toolkit.pipeline import patches as workflow
from toolkit.pipeline import stages
from toolkit.pipeline.adapters import smoke as smoke_stage
from toolkit.pipeline.options import BUILD_ONLY, BuildOptions, add_build_arguments, add_options, options_from_args
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


def add_recipe_patching(p: argparse.ArgumentParser) -> None:
    """`patch` without an action works on a recipe's series and work tree: apply, --check or --refresh."""
    group = p.add_argument_group("on a recipe (no ACTION): apply its series to build/<recipe>/<variant>/source")
    add_build_arguments(group)
    mode = group.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="only check that every patch applies to the pristine source (nonzero if not)")
    mode.add_argument("--refresh", action="store_true",
                      help="rewrite the series from edits made in build/<recipe>/<variant>/source")
    # No default recipe in the parser: an ACTION takes --recipe (given before or after it) only when one is
    # named; _patches falls back to the default recipe.
    p.set_defaults(func=_patches, recipe=None)
    recipe_option = next(a for a in group._group_actions if a.dest == "recipe")
    recipe_option.help = f"{recipe_option.help} (default without ACTION: {BuildOptions.recipe})"
    # An ACTION's options that the recipe mode also has (--dry-run) must not reset a value given before
    # the ACTION (`patch --dry-run refresh ...`): argparse copies the ACTION's defaults over the parent's.
    given_before = {a.dest for a in p._actions}
    for action_parser in (c for a in p._actions if isinstance(a, argparse._SubParsersAction)
                          for c in a.choices.values()):
        for action in action_parser._actions:
            if action.option_strings and action.dest in given_before:
                action.default = argparse.SUPPRESS
    p.epilog = ("Without ACTION: apply the recipe's series to its work tree (--check: only check against the "
                "pristine source; --refresh: rewrite the series from edits in the work tree). "
                "With ACTION: check, apply or refresh SERIES on any TREE, choosing the patches a build would "
                "(with --recipe: its series and features).")


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


def _patches(args: argparse.Namespace) -> int:
    args.recipe = args.recipe or BuildOptions.recipe
    options = options_from_args(args)
    if args.check:
        return workflow.check_patches(options)
    if args.refresh:
        return workflow.refresh_patches(options)
    stages.run_build(options, until="patch")
    return 0
