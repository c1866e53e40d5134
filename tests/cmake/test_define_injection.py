"""CMake -D values: a newline (CMake's cache is line based, so it would add cache entries of its own) or a ';'
the recipe did not ask for (a list separator) is refused where the recipe is read, naming the file and key, and
again where the configure command is spelled, naming the define; nothing runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.injection import toolkit_here
from tests.support.tools import ROOT
from toolkit.cmake.commands import configure_command
from toolkit.recipe.load import load_recipe
from toolkit.util.errors import ToolkitError

SAMPLE_DEFINES = 'defines = { CMAKE_SKIP_BUILD_RPATH = "ON" }'


def _recipe(tmp_path: Path, defines: str) -> Path:
    """The bundled sample recipe, copied into tmp_path with `defines` as its [build] defines line."""
    shutil.copytree(ROOT / "recipes" / "shared", tmp_path / "recipes" / "shared")
    text = (ROOT / "recipes" / "amdgpu-ep.toml").read_text()
    assert SAMPLE_DEFINES in text
    text = text.replace('"../', f'"{ROOT}/').replace(SAMPLE_DEFINES, defines)
    path = tmp_path / "recipes" / "amdgpu-ep.toml"
    path.write_text(text)
    return path


def test_define_with_a_newline_in_a_recipe_is_refused_before_anything_runs(tmp_path):
    canary = tmp_path / "CANARY"
    recipe = _recipe(tmp_path, f'defines = {{ EVIL = "x\\nCMAKE_C_COMPILER_LAUNCHER:STRING=touch {canary}" }}')
    out = toolkit_here(tmp_path, "build", "--recipe", str(recipe), "--build-dir", str(tmp_path / "b"))
    out.assert_refused(f"{recipe}: key 'build.defines.EVIL': ", "holds a newline", "expected a one-line value")
    assert not canary.exists() and not (tmp_path / "b").exists()


def test_define_with_a_semicolon_needs_a_list(tmp_path):
    recipe = _recipe(tmp_path, 'defines = { A = "x;-DB=1" }')
    with pytest.raises(ToolkitError) as err:
        load_recipe(recipe)
    assert str(err.value).startswith(f"{recipe}: key 'build.defines.A': 'x;-DB=1' holds ';'")
    assert 'write a CMake list as an array: A = ["a", "b"]' in str(err.value)
    listed = load_recipe(_recipe(tmp_path / "2", 'defines = { A = ["x", "y"], B = "ON" }')).build
    assert listed.defines == {"A": "x;y", "B": "ON"} and listed.list_defines == ("A",)
    with pytest.raises(ToolkitError, match=r"key 'build.defines.A\[1\]': 'y;z' holds ';'"):
        load_recipe(_recipe(tmp_path / "3", 'defines = { A = ["x", "y;z"] }'))


def test_configure_command_checks_every_define_it_spells(tmp_path):
    """Defines that come from elsewhere (an --ort-home path, an environment variable) meet the same rule."""
    cmake, ninja = Path("/usr/bin/cmake"), Path("/usr/bin/ninja")
    with pytest.raises(ToolkitError, match=r"^CMake define -DORT_HOME: '/x\\ny' holds a newline"):
        configure_command(cmake, tmp_path, tmp_path / "b", "Ninja", ninja, {"ORT_HOME": "/x\ny"})
    with pytest.raises(ToolkitError, match=r"^CMake define -DA: 'a;b' holds ';'"):
        configure_command(cmake, tmp_path, tmp_path / "b", "Ninja", ninja, {"A": "a;b"})
    cmd = configure_command(cmake, tmp_path, tmp_path / "b", "Ninja", ninja,
                            {"A": "a;b", "GPU_TARGETS": "gfx90a;gfx942", "C": "-x"}, lists=("A",))
    # Each value is glued to its -D: "-x" is the value of C, never an option of its own.
    assert cmd[-3:] == ["-DA=a;b", "-DC=-x", "-DGPU_TARGETS=gfx90a;gfx942"]
