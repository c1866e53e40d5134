"""The pipeline's stages: one adapter each in toolkit/pipeline/adapters/, ordered in one list, kept per recipe; the
CLI's `--until`, the dry run and README's stage table all come from that list."""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tools import ROOT, run_toolkit
from toolkit.cli.main import build_parser, expand_feature_flags
from toolkit.pipeline import stages
from toolkit.pipeline.options import BuildOptions, build_argv, options_from_args
from toolkit.util.errors import RecipeError


def toolkit_fails(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    assert proc.returncode != 0, proc.stdout
    return proc


def planned_stages(output: str) -> list[str]:
    return re.search(r"stages: (.*)", output).group(1).split(" -> ")


def test_every_stage_is_provided_by_its_own_package():
    for name, _, module in stages.stage_table():
        package = module.split("/")[1]
        assert package not in ("engine", "util"), f"{name} is provided by {module}, not by the package doing its work"
        assert (ROOT / module).is_file()
    assert len(set(stages.STAGE_NAMES)) == len(stages.STAGE_NAMES)


def test_until_choices_are_the_pipeline_stages():
    build = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)][0].choices["build"]
    until = next(a for a in build._actions if "--until" in a.option_strings)
    assert tuple(until.choices) == stages.STAGE_NAMES


def test_stage_reference_is_the_pipelines():
    text = (ROOT / "docs" / "reference" / "stages.md").read_text()
    table = text.split("| stage | what it does | provided by |")[1]
    rows = [[cell.strip().strip("`").replace("&lt;", "<") for cell in line.strip("|").split("|")]
            for line in table.strip().splitlines()[1:]]
    assert [tuple(r) for r in rows] == stages.stage_table()


def test_where_stages_live_is_said_as_it_is():
    """stages.py's docstring and the stages page name the modules the stage table names, and no other."""
    modules = {module for _, _, module in stages.stage_table()}
    assert {m.rsplit("/", 1)[0] for m in modules} == {"toolkit/pipeline/adapters"}
    texts = {"toolkit/pipeline/stages.py": stages.__doc__,
             "docs/explanation/stages-and-caching.md": (ROOT / "docs/explanation/stages-and-caching.md").read_text()}
    for where, text in texts.items():
        named = set(re.findall(r"\b(?:toolkit/)?((?:[a-z_]+/)+[a-z_]+\.py)\b", text))
        assert {n for n in named if not (ROOT / "toolkit" / n).is_file() and not (ROOT / n).is_file()} == set(), where
        assert "pipeline/adapters/" in text and "provided by the package" not in text, where


def test_layout_recipes_row_names_every_recipe():
    text = (ROOT / "docs" / "explanation" / "layout.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| `recipes/` |"))
    recipes = {p.name for p in (ROOT / "recipes").glob("*.toml") if not p.name.endswith(".lock.toml")}
    assert {name for name in recipes if f"`{name}`" not in row} == set()


def test_layout_package_table_matches_the_tree():
    text = (ROOT / "docs" / "explanation" / "layout.md").read_text()
    listed = set(re.findall(r"^\| `toolkit/([a-z_]+)/` \|", text, flags=re.M))
    packages = {p.parent.name for p in (ROOT / "toolkit").glob("*/__init__.py")}
    assert listed == packages


def test_ort_recipe_plans_no_cmake_configure(tmp_path):
    proc = run_toolkit("build", "--recipe", "onnxruntime-rocm-ep", "--until", "compile-check", "--dry-run",
                       "--build-dir", str(tmp_path))
    out = proc.stdout + proc.stderr
    assert planned_stages(proc.stderr) == ["source", "hipify", "compile-check"]
    assert "configure" not in out and "-DAMDGPU_EP" not in out and "cmake -S" not in out
    assert "fetchcontent" not in out and "dependency provider" not in out  # nothing configures, nothing to serve


def test_sample_plans_every_cmake_stage_with_its_own_defines(tmp_path):
    proc = run_toolkit("build", "--dry-run", "--build-dir", str(tmp_path))
    assert planned_stages(proc.stderr) == ["source", "patch", "hipify", "configure", "build", "check"]
    assert f"define AMDGPU_EP_OUTPUT_DIR={tmp_path / 'amdgpu-ep' / 'release' / 'cmake' / 'out'}" in proc.stdout
    assert "define AMDGPU_EP_HIP_SOURCES_DIR=\n" in proc.stdout
    wheel = run_toolkit("build", "--dry-run", "--wheel", "--build-dir", str(tmp_path))
    assert planned_stages(wheel.stderr)[-2:] == ["wheel", "repair"]


def test_the_samples_cmake_surface_is_recipe_data_not_code():
    found = subprocess.run(["git", "grep", "-n", "-E", "AMDGPU_EP_(OUTPUT_DIR|HIP_SOURCES_DIR)", "--", "toolkit/"],
                           cwd=ROOT, capture_output=True, text=True)
    assert found.stdout == ""


