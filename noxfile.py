"""Nox sessions: thin wrappers over `python -m toolkit`. Logic lives in toolkit/, not here.

    nox -s build -- --with-hipdnn      build the bundled sample (or --recipe/--source another tree)
    nox -s tests                       run the test suite
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.reuse_venv = "yes"
nox.options.sessions = ["build"]

ROOT = Path(__file__).parent


def _install(session: nox.Session, extras: str = "") -> None:
    """Install the toolkit (editable) once per venv; again only when pyproject.toml changes."""
    spec = f".[{extras}]" if extras else "."
    stamp_key = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + spec.encode()).hexdigest()
    venv = getattr(session.virtualenv, "location", None)
    stamp = Path(venv) / ".toolkit-installed" if venv else None
    if stamp and stamp.is_file() and stamp.read_text() == stamp_key:
        return
    session.install("-e", spec)
    if stamp:
        stamp.write_text(stamp_key)


def _toolkit(session: nox.Session, *command: str, extras: str = "") -> None:
    _install(session, extras)
    session.run("python", "-m", "toolkit", *command, *session.posargs)


@nox.session
def build(session: nox.Session) -> None:
    """Patch, configure and build a recipe (default: the bundled umbrella EP sample)."""
    _toolkit(session, "build")


@nox.session
def hipify(session: nox.Session) -> None:
    """Run the recipe's stages up to hipify (CUDA sources -> build/<recipe>/<variant>/hipified)."""
    _toolkit(session, "build", "--until", "hipify")


@nox.session
def wheel(session: nox.Session) -> None:
    """Build, then package and repair the wheel into build/<recipe>/<variant>/wheelhouse."""
    _toolkit(session, "build", "--wheel")


@nox.session
def smoke(session: nox.Session) -> None:
    """Build the wheel (if needed), install it in a fresh venv and smoke-test it with onnxruntime."""
    _toolkit(session, "build", "--smoke")


@nox.session
def patch(session: nox.Session) -> None:
    """Apply the recipe's patch series to its work tree; `-- --check` only checks, `-- --refresh` rewrites it."""
    _toolkit(session, "patches")


@nox.session
def lock(session: nox.Session) -> None:
    """Download unpinned sources once and write their sha256 into recipes/<name>.lock.toml."""
    _toolkit(session, "lock")


@nox.session
def release(session: nox.Session) -> None:
    """The release matrix: `-- --print-matrix` for CI fan-out, `-- --only ID` to build one entry."""
    _toolkit(session, "release")


@nox.session
def container(session: nox.Session) -> None:
    """Run another session inside the release image: `nox -s container -- release -- --only ID`."""
    _toolkit(session, "container")


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite."""
    _install(session, "test")
    session.run("python", "-m", "pytest", *session.posargs)
