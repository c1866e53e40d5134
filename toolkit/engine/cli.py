"""`python -m toolkit build`: run the build pipeline for a recipe."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, cast

from toolkit.cmake.toolchain import NAMES as TOOLCHAINS
from toolkit.cmake.toolchain import floor_problem
from toolkit.engine import pipeline
from toolkit.engine.options import BuildOptions, positive_int
from toolkit.hipify.settings import ENGINES as HIPIFY_ENGINES
from toolkit.patching import workflow
from toolkit.sources.mirrors import add_insecure_mirror_option
from toolkit.util import log
from toolkit.util import toolenv as tools
from toolkit.util.errors import ToolkitError

if TYPE_CHECKING:
    from toolkit.wheel.settings import SmokeSettings


def _glibc_floor(text: str) -> str:
    problem = floor_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def add_build_arguments(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Arguments shared by every command that runs the build pipeline (build, wheel, hipify, patch)."""
    p.add_argument("--recipe", default="amdgpu-ep", metavar="NAME|PATH", help="recipe name (recipes/NAME.toml) or path")
    p.add_argument("--variant", default="release", metavar="NAME", help="work tree name under build/<recipe>/")
    p.add_argument("--with", dest="with_features", action="append", default=[], metavar="FEATURE",
                   help="turn a feature on (also spelled --with-FEATURE)")
    p.add_argument("--without", dest="without_features", action="append", default=[], metavar="FEATURE",
                   help="turn a feature off (also spelled --without-FEATURE)")
    p.add_argument("-j", "--jobs", type=positive_int, default=None, metavar="N",
                   help="parallel build jobs, at least 1 (default: all cores)")
    p.add_argument("--dry-run", action="store_true", help="print the plan; create nothing")
    p.add_argument("--force", action="store_true", help="run every stage even if its inputs are unchanged")
    p.add_argument("--no-wait", action="store_true",
                   help="fail at once when another process is building in the same work tree (default: wait)")
    p.add_argument("--source", metavar="PATH|URL#sha256=HEX|git+URL@COMMIT",
                   help="build this tree instead of the recipe's: PATH, URL#sha256=HEX or git+URL@COMMIT")
    p.add_argument("--build-dir", type=Path, default=None, metavar="DIR",
                   help="build root (default: $TOOLKIT_BUILD_DIR or ./build)")
    p.add_argument("--gpu-targets", default="", metavar="TARGETS",
                   help="comma-separated AMD GPU targets, e.g. gfx90a,gfx1030")
    p.add_argument("--offline", action="store_true", help="use the download cache only; never the network")
    p.add_argument("--mirror", action="append", default=[], metavar="BASE",
                   help="artifact server tried before upstream (BASE/<host>/<path>); also $TOOLKIT_MIRRORS")
    add_insecure_mirror_option(p)
    p.add_argument("--ort-home", type=Path, metavar="DIR",
                   help="an existing ONNX Runtime install (headers, lib, CMake config)")
    p.add_argument("--rocm-path", type=Path, metavar="DIR", help="ROCm install (default: $ROCM_PATH, /opt/rocm)")
    p.add_argument("--migraphx-home", type=Path, metavar="DIR", help="MIGraphX install (default: inside ROCm)")
    p.add_argument("--local-version", metavar="LABEL", default=None,
                   help="local version label of the wheel (VERSION+LABEL), as release entries use")
    p.add_argument("--toolchain", choices=TOOLCHAINS, default=None,
                   help="C/C++ toolchain instead of the recipe's [build] toolchain: system (CMake's pick) or zig "
                        "(pinned ziglang, for the recipe's glibc floor, libc++ linked in statically)")
    p.add_argument("--glibc-floor", default=None, metavar="2.N", type=_glibc_floor,
                   help="with the zig toolchain: build for this glibc instead of the recipe's [build] glibc_floor")


def options_from_args(args: argparse.Namespace) -> BuildOptions:
    kwargs = dict(
        recipe=args.recipe,
        variant=args.variant,
        with_features=tuple(args.with_features),
        without_features=tuple(args.without_features),
        dry_run=args.dry_run,
        force=args.force,
        source=args.source,
        build_root=args.build_dir,
        gpu_targets=tuple(t for t in args.gpu_targets.split(",") if t),
        offline=args.offline,
        mirrors=tuple(args.mirror),
        ort_home=args.ort_home,
        rocm_path=args.rocm_path,
        migraphx_home=args.migraphx_home,
        no_wait=args.no_wait,
        hipify_engine=getattr(args, "hipify_engine", None),
        local_version=args.local_version,
        toolchain=args.toolchain,
        glibc_floor=args.glibc_floor,
    )
    if args.jobs:
        kwargs["jobs"] = args.jobs
    return BuildOptions(**kwargs)


def build_argv(options: BuildOptions, *extra: str) -> list[str]:
    """The `python -m toolkit build` command line that settles `options` (what a release records it ran)."""
    argv = ["python", "-m", "toolkit", "build", "--recipe", options.recipe, "--variant", options.variant]
    argv += [f"--with-{f}" for f in options.with_features] + [f"--without-{f}" for f in options.without_features]
    valued = {
        "--gpu-targets": ",".join(options.gpu_targets), "--source": options.source,
        "--build-dir": options.build_root, "--ort-home": options.ort_home, "--rocm-path": options.rocm_path,
        "--migraphx-home": options.migraphx_home, "--local-version": options.local_version,
        "--hipify-engine": options.hipify_engine, "--toolchain": options.toolchain,
        "--glibc-floor": options.glibc_floor,
    }
    for flag, value in valued.items():
        if value:
            argv += [flag, str(value)]
    for mirror in options.mirrors:
        argv += ["--mirror", mirror]
    switches = {"--offline": options.offline, "--no-wait": options.no_wait, "--force": options.force,
                "--dry-run": options.dry_run}
    argv += [flag for flag, on in switches.items() if on]
    return argv + list(extra)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("build", help="patch, configure and build a recipe's libraries")
    add_build_arguments(p)
    p.add_argument("--until", metavar="STAGE", choices=pipeline.STAGE_NAMES,
                   help=f"stop after this stage ({', '.join(pipeline.STAGE_NAMES)}; a recipe runs those it has)")
    p.add_argument("--hipify-engine", choices=HIPIFY_ENGINES, default=None,
                   help="hipify with this engine instead of the recipe's [hipify] engine")
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
        for line in tools.describe():
            log.debug(line)
    package = args.wheel or args.smoke
    b, _ = pipeline.run_build(options, until=args.until, package=package)
    if args.smoke and not options.dry_run:
        from toolkit.wheel.smoke import run_smoke

        if "smoke" not in b.recipe.extra:
            raise ToolkitError(f"recipe {b.recipe.name} has no [smoke] section ({b.recipe.file})",
                               hint="add [smoke] (what to install beside the wheel, env, expected log lines)")
        smoke = cast("SmokeSettings", b.recipe.extra["smoke"])
        return run_smoke(pipeline.built_wheels(b), smoke, require_gpu=args.require_gpu)
    return 0


def _patches(args: argparse.Namespace) -> int:
    args.recipe = args.recipe or BuildOptions.recipe
    options = options_from_args(args)
    if args.check:
        return workflow.check_patches(options)
    if args.refresh:
        return workflow.refresh_patches(options)
    pipeline.run_build(options, until="patch")
    return 0
