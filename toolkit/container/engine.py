"""Run a session in a container with podman or docker, behind one small interface: in an image, or (podman) in a
build root's folder itself (toolkit/buildroot/rootfs.py).

The project, the source tree, the shared cache and the output folder are mounted at fixed paths, so a
session inside sees the same layout on every machine:

    project -> /work/project   (the toolkit, recipes, noxfile; the working directory)
    source  -> /work/source    (an external source tree, when given)
    cache   -> /cache          (downloads, hipify cache, local ccache: TOOLKIT_CACHE_DIR, CCACHE_DIR)
    out     -> /work/out       (where the session writes its results: TOOLKIT_OUT_DIR)
    build   -> /work/build     (the build folder, when given: TOOLKIT_BUILD_DIR; a release writes <recipe>/dist there)
    binds   -> the same path, read-only (host folders the session's arguments name: a file:// mirror)

Both engines take the same `run` and `build` arguments for everything used here; the differences (who
owns files written to the mounts) are handled in `_user_args`.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, get_args

from toolkit.container.rootfs import RootFS
from toolkit.util import argcheck, hostview, log
from toolkit.util.errors import RUN_TOOLKIT, ToolkitError
from toolkit.util.process import run
from toolkit.util.redact import redact_text

ENV_ENGINE = "TOOLKIT_CONTAINER_ENGINE"
EngineName = Literal["podman", "docker"]
ENGINES: tuple[str, ...] = get_args(EngineName)
ENV_FILE = Path(__file__).resolve().parent / "container_env.json"

PROJECT, SOURCE, CACHE, OUT, BUILD = "/work/project", "/work/source", "/cache", "/work/out", "/work/build"
IMAGE_WHERE = "container image (--image or [release.container] image)"


@dataclass(frozen=True)
class Engine:
    name: str   # "podman" or "docker"
    path: str


@dataclass(frozen=True)
class Mounts:
    project: Path
    source: Path | None = None
    cache: Path | None = None
    out: Path | None = None
    build: Path | None = None
    binds: tuple[Path, ...] = ()
    # Where the cache is inside. A build root's image takes it at its host path: zig's cache records the paths
    # of what it built, and the image's compilers are the root sessions' (see toolkit/buildroot/image.py).
    cache_inside: str = CACHE

    def pairs(self) -> list[tuple[Path, str]]:
        pairs = [(self.project, PROJECT), (self.source, SOURCE), (self.cache, self.cache_inside), (self.out, OUT),
                 (self.build, BUILD)]
        return [(Path(host).resolve(), inside) for host, inside in pairs if host is not None]


def detect_engine(preferred: str | None = None) -> Engine:
    """`preferred`, else env TOOLKIT_CONTAINER_ENGINE, else podman, else docker."""
    wanted = preferred or os.environ.get(ENV_ENGINE) or None
    origin = "--engine" if preferred else f"env {ENV_ENGINE}"
    if wanted:
        # A path to an engine binary is accepted; its name says which CLI dialect it speaks.
        name = Path(wanted).name
        if name not in ENGINES:
            raise ToolkitError(f"{origin}: unknown container engine {wanted!r}",
                               hint=f"use one of: {', '.join(ENGINES)}")
        path = shutil.which(wanted)
        if path is None:
            raise ToolkitError(f"{origin}: container engine {wanted!r} is not installed or not on PATH",
                               hint="apt-get install podman (or docker), or pick the other engine")
        return Engine(name, path)
    for name in ENGINES:
        path = shutil.which(name)
        if path:
            return Engine(name, path)
    raise ToolkitError("no container engine found: neither podman nor docker is on PATH",
                       hint="apt-get install podman runc (or install docker), or set TOOLKIT_CONTAINER_ENGINE")


def session_command(runner: str, session: str, args: list[str]) -> list[str]:
    """The command that starts `session` inside the image."""
    if runner == "nox":
        return ["nox", "--noxfile", f"{PROJECT}/noxfile.py", "-s", session, "--", *args]
    if runner == "toolkit":
        return ["python3", "-m", "toolkit", session, *args]
    raise ToolkitError(f"unknown session runner {runner!r}", hint="use 'nox' or 'toolkit'")


def container_env(mounts: Mounts, environ: Mapping[str, str] | None = None,
                  extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment a session needs inside: fixed paths plus what passes through from the host."""
    given: Mapping[str, str] = os.environ if environ is None else environ
    spec = json.loads(ENV_FILE.read_text(encoding="utf-8"))
    env = {}
    for key, value in sorted(given.items()):
        if key in spec["never"]:
            continue
        if key in spec["names"] or any(key.startswith(p) for p in spec["prefixes"]):
            env[key] = value
    env["TOOLKIT_IN_CONTAINER"] = "1"
    env["PYTHONPATH"] = PROJECT
    # What the session prints names the host folders, as this process sees them (itself maybe in a container).
    env[hostview.ENV] = hostview.encode((hostview.host_text(str(host), given), inside)
                                        for host, inside in mounts.pairs())
    if mounts.source is not None:
        env["TOOLKIT_SOURCE_DIR"] = SOURCE
    if mounts.cache is not None:
        env["TOOLKIT_CACHE_DIR"] = mounts.cache_inside
        env["CCACHE_DIR"] = f"{mounts.cache_inside}/ccache"
    if mounts.out is not None:
        env["TOOLKIT_OUT_DIR"] = OUT
    if mounts.build is not None:
        env["TOOLKIT_BUILD_DIR"] = BUILD
    env.update(extra or {})
    return env


