"""`python -m toolkit patch`: a recipe's series on its work tree, or (check|apply|refresh) on any tree.

Without ACTION, on a recipe's work tree as a build settles it: apply its series to build/<recipe>/<variant>/source
(--check: only check it against the pristine source; --refresh: rewrite it from edits made there).

With ACTION, on any tree, with or without a recipe. The patches are those the build's patch stage would take on
the same tree: the series' revision conditions (if-tree-has, unless-tree-has) are judged on TREE (refresh: on
PRISTINE, the tree before any patch), and the features for `when=` come from `--recipe NAME` (its default features,
then --with/--without, as `build` takes them), or without a recipe from --with alone. With --recipe, SERIES
defaults to the recipe's series. Each patch a condition or a feature leaves out gets one line saying why.

check: prints one analysis line per patch (details under failures); exit 0 when every patch applies
(or is already applied), 1 when any would not. apply: all or nothing; a failure is an error (exit 2)
whose message is the analysis. refresh: rewrites the series from PRISTINE and EDITED trees.
"""

from __future__ import annotations

import argparse
import shlex
from dataclasses import dataclass
from pathlib import Path

from toolkit.patching.analysis import DISABLED, OK_STATUSES, PatchAnalysis, format_report
from toolkit.patching.apply import analyze, apply_series
from toolkit.patching.errors import PatchError
from toolkit.patching.hunks import MAX_FUZZ
from toolkit.patching.refresh import refresh_series
from toolkit.patching.series import PHASES, Series, load_series
from toolkit.pipeline import stages
from toolkit.pipeline.adapters import patch as patch_stage
from toolkit.pipeline.options import DECLARED, SHARED, BuildOptions, add_option, options_from_args, spell
from toolkit.recipe import features as feat
from toolkit.recipe.core import TOOLCHAIN_PLATFORMS
from toolkit.recipe.load import PROJECT_ROOT, find_recipe, load_recipe
from toolkit.util import log
from toolkit.util.errors import RUN_TOOLKIT, ToolkitError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("patch", help="check, apply or refresh a patch series",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="patch_command", metavar="ACTION", required=False)

    for name, func, text in (("check", _check, "analyse every patch; change nothing"),
                             ("apply", _apply, "apply every patch, or none")):
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument("series", type=Path, nargs="?", metavar="SERIES",
                       help="the series file (patches/<recipe>/series; default with --recipe: the recipe's)")
        p.add_argument("tree", type=Path, metavar="TREE",
                       help="the source tree to check or patch in place; its revision conditions are judged on it")
        _selection_options(p, [*PHASES, "all"], "all")
        p.add_argument("--max-fuzz", type=int, default=MAX_FUZZ, choices=range(0, MAX_FUZZ + 1),
                       help=f"largest fuzz factor accepted (default {MAX_FUZZ}; 0: context must match)")
        if name == "apply":
            p.add_argument("--partial", action="store_true",
                           help="apply every hunk that applies and report the rest (to refresh a series "
                                "by hand; exit 1 when any hunk failed)")
        p.set_defaults(func=func)

    p = sub.add_parser("refresh", help="regenerate the series from an edited tree",
                       description="rewrite the series' patches so PRISTINE patched gives EDITED")
    p.add_argument("series", type=Path, nargs="?", metavar="SERIES",
                   help="the series file to rewrite (default with --recipe: the recipe's)")
    p.add_argument("pristine", type=Path, metavar="PRISTINE",
                   help="the unpatched source tree; the series' revision conditions are judged on it")
    p.add_argument("edited", type=Path, metavar="EDITED", help="a copy with the changes the series should make")
    _selection_options(p, list(PHASES), "base")
    p.add_argument("--dry-run", action="store_true", default=argparse.SUPPRESS,
                   help="say what would change; write nothing")
    p.set_defaults(func=_refresh)
    _recipe_mode(parser)


def _recipe_mode(p: argparse.ArgumentParser) -> None:
    """`patch` without an action works on a recipe's series and work tree: apply, --check or --refresh."""
    group = p.add_argument_group("on a recipe (no ACTION): apply its series to build/<recipe>/<variant>/source")
    for name in SHARED:
        changes = {"help": f"{DECLARED[name].help} (default without ACTION: {BuildOptions.recipe})"}
        add_option(group, name, **(changes if name == "recipe" else {}))
    mode = group.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="only check that every patch applies to the pristine source (nonzero if not)")
    mode.add_argument("--refresh", action="store_true",
                      help="rewrite the series from edits made in build/<recipe>/<variant>/source")
    # No default recipe in the parser: an ACTION takes --recipe (given before or after it) only when one is
    # named; _patches falls back to the default recipe.
    p.set_defaults(func=_patches, recipe=None)
    p.epilog = ("Without ACTION: apply the recipe's series to its work tree (--check: only check against the "
                "pristine source; --refresh: rewrite the series from edits in the work tree). "
                "With ACTION: check, apply or refresh SERIES on any TREE, choosing the patches a build would "
                "(with --recipe: its series and features).")


