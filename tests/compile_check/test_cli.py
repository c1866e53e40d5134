"""`python -m toolkit compile-check` from the command line: a dry run plans each engine's stages and creates
nothing; a recipe with nothing to compile-check is one error line, not a traceback."""

from __future__ import annotations

import json
import os
import re
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


def test_sample_asked_of_a_recipe_without_one_is_an_error_not_an_empty_pass(tmp_path):
    tree = tmp_path / "src"
    tree.mkdir()
    (tree / "a.cu").write_text("__global__ void k() {}\n")
    recipe = tmp_path / "r.toml"
    recipe.write_text(f'[recipe]\nname = "r"\nstages = ["hipify", "compile-check"]\n[source]\npath = "{tree}"\n'
                      '[hipify]\ninclude = ["**/*.cu"]\n[compile_check]\ntargets = ["gfx942"]\nunits = ["**/*.cu"]\n')
    proc = _toolkit("compile-check", "--recipe", str(recipe), "--sample", "--build-dir", str(tmp_path / "b"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith(f"error: recipe r ({recipe}) has no [compile_check] sample: --sample would "
                                  "compile nothing")
    assert "0/0" not in proc.stdout and "Traceback" not in proc.stderr
    assert not (tmp_path / "b").exists()


def test_summary_says_cached_for_a_hipify_reused_from_an_earlier_run():
    from toolkit.cli.compile_check import summary_lines
    from toolkit.pipeline.runner import StageResult

    report = {"compiled": 3, "units": 4, "rate": 0.75, "failures_by_cause": {"no member named 'x'": ["a.cc"]}}
    lines = summary_lines([("builtin", StageResult("hipify", "f", False, 0.0), report),
                           ("hipify-perl", StageResult("hipify", "g", True, 12.5), report)])
    table = "\n".join(lines)
    assert "skipped" not in table and "converted" not in table
    assert lines[1].split() == ["builtin", "cached", "3/4", "75.0%"]
    assert lines[2].split() == ["hipify-perl", "12.50", "s", "3/4", "75.0%"]
    assert "(cached: hipify's output was unchanged since an earlier run and reused)" in lines
    assert "[builtin]   1 x no member named 'x'  (e.g. a.cc)" in lines


GOOD = '#include <cuda_runtime.h>\n#include "common.h"\n__global__ void k(float* x) { x[threadIdx.x] = SCALE; }\n'
BAD = '#include <cuda_runtime.h>\n#include "common.h"\n__global__ void k(float* x) { x[threadIdx.x] = not_declared; }\n'


def test_unit_results_are_shared_by_work_trees_and_follow_the_units_and_headers(sid_root, tmp_path):
    """Each unit's result is kept in the toolkit cache under its content key, not its work tree's paths: a second
    work tree with the same hipified output compiles nothing; a changed unit compiles alone, a changed header
    every unit; a failure comes back from the cache with the same first error, relative to the tree."""
    tree = tmp_path / "src"
    tree.mkdir()
    (tree / "common.h").write_text("#define SCALE 1.0f\n")
    (tree / "good.cu").write_text(GOOD)
    (tree / "bad.cu").write_text(BAD)
    recipe = tmp_path / "r.toml"
    recipe.write_text(f'[recipe]\nname = "r"\nstages = ["hipify", "compile-check"]\n[source]\npath = "{tree}"\n'
                      '[hipify]\ninclude = ["**/*.cu", "**/*.h"]\n'
                      '[compile_check]\ntargets = ["gfx942"]\nunits = ["**/*.cu"]\n')
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOOLKIT_BUILDROOT": str(sid_root),
           "TOOLKIT_CACHE_DIR": str(tmp_path / "cache")}

    def check(build: str) -> tuple[str, dict]:
        proc = subprocess.run([sys.executable, "-m", "toolkit", "compile-check", "--recipe", str(recipe),
                               "--build-dir", str(tmp_path / build)], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=600)
        report = json.loads((tmp_path / build / "r" / "builtin" / "compile-check.json").read_text())
        return proc.stdout + proc.stderr, {r["unit"]: r for r in report["results"]}

    out, first = check("one")
    assert "compile-check: 2 unit(s) to compile" in out, out[-3000:]
    assert first["good.cu"]["ok"] and not first["bad.cu"]["ok"]
    assert re.match(r"^bad\.cu:3:\d+: use of undeclared identifier 'not_declared'", first["bad.cu"]["error"])
    out, second = check("two")  # another work tree, the same output: nothing compiles
    assert "unit(s) to compile" not in out, out[-3000:]
    assert {u: (r["ok"], r["error"]) for u, r in second.items()} == {u: (r["ok"], r["error"]) for u, r in first.items()}
    (tree / "bad.cu").write_text(GOOD.replace("SCALE", "2.0f"))
    out, third = check("two")
    assert "compile-check: 1 unit(s) to compile" in out and third["bad.cu"]["ok"], out[-3000:]
    (tree / "common.h").write_text("#define SCALE not_declared_either\n")
    out, fourth = check("one")
    assert "compile-check: 2 unit(s) to compile" in out, out[-3000:]
    assert "not_declared_either" in fourth["good.cu"]["error"] and fourth["bad.cu"]["ok"]


def test_each_unit_result_is_printed_once():
    """The driver prints `[i/n] ok|FAIL UNIT (s)` for each unit it compiles; the stage's lines after it add a
    compiled failure's first error and the cached units' results, never a second ok/FAIL line of a unit."""
    from toolkit.compile_check.run import CompileReport, UnitResult

    report = CompileReport("builtin", [UnitResult("src/gemm.cu", True, seconds=6.4),
                                       UnitResult("src/bad.cu", False, "src/bad.cu:3:5: use of undeclared 'x'"),
                                       UnitResult("src/old.cu", True, cached=True),
                                       UnitResult("src/gone.cu", False, "src/gone.cu:1:1: no such file", cached=True)])
    lines = report.lines()
    assert lines[:-1] == ["first error of src/bad.cu: src/bad.cu:3:5: use of undeclared 'x'",
                          "ok   src/old.cu (cached)", "FAIL src/gone.cu (cached): src/gone.cu:1:1: no such file"]
    assert not any("gemm.cu" in line for line in lines)  # the driver's `[1/2] ok src/gemm.cu (6.4 s)` said it