def _user_args(engine: Engine) -> list[str]:
    # Files the session writes into the mounts must belong to the caller, not to root.
    if os.getuid() == 0:
        return []
    if engine.name == "docker":
        return ["--user", f"{os.getuid()}:{os.getgid()}"]
    return ["--userns=keep-id"]


def run_argv(engine: Engine, image: str | RootFS, command: list[str], mounts: Mounts, env: dict[str, str],
             network: str | None = None) -> list[str]:
    """The engine's command line; `image` is a tag, or (podman only) a build root's folder run as is."""
    if isinstance(image, RootFS):
        if engine.name != "podman":
            raise ToolkitError(f"{engine.name} cannot run {image} without an image (only podman has --rootfs)",
                               hint=f"make its image: `{RUN_TOOLKIT} root image {image.name}`")
        env = {**image.env(), **env}
        if not _inside(image.venv, mounts.cache, mounts.cache_inside):
            mounts = replace(mounts, binds=(*mounts.binds, image.venv))
    else:
        argcheck.image_name(image, IMAGE_WHERE)
    argv = [engine.path, "run", "--rm", *_user_args(engine)]
    if network:
        argv += ["--network", network]
    for host, inside in mounts.pairs():
        argv += ["--volume", f"{host}:{inside}"]
    for host in mounts.binds:
        argv += ["--volume", f"{Path(host).resolve()}:{Path(host).resolve()}:ro"]
    for key, value in env.items():
        argv += ["--env", argcheck.env_assignment(key, value, f"--env {key}")]
    argv += ["--workdir", PROJECT]
    if isinstance(image, RootFS):
        # The root read-only under an overlay the engine discards: the root is never written.
        return [*argv, "--rootfs", "--", f"{image.path}:O", *command]
    return [*argv, "--", image, *command]


def _inside(path: Path, cache: Path | None, cache_inside: str) -> bool:
    """Whether `path` is seen at its own path through the cache mount."""
    return cache is not None and Path(cache_inside) == Path(cache).resolve() and \
        Path(path).resolve().is_relative_to(Path(cache).resolve())


def check_mounts(mounts: Mounts) -> None:
    """The host folders a session would mount, each refused when it is a system or home dot-folder or holds ':'
    (the project, the working directory, is the caller's own choice and only checked for ':')."""
    from toolkit.container.hostpaths import check_host_paths

    if ":" in str(Path(mounts.project).resolve()):
        raise ToolkitError(f"container: the project folder {mounts.project} holds ':', which the engine's "
                           "--volume reads as the start of the mount options; run from a folder without one")
    check_host_paths([("--source", mounts.source), ("--cache", mounts.cache), ("--out", mounts.out),
                      ("--build-dir", mounts.build), *[("bind", b) for b in mounts.binds]])


