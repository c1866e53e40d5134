"""`python -m toolkit compile-check` from the command line: a dry run plans each engine's stages and creates
nothing; a recipe with nothing to compile-check is one error line, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.tools import ROOT


def _toolkit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)


def test_dry_run_plans_every_engine_and_creates_nothing(tmp_path):
    build = tmp_path / "build"
    proc = _toolkit("compile-check", "--recipe", "onnxruntime-rocm-ep", "--build-dir", str(build), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert "builtin: work tree " in proc.stderr and "dry run: nothing is created" in proc.stderr
    assert "[toolkit] compile-check: would run" in proc.stderr
    assert "compile-check: every unit of " in proc.stdout and "(syntax-only, gfx942)" in proc.stdout
    assert "engine        hipify" not in proc.stdout      # no table of results that were never made
    assert not build.exists() or not any(build.rglob("*")), sorted(build.rglob("*"))


def test_a_recipe_without_a_compile_check_is_one_error_line():
    proc = _toolkit("compile-check", "--recipe", "amdgpu-ep", "--dry-run")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: recipe amdgpu-ep (") and "has no [compile_check] section" in proc.stderr
    assert "Traceback" not in proc.stderr and "--recipe onnxruntime-rocm-ep" in proc.stderr
