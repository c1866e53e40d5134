"""The Windows build root (debian-sid-windows) for the tests of Windows builds: the toolkit run inside it, MinGW's
compilers and Wine. The build folder is the one `nox -s container -- --root debian-sid-windows build --toolchain
mingw` uses, so a build made by hand (or by an earlier test) is reused."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.real_umbrella_support import BUILD, PROJECT, toolkit_env, toolkit_python
from toolkit.buildroot import run_in_root
from toolkit.smoke.wine import windows_path

ROOT_NAME = "debian-sid-windows"
BUILD_DIR = BUILD / "roots" / ROOT_NAME
TRIPLET = "x86_64-w64-mingw32ucrt"


def toolkit(root: Path, args: list[str], *, build_dir: Path = BUILD_DIR, network: bool = True,
            binds: tuple[Path, ...] = ()) -> subprocess.CompletedProcess[str]:
    """python -m toolkit ARGS --build-dir BUILD_DIR inside the root (network: the smoke fetches PyPI's wheels)."""
    python = toolkit_python(root, ROOT_NAME)
    build_dir.mkdir(parents=True, exist_ok=True)  # bound into the root: it must exist (a fresh clone has no build/)
    return run_in_root(root, [str(python), "-m", "toolkit", *args, "--build-dir", str(build_dir)],
                       binds=[PROJECT, build_dir, *binds], cwd=PROJECT, env=toolkit_env(python), network=network,
                       check=False, capture=True, timeout=900)


def inside(root: Path, argv: list[str], binds: list[Path], env: dict[str, str] | None = None,
           cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_in_root(root, argv, binds=binds, env=env, cwd=cwd, network=False, check=False, capture=True,
                       timeout=600)


def compile_dll(root: Path, folder: Path, name: str, source: str, *link: str) -> Path:
    """NAME.dll built from C `source` with the root's MinGW GCC (the C runtime linked in, no link time)."""
    (folder / f"{name}.c").write_text(source)
    out = folder / f"{name}.dll"
    done = inside(root, [f"{TRIPLET}-gcc", "-shared", "-O2", "-o", str(out), str(folder / f"{name}.c"), *link,
                         "-static", "-Wl,--no-insert-timestamp"], [folder])
    assert done.returncode == 0, done.stderr
    return out


__all__ = ["BUILD_DIR", "ROOT_NAME", "compile_dll", "inside", "toolkit", "windows_path"]
