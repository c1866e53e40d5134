"""`release`, `container` and `container-image` commands: each parses its command line into a typed request
and hands it on (release/make_release.py, release/container_session.py).

What builds is imported only when a release starts to build (the pipeline): `release --print-matrix` and
`container` need what `python -m toolkit` needs to read its command line, no more (the podman test's image holds
just that).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from toolkit.container import engine as container
from toolkit.pipeline.options import RELEASE_PASSED, add_option, add_options, options_from_args
from toolkit.recipe.load import DEFAULT_RECIPE, recipe_argument
from toolkit.release import matrix
from toolkit.release.container_session import run_container
from toolkit.release.request import ContainerRequest, ReleaseRequest, load_settings
from toolkit.util.argcheck import name_value_pairs
from toolkit.util.errors import ToolkitError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser],
             command_parser: Callable[[str], argparse.ArgumentParser]) -> None:
    p = sub.add_parser("release", help="build the release matrix: wheels, SBOMs, provenance, SHA256SUMS")
    # Read as the string given: `container` reads a session's --recipe that exists only inside the container.
    add_option(p, "recipe", help=f"recipe name or TOML path with a [release] section (default: {DEFAULT_RECIPE})")
    p.add_argument("--print-matrix", action="store_true",
                   help='print the matrix as JSON ({"include": [...]}) for a CI system to fan out')
    p.add_argument("--only", action="append", metavar="ID", help="build only this entry (repeatable)")
    p.add_argument("--out", type=Path,
                   help="output folder (default: $TOOLKIT_OUT_DIR, else <build dir>/<recipe>/dist)")
    add_option(p, "dry_run", help="print the plan without building")
    add_option(p, "no_wait", help="fail at once when another release or build holds the output folder or a work tree")
    p.add_argument("--facts-out", type=Path, metavar="FILE",
                   help="also write each entry's build facts as JSON to FILE (a release on the host reads them back "
                        "from the entries it builds in containers of their roots)")
    # What a release passes on to each entry's build, spelled as `build` spells it.
    add_options(p, RELEASE_PASSED)
    p.set_defaults(func=cmd_release)
    r = sub.add_parser("release-compare", help="compare two release folders: which file differs, its first "
                                               "differing zip member (exit 1 when they differ, 2 when a folder or "
                                               "wheel cannot be read); links are compared, never followed")
    r.add_argument("first", type=Path, help="a release folder (build/<recipe>/dist)")
    r.add_argument("second", type=Path, help="the release folder to compare it with")
    r.set_defaults(func=cmd_release_compare)

    c = sub.add_parser("container", help="run a session in a container: a build root's or an image (podman or docker)")
    _container_options(c)
    c.add_argument("--runner", choices=("nox", "toolkit"),
                   help="start the session with nox (default) or `python3 -m toolkit`")
    c.add_argument("--source", type=Path, help="source tree to mount at /work/source")
    c.add_argument("--cache", type=Path, help="cache folder to mount at /cache (default: the toolkit cache, "
                                               "$TOOLKIT_CACHE_DIR or the user cache dir: downloads, ccache, zig)")
    c.add_argument("--out", type=Path, help="a folder to mount at /work/out (TOOLKIT_OUT_DIR inside)")
    c.add_argument("--build-dir", type=Path, help="build folder to mount at /work/build (default: ./build); a "
                                                  "release writes <recipe>/dist there")
    c.add_argument("--network", help="container network (e.g. host, to reach a compile cache on localhost)")
    c.add_argument("-e", "--env", action="append", default=[], metavar="KEY=VALUE",
                   help="extra environment variable for the session (repeatable)")
    c.add_argument("--root", metavar="NAME",
                   help="run `python -m toolkit SESSION ARGS` in this Debian build root (containers/roots/NAME.toml) "
                        "instead of an image, host paths bound at the same paths")
    c.add_argument("--bind", action="append", type=Path, default=[], metavar="DIR",
                   help="with --root: another host folder to bind at the same path (repeatable)")
    c.add_argument("session", help="the session to run inside")
    c.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the session")
    c.set_defaults(func=cmd_container, command_parser=command_parser)

    i = sub.add_parser("container-image", help="build the release build image from its Containerfile")
    _container_options(i)
    i.add_argument("--file", type=Path, help="Containerfile (default: [release.container] containerfile)")
    i.add_argument("--context", type=Path, help="build context folder (default: the Containerfile's)")
    i.add_argument("--build-arg", action="append", default=[], metavar="KEY=VALUE")
    i.set_defaults(func=cmd_container_image)


def _container_options(p: argparse.ArgumentParser) -> None:
    add_option(p, "recipe", type=recipe_argument, default=None,
               help="recipe (name or TOML path) whose [release.container] gives the defaults")
    p.add_argument("--engine", help="container engine: podman or docker (default: env "
                   "TOOLKIT_CONTAINER_ENGINE, podman, docker)")
    p.add_argument("--image", help="image to use (default: [release.container] image)")
    add_option(p, "dry_run", help="print the container engine's command instead of running it")


def cmd_release(args: argparse.Namespace) -> int:
    request = ReleaseRequest(recipe=recipe_argument(args.recipe), only=tuple(args.only or ()), out=args.out,
                             dry_run=args.dry_run, no_wait=args.no_wait, facts_out=args.facts_out,
                             build=options_from_args(args, RELEASE_PASSED))
    if args.print_matrix:
        sys.stdout.write(matrix.matrix_json(request.entries()))
        return 0
    from toolkit.release.make_release import make_release  # the build pipeline: not for --print-matrix

    make_release(request)
    return 0


def cmd_release_compare(args: argparse.Namespace) -> int:
    from toolkit.release.compare import compare_dirs

    differences = compare_dirs(args.first, args.second)
    for line in differences:
        print(line)
    if not differences:
        print(f"identical: {args.first} and {args.second} (every file, byte for byte)")
    return 1 if differences else 0


def cmd_container(args: argparse.Namespace) -> int:
    session_args = args.args[1:] if args.args[:1] == ["--"] else args.args
    return run_container(ContainerRequest(
        session=args.session, session_args=tuple(session_args), recipe=args.recipe, engine=args.engine,
        image=args.image, runner=args.runner, source=args.source, cache=args.cache, out=args.out,
        build_folder=args.build_dir, network=args.network, env=name_value_pairs(args.env, "--env"), root=args.root,
        binds=tuple(args.bind), dry_run=args.dry_run, command_parser=args.command_parser))


def cmd_container_image(args: argparse.Namespace) -> int:
    settings = load_settings(args.recipe).container
    containerfile = args.file or settings.containerfile
    image = args.image or settings.image
    if containerfile is None or not image:
        raise ToolkitError("container-image needs a Containerfile and an image tag",
                           hint="give --file and --image, or [release.container] containerfile and image")
    engine = container.detect_engine(args.engine or settings.engine)
    context = args.context or Path(containerfile).parent
    container.build_image(engine, containerfile, context, image, name_value_pairs(args.build_arg, "--build-arg"),
                          dry_run=args.dry_run)
    return 0
