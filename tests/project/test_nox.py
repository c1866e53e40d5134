"""The user's commands themselves: nox sessions in a fresh nox envdir, with and without hipDNN, switching
sessions, -q through nox, and the one environment every session shares."""

import os
import shutil
import subprocess
import sys

import pytest

from tests.support.tools import ROOT

# A fresh nox envdir: its one environment pip-installs the toolkit's dependencies from PyPI.
pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def nox_cmd():
    if shutil.which("nox") is None and subprocess.run([sys.executable, "-m", "nox", "--version"],
                                                      capture_output=True).returncode != 0:
        pytest.fail("nox is not installed: README's set-up (pip install nox) is part of the contract")
    return [sys.executable, "-m", "nox"]


@pytest.fixture(scope="module")
def envdir(tmp_path_factory):
    return tmp_path_factory.mktemp("nox-envs")


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return tmp_path_factory.mktemp("build")


def session(nox_cmd, envdir, name, *args):
    proc = subprocess.run(nox_cmd + ["--envdir", str(envdir), "-s", name, "--", *args], cwd=ROOT,
                          capture_output=True, text=True)
    # nox passes the command's stderr through its own stdout.
    proc.output = proc.stdout + proc.stderr
    return proc


def test_nox_build_session(nox_cmd, envdir, build):
    first = session(nox_cmd, envdir, "build", "--build-dir", str(build))
    assert first.returncode == 0, first.output[-4000:]
    lib = build / "amdgpu-ep" / "release" / "lib"
    assert sorted(p.name for p in lib.iterdir()) == ["libamdgpu-ep.so", "libmigraphx-backend.so"]

    second = session(nox_cmd, envdir, "build", "--build-dir", str(build), "--with-hipdnn")
    assert second.returncode == 0, second.output[-4000:]
    assert sorted(p.name for p in lib.iterdir()) == [
        "libamdgpu-ep.so", "libhipdnn-backend.so", "libmigraphx-backend.so"]
    assert "patch: skipped (inputs unchanged" in second.output


def test_sessions_share_one_environment_and_switching_reruns_nothing(nox_cmd, envdir, build):
    assert session(nox_cmd, envdir, "build", "--build-dir", str(build)).returncode == 0
    wheel = session(nox_cmd, envdir, "wheel", "--build-dir", str(build))
    assert wheel.returncode == 0, wheel.output[-4000:]
    for stage in ("patch", "configure", "build", "check"):
        assert f"{stage}: skipped (inputs unchanged" in wheel.output, wheel.output[-4000:]
    assert "pip install" not in wheel.output  # the environment was ready
    assert list((build / "amdgpu-ep" / "release" / "wheelhouse").glob("*.whl"))
    # One environment for every session, where README says `python -m toolkit` runs outside nox.
    envs = sorted(p.name for p in envdir.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert envs == ["toolkit"]
    python = envdir / "toolkit" / "bin" / "python"
    assert ".nox/toolkit/bin/python -m toolkit" in (ROOT / "README.md").read_text()
    assert subprocess.run([python, "-m", "toolkit", "--version"], cwd=ROOT, capture_output=True).returncode == 0

    # Another environment (this test's own, with its own copy of the same CMake and Ninja): the tools'
    # identity, not their paths, is what the configure stage records, so nothing reruns either.
    mine = subprocess.run([sys.executable, "-m", "toolkit", "build", "--build-dir", str(build)], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert mine.returncode == 0, mine.stderr[-4000:]
    assert "stages run: none (everything up to date)" in mine.stderr, mine.stderr[-4000:]


def test_quiet_through_nox(nox_cmd, envdir, build):
    quiet = session(nox_cmd, envdir, "build", "--build-dir", str(build), "--force", "-q")
    assert quiet.returncode == 0, quiet.output[-4000:]
    assert "[toolkit]" not in quiet.output and "-- Configuring done" not in quiet.output
    assert "Building CXX object" not in quiet.output
    assert "Configuring done" in (build / "amdgpu-ep" / "release" / "logs" / "configure.log").read_text()
