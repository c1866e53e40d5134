"""The real tree's session fixtures: the root with the toolkit's venv, and ONE full build (hip backend on,
release toolchain, ccache in the toolkit cache) shared by every test of the real tree."""

from __future__ import annotations

import os
import time
from types import SimpleNamespace

import pytest

from tests.support.real_umbrella_support import BUILD, COMMON, MIRROR, toolkit, toolkit_python
from tests.support.tools import require_tool


@pytest.fixture(scope="session")
def sid(sid_root):
    require_tool(MIRROR.is_dir(), f"the upstream mirror {MIRROR} is not there")
    return SimpleNamespace(root=sid_root, python=toolkit_python(sid_root))


@pytest.fixture(scope="session")
def real_build(sid):
    dry = toolkit(sid, "build", *COMMON, "--with-hipdnn", "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    started = time.monotonic()
    proc = toolkit(sid, "build", *COMMON, "--with-hipdnn", "--jobs", str(os.cpu_count() or 2), "--wheel")
    log = proc.stdout + proc.stderr
    print(f"real umbrella build + wheel: {time.monotonic() - started:.0f} s")
    assert proc.returncode == 0, log[-6000:]
    return SimpleNamespace(dry=dry.stdout, log=log, ws=BUILD / "umbrella-ep-real" / "release")
