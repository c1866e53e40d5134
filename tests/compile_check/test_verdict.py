"""Each failing unit of a compile check shows the compiler's first error, and a target the build root's
compiler rejects is refused before anything runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.tools import ROOT
from toolkit.compile_check.run import first_error

GOOD = '#include <hip/hip_runtime.h>\n__global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }\n'
BAD = '#include <hip/hip_runtime.h>\n__global__ void add(float* x) { x[threadIdx.x] += not_declared; }\n'


def _project(tmp_path: Path, compile_check: str = "", units: dict[str, str] | None = None) -> Path:
    """A small CUDA project of the user's own (vecops) and its recipe: hipify, then compile-check."""
    tree = tmp_path / "vecops"
    tree.mkdir(exist_ok=True)
    for name, text in (units or {"scale.cu": GOOD, "add.cu": BAD}).items():
        (tree / name).write_text(text)
    recipe = tmp_path / "vecops.toml"
    recipe.write_text(f'[recipe]\nname = "vecops"\nstages = ["hipify", "compile-check"]\n[source]\npath = "{tree}"\n'
                      '[hipify]\ninclude = ["**/*.cu"]\n'
                      '[compile_check]\ntargets = ["gfx942"]\nunits = ["**/*.cu"]\n' + compile_check)
    return recipe


def _toolkit(tmp_path: Path, *args: str, root: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOOLKIT_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("TOOLKIT_BUILDROOT", None)
    if root is not None:
        env["TOOLKIT_BUILDROOT"] = str(root)
    return subprocess.run([sys.executable, "-m", "toolkit", *args, "--build-dir", str(tmp_path / "build")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def _errors(proc: subprocess.CompletedProcess) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.startswith("error: ")]


def test_each_failing_unit_shows_the_compilers_first_error_not_hipccs_wrapper_line(sid_root, tmp_path):
    """A driver error (an unknown flag here) has no file:line; hipcc then prints the command it ran."""
    recipe = _project(tmp_path, 'hip_flags = ["-fno-such-flag"]\n', {"scale.cu": GOOD})
    proc = _toolkit(tmp_path, "compile-check", "--recipe", str(recipe), root=sid_root)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads((tmp_path / "build/vecops/builtin/compile-check.json").read_text())
    assert [r["error"] for r in report["results"]] == ["clang++: error: unknown argument: '-fno-such-flag'"]
    assert report["failures_by_cause"] == {"error: unknown argument: '-fno-such-flag'": ["scale.cu"]}
    assert "FAIL scale.cu: clang++: error: unknown argument: '-fno-such-flag'" in proc.stderr
    assert "failed to execute" not in proc.stderr + proc.stdout


def test_first_error_reads_the_compiler_before_the_wrapper(tmp_path):
    said = ("clang++: error: invalid target ID 'sm_80'; format is a processor name followed by an optional "
            "colon-delimited list of features\nfailed to execute:/usr/lib/llvm-21/bin/clang++ --offload-arch=sm_80 "
            "-x hip a.cu\n")
    assert first_error(said, tmp_path, tmp_path).startswith("clang++: error: invalid target ID 'sm_80'; format is")
    located = f"{tmp_path}/a.cu:3:7: error: use of undeclared identifier 'x'\nclang++: error: later\n"
    assert first_error(located, tmp_path, tmp_path) == "a.cu:3:7: use of undeclared identifier 'x'"
    assert first_error("failed to execute:/usr/bin/clang++ a.cu\n", tmp_path, tmp_path) == "failed without a diagnostic"


def test_a_target_the_roots_compiler_rejects_is_refused_before_anything_runs(sid_root, tmp_path):
    recipe = _project(tmp_path).read_text().replace('targets = ["gfx942"]', 'targets = ["gfx942", "sm_80"]')
    (tmp_path / "vecops.toml").write_text(recipe)
    for args in (("compile-check", "--dry-run"), ("build", "--until", "compile-check", "--dry-run"),
                 ("build", "--until", "compile-check")):
        proc = _toolkit(tmp_path, *args, "--recipe", str(tmp_path / "vecops.toml"), root=sid_root)
        assert proc.returncode == 2, (args, proc.stderr[-3000:])
        first, hint = proc.stderr.splitlines()[-2:]
        assert first.startswith(f"error: {tmp_path / 'vecops.toml'}: key 'compile_check.targets': the build root's "
                                "/usr/lib/llvm-21/bin/clang++ rejects sm_80: clang++: error: invalid target ID 'sm_80'")
        assert hint.startswith("  hint: processors it supports: ") and "gfx942" in hint and "gfx90a" in hint
        assert "Traceback" not in proc.stderr and "would run" not in proc.stderr
    assert not (tmp_path / "build").exists()


def test_without_the_root_a_target_is_checked_for_its_form(tmp_path):
    """No root made yet (an empty toolkit cache): a dry run makes none to ask, and still refuses sm_80."""
    recipe = _project(tmp_path).read_text().replace('targets = ["gfx942"]', 'targets = ["gfx90a:xnack+", "sm_80"]')
    (tmp_path / "vecops.toml").write_text(recipe)
    proc = _toolkit(tmp_path, "compile-check", "--dry-run", "--recipe", str(tmp_path / "vecops.toml"))
    assert proc.returncode == 2
    assert f"error: {tmp_path / 'vecops.toml'}: key 'compile_check.targets': sm_80: not an AMD GPU target ID" \
        in proc.stderr.splitlines()
    assert not (tmp_path / "cache" / "roots").exists()