def _selection_options(p: argparse.ArgumentParser, phases: list[str], default: str) -> None:
    # The build options' --recipe/--with/--without, with the dests of `patch`'s recipe mode, so they count
    # before the ACTION too; the help says what each means for a series. No default here: argparse copies an
    # ACTION's defaults over what was given before the ACTION, so the recipe mode's defaults stand for them.
    add_option(p, "recipe", default=argparse.SUPPRESS,
               help="take the features (the recipe's defaults, then --with/--without) and the default SERIES from "
                    "this recipe, as `build --recipe NAME` does")
    add_option(p, "with_features", default=argparse.SUPPRESS,
               help="enable a feature for when= conditions (repeatable, or comma-separated; also spelled "
                    "--with-FEATURE)")
    add_option(p, "without_features", default=argparse.SUPPRESS,
               help="with --recipe: turn one of its default features off (also spelled --without-FEATURE)")
    p.add_argument("--phase", choices=phases, default=default,
                   help=f"which patches: {', '.join(phases)} (default: {default})")


@dataclass(frozen=True)
class _Selection:
    """The series as the build would apply it to one tree, with the features it would enable."""

    series: Series  # only the entries the tree needs
    features: list[str]
    left_out: list[PatchAnalysis]  # one "not applied: why" line per entry a revision condition left out
    options: str  # the command-line options that select the same patches again


def _select(args: argparse.Namespace, tree: Path) -> _Selection:
    """Features as `build` settles them, and the series' entries as the build's patch stage keeps them."""
    with_ = [f for item in args.with_features for f in item.split(",") if f]
    without = [f for item in args.without_features for f in item.split(",") if f]
    recipe = load_recipe(find_recipe(args.recipe, PROJECT_ROOT)) if args.recipe else None
    if recipe is None:
        if without:
            raise ToolkitError(f"patch {args.patch_command}: --without {without[0]} needs --recipe (without a "
                               f"recipe no feature is on but those --with names)",
                               hint="pass --recipe NAME, or leave the feature out of --with")
        features = sorted(set(with_))
    else:
        # The build's platform: --toolchain's, else the recipe's (a Windows build's features are Windows ones).
        platform = TOOLCHAIN_PLATFORMS[getattr(args, "toolchain", None) or recipe.build.toolchain]
        chosen = feat.select_features(recipe, with_, without, platform)
        features = sorted(name for name, on in chosen.items() if on)
    path = args.series or (recipe.series if recipe is not None else None)
    if path is None:
        raise ToolkitError(f"patch {args.patch_command}: no SERIES given"
                           + (f", and recipe {recipe.name} has no patch series ({recipe.file})" if recipe else ""),
                           hint="pass the series file (patches/<recipe>/series) or --recipe NAME")
    needed, skipped = load_series(path).for_tree(tree)
    left_out = [PatchAnalysis(e, DISABLED, f"not applied: {why}") for e, why in skipped
                if args.phase in ("all", e.phase)]
    options = [*(spell("recipe", args.recipe) if recipe else []), *spell("with_features", with_),
               *spell("without_features", without), *([str(args.series)] if args.series else [])]
    if recipe is not None:  # without one, the command line shows every feature that is on
        log.info(f"recipe {recipe.name}: features {', '.join(features) or 'none'}, series {needed.path}")
    return _Selection(needed, features, left_out, shlex.join(options))


def _report(sel: _Selection, analyses: list[PatchAnalysis], args: argparse.Namespace) -> str:
    """Every patch of the phase in series order: the analyses and the lines for those left out."""
    merged = sorted([*analyses, *sel.left_out], key=lambda a: (PHASES.index(a.entry.phase), a.entry.line))
    return format_report(merged) if merged else f"{sel.series.path}: no patches for phase {args.phase}"


def _check(args: argparse.Namespace) -> int:
    sel = _select(args, args.tree)
    analyses = analyze(sel.series, args.tree, args.phase, sel.features, args.max_fuzz)
    print(_report(sel, analyses, args))
    return 0 if all(a.status in OK_STATUSES for a in analyses) else 1


def _apply(args: argparse.Namespace) -> int:
    sel = _select(args, args.tree)
    try:
        analyses = apply_series(sel.series, args.tree, args.phase, sel.features, args.max_fuzz,
                                partial=args.partial)
    except PatchError:
        for line in sel.left_out:  # the error's analysis lists only the patches that were tried
            log.info(line.line)
        raise
    print(_report(sel, analyses, args))
    if not all(a.status in OK_STATUSES for a in analyses):
        log.warn(f"{args.tree} is now partly patched (--partial): make the failed hunks' changes by hand, "
                 f"then run `{RUN_TOOLKIT} patch refresh {sel.options} PRISTINE {args.tree}`")
        return 1
    log.info(f"applied {sum(1 for a in analyses if a.changes)} patch(es) to {args.tree}")
    return 0


def _refresh(args: argparse.Namespace) -> int:
    sel = _select(args, args.pristine)
    for line in sel.left_out:
        log.info(f"{line.line} (left as it is)")
    result = refresh_series(sel.series, args.pristine, args.edited, args.phase, sel.features,
                            write=not args.dry_run)
    print(result.report())
    for path in result.written:
        log.info(f"wrote {path}")
    return 0


def _patches(args: argparse.Namespace) -> int:
    args.recipe = args.recipe or BuildOptions.recipe
    options = options_from_args(args)
    if args.check:
        return patch_stage.check_patches(options)
    if args.refresh:
        return patch_stage.refresh_patches(options)
    stages.run_build(options, until="patch")
    return 0
