"""The toolchain choice as data and as an option: recipe keys, `--toolchain`, the pinned ziglang, and what the
choice changes in a build (defines, configure fingerprint, build facts). No compiler runs here except CMake's
`--version`; tests/cmake/test_toolchain_zig.py compiles with the real zig."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.support.tools import ROOT
from toolkit.cli.main import build_parser, expand_feature_flags
from toolkit.cmake import toolchain as tc
from toolkit.pipeline.adapters import derive
from toolkit.pipeline.adapters.configure import configure_stage
from toolkit.pipeline.build import prepared
from toolkit.pipeline.options import BuildOptions, build_argv, options_from_args
from toolkit.pipeline.produced import Produced
from toolkit.recipe.load import load_recipe
from toolkit.util.errors import RecipeError, ToolkitError

PINS = tomllib.loads(tc.TOOLCHAINS_FILE.read_text())["zig"]


def recipe_with(tmp_path, build: str):
    path = tmp_path / "r.toml"
    path.write_text(f'[recipe]\nname = "r"\n[build]\n{build}\n')
    return path


def test_recipe_reads_toolchain_floor_and_hidden_sections(tmp_path):
    settings = load_recipe(recipe_with(tmp_path, 'toolchain = "zig"\nglibc_floor = "2.17"\n'
                                                 'hide_section_bounds = ["pb_defaults"]')).build
    assert (settings.toolchain, settings.glibc_floor, settings.hide_section_bounds) == ("zig", "2.17", ("pb_defaults",))
    assert load_recipe(recipe_with(tmp_path, "")).build.toolchain == "system"


@pytest.mark.parametrize("build, message", [
    ('toolchain = "gcc-13"', "key 'build.toolchain': expected one of 'system', 'zig', 'mingw', got 'gcc-13'"),
    ('glibc_floor = "2.5"', "key 'build.glibc_floor': expected a glibc version 2.N with N >= 17"),
    ('glibc_floor = "2.28.1"', "key 'build.glibc_floor': expected a glibc version 2.N with N >= 17"),
    ('hide_section_bounds = [".data.rel"]', "key 'build.hide_section_bounds[0]': expected a section name that is a C"),
])
def test_wrong_toolchain_keys_name_file_and_key(tmp_path, build, message):
    with pytest.raises(RecipeError) as err:
        load_recipe(recipe_with(tmp_path, build))
    assert str(err.value).startswith(f"{tmp_path / 'r.toml'}: ") and message in str(err.value)


def test_the_real_recipe_builds_with_zig_for_glibc_2_28():
    settings = load_recipe(ROOT / "recipes" / "umbrella-ep-real.toml").build
    assert (settings.toolchain, settings.glibc_floor) == ("zig", "2.28")
    assert load_recipe(ROOT / "recipes" / "amdgpu-ep.toml").build.toolchain == "system"


def test_toolchain_option_round_trips_and_is_checked():
    options = BuildOptions(recipe="umbrella-ep-real", toolchain="zig", jobs=2)
    argv = build_argv(options)
    assert argv[argv.index("--toolchain") + 1] == "zig"
    assert options_from_args(build_parser().parse_args(expand_feature_flags(argv[3:]))) == options
    proc = subprocess.run([sys.executable, "-m", "toolkit", "build", "--toolchain", "clang", "--dry-run"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode != 0 and "argument --toolchain: invalid choice: 'clang'" in proc.stderr


def test_zig_pin_is_the_pyproject_pin_and_a_hash_checked_requirement():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"ziglang=={PINS['version']}" in pyproject
    zig = tc.resolve("zig")
    wheel_sha256 = PINS["machines"]["x86_64"]["wheel_sha256"]
    assert zig.zig.requirement() == f"ziglang=={PINS['version']} --hash=sha256:{wheel_sha256}"
    identity = zig.identity()
    assert identity["target"] == "x86_64-linux-gnu.2.28" == f"x86_64-linux-gnu.{PINS['default_glibc_floor']}"
    assert identity["wheel_sha256"] == PINS["machines"]["x86_64"]["wheel_sha256"]
    assert tc.resolve("zig", "2.31").target == "x86_64-linux-gnu.2.31"
    with pytest.raises(ToolkitError, match="no toolchain named 'icc'"):
        tc.resolve("icc")
    # The floor becomes part of the wrapper scripts: checked whoever asks.
    with pytest.raises(ToolkitError, match="glibc floor: expected a glibc version 2.N"):
        tc.resolve("zig", "2.28\nrm -rf /")


@pytest.mark.parametrize("args, message", [
    (["--toolchain", "zig", "--glibc-floor", "2.10"],
     "argument --glibc-floor: expected a glibc version 2.N with N >= 17"),
    (["--toolchain", "zig", "--glibc-floor", "2.28 -fplugin=x.so"], "argument --glibc-floor: expected a glibc version"),
    (["--glibc-floor", "2.28"], "--glibc-floor 2.28: only the zig toolchain builds for a glibc floor, and this build "
                                "uses the system toolchain"),
])
def test_glibc_floor_option_is_checked_where_it_is_read(args, message):
    proc = subprocess.run([sys.executable, "-m", "toolkit", "build", *args, "--dry-run"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_installed_ziglang_is_checked_against_the_pin():
    pin = tc.resolve("zig").zig
    assert tc.installed_zig(pin).name == "zig"
    with pytest.raises(ToolkitError) as err:
        tc.installed_zig(dataclasses.replace(pin, zig_sha256="0" * 64))
    assert "is not the pinned zig_sha256" in err.value.message and str(tc.TOOLCHAINS_FILE) in err.value.message
    assert "pip install --force-reinstall 'ziglang==" in err.value.hint
    with pytest.raises(ToolkitError, match="is installed, the toolchain is pinned to 9.9.9"):
        tc.installed_zig(dataclasses.replace(pin, version="9.9.9"))


def test_a_verified_zig_is_not_hashed_again_until_its_file_changes(tmp_path, monkeypatch):
    """Across processes: installed_zig keeps its answer for the length of one process besides (cache_clear here)."""
    pin = tc.resolve("zig").zig
    tc.installed_zig.cache_clear()
    zig = tc.installed_zig(pin, stamps=tmp_path)
    [stamp] = tmp_path.glob("verified-*.json")
    reads = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda f, *a, **k: reads.append(str(f)) or real_open(f, *a, **k))
    tc.installed_zig.cache_clear()
    assert tc.installed_zig(pin, stamps=tmp_path) == zig and str(zig) not in reads
    # Another pin, or a file whose status is not the stamp's, is read again: a wrong pin still fails.
    with pytest.raises(ToolkitError, match="is not the pinned zig_sha256"):
        tc.installed_zig(dataclasses.replace(pin, zig_sha256="0" * 64), stamps=tmp_path)
    data = json.loads(stamp.read_text())
    stamp.write_text(json.dumps({**data, "status": [s + 1 for s in data["status"]]}))
    tc.installed_zig.cache_clear()
    assert tc.installed_zig(pin, stamps=tmp_path) == zig and reads.count(str(zig)) == 2
    assert json.loads(stamp.read_text()) == data


def test_choosing_zig_changes_defines_fingerprint_and_build_facts(tmp_path):
    def settled(toolchain):
        with prepared(BuildOptions(build_folder=tmp_path, dry_run=True, toolchain=toolchain, jobs=1)) as b:
            return b, configure_stage(b, Produced()).inputs()

    system, system_inputs = settled(None)
    zig, zig_inputs = settled("zig")
    assert "CMAKE_CXX_COMPILER" not in derive.defines(system)
    defines = derive.defines(zig)
    folder = f"zig-0.17.1-x86_64-linux-gnu.2.28-{zig.toolchain().link_digest[:8]}"
    assert defines["CMAKE_CXX_COMPILER"] == str(zig.toolchain_dir / folder / "zig-clang++")
    # The C compiler and library architecture come from a toolchain file: CMake reads them only where used.
    assert defines["CMAKE_TOOLCHAIN_FILE"] == str(zig.toolchain_dir / folder / "toolchain.cmake")
    assert "CMAKE_C_COMPILER" not in defines and "CMAKE_LIBRARY_ARCHITECTURE" not in defines
    assert defines["CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES"] == "/usr/include"
    assert system_inputs["toolchain"] == {"name": "system"}
    assert zig_inputs["toolchain"]["zig_sha256"] == PINS["machines"]["x86_64"]["zig_sha256"]
    assert derive.facts(zig, defines, "digest")["toolchain"] == zig_inputs["toolchain"]
    # ccache keys the wrapper by what it compiles with, not by its mtime (a fresh work tree still hits).
    assert zig.toolchain().ccache_env()["CCACHE_COMPILERCHECK"].startswith("string:zig ")


def test_wrappers_run_the_checked_zig_with_a_cache_per_installation(tmp_path):
    # No Python between CMake and zig; and installations never share a zig cache (two that did rebuilt libc++
    # over each other's on every switch).
    zig = tc.resolve("zig", "2.28")
    installed = tc.installed_zig(zig.zig)
    cache = tc.zig_cache_dir(tmp_path, installed)
    text = tc.wrapper_text(zig, "CXX", cache, tmp_path / "shared-library.o", installed)
    assert text.splitlines()[-1] == f'exec {installed} c++ -target x86_64-linux-gnu.2.28 -idirafter /usr/include "$@"'
    assert f': "${{ZIG_GLOBAL_CACHE_DIR:={cache}}}"' in text and "-m ziglang" not in text
    here, there = Path("/venv-a/site-packages/ziglang/zig"), Path("/venv-b/site-packages/ziglang/zig")
    assert tc.zig_cache_dir(tmp_path, here) == tc.zig_cache_dir(tmp_path, here) != tc.zig_cache_dir(tmp_path, there)
    assert cache.parent == tmp_path / "zig"
