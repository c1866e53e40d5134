"""OCI images made from build roots: `python -m toolkit root image NAME` (podman, or docker).

The image is the root's filesystem (`root make`) plus the toolkit's venv for that root (session.toolkit_python:
the root's python3, --system-site-packages, the toolkit's dependencies, zig installed by hash), imported as one
layer with `tar | podman import` (no registry, no base image). The venv sits in the image at the path it has on
this machine, inside the toolkit cache: the compilers a build runs (the zig wrappers call the venv's python;
zig's libc++ headers live in it) then have the same paths in the image as in `container --root` sessions, so
ccache entries and zig's own cache serve both. The image's PATH starts with the venv's bin/, so `python3 -m
toolkit` inside runs the mounted project with its dependencies.

    localhost/ort-amdgpu-root-<name>:<package set digest, 16>-<digest, 12, of the lock file, the venv and FORMAT>

A tag that exists is reused; anything that changes the image (the package set, the lock, the toolkit's
dependencies, the root's python) changes the tag.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from toolkit.buildroot import make, sandbox, session
from toolkit.container.rootfs import root_env
from toolkit.recipe import packageset
from toolkit.util import log
from toolkit.util.errors import RUN_TOOLKIT, ToolkitError
from toolkit.util.fsutil import atomic_write_text
from toolkit.util.locks import WorkLock
from toolkit.util.process import run, run_pipe

# Bumped when the way an image is made changes, so images made the old way are not reused.
FORMAT = 1
REPOSITORY = "localhost/ort-amdgpu-root-"
# Host-only parts of a root that an image does not take (the engine provides /dev, /proc, /sys).
_EXCLUDE = ("./dev/*", "./proc/*", "./sys/*", "./tmp/*", "./run/*", "./var/cache/apt/*")


@dataclass(frozen=True)
class RootImage:
    name: str        # the package set's name
    tag: str         # repository:tag
    root: Path
    venv: Path

    def env(self) -> dict[str, str]:
        return root_env(self.name, self.venv)


def engine_env() -> dict[str, str]:
    """The environment for the engine's commands. Where podman runs as root without systemd (inside another
    container: CI runners, this project's machines) its defaults fail (rlimits it may not set, systemd
    cgroups): unless CONTAINERS_CONF names a configuration, one in the toolkit cache sets runc, cgroupfs,
    no default ulimits and a file event log."""
    env = dict(os.environ)
    if env.get("CONTAINERS_CONF") or os.getuid() != 0 or Path("/run/systemd/system").is_dir():
        return env
    conf = sandbox.cache_dir() / "containers" / "containers.conf"
    text = ('[containers]\ndefault_ulimits = []\n\n[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\n'
            'events_logger = "file"\n')
    if not conf.is_file() or conf.read_text(encoding="utf-8") != text:
        atomic_write_text(conf, text)
    env["CONTAINERS_CONF"] = str(conf)
    return env


def image_tag(spec: packageset.PackageSet, venv: Path) -> str:
    lock = spec.lock_file.read_bytes() if spec.lock_file.is_file() else b""
    digest = hashlib.sha256(b"\0".join([str(FORMAT).encode(), lock, str(venv).encode(),
                                        (venv / session.COMPLETE).read_bytes()])).hexdigest()
    return f"{REPOSITORY}{spec.name}:{spec.digest()[:16]}-{digest[:12]}"


def describe(name: str, project: Path) -> RootImage | None:
    """The image of root `name` as it would be tagged now (None while the root or its venv is not made)."""
    spec = packageset.load(name)
    root = make.root_path(spec)
    if os.environ.get(make.ENV_BUILDROOT):
        root = make.ensure_root(name)
    if not (root / "usr").is_dir():
        return None
    venv = session.toolkit_venv(root, project, spec.from_root)
    return RootImage(spec.name, image_tag(spec, venv), root, venv) if venv else None


def ensure_image(name: str, project: Path, engine_name: str | None = None, *, dry_run: bool = False) -> RootImage:
    """The image of root `name`: made (root, venv, import) unless an image with its tag exists."""
    from toolkit.container.engine import detect_engine

    spec = packageset.load(name)
    root = make.ensure_root(name)
    venv = session.toolkit_python(root, project, spec.from_root).parent.parent
    image = RootImage(spec.name, image_tag(spec, venv), root, venv)
    engine = detect_engine(engine_name)
    if dry_run:
        print(f"image: {image.tag} (root {root}, venv {venv}, engine {engine.path})")
        return image
    if exists(engine.path, image.tag):
        log.stage("image", f"{image.tag}: exists, reused")
        return image
    with WorkLock(root.parent / f".image-{spec.name}"):
        if not exists(engine.path, image.tag):
            _import(engine.path, image, spec)
    return image


def exists(engine: str, tag: str) -> bool:
    return run([engine, "image", "exists", tag], f"asking {engine} for image {tag}", env=engine_env(),
               check=False).returncode == 0


def _import(engine: str, image: RootImage, spec: packageset.PackageSet) -> None:
    tar = shutil.which("tar")
    if tar is None:
        raise ToolkitError("tar is not installed: an image is the root's tar imported", hint="apt-get install tar")
    venv_rel = Path(".") / image.venv.relative_to("/")
    # The venv's parent folders that the root lacks (a path twice in one layer is refused).
    parents = [str(p) for p in reversed(venv_rel.parents) if p != Path(".") and not (image.root / p).exists()]
    if (image.root / venv_rel).exists():
        raise ToolkitError(f"{image.root / venv_rel}: the root itself holds the venv's path", hint="remove it")
    argv = [tar, "--numeric-owner", "-c", "-f", "-", *(f"--exclude={e}" for e in _EXCLUDE),
            "-C", str(image.root), ".", "-C", "/", "--no-recursion", *parents, "--recursion", str(venv_rel)]
    changes = [*(f"ENV {key}={value}" for key, value in image.env().items()), "WORKDIR /",
               f"LABEL org.opencontainers.image.title=ort-amdgpu build root {spec.name}",
               f"LABEL io.ort-amdgpu.package-set={spec.digest()}", f"LABEL io.ort-amdgpu.venv={image.venv}"]
    importer = [engine, "import", "--quiet", *(a for c in changes for a in ("--change", c)),
                "--message", f"build root {spec.name} ({spec.file.name}) and the toolkit's venv", "-", image.tag]
    log.stage("image", f"{image.tag}: importing {image.root} and {image.venv}")
    started = time.monotonic()
    run_pipe(argv, importer, f"making image {image.tag} (tar | {Path(engine).name} import)", env=engine_env())
    log.stage("image", f"{image.tag}: made in {time.monotonic() - started:.0f} s")


def tags(engine: str, name: str) -> list[tuple[str, str, str]]:
    """(repository:tag, size, created) of every image of root `name`'s repository the engine has."""
    repository = f"{REPOSITORY}{name}"
    proc = run([engine, "images", "--format", "{{.Repository}}:{{.Tag}}\t{{.Size}}\t{{.CreatedSince}}",
                "--filter", f"reference={repository}"], "listing images", env=engine_env(), check=False)
    found = [tuple(line.split("\t")) for line in proc.stdout.splitlines() if line.count("\t") == 2]
    return [(tag, size, created) for tag, size, created in found if tag.startswith(repository + ":")]


