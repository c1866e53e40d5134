"""AMD's real umbrella EP tree inside the Debian sid build root (shared by the real-tree tests and
benchmarks/real_umbrella_build.py): where the shared upstream mirror is, the toolkit's Python inside the
root, and the host folders and environment a toolkit command inside needs.

Commands run with the toolkit's own runner, toolkit.buildroot.run_in_root (the root read-only,
`network=False` to prove a build reaches no GitHub). The toolkit's Python dependencies live in the venv
toolkit.buildroot.session makes for `container --root` (in the toolkit cache, with the root's
python3 and --system-site-packages, so Debian's python3-onnxruntime is visible).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.support.buildroot_support import SID_ROOT
from tests.support.tools import ROOT
from toolkit.buildroot import run_in_root

PROJECT = ROOT
# Resolved: a linked ../shared is bound into a root at the folder it is, and named there by that path.
MIRROR = (Path(os.environ.get("TOOLKIT_UPSTREAM", PROJECT.parent / "shared" / "upstream")) / "mirror").resolve()
SMOKE_SCRIPT = Path(__file__).resolve().with_name("real_umbrella_smoke.py")
"""Run by a fresh venv's python inside the root: registers the installed wheel with onnxruntime."""


def toolkit_python(root: Path, name: str = SID_ROOT) -> Path:
    """The python inside `root` (of package set `name`) that runs the toolkit: `container --root`'s venv, made once
    per root."""
    from toolkit.buildroot import session
    from toolkit.recipe import packageset

    return session.toolkit_python(root, PROJECT, packageset.load(name).from_root)


def binds() -> list[Path]:
    """Host folders a command inside needs at their own paths: the project (builds write under build/)
    and the shared upstream folder that holds the mirror."""
    return [PROJECT, *([MIRROR.parent] if MIRROR.is_dir() else [])]


def toolkit_env(python: Path) -> dict[str, str]:
    """The environment of `python -m toolkit` inside: the venv's tools first, the project's checkout."""
    return {"PATH": f"{python.parent}:/usr/local/bin:/usr/bin:/bin", "PYTHONPATH": str(PROJECT)}


BUILD = PROJECT / "build"  # the default build folder: a second run (or a build made by hand) is a no-op
# The roots the real tree is built in, by ROCm variant: the root, and the build folder its builds use (ROCm 7's is
# where `container --root debian-sid-rocm7 build` puts them, so a build made by hand is reused too).
ROOTS = {"rocm6": (SID_ROOT, BUILD), "rocm7": ("debian-sid-rocm7", BUILD / "roots" / "debian-sid-rocm7")}


def common(build: Path) -> list[str]:
    """The options of every real-tree build: the recipe, the shared mirror, offline, the build folder."""
    return ["--recipe", "umbrella-ep-real", "--mirror", MIRROR.as_uri(), "--offline", "--build-dir", str(build)]


COMMON = common(BUILD)


def wheel_build(build: Path) -> list[str]:
    """The real-tree build every test shares (tests/real_umbrella/conftest.py, tests/hip_ep/test_umbrella.py and the
    background build of tests/support/prebuild.py): hip backend on, all cores, the wheel."""
    return ["build", *common(build), "--with-hipdnn", "--jobs", str(os.cpu_count() or 2), "--wheel"]


# The real-tree tests build with the hip backend (--with-hipdnn, tests/real_umbrella/conftest.py): such a build is a
# distribution of its own, <distribution>-<variant> plus this ([wheel] named_features).
NAMED = "-hipdnn"
LIBS = {"libamdgpu-ep.so", "libmigraphx-backend.so", "libhip-backend.so"}


def inside(sid, argv: list[str], **kw) -> subprocess.CompletedProcess:
    """argv inside the root (read-only), the project and the mirror bound, run from the project."""
    return run_in_root(sid.root, argv, binds=binds(), cwd=PROJECT, **kw)


def toolkit(sid, *args: str) -> subprocess.CompletedProcess:
    """python -m toolkit ARGS inside the root, without network: nothing can reach GitHub."""
    return inside(sid, [str(sid.python), "-m", "toolkit", *args], env=toolkit_env(sid.python), network=False,
                  check=False, capture=True)
