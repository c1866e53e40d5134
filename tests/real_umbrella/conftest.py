"""The real tree's session fixtures: each ROCm variant's build root with the toolkit's venv (`sid`, parametrized:
rocm6 in debian-sid-rocm, rocm7 in debian-sid-rocm7), and ONE full build per root (hip backend on, release
toolchain, ccache in the toolkit cache) shared by every test of the real tree. pytest orders the tests by root, so
each root's build is made once."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from tests.support.buildroot_support import build_root
from tests.support.real_umbrella_support import MIRROR, ROOTS, common, toolkit, toolkit_python, wheel_build
from tests.support.tools import require_tool


@pytest.fixture(scope="session", params=sorted(ROOTS))
def rocm_root(request):
    """(variant, root name, root folder, build folder, the HIP soname its libraries must link)."""
    name, build = ROOTS[request.param]
    return SimpleNamespace(variant=request.param, name=name, root=build_root(name), build=build,
                           hip=f"libamdhip64.so.{request.param.removeprefix('rocm')}")


@pytest.fixture(scope="session")
def sid(rocm_root):
    require_tool(MIRROR.is_dir(), f"the upstream mirror {MIRROR} is not there")
    return SimpleNamespace(**vars(rocm_root), python=toolkit_python(rocm_root.root, rocm_root.name),
                           common=common(rocm_root.build))


@pytest.fixture(scope="session")
def real_build(sid):
    dry = toolkit(sid, "build", *sid.common, "--with-hipdnn", "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    started = time.monotonic()
    proc = toolkit(sid, *wheel_build(sid.build))
    log = proc.stdout + proc.stderr
    print(f"real umbrella build + wheel in {sid.name}: {time.monotonic() - started:.0f} s")
    assert proc.returncode == 0, log[-6000:]
    return SimpleNamespace(dry=dry.stdout, log=log, ws=sid.build / "umbrella-ep-real" / "release")
