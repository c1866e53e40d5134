"""`container` on a request: run a session in a container, a build root's or an image's (podman or docker).

The session's own arguments are read with the parser of the command they are for (`release`, `build`): the recipe
they name chooses the container's defaults ([release.container]), and a release's `--only` the build root whose
image runs it. What the engine and the session need beyond this process's environment (podman's configuration,
SOURCE_DATE_EPOCH) is handed to them, never set on this process.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from toolkit.buildroot import image as root_image
from toolkit.buildroot import rootfs, session
from toolkit.buildroot.hostargs import host_arguments
from toolkit.buildroot.sandbox import cache_dir
from toolkit.container import engine as container
from toolkit.container.hostpaths import check_host_paths
from toolkit.container.rootfs import RootFS
from toolkit.pipeline.options import add_option
from toolkit.recipe.load import recipe_argument, recipes_dir
from toolkit.recipe.release import ContainerSettings, ReleaseSettings
from toolkit.release import matrix
from toolkit.release.in_root import roots_of
from toolkit.release.reproducible import epoch_env
from toolkit.release.request import ContainerRequest, load_settings
from toolkit.util import log
from toolkit.util.argcheck import expand_feature_flags
from toolkit.util.errors import RUN_TOOLKIT, ToolkitError

# Sessions whose arguments are a toolkit command's, by the command: a toolkit command, or a nox session that runs
# it (noxfile.py: hipify, wheel and smoke run `build`).
SESSION_COMMANDS = {"release": "release", "build": "build", "hipify": "build", "wheel": "build", "smoke": "build"}


def run_container(request: ContainerRequest) -> int:
    if request.binds and not request.root:
        raise ToolkitError("container --bind works only with --root (an image session binds the folders its "
                           "arguments name by itself); drop --bind, or add --root NAME")
    if request.root:
        return _run_in_root(request)
    # Each host path the arguments name, resolved once: mounted at that path, and handed in as it.
    host = host_arguments(request.session_args)
    args = list(host.args)
    given = session_options(request.session, args, request.command_parser)
    named = _recipe_named(given)
    extra_binds: list[Path] = []
    if request.recipe and given is not None and given.recipe is None and request.session in ("release", "build"):
        args = ["--recipe", _recipe_for_session(request.recipe, extra_binds), *args]
    release_settings = load_settings(request.recipe or named)
    settings = release_settings.container
    root = None if request.image else _session_root(request.session, given, release_settings)
    if root:
        settings = replace(settings, root=root, image=None)
    image, runner, from_root = _image_and_runner(request, settings)
    container.check_values(image, dict(request.env))  # before anything runs (git below, the engine)
    check_host_paths([("--source", request.source), ("--cache", request.cache), ("--out", request.out),
                      ("--build-dir", request.build_folder), *[("bind", b) for b in host.binds]])
    engine = container.detect_engine(request.engine or settings.engine)
    cache = (request.cache or cache_dir()).resolve()
    mounts = container.Mounts(
        project=Path.cwd(), source=request.source, cache=cache, out=request.out,
        build=request.build_folder or Path("build"), binds=tuple([*host.binds, *extra_binds]),
        cache_inside=str(cache) if from_root else container.CACHE)
    rc = container.run_session(engine, image, request.session, args, mounts, dict(request.env), runner=runner,
                               network=request.network, dry_run=request.dry_run, host_env=_host_env(engine))
    if rc != 0:
        log.warn(f"session {request.session} {shlex.join(args)} failed in {image} (exit {rc})")
    return rc


def _run_in_root(request: ContainerRequest) -> int:
    check_host_paths([("--source", request.source), *[("--bind", b) for b in request.binds]])
    return session.run_command(request.root or "", request.session, list(request.session_args), project=Path.cwd(),
                               binds=[*request.binds, *([request.source] if request.source else [])],
                               env=dict(request.env), dry_run=request.dry_run)


def _host_env(engine: container.Engine) -> dict[str, str]:
    """What the engine's command and the session need added to this process's environment: podman's
    configuration where it runs as root without systemd, and SOURCE_DATE_EPOCH, which the host's checkout knows
    (its commit time) and a mount may not."""
    return {**(root_image.engine_env() if engine.name == "podman" else {}), **epoch_env(Path.cwd())}


def session_options(session_name: str, args: list[str],
                    command_parser: Callable[[str], argparse.ArgumentParser] | None) -> argparse.Namespace | None:
    """The session's arguments as its command reads them; a recipe they do not name is None, not the command's
    default. Any other session (patch, lock, bump, a toolkit command under --runner toolkit) is read for the
    declared --recipe option alone: its recipe's [release.container] still picks the image."""
    command = SESSION_COMMANDS.get(session_name)
    if command is None or command_parser is None:
        parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
        add_option(parser, "recipe", default=None)
    else:
        parser = command_parser(command)
    parser.set_defaults(recipe=None)
    parser.exit_on_error = False
    # -h is for the session inside, not a help text here.
    wanted = [a for a in expand_feature_flags(args) if a not in ("-h", "--help")]
    try:
        known, _ = parser.parse_known_args(wanted)
    except argparse.ArgumentError as exc:
        raise ToolkitError(f"container: the arguments of session {session_name}: {exc}") from None
    return known


def _recipe_named(given: argparse.Namespace | None) -> Path | None:
    """The recipe a session's own arguments name, when it exists here."""
    if given is None or given.recipe is None:
        return None
    try:
        return recipe_argument(given.recipe)
    except ToolkitError:   # a path that exists only inside the container: the session reads it there
        return None


def _session_root(session_name: str, given: argparse.Namespace | None, settings: ReleaseSettings) -> str | None:
    """The build root whose image runs a `release` of a recipe whose entries name roots (a ROCm axis, a toolchain
    set's root): the root of the entries its --only selects (they must share one). None for other sessions and
    recipes: [release.container] decides."""
    if session_name != "release" or given is None:
        return None
    roots = roots_of(matrix.select(matrix.plan_matrix(settings), given.only or None))
    if len(roots) > 1:
        raise ToolkitError(f"the release's entries are built in {len(roots)} build roots ({', '.join(roots)}), "
                           "and a container runs one image",
                           hint=f"run `{RUN_TOOLKIT} release` on the host, which runs each entry in its root's "
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


def _image_and_runner(request: ContainerRequest,
                      settings: ContainerSettings) -> tuple[str | RootFS, str, bool]:
    """--image, else [release.container] image, else [release.container] root: with podman the root's folder itself
    (made when missing), with docker the root's image (made when missing: `root image`); its sessions run
    `python3 -m toolkit` with the root's toolkit venv. Also whether it is a build root's."""
    if request.image or settings.image:
        return request.image or settings.image or "", request.runner or settings.runner, False
    if settings.root:
        engine = container.detect_engine(request.engine or settings.engine)
        if engine.name == "podman":
            return (rootfs.ensure(settings.root, Path.cwd(), dry_run=request.dry_run), request.runner or "toolkit",
                    True)
        made = root_image.ensure_image(settings.root, Path.cwd(), engine.path, dry_run=request.dry_run)
        return made.tag, request.runner or "toolkit", True
    raise ToolkitError("no image to run in: give --image, or [release.container] image or root in the recipe",
                       hint="e.g. `container --recipe umbrella-ep-real ...` runs in its build root")
