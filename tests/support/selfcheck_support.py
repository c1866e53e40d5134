"""Helpers for the tests of the wheels' self-check (`python -m onnxruntime_ep_amdgpu`): a fresh venv holding a wheel
(with PyPI's onnxruntime at a given version, or none), the self-check run there, and the lowest and newest
onnxruntime releases a range allows on the package index."""

from __future__ import annotations

import subprocess
from pathlib import Path

from packaging.requirements import Requirement

from toolkit.wheel.smoke_selfcheck import available_versions, range_ends
from toolkit.wheel.venvs import clean_env, create_venv, pip_install

PACKAGE = "onnxruntime_ep_amdgpu"
ROCM7_HINT = "for ROCm 7 install onnxruntime-ep-amdgpu[rocm7]"


def venv_with(where: Path, wheel: Path, onnxruntime: str | None) -> Path:
    """A fresh venv with `wheel` and onnxruntime==VERSION from the index (None: the wheel alone, no index)."""
    python = create_venv(where, False)
    if onnxruntime is None:
        pip_install(python, ["--no-deps", str(wheel)], (), True)
    else:
        pip_install(python, [str(wheel), f"onnxruntime=={onnxruntime}"], (), False)
    return python


def run_selfcheck(python: Path, *args: str, env: dict[str, str] | None = None,
                  cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-I", "-m", PACKAGE, *args], capture_output=True, text=True,
                          env={**clean_env(), **(env or {})}, cwd=cwd, timeout=300)


def run_python(python: Path, code: str, env: dict[str, str] | None = None,
               cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-I", "-c", code], capture_output=True, text=True,
                          env={**clean_env(), **(env or {})}, cwd=cwd, timeout=300)


def verdict(done: subprocess.CompletedProcess) -> str:
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert lines, done.stdout + done.stderr
    return lines[-1]


def ort_range_ends(spec: str, probe_dir: Path) -> list[str]:
    """The lowest and the newest onnxruntime release on the index that `spec` (e.g. '>=1.24') allows."""
    probe = create_venv(probe_dir, False)
    return [str(v) for v in range_ends(Requirement(f"onnxruntime{spec}"), available_versions(probe, clean_env()))]
