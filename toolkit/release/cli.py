"""`release`, `container` and `container-image` commands.

Only the matrix and container code is imported up front: `release --print-matrix` and `container`
need nothing beyond the standard library, so they run inside a bare build image too.
"""

from __future__ import annotations

import argparse
import functools
import os
import shlex
import sys
from pathlib import Path

from toolkit.engine.options import RELEASE_PASSED, add_options, option_argv, options_from_args, release_overrides
from toolkit.engine.workspace import default_build_root
from toolkit.recipe.load import recipe_argument, recipes_dir
from toolkit.release import container, matrix
from toolkit.release.settings import ReleaseSettings, from_table
from toolkit.util import log
from toolkit.util.argcheck import name_value_pairs
from toolkit.util.errors import ToolkitError
from toolkit.util.tomlread import load_toml


def register(sub) -> None:
    p = sub.add_parser("release", help="build the release matrix: wheels, SBOMs, provenance, SHA256SUMS")
    p.add_argument("--recipe", type=recipe_argument, default="amdgpu-ep",
                   help="recipe name or TOML path with a [release] section (default: amdgpu-ep)")
    p.add_argument("--print-matrix", action="store_true",
                   help='print the matrix as JSON ({"include": [...]}) for a CI system to fan out')
    p.add_argument("--only", action="append", metavar="ID", help="build only this entry (repeatable)")
    p.add_argument("--out", type=Path,
                   help="output folder (default: $TOOLKIT_OUT_DIR, else <build dir>/<recipe>/dist)")
    p.add_argument("--dry-run", action="store_true", help="print the plan without building")
    p.add_argument("--no-wait", action="store_true",
                   help="fail at once when another release or build holds the output folder or a work tree")
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
    c.add_argument("--build-dir", type=Path, help="build root to mount at /work/build (default: ./build); a "
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
    c.set_defaults(func=cmd_container)

    i = sub.add_parser("container-image", help="build the release build image from its Containerfile")
    _container_options(i)
    i.add_argument("--file", type=Path, help="Containerfile (default: [release.container] containerfile)")
    i.add_argument("--context", type=Path, help="build context folder (default: the Containerfile's)")
    i.add_argument("--build-arg", action="append", default=[], metavar="KEY=VALUE")
    i.set_defaults(func=cmd_container_image)


def _container_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--recipe", type=recipe_argument, metavar="NAME|PATH",
                   help="recipe (name or TOML path) whose [release.container] gives the defaults")
    p.add_argument("--engine", help="podman or docker (default: env TOOLKIT_CONTAINER_ENGINE, podman, docker)")
    p.add_argument("--image", help="image to use (default: [release.container] image)")
    p.add_argument("--dry-run", action="store_true", help="print the engine command instead of running it")


def load_settings(recipe: Path | None) -> ReleaseSettings:
    if recipe is None:
        return ReleaseSettings()
    root = load_toml(recipe)
    table = root.table("release", None)
    return from_table(table, Path(recipe).resolve().parent) if table else ReleaseSettings()


def cmd_release(args) -> int:
    settings = load_settings(args.recipe)
    entries = matrix.select(matrix.plan_matrix(settings), args.only)
    if args.print_matrix:
        sys.stdout.write(matrix.matrix_json(entries))
        return 0
    from toolkit.release import compile_cache, in_root  # ccache only when a cache is configured
    from toolkit.wheel.cli import _wheel_settings

    build_root = args.build_root or default_build_root()
    out_dir = args.out or (Path(os.environ["TOOLKIT_OUT_DIR"]) if os.environ.get("TOOLKIT_OUT_DIR")
                           else build_root / Path(args.recipe).stem / "dist")
    url, origin = compile_cache.resolve_url(settings.compile_cache)
    elsewhere = {e.id: in_root.root_for(e) for e in entries}   # before anything runs: a wrong root is an error
    wheel = _wheel_settings(Path(args.recipe)) if settings.rocm else None   # the variants and their meta-package
    variants = dict(wheel.rocm_variants) if wheel else {}
    if args.dry_run:
        print(f"recipe: {args.recipe}")
        print(f"output: {out_dir} (SHA256SUMS, provenance.json, <wheel>.cdx.json per wheel"
              f"{', the meta-package ' + wheel.distribution if wheel and variants else ''})")
        print(f"compile cache: {compile_cache.redact(url) or 'off'} (from {origin})")
        for entry in entries:
            where = f", in a container of build root {elsewhere[entry.id]}" if elsewhere[entry.id] else ""
            rocm = f", ROCm {entry.rocm.name} (root {entry.rocm.root})" if entry.rocm else ""
            axes = [f"python {entry.python}" if entry.python else "",
                    f"targets {';'.join(entry.gpu_targets)}" if entry.gpu_targets else "",
                    f"toolchain {entry.toolchain.name}" if entry.toolchain else ""]
            print(f"entry {entry.id}: {''.join(a + ', ' for a in axes if a)}"
                  f"features {','.join(entry.features) or 'none'}{rocm}{where}")
        return 0
    cache = compile_cache.compile_cache_config(url, basedir=Path.cwd(), origin=origin)
    log.info(f"compile cache: {cache.describe()}")
    build_fn = _entry_build_fn(args, elsewhere, variants)
    from toolkit.release.orchestrator import run_release
    from toolkit.release.reproducible import release_env

    saved = dict(os.environ)
    os.environ.update({**release_env(Path(args.recipe), args.source), **cache.build_env()})
    try:
        # Entries built in containers of their roots record those roots' tools; the host's would say nothing true.
        tools: dict | None = {} if all(elsewhere.values()) else None
        run_release(entries, build_fn, out_dir, recipe=str(args.recipe), no_wait=args.no_wait, toolchain=tools,
                    meta=in_root.meta_writer(wheel) if wheel and variants and not in_root.current_root() else None,
                    facts_out=args.facts_out)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return 0


