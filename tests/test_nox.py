"""The user's command itself: `nox -s build` in a fresh nox venv, with and without hipDNN."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def nox_cmd():
    if shutil.which("nox") is None and subprocess.run([sys.executable, "-m", "nox", "--version"],
                                                      capture_output=True).returncode != 0:
        pytest.fail("nox is not installed: README's set-up (pip install nox) is part of the contract")
    return [sys.executable, "-m", "nox"]


def test_nox_build_session(nox_cmd, tmp_path):
    envdir = tmp_path / "nox-envs"
    build = tmp_path / "build"
    base = nox_cmd + ["--envdir", str(envdir), "-s", "build", "--"]
    first = subprocess.run(base + ["--build-dir", str(build)], cwd=ROOT, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr[-4000:]
    lib = build / "amdgpu-ep" / "release" / "lib"
    assert sorted(p.name for p in lib.iterdir()) == ["libamdgpu-ep.so", "libmigraphx-backend.so"]

    second = subprocess.run(base + ["--build-dir", str(build), "--with-hipdnn"], cwd=ROOT,
                            capture_output=True, text=True)
    assert second.returncode == 0, second.stderr[-4000:]
    assert sorted(p.name for p in lib.iterdir()) == [
        "libamdgpu-ep.so", "libhipdnn-backend.so", "libmigraphx-backend.so"]
    # nox passes the command's stderr through its own stdout.
    assert "patch: skipped (inputs unchanged" in second.stdout + second.stderr
