"""Tools a test needs: skip with a printed reason where one is missing, except in CI (CI=true), where a
missing tool is a failure, since .ci/run installs everything the tests use."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def require_tool(available: bool, reason: str) -> None:
    if available:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: tests must not skip)")
    pytest.skip(reason)


def need(tool: str, package: str | None = None) -> str:
    """The path of `tool` on PATH; `package` is what to apt-get install when it is missing."""
    path = shutil.which(tool)
    require_tool(path is not None, f"{tool} is not installed (apt-get install -y {package or tool})")
    return path


def has_gpu() -> bool:
    """Whether this machine shows a GPU device node: AMD's /dev/kfd, or a DRM render node."""
    return Path("/dev/kfd").exists() or any(Path("/dev/dri").glob("renderD*"))


ROOT = Path(__file__).resolve().parents[2]
"""The project root (the checkout)."""
DATA = ROOT / "tests" / "data"
"""Test data shared by several areas: the CUDA corpus, the umbrella route driver."""


def run_toolkit(*args: str) -> subprocess.CompletedProcess:
    """`python -m toolkit ARGS` from the project root, which must succeed; its output captured."""
    proc = subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def one_error_line(proc: subprocess.CompletedProcess, *needles: str) -> str:
    """The single `error:` line a failed toolkit command printed (exit 2, nothing else on stderr), holding each
    of `needles`."""
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]