def _entry_build_fn(args, elsewhere: dict[str, str | None], variants: dict[str, str]):
    """How each entry is built: here through the pipeline, or in a container of its ROCm axis's root; either way
    its wheel must be of its ROCm variant."""
    from toolkit.release import in_root

    given = options_from_args(args, RELEASE_PASSED)
    overrides = release_overrides(given)
    here = _pipeline_build_fn(Path(args.recipe))
    if args.no_wait:
        here = functools.partial(here, no_wait=True)
    if overrides:
        here = functools.partial(here, overrides=overrides)
    # An entry built in a container of its root gets them on its command line, all but --build-dir: the
    # container mounts its own build folder.
    passed = option_argv(given, [n for n in RELEASE_PASSED if n != "build_root"])

    def build(entry, work_dir: Path):
        if elsewhere.get(entry.id):
            wheel, facts = in_root.build_in_root_image(Path(args.recipe), entry, work_dir, release_args=passed,
                                                       offline=args.offline)
        else:
            wheel, facts = here(entry, work_dir)
        in_root.check_variant(entry, Path(wheel), variants)
        return wheel, facts

    return build


def _pipeline_build_fn(recipe: Path):
    """The pipeline builds and repairs one entry's wheel: build_release_entry(recipe, entry, dir)."""
    from toolkit.release.entry import build_release_entry

    return functools.partial(build_release_entry, recipe)


def cmd_release_compare(args) -> int:
    from toolkit.release.compare import compare_dirs

    differences = compare_dirs(args.first, args.second)
    for line in differences:
        print(line)
    if not differences:
        print(f"identical: {args.first} and {args.second} (every file, byte for byte)")
    return 1 if differences else 0


def cmd_container(args) -> int:
    session_args = args.args[1:] if args.args[:1] == ["--"] else args.args
    if args.bind and not args.root:
        raise ToolkitError("container --bind works only with --root (an image session binds the folders its "
                           "arguments name by itself); drop --bind, or add --root NAME")
    if args.root:
        from toolkit.buildroot import session
        from toolkit.release.hostpaths import check_host_paths

        check_host_paths([("--source", args.source), *[("--bind", b) for b in args.bind]])

        return session.run_command(args.root, args.session, session_args, project=Path.cwd(),
                                   binds=[*args.bind, *([args.source] if args.source else [])],
                                   env=name_value_pairs(args.env, "--env"), dry_run=args.dry_run)
    recipe = args.recipe or _recipe_in(session_args)
    extra_binds: list[Path] = []
    if args.recipe and _recipe_in(session_args) is None and args.session in ("release", "build"):
        session_args = ["--recipe", _recipe_for_session(args.recipe, extra_binds), *session_args]
    release_settings = load_settings(recipe)
    settings = release_settings.container
    root = None if args.image else _session_root(args.session, session_args, release_settings)
    if root:
        from dataclasses import replace

        settings = replace(settings, root=root, image=None)
    image, runner, from_root = _image_and_runner(args, settings)
    env = name_value_pairs(args.env, "--env")
    container.check_values(image, env)  # before anything runs (git below, the engine)
    from toolkit.buildroot.session import named_paths
    from toolkit.release.hostpaths import check_host_paths

    check_host_paths([("--source", args.source), ("--cache", args.cache), ("--out", args.out),
                      ("--build-dir", args.build_dir), *[("bind", b) for b in named_paths(session_args)]])
    engine = container.detect_engine(args.engine or settings.engine)
    if engine.name == "podman":
        from toolkit.buildroot.image import engine_env

        os.environ.update(engine_env())
    if not os.environ.get("SOURCE_DATE_EPOCH"):   # the host's checkout knows its commit time; a mount may not
        from toolkit.release.reproducible import source_date_epoch

        os.environ["SOURCE_DATE_EPOCH"] = str(source_date_epoch(Path.cwd()))
    from toolkit.buildroot.sandbox import cache_dir

    cache = (args.cache or cache_dir()).resolve()
    mounts = container.Mounts(
        project=Path.cwd(), source=args.source, cache=cache, out=args.out, build=args.build_dir or Path("build"),
        binds=tuple([*named_paths(session_args), *extra_binds]),
        cache_inside=str(cache) if from_root else container.CACHE)
    rc = container.run_session(engine, image, args.session, session_args, mounts, env, runner=runner,
                               network=args.network, dry_run=args.dry_run)
    if rc != 0:
        log.warn(f"session {args.session} {shlex.join(session_args)} failed in {image} (exit {rc})")
    return rc


