"""Issue 35, item 4: a [[hipify.substitute]] that matches nothing warns (strict: fails) naming the recipe, the rule
and the likely reason; CMake build files in a hipify set are refused with a hint, not half-converted.

Real trees, real recipe files and real `python -m toolkit build` processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tools import ROOT
from toolkit.hipify.tree import hipify_tree
from toolkit.recipe.hipify import HipifySettings, Substitution
from toolkit.util.errors import ToolkitError

KERNEL = "#include <cuda_runtime.h>\nvoid f() { cudaDeviceSynchronize(); }\n"
CMAKE = ("cmake_minimum_required(VERSION 3.20)\nproject(vecops LANGUAGES CXX CUDA)\nfind_package(CUDAToolkit)\n"
         "add_library(vecops SHARED src/add.cu)\ntarget_link_libraries(vecops CUDA::curand)\n")


def _tree(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "add.cu").write_text(KERNEL)
    (root / "CMakeLists.txt").write_text(CMAKE)
    (root / "cmake").mkdir()
    (root / "cmake" / "deps.cmake").write_text("find_package(CUDAToolkit REQUIRED)\n")
    return root


def _toolkit(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)


def _recipe(tmp_path: Path, hipify: str) -> Path:
    tree = tmp_path / "vecops" if (tmp_path / "vecops").is_dir() else _tree(tmp_path / "vecops")
    recipe = tmp_path / "recipes" / "vecops.toml"
    recipe.parent.mkdir(exist_ok=True)
    recipe.write_text(f'[recipe]\nname = "vecops"\nstages = ["hipify"]\n[source]\npath = "{tree}"\n'
                      f'[hipify]\n{hipify}')
    return recipe


RULES = ('[[hipify.substitute]]\nfrom = "cudaDeviceSynchronize"\nto = "syncAll"\n'
         '[[hipify.substitute]]\nfrom = "hipDeviceSynchronize"\nto = "hipDeviceSynchronize /* checked */"\n'
         '[[hipify.substitute]]\nfrom = "f\\\\(\\\\)"\nto = "g()"\nregex = true\nglob = "tests/**"\n'
         '[[hipify.substitute]]\nfrom = "cublasCreate"\nto = "hipblasCreate"\n')


def _expected(recipe: Path) -> list[str]:
    rule = f"{recipe}: [[hipify.substitute]]"
    return [
        f"{rule} #1 (from = 'cudaDeviceSynchronize') matched nothing: the CUDA input has it (src/add.cu), but a "
        "rule runs on hipify's output, where it was already rewritten: write it against the HIP text",
        f"{rule} #3 (from = 'f\\\\(\\\\)') matched nothing: its glob 'tests/**' selects none of the 1 converted files",
        f"{rule} #4 (from = 'cublasCreate') matched nothing: none of the 1 converted files its glob selects has it"]


def test_substitutions_that_match_nothing_warn_with_the_recipe_rule_and_reason(tmp_path):
    recipe = _recipe(tmp_path, 'include = ["src/**/*.cu"]\n' + RULES)
    build = tmp_path / "build"
    done = _toolkit("build", "--recipe", str(recipe), "--build-dir", str(build))
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("[toolkit] warning: ")]
    assert warnings == [f"[toolkit] warning: {line}" for line in _expected(recipe)]
    hipified = (build / "vecops" / "release" / "hipified" / "src" / "add.cu").read_text()
    assert "hipDeviceSynchronize /* checked */();" in hipified


def test_strict_mode_fails_on_a_substitution_that_matches_nothing(tmp_path):
    recipe = _recipe(tmp_path, 'strict = true\ninclude = ["src/**/*.cu"]\n' + RULES)
    done = _toolkit("build", "--recipe", str(recipe), "--build-dir", str(tmp_path / "build"))
    assert done.returncode == 2
    errors = done.stderr.splitlines()
    start = errors.index("error: hipify: 3 substitution(s) matched nothing (strict mode):")
    assert errors[start + 1:] == [f"  {line}" for line in _expected(recipe)] + [
        "  hint: fix or remove each rule: its `from` must be text of the converted file (look in the hipified "
        "tree), and its `glob` must select that file"]


def test_a_rerun_from_the_cache_reports_the_same_rules(tmp_path):
    """Which rules matched is kept per file: a rerun converting nothing still knows."""
    src = _tree(tmp_path / "src")
    subs = (Substitution("cudaDeviceSynchronize", "x"), Substitution("hipDeviceSynchronize", "hipDeviceSynchronize"))
    settings = HipifySettings(include=("src/**/*.cu",), substitutions=subs, recipe="r.toml")
    first = hipify_tree(settings, src, tmp_path / "out", progress=False)
    again = hipify_tree(settings, src, tmp_path / "out", progress=False)
    assert again.converted == [] and again.unused_substitutions == first.unused_substitutions
    assert [line.split(" matched")[0] for line in first.unused_substitutions] == [
        "r.toml: [[hipify.substitute]] #1 (from = 'cudaDeviceSynchronize')"]


@pytest.mark.parametrize("include", ['["**"]', '["**/*.cu", "**/*.cmake"]', '["**/*.cu", "**/CMakeLists.txt"]'])
def test_cmake_files_in_the_hipify_set_are_refused_with_a_hint(tmp_path, include):
    recipe = _recipe(tmp_path, f"include = {include}\n")
    build = tmp_path / "build"
    done = _toolkit("build", "--recipe", str(recipe), "--build-dir", str(build))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    shown = {'["**"]': "CMakeLists.txt, cmake/deps.cmake", '["**/*.cu", "**/*.cmake"]': "cmake/deps.cmake",
             '["**/*.cu", "**/CMakeLists.txt"]': "CMakeLists.txt"}[include]
    assert done.stderr.splitlines()[-2:] == [
        f"error: hipify: {recipe}: [hipify] include selects CMake build files ({shown}); hipify converts "
        "C/C++/CUDA sources, and a CMake file needs its languages, packages and targets rewritten for HIP as a whole",
        "  hint: narrow `include` to the sources (e.g. \"src/**/*.cu\"), or [[hipify.exclude]] the build files with "
        "a reason, and give the HIP build its own CMakeLists.txt (an overlay, or the recipe's tree): see "
        "docs/guides/writing-a-recipe.md, 'A plain CUDA CMake project'"]
    assert not (build / "vecops" / "release" / "hipified" / "CMakeLists.txt").exists()


def test_build_files_excluded_or_laid_over_by_hand_pass(tmp_path):
    """An exclude with its reason, or a hand-written HIP CMake file as an overlay (copied as it is)."""
    recipe = _recipe(tmp_path, 'include = ["**"]\noverlay = ["CMakeLists.txt"]\n'
                               '[[hipify.exclude]]\nglob = "cmake/**"\nreason = "the CUDA build\'s helpers"\n')
    build = tmp_path / "build"
    done = _toolkit("build", "--recipe", str(recipe), "--build-dir", str(build))
    assert done.returncode == 0, done.stderr
    assert (build / "vecops" / "release" / "hipified" / "CMakeLists.txt").read_text() == CMAKE
    with pytest.raises(ToolkitError, match="include selects CMake build files"):
        hipify_tree(HipifySettings(include=("**",)), tmp_path / "vecops", tmp_path / "out", progress=False)


def test_a_rule_for_one_engine_is_neither_applied_nor_reported_with_the_other(tmp_path):
    """`engine = "hipify-perl"`: a fix-up of what only hipify-perl leaves; the built-in engine, which converts it
    itself, neither runs the rule nor warns that it matched nothing."""
    rules = ('[[hipify.substitute]]\nfrom = "hipDeviceSynchronize"\nto = "hipDeviceSynchronize /* builtin */"\n'
             'engine = "builtin"\n'
             '[[hipify.substitute]]\nfrom = "cudaDeviceSynchronize"\nto = "hipDeviceSynchronize"\n'
             'engine = "hipify-perl"\n')
    recipe = _recipe(tmp_path, 'include = ["src/**/*.cu"]\n' + rules)
    build = tmp_path / "build"
    done = _toolkit("build", "--recipe", str(recipe), "--build-dir", str(build))
    assert done.returncode == 0, done.stderr
    assert "warning:" not in done.stderr, done.stderr
    hipified = (build / "vecops" / "release" / "hipified" / "src" / "add.cu").read_text()
    assert "hipDeviceSynchronize /* builtin */();" in hipified
    wrong = _recipe(tmp_path, 'include = ["src/**/*.cu"]\n' + rules.replace('"hipify-perl"', '"perl"'))
    refused = _toolkit("build", "--recipe", str(wrong), "--build-dir", str(build))
    assert refused.returncode == 2 and "key 'hipify.substitute[1].engine': expected one of 'builtin', " \
        "'hipify-perl', got 'perl'" in refused.stderr, refused.stderr