def check_values(image: str | RootFS, env: dict[str, str] | None) -> None:
    """The image name and --env values a session would hand the engine: checked before anything runs."""
    if isinstance(image, RootFS):
        if ":" in str(image.path):
            raise ToolkitError(f"{image}: the root's path holds ':', which podman's --rootfs reads as its options",
                               hint="set TOOLKIT_CACHE_DIR to a folder without ':'")
    else:
        argcheck.image_name(image, IMAGE_WHERE)
    for key, value in (env or {}).items():
        argcheck.env_assignment(key, value, f"--env {key}")


def run_session(engine: Engine, image: str | RootFS, session: str, args: list[str], mounts: Mounts,
                env: dict[str, str] | None = None, *, runner: str = "nox", network: str | None = None,
                dry_run: bool = False, host_env: Mapping[str, str] | None = None) -> int:
    """Run `session` with `args` inside `image`; returns the session's exit code. Every host folder is checked
    first (toolkit.container.hostpaths); a dry run prints the command and creates nothing. `env` is set inside;
    `host_env` is added to this process's environment for the engine's command and for what passes from the
    host into the container (container_env.json)."""
    check_values(image, env)
    check_mounts(mounts)
    for what, path in (("project", mounts.project), ("source", mounts.source)):
        if path is not None and not Path(path).is_dir():
            raise ToolkitError(f"{path}: {what} folder to mount into the container does not exist")
    for path in (mounts.cache, mounts.out, mounts.build):
        if path is not None and not dry_run:
            Path(path).mkdir(parents=True, exist_ok=True)
    host = {**os.environ, **(host_env or {})}
    argv = run_argv(engine, image, session_command(runner, session, args), mounts,
                    container_env(mounts, host, extra=env), network)
    if dry_run:
        print(redact_text(shlex.join(argv)))   # --env values may hold a mirror URL with credentials
        return 0
    log.stage("container", f"{engine.name}: {session} {shlex.join(args)} in {image}")
    return run(argv, f"{engine.name} run of {session} in {image}", output="terminal", check=False,
               env=host).returncode


def build_argv(engine: Engine, containerfile: Path, context: Path, tag: str,
               build_args: dict[str, str] | None = None) -> list[str]:
    argv = [engine.path, "build", "--file", str(containerfile), "--tag", argcheck.image_name(tag, IMAGE_WHERE)]
    for key, value in (build_args or {}).items():
        argv += ["--build-arg", argcheck.env_assignment(key, value, f"--build-arg {key}")]
    return argv + ["--", str(context)]


def build_image(engine: Engine, containerfile: Path, context: Path, tag: str,
                build_args: dict[str, str] | None = None, dry_run: bool = False) -> None:
    containerfile = Path(containerfile)
    if not containerfile.is_file():
        raise ToolkitError(f"{containerfile}: Containerfile not found")
    argv = build_argv(engine, containerfile, context, tag, build_args)
    if dry_run:
        print(shlex.join(argv))
        return
    log.stage("container", f"building {tag} from {containerfile}")
    run(argv, f"{engine.name} build of {containerfile}", output="terminal",
        hint="the engine's output above names the failing step")


def sandbox_config(root: Path) -> dict[str, str]:
    """Env that points podman at its own config and storage under `root`.

    For machines where podman runs as root inside another container (CI runners, this project's test
    machine): the runc runtime, cgroupfs, a file event log, no default ulimits, and the vfs storage
    driver, which needs no overlay or fuse support. Images built here stay under `root`.
    """
    root = Path(root).resolve()
    root.mkdir(parents=True, exist_ok=True)
    conf = root / "containers.conf"
    conf.write_text('[containers]\ndefault_ulimits = []\n\n[engine]\nruntime = "runc"\n'
                    'cgroup_manager = "cgroupfs"\nevents_logger = "file"\n', encoding="utf-8")
    storage = root / "storage.conf"
    storage.write_text(f'[storage]\ndriver = "vfs"\ngraphroot = "{root / "graph"}"\n'
                       f'runroot = "{root / "run"}"\n', encoding="utf-8")
    return {"CONTAINERS_CONF": str(conf), "CONTAINERS_STORAGE_CONF": str(storage)}