def _session_root(session: str, session_args: list[str], settings: ReleaseSettings) -> str | None:
    """The build root whose image runs a `release` of a recipe with a ROCm axis: the root of the entries its --only
    selects (they must share one). None for other sessions and recipes: [release.container] decides."""
    if session != "release" or not settings.rocm:
        return None
    from toolkit.release.in_root import roots_of

    only = [session_args[i + 1] for i, a in enumerate(session_args[:-1]) if a == "--only"]
    only += [a.split("=", 1)[1] for a in session_args if a.startswith("--only=")]
    roots = roots_of(matrix.select(matrix.plan_matrix(settings), only or None))
    if len(roots) > 1:
        raise ToolkitError(f"the release's entries are built in {len(roots)} build roots ({', '.join(roots)}), "
                           "and a container runs one image",
                           hint="run `python -m toolkit release` on the host, which runs each entry in its root's "
                                "image, or select the entries of one root with --only")
    return roots[0] if roots else None


def _recipe_for_session(recipe: Path, binds: list[Path]) -> str:
    """How the session inside names `container --recipe`'s recipe: by name or by its path in the project (mounted
    whole, as the working directory), so the files it reaches (an `extends`, its series) come along; a recipe
    outside the project by its path, with its folder mounted."""
    project = Path.cwd().resolve()
    if recipe.parent == recipes_dir(project):
        return recipe.stem
    if recipe.is_relative_to(project):
        return str(recipe.relative_to(project))
    binds.append(recipe.parent)
    return str(recipe)


def _recipe_in(session_args: list[str]) -> Path | None:
    """The recipe a session's own arguments name (`--recipe NAME`, `--recipe=NAME`)."""
    for i, arg in enumerate(session_args):
        value = session_args[i + 1] if arg == "--recipe" and i + 1 < len(session_args) else \
            arg.split("=", 1)[1] if arg.startswith("--recipe=") else None
        if value is not None:
            try:
                return recipe_argument(value)
            except ToolkitError:   # a path that exists only inside the container: the session reads it there
                return None
    return None


def _image_and_runner(args, settings) -> tuple[str | container.RootFS, str, bool]:
    """--image, else [release.container] image, else [release.container] root: with podman the root's folder itself
    (made when missing), with docker the root's image (made when missing: `root image`); its sessions run
    `python3 -m toolkit` with the root's toolkit venv. Also whether it is a build root's."""
    if args.image or settings.image:
        return args.image or settings.image, args.runner or settings.runner, False
    if settings.root:
        from toolkit.buildroot import image, rootfs

        engine = container.detect_engine(args.engine or settings.engine)
        if engine.name == "podman":
            return rootfs.ensure(settings.root, Path.cwd(), dry_run=args.dry_run), args.runner or "toolkit", True
        made = image.ensure_image(settings.root, Path.cwd(), engine.path, dry_run=args.dry_run)
        return made.tag, args.runner or "toolkit", True
    raise ToolkitError("no image to run in: give --image, or [release.container] image or root in the recipe",
                       hint="e.g. `container --recipe umbrella-ep-real ...` runs in its build root")


def cmd_container_image(args) -> int:
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
