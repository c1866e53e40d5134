"""The background builds (tests/support/prebuild.py): the tests that use the slow builds' fixtures run last, in
pytest's own order, and the builds they need start at once, in the order they are needed; a run that would
overlap nothing starts none. A real pytest run on a small module whose fixtures have the real fixtures' names, with
an empty toolkit cache, so the background process finds no root and builds nothing."""

from __future__ import annotations

import subprocess
import sys

from tests.support.tools import ROOT

MODULE = '''
import pytest
from tests.support import prebuild


@pytest.fixture(scope="session")
def hipep():
    [background] = prebuild.RUNNING   # as the real fixture waits on the work-tree lock
    background.proc.wait(timeout=600)


@pytest.fixture(scope="session", params=["rocm6", "rocm7"])
def rocm_root(request):
    return request.param


@pytest.fixture(scope="session")
def real_build(rocm_root):
    return rocm_root


def test_a_hip(hipep):
    pass


def test_b_real(real_build):
    pass


def test_c_plain():
    pass
'''


def run(tmp_path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_heavy.py").write_text(MODULE)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "TOOLKIT_CACHE_DIR": str(tmp_path / "cache"),
           "TMPDIR": str(tmp_path)}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.support.prebuild", "-v", "-p",
                           "no:cacheprovider", "--rootdir", str(tmp_path), str(tmp_path), *args],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)


def test_slow_builds_start_at_once_and_their_tests_run_last(tmp_path):
    proc = run(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    order = [line.split("::")[1].split()[0] for line in proc.stdout.splitlines() if "::test_" in line]
    assert order == ["test_c_plain", "test_a_hip", "test_b_real[rocm6]", "test_b_real[rocm7]"]
    assert "background builds (hip-ep, real-rocm7, real-rocm6): exit 0; their output: " in proc.stdout
    for name, root in [("hip-ep", "debian-sid-rocm7"), ("real-rocm7", "debian-sid-rocm7"),
                       ("real-rocm6", "debian-sid-rocm")]:
        assert f"prebuild: {name}: root {root} is not made: left to the fixture in 0 s" in proc.stdout


def test_nothing_starts_where_nothing_would_overlap(tmp_path):
    alone = run(tmp_path, "-k", "hip or real")
    assert alone.returncode != 0   # hipep finds no background process to wait for
    assert "background builds" not in alone.stdout
    light = run(tmp_path, "-k", "plain")
    assert light.returncode == 0 and "background builds" not in light.stdout, light.stdout
