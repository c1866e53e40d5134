"""A compile check whose units fail fails: `build --until compile-check` and `compile-check` exit non-zero with a
line saying why, unless the recipe expects those units to fail (each with a reason) or asks for a minimum rate,
which `--min-rate` gives as the percentage the report prints. Each failing unit shows the compiler's first
error, and a target the build root's compiler rejects is refused before anything runs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tools import ROOT
from toolkit.compile_check.run import first_error
from toolkit.recipe.load import load_recipe
from toolkit.util.errors import RecipeError

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


def test_failing_units_fail_the_build_and_the_command_unless_the_recipe_expects_them(sid_root, tmp_path):
    recipe = _project(tmp_path)
    built = _toolkit(tmp_path, "build", "--recipe", str(recipe), "--until", "compile-check", root=sid_root)
    assert built.returncode == 1, built.stderr[-3000:]
    [error] = _errors(built)
    assert re.fullmatch(r"error: compile check \[builtin\]: 1 of 2 units failed that the recipe does not expect to "
                        r"fail: add\.cu \(first error: add\.cu:2:\d+: use of undeclared identifier 'not_declared'\)",
                        error)
    assert "[[compile_check.expected_failure]]" in built.stderr and "stages run:" not in built.stderr
    rerun = _toolkit(tmp_path, "build", "--recipe", str(recipe), "--until", "compile-check", root=sid_root)
    assert rerun.returncode == 1 and _errors(rerun) == [error], rerun.stderr[-3000:]  # a failed check is not skipped
    checked = _toolkit(tmp_path, "compile-check", "--recipe", str(recipe), root=sid_root)
    assert checked.returncode == 1 and _errors(checked) == [error], checked.stderr[-3000:]
    assert re.search(r"^builtin\s.*1/2\s+50\.0%$", checked.stdout, re.M), checked.stdout

    expected = '[[compile_check.expected_failure]]\nunit = "add.cu"\nreason = "reads a name the tree never declares"\n'
    recipe = _project(tmp_path, expected)
    built = _toolkit(tmp_path, "build", "--recipe", str(recipe), "--until", "compile-check", root=sid_root)
    assert built.returncode == 0 and not _errors(built), built.stderr[-3000:]
    # Its result once: from the cache (the run above compiled it), with its first error.
    assert "FAIL add.cu (cached): add.cu:2:" in built.stderr and "stages run: " in built.stderr
    checked = _toolkit(tmp_path, "compile-check", "--recipe", str(recipe), root=sid_root)
    assert checked.returncode == 0 and not _errors(checked), checked.stderr[-3000:]

    recipe = _project(tmp_path, expected.replace("add.cu", "*.cu"), {"scale.cu": GOOD, "add.cu": GOOD})
    fixed = _toolkit(tmp_path, "compile-check", "--recipe", str(recipe), root=sid_root)
    assert fixed.returncode == 0, fixed.stderr[-3000:]
    assert ("warning: compile check [builtin]: add.cu compiled, though the recipe expects it to fail (reads a name "
            "the tree never declares): its [[compile_check.expected_failure]] can go") in fixed.stderr


def test_a_minimum_rate_is_a_percentage_and_falling_short_says_by_how_much(sid_root, tmp_path):
    recipe = _project(tmp_path)
    short = _toolkit(tmp_path, "compile-check", "--recipe", str(recipe), "--min-rate", "90", root=sid_root)
    assert short.returncode == 1, short.stderr[-3000:]
    assert _errors(short) == ["error: compile check [builtin]: 50.0% of units compiled (1/2), below the required 90% "
                              "(--min-rate 90)"]
    enough = _toolkit(tmp_path, "compile-check", "--recipe", str(recipe), "--min-rate", "50", root=sid_root)
    assert enough.returncode == 0 and not _errors(enough), enough.stderr[-3000:]
    recipe = _project(tmp_path, "min_rate = 75\n")
    built = _toolkit(tmp_path, "build", "--recipe", str(recipe), "--until", "compile-check", root=sid_root)
    assert built.returncode == 1  # a check that failed, not a wrong input
    assert _errors(built) == ["error: compile check [builtin]: 50.0% of units compiled (1/2), below the required 75% "
                              "(the recipe's min_rate)"], built.stderr[-3000:]
    lenient = _toolkit(tmp_path, "compile-check", "--recipe", str(recipe), "--min-rate", "40", root=sid_root)
    assert lenient.returncode == 0, lenient.stderr[-3000:]  # the option wins over the recipe's rate


@pytest.mark.parametrize("value, said", [
    ("0.9", "0.9 is ambiguous: a percentage from 0 to 100 is expected (write 90 for 90%; a rate of 1% or less "
            "is not taken)"),
    ("1", "1 is ambiguous"),
    ("150", "150 is not a percentage from 0 to 100"),
    ("ninety", "'ninety' is not a number (a percentage from 0 to 100)"),
])
def test_a_min_rate_that_is_no_percentage_is_refused(tmp_path, value, said):
    proc = _toolkit(tmp_path, "compile-check", "--recipe", str(_project(tmp_path)), "--min-rate", value, "--dry-run")
    assert proc.returncode == 2 and f"compile-check: error: argument --min-rate: {said}" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_recipe_min_rate_follows_the_same_rule(tmp_path):
    with pytest.raises(RecipeError, match=r"key 'compile_check.min_rate': 0.95 is ambiguous"):
        load_recipe(_project(tmp_path, "min_rate = 0.95\n"))
    assert load_recipe(_project(tmp_path, "min_rate = 95\n")).compile_check.min_rate == 95
    with pytest.raises(RecipeError, match=r"key 'compile_check.expected_failure\[0\].reason': must say why"):
        load_recipe(_project(tmp_path, '[[compile_check.expected_failure]]\nunit = "a.cu"\nreason = " "\n'))


def test_each_failing_unit_shows_the_compilers_first_error_not_hipccs_wrapper_line(sid_root, tmp_path):
    """A driver error (an unknown flag here) has no file:line; hipcc then prints the command it ran."""
    recipe = _project(tmp_path, 'hip_flags = ["-fno-such-flag"]\nmin_rate = 0\n', {"scale.cu": GOOD})
    proc = _toolkit(tmp_path, "compile-check", "--recipe", str(recipe), root=sid_root)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads((tmp_path / "build/vecops/builtin/compile-check.json").read_text())
    assert [r["error"] for r in report["results"]] == ["clang++: error: unknown argument: '-fno-such-flag'"]
    assert report["failures_by_cause"] == {"error: unknown argument: '-fno-such-flag'": ["scale.cu"]}
    assert "first error of scale.cu: clang++: error: unknown argument: '-fno-such-flag'" in proc.stderr
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


def test_a_rate_is_compared_in_whole_units_not_floating_point(tmp_path):
    from toolkit.compile_check.verdict import judge

    settings = load_recipe(_project(tmp_path)).compile_check
    results = [{"unit": f"u{i}.cu", "ok": i < 29, "error": "" if i < 29 else "u.cu:1:1: no"} for i in range(100)]
    report = {"engine": "builtin", "results": results, "compiled": 29, "units": 100, "rate": 29 / 100}
    assert judge(report, settings, 29).failure is None
    assert str(judge(report, settings, 30).failure).startswith(
        "compile check [builtin]: 29.0% of units compiled (29/100), below the required 30% (--min-rate)")