def test_until_a_stage_the_recipe_does_not_run_names_its_stages(tmp_path):
    proc = toolkit_fails("build", "--recipe", "onnxruntime-rocm-ep", "--until", "configure", "--dry-run",
                         "--build-dir", str(tmp_path))
    assert "recipe onnxruntime-rocm-ep runs no stage named 'configure'" in proc.stderr
    assert "its stages: source, hipify, compile-check" in proc.stderr


def test_a_recipe_naming_an_unknown_stage_is_an_error(tmp_path):
    recipe = tmp_path / "r.toml"
    recipe.write_text(f'[recipe]\nname = "r"\nstages = ["patch", "compile"]\n[source]\npath = "{tmp_path}"\n')
    proc = toolkit_fails("build", "--recipe", str(recipe), "--dry-run", "--build-dir", str(tmp_path / "b"))
    assert f"{recipe}: key 'recipe.stages[1]': no stage named 'compile'" in proc.stderr
    assert "compile-check" in proc.stderr


def test_output_dir_collection_needs_the_trees_variable(tmp_path):
    from toolkit.recipe.load import load_recipe

    recipe = tmp_path / "r.toml"
    recipe.write_text('[recipe]\nname = "r"\n[build]\ncollect = "output-dir"\n')
    with pytest.raises(RecipeError, match=r"key 'build.collect': \"output-dir\" needs output_dir_define"):
        load_recipe(recipe)


def test_a_packaging_stage_asked_of_a_recipe_without_wheel_is_an_error(tmp_path):
    proc = toolkit_fails("build", "--recipe", "onnxruntime-rocm-ep", "--wheel", "--dry-run",
                         "--build-dir", str(tmp_path))
    assert "recipe onnxruntime-rocm-ep builds no wheel" in proc.stderr


def _parse_build(argv: list[str]) -> BuildOptions:
    args = build_parser().parse_args(expand_feature_flags(argv[3:]))
    return options_from_args(args)


@pytest.mark.parametrize("options", [
    BuildOptions(jobs=3),
    BuildOptions(recipe="umbrella-ep-real", variant="release-x", with_features=("hipdnn",),
                 without_features=("dml",), gpu_targets=("gfx90a", "gfx942"), source="git+file:///r@abc",
                 build_folder=Path("/tmp/b"), offline=True, mirrors=("file:///m", "http://127.0.0.1:1/m"),
                 rocm_path=Path("/opt/rocm"), local_version="gfx90a.hipdnn", hipify_engine="hipify-perl",
                 no_wait=True, force=True, jobs=3),
])
def test_the_recorded_build_command_gives_back_the_same_options(options):
    argv = build_argv(options, "-j", "3")
    assert argv[:4] == ["python", "-m", "toolkit", "build"]
    assert _parse_build(argv) == options


def _toy_recipe(tmp_path: Path, stages: str, series: str = "") -> Path:
    """A contributor's recipe: one CUDA file, hipified; no CMake build."""
    tree = tmp_path / "toy-src"
    (tree / "kernels").mkdir(parents=True)
    (tree / "kernels" / "add.cu").write_text("#include <cuda_runtime.h>\nvoid f() { cudaDeviceSynchronize(); }\n")
    recipe = tmp_path / "toy.toml"
    recipe.write_text(f'[recipe]\nname = "toy"\nstages = {stages}\n[source]\npath = "{tree}"\n'
                      f'[hipify]\ninclude = ["**/*.cu"]\n{series}')
    return recipe


def test_a_recipe_without_patch_stage_or_series_hipifies_what_its_dry_run_planned(tmp_path):
    recipe = _toy_recipe(tmp_path, '["hipify", "compile-check"]')
    build = tmp_path / "build"
    plan = run_toolkit("build", "--recipe", str(recipe), "--until", "hipify", "--dry-run", "--build-dir", str(build))
    assert planned_stages(plan.stderr) == ["source", "hipify"]
    assert f"source: copy -> {build / 'toy' / 'release' / 'source'}" in plan.stdout
    assert not build.exists()
    done = run_toolkit("build", "--recipe", str(recipe), "--until", "hipify", "--build-dir", str(build))
    assert planned_stages(done.stderr) == ["source", "hipify"]
    hipified = (build / "toy" / "release" / "hipified" / "kernels" / "add.cu").read_text()
    assert "hipDeviceSynchronize()" in hipified and "hip/hip_runtime.h" in hipified
    again = run_toolkit("build", "--recipe", str(recipe), "--until", "hipify", "--build-dir", str(build))
    assert "source: skipped (inputs unchanged" in again.stderr and "hipify: skipped (inputs unchanged" in again.stderr
    # --until patch on a recipe with nothing to patch stops once the tree is in place.
    tree = run_toolkit("build", "--recipe", str(recipe), "--until", "patch", "--build-dir", str(build))
    assert planned_stages(tree.stderr) == ["source"]


