"""Nox sessions: thin wrappers over `python -m toolkit`. Logic lives in toolkit/, not here.

    nox -s build -- --with-hipdnn      build the bundled sample (or --recipe/--source another tree)
    nox -s tests                       run the test suite
    nox -s lint                        ruff and mypy
    nox -s docs                        the documentation site (mkdocs build --strict)

Every session runs in ONE environment, <envdir>/toolkit (.nox/toolkit): created and filled once, then
shared, so switching sessions (build -> wheel -> smoke) installs nothing and finds the same CMake.
Nox itself makes one venv per session, so the sessions use no nox venv and call that one's Python.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import sys
from pathlib import Path

import nox

nox.options.sessions = ["build"]

ROOT = Path(__file__).parent


def _env(session: nox.Session, extras: str = "") -> Path:
    """The shared environment's bin folder, created on first use. The toolkit (`-e .[extras]`) is
    installed again only when pyproject.toml changed; any install covers the plain toolkit."""
    # session.cache_dir is <envdir>/.cache; absolute, since PATH must hold wherever a command runs
    env = Path(session.cache_dir).resolve().parent / "toolkit"
    env.parent.mkdir(parents=True, exist_ok=True)
    # A checkout mounted elsewhere (the release container) or another Python needs a new environment.
    origin = f"{sys.executable} {sys.version} {ROOT}"
    key = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + origin.encode()).hexdigest()
    want = env / f".installed-{extras or 'base'}"
    # Two sessions started at once must not build the environment at the same time.
    with open(env.parent / ".toolkit.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        made = env / ".created-by"
        if not ((env / "bin" / "python").exists() and made.is_file() and made.read_text() == origin):
            session.run(sys.executable, "-m", "venv", "--clear", str(env), external=True)
            made.write_text(origin)
        done = [p for p in env.glob(".installed-*") if p.read_text() == key]
        if want not in done and (extras or not done):
            spec = f".[{extras}]" if extras else "."
            session.run(str(env / "bin" / "python"), "-m", "pip", "install", "-q", "-e", spec, external=True)
            want.write_text(key)
    return env / "bin"


def _run(session: nox.Session, *args: str, extras: str = "") -> None:
    bin_dir = _env(session, extras)
    env = {"PATH": os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]), "VIRTUAL_ENV": str(bin_dir.parent)}
    session.run(str(bin_dir / "python"), *args, *session.posargs, env=env, external=True)


def _toolkit(session: nox.Session, *command: str) -> None:
    _run(session, "-m", "toolkit", *command)


@nox.session(venv_backend="none")
def build(session: nox.Session) -> None:
    """Patch, configure and build a recipe (default: the bundled umbrella EP sample)."""
    _toolkit(session, "build")


@nox.session(venv_backend="none")
def hipify(session: nox.Session) -> None:
    """Run the recipe's stages up to hipify (CUDA sources -> build/<recipe>/<variant>/hipified)."""
    _toolkit(session, "build", "--until", "hipify")


@nox.session(venv_backend="none")
def wheel(session: nox.Session) -> None:
    """Build, then package and repair the wheel into build/<recipe>/<variant>/wheelhouse."""
    _toolkit(session, "build", "--wheel")


@nox.session(venv_backend="none")
def smoke(session: nox.Session) -> None:
    """Build the wheel (if needed), install it in a fresh venv and smoke-test it with onnxruntime."""
    _toolkit(session, "build", "--smoke")


@nox.session(venv_backend="none")
def patch(session: nox.Session) -> None:
    """Apply the recipe's patch series to its work tree; `-- --check` only checks, `-- --refresh` rewrites it."""
    _toolkit(session, "patch")


@nox.session(venv_backend="none")
def lock(session: nox.Session) -> None:
    """Download unpinned sources once and write their sha256 into recipes/<name>.lock.toml."""
    _toolkit(session, "lock")


@nox.session(venv_backend="none")
def bump(session: nox.Session) -> None:
    """Move a recipe to another upstream revision: `-- --recipe NAME --to REV [--root NAME] [--check]`."""
    _toolkit(session, "bump")


@nox.session(venv_backend="none")
def release(session: nox.Session) -> None:
    """The release matrix: `-- --print-matrix` for CI fan-out, `-- --only ID` to build one entry."""
    _toolkit(session, "release")


@nox.session(venv_backend="none")
def publish(session: nox.Session) -> None:
    """Check a release's dist folder and upload its wheels: `-- DIST --repository-url URL` (`--dry-run`: the plan)."""
    _toolkit(session, "publish")


@nox.session(venv_backend="none")
def container(session: nox.Session) -> None:
    """Run a session in a release container: `nox -s container -- release --recipe umbrella-ep-real --only ID`."""
    _toolkit(session, "container")


@nox.session(venv_backend="none")
def root(session: nox.Session) -> None:
    """Build roots: `-- make debian-sid-rocm`, `-- show NAME`, `-- image NAME` (OCI), `-- diff`, `-- run -- CMD`."""
    _toolkit(session, "root")


@nox.session(name="list", venv_backend="none")
def list_(session: nox.Session) -> None:
    """Recipes, their features and defaults, and the variants built."""
    _toolkit(session, "list")


@nox.session(venv_backend="none")
def clean(session: nox.Session) -> None:
    """Remove build outputs: `-- --variant NAME`, `-- --recipe NAME`, `-- --all` (`--cache`: downloads too)."""
    _toolkit(session, "clean")


@nox.session(venv_backend="none")
def tests(session: nox.Session) -> None:
    """Run the test suite (`-- -m "not buildroot"`: the fast part, without the Debian build root)."""
    _run(session, "-m", "pytest", extras="test")


@nox.session(venv_backend="none")
def docs(session: nox.Session) -> None:
    """The documentation site: reference pages checked against the code, then `mkdocs build --strict`."""
    _run(session, "-m", "toolkit", "docs", "reference", "--check", extras="docs")
    _run(session, "-m", "mkdocs", "build", "--strict", "--site-dir", "build/site", extras="docs")


@nox.session(venv_backend="none")
def lint(session: nox.Session) -> None:
    """ruff on the whole project, mypy in strict mode on all of toolkit/ (both configured in pyproject.toml)."""
    _run(session, "-m", "ruff", "check", ".", extras="lint")
    _run(session, "-m", "mypy", extras="lint")