def is_stale(tag: str, digest: str, current: RootImage | None) -> bool | None:
    """Whether image `tag` of a package set with `digest` is stale; None while that cannot be known (the
    current tag is not, as the root or its venv is not made, and `tag` is of this package set)."""
    if current is not None:
        return tag != current.tag
    return None if tag.rpartition(":")[2].startswith(digest[:16] + "-") else True


def listing(name: str, project: Path, engine_name: str | None = None) -> list[str]:
    """Lines for `root show`: the current tag, made or not, and other images of the root's repository."""
    from toolkit.container.engine import detect_engine

    try:
        engine = detect_engine(engine_name)
    except ToolkitError as exc:
        return [f"image:       no container engine ({exc.hint})"]
    current = describe(name, project)
    spec = packageset.load(name)
    digest = spec.digest()
    made = [(tag, size, created, is_stale(tag, digest, current)) for tag, size, created in tags(engine.path, spec.name)]
    lines = []
    if current is None:
        lines.append(f"image:       none yet (`{RUN_TOOLKIT} root image {name}` makes the root, venv, image)")
    elif not any(stale is False for *_made, stale in made):
        lines.append(f"image:       {current.tag} not made yet (`{RUN_TOOLKIT} root image {name}`)")
    marks = {False: "current", True: "stale", None: "current or stale: the venv is not made"}
    for tag, size, created, stale in made:
        lines.append(f"image:       {tag} {size} {created} ({marks[stale]})")
    if any(stale for *_made, stale in made):
        lines.append(f"             `{RUN_TOOLKIT} root prune {name}` removes the stale ones")
    return lines
