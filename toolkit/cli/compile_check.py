"""`python -m toolkit compile-check`: a recipe's stages up to the compile check, once per hipify engine."""

from __future__ import annotations

import argparse
import shutil
import sys
from typing import TYPE_CHECKING

from toolkit.recipe.hipify import ENGINES
from toolkit.util.errors import ToolkitError

if TYPE_CHECKING:
    from toolkit.pipeline.runner import StageResult
    from toolkit.recipe.compile_check import CompileCheckSettings
    from toolkit.util.fsutil import JSON


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from toolkit.pipeline.options import add_build_arguments

    p = sub.add_parser(
        "compile-check", help="hipify a recipe's tree and compile every unit with the build root's hipcc",
        description="Runs the recipe's stages up to compile-check with each engine asked for, each in its own "
                    "work tree (build/<recipe>/<engine>/), and prints hipify time and compile rate per engine.")
    add_build_arguments(p)
    p.add_argument("--engine", action="append", choices=ENGINES + ("both",), default=[],
                   help="hipify engine (repeatable; default: the recipe's)")
    p.add_argument("--sample", action="store_true", help="only the recipe's fixed sample of units")
    p.add_argument("--hipify-perl", default=None,
                   help="hipify-perl to run (default: on PATH, else the build root's usr/bin/hipify-perl)")
    p.add_argument("--min-rate", type=_percent, default=None, metavar="PERCENT",
                   help="pass when an engine compiles at least this percentage of units (0-100, as the report "
                        "prints it; 0 < PERCENT <= 1 is refused as ambiguous), instead of the recipe's min_rate; "
                        "without either, every unit the recipe does not expect to fail must compile")
    p.set_defaults(func=run)


def _percent(text: str) -> float:
    from toolkit.recipe.compile_check import min_rate_problem

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number (a percentage from 0 to 100)") from None
    problem = min_rate_problem(value)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return value


def hipify_perl_path(explicit: str | None, dry_run: bool = False) -> str:
    if explicit:
        return explicit
    found = shutil.which("hipify-perl")
    if found:
        return found
    from toolkit.compile_check.run import ROOT_NAME, find_root
    if dry_run:  # where the root's copy will be, without making the root a dry run only reports
        from toolkit.buildroot.make import root_path
        from toolkit.recipe import packageset
        return str(root_path(packageset.load(ROOT_NAME)) / "usr/bin/hipify-perl")
    # A perl script: the host's perl runs the root's copy, so no sandbox per file is needed.
    return str(find_root() / "usr/bin/hipify-perl")


def run(args: argparse.Namespace) -> int:
    from toolkit.pipeline.engines import run_engine
    from toolkit.pipeline.options import options_from_args
    from toolkit.recipe.load import PROJECT_ROOT, find_recipe, load_recipe

    options = options_from_args(args)
    recipe = load_recipe(find_recipe(args.recipe, PROJECT_ROOT))
    hipify, settings = recipe.hipify, recipe.compile_check
    if hipify is None or settings is None:
        section = "hipify" if hipify is None else "compile_check"
        raise ToolkitError(f"recipe {recipe.name} ({recipe.file}) has no [{section}] section: it has nothing to "
                           "compile-check", hint="give a recipe that hipifies and compile-checks a tree, "
                           "e.g. --recipe onnxruntime-rocm-ep")
    if args.sample and not settings.sample:
        raise ToolkitError(f"recipe {recipe.name} ({recipe.file}) has no [compile_check] sample: --sample would "
                           "compile nothing", hint="add `sample = [\"path/of/a/unit.cc\", ...]` to its "
                           "[compile_check], or leave --sample out to check every unit")
    engines = [e for e in args.engine if e != "both"] + (list(ENGINES) if "both" in args.engine else [])
    if not engines:
        engines = [hipify.engine]
    perl = hipify_perl_path(args.hipify_perl, args.dry_run) if "hipify-perl" in engines else None
    rows: list[tuple[str, StageResult, JSON]] = []
    for engine in dict.fromkeys(engines):
        hip, report = run_engine(options, engine, sample=args.sample, perl=perl)
        if report is not None:
            rows.append((engine, hip, report))
    if args.dry_run:
        return 0
    for line in summary_lines(rows):
        print(line)
    empty = [engine for engine, _, report in rows if not report["units"]]
    if empty:
        raise ToolkitError(f"compile-check: no unit to compile ({', '.join(empty)}): recipe {recipe.name}'s "
                           "[compile_check] units" + (" and sample" if args.sample else "")
                           + " match no file of the hipified tree", hint="check the globs against the tree under "
                           "build/<recipe>/<engine>/ (`nox -s hipify -- --recipe NAME` makes it)")
    return _judged(rows, settings, args.min_rate)


def _judged(rows: list[tuple[str, StageResult, JSON]], settings: CompileCheckSettings, min_rate: float | None) -> int:
    """1, with an `error:` line per engine saying why, when an engine's check failed (see verdict.judge)."""
    from toolkit.compile_check.verdict import judge
    from toolkit.util import log
    from toolkit.util.redact import redact_text

    failed = False
    given = f"--min-rate {min_rate:g}" if min_rate is not None else ""
    for _, _, report in rows:
        verdict = judge(report, settings, min_rate, min_rate_from=given)
        for warning in verdict.warnings:
            log.warn(warning)
        if verdict.failure is not None:
            print(f"error: {redact_text(str(verdict.failure))}", file=sys.stderr)
            failed = True
    return 1 if failed else 0


def summary_lines(rows: list[tuple[str, StageResult, JSON]]) -> list[str]:
    """The table of (engine, hipify StageResult, compile report) rows: hipify's time, or `cached` when its
    output was reused from an earlier run; units compiled of those checked; the failures' causes."""
    lines = ["engine        hipify      compiled        rate"]
    for engine, hip, report in rows:
        how = f"{hip.seconds:7.2f} s" if hip.ran else "cached   "
        done = f"{report['compiled']:>4}/{report['units']:<4}"
        lines.append(f"{engine:<13} {how}   {done}   {100 * report['rate']:5.1f}%")
    if any(not hip.ran for _, hip, _ in rows):
        lines.append("(cached: hipify's output was unchanged since an earlier run and reused)")
    for engine, _, report in rows:
        for cause, units in list(report["failures_by_cause"].items())[:15]:
            lines.append(f"[{engine}] {len(units):3d} x {cause}  (e.g. {units[0]})")
    return lines