def test_the_patch_stage_patches_the_copy_the_source_stage_made_and_counts_what_it_changed(tmp_path):
    patches = tmp_path / "patches"
    patches.mkdir()
    (patches / "sync.patch").write_text(
        "--- a/kernels/add.cu\n+++ b/kernels/add.cu\n@@ -1,2 +1,2 @@\n #include <cuda_runtime.h>\n"
        "-void f() { cudaDeviceSynchronize(); }\n+void f() { cudaDeviceSynchronize(); cudaGetLastError(); }\n")
    sha = hashlib.sha256((patches / "sync.patch").read_bytes()).hexdigest()
    (patches / "series").write_text(f"# Checks the launch.\nsync.patch phase=base sha256={sha}\n")
    recipe = _toy_recipe(tmp_path, '["patch", "hipify"]', f'[patches]\nseries = "{patches / "series"}"\n')
    build = tmp_path / "build"
    done = run_toolkit("build", "--recipe", str(recipe), "--build-dir", str(build))
    assert planned_stages(done.stderr) == ["source", "patch", "hipify"]
    assert "patch: 1 file(s) patched;" in done.stderr
    assert "cudaGetLastError" in (build / "toy" / "release" / "source" / "kernels" / "add.cu").read_text()
    # The patched tree is the patch stage's output: the source stage is not run again because it was patched.
    again = run_toolkit("build", "--recipe", str(recipe), "--build-dir", str(build))
    assert "stages run: none (everything up to date)" in again.stderr


def test_preflight_outside_the_build_folder_points_at_the_recipes_root(tmp_path):
    """A recipe whose [release.container] names a build root: a missing MIGraphX on this machine is answered
    with building in that root (the name read from the recipe), not only with installing MIGraphX."""
    recipe = tmp_path / "r.toml"
    recipe.write_text(f'[recipe]\nname = "r"\n[source]\npath = "{tmp_path}"\n[requires]\nalways = ["migraphx"]\n'
                      '[release.container]\nroot = "debian-sid-rocm7"\n')
    proc = toolkit_fails("build", "--recipe", str(recipe), "--migraphx-home", str(tmp_path / "none"),
                         "--build-dir", str(tmp_path / "b"))
    assert "error: preflight: missing before anything is built" in proc.stderr
    assert ("hint: recipe r builds inside the build root debian-sid-rocm7 (its [release.container] root): "
            "nox -s container -- --root debian-sid-rocm7 build --recipe r") in proc.stderr
    assert "Traceback" not in proc.stderr
    # Without a root in the recipe, the hint stays the install's.
    recipe.write_text(f'[recipe]\nname = "r"\n[source]\npath = "{tmp_path}"\n[requires]\nalways = ["migraphx"]\n')
    plain = toolkit_fails("build", "--recipe", str(recipe), "--migraphx-home", str(tmp_path / "none"),
                          "--build-dir", str(tmp_path / "b"))
    assert "container --root" not in plain.stderr and "MIGraphX" in plain.stderr


def test_the_samples_missing_ort_hints_neither_a_build_folder_nor_the_option_the_user_gave(tmp_path):
    """Issue 35, item 10: the sample fetches its ORT as the recipe's [ort] package; a build root brings nothing
    it lacks. A folder the user named is to be fixed (or left out), not named again; offline, a run online
    fetches the package once."""
    env = {"TOOLKIT_CACHE_DIR": str(tmp_path / "cache")}
    title = "ONNX Runtime install (C API headers, libonnxruntime, CMake package config)"
    header = "[toolkit] recipe amdgpu-ep ("
    named = toolkit_fails("build", "--ort-home", "/nope", "--build-dir", str(tmp_path / "b"), env=env)
    assert named.stderr.splitlines()[0].startswith(header) and named.stderr.splitlines()[1:] == [
        "error: preflight: missing before anything is built:",
        f"  - {title}: --ort-home=/nope: no such folder",
        f"      hint: point --ort-home at the {title}, or leave --ort-home out to use the recipe's [ort] 1.27.1 "
        "package"]
    offline = toolkit_fails("build", "--offline", "--build-dir", str(tmp_path / "b"), env=env)
    assert offline.stderr.splitlines()[0].startswith(header) and offline.stderr.splitlines()[1:] == [
        "error: preflight: missing before anything is built:",
        f"  - {title}: offline and debian:pool/main/o/onnxruntime/libonnxruntime-dev_1.27.1+dfsg-1_amd64.deb is "
        "not in the download cache",
        "      hint: run once without --offline (it is then kept in the download cache), or pass --ort-home DIR"]
    assert not (tmp_path / "b").exists()
