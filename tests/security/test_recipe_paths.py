"""Paths a recipe names (patches.series, recipe.extends, source.path) stay inside the project, the recipe's
folder or the toolkit cache; /proc, /sys and /dev never. A hostile recipe used to make `build --dry-run` print
the first line of /proc/self/environ (the environment, CI tokens included) or /etc/passwd. Canaries: an
environment variable holding a fake token, a file outside the recipe's folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.injection import toolkit_here

TOKEN = "fake-ci-token-7d1e5a"


@pytest.fixture
def canary(tmp_path, monkeypatch):
    """(recipe folder, a secret file outside it); the token in the environment."""
    monkeypatch.setenv("CI_JOB_TOKEN", TOKEN)
    secret = tmp_path / "elsewhere" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(f"{TOKEN} first line\n# a comment\n{TOKEN}.patch phase=base\n")
    recipes = tmp_path / "my-recipes"   # not `recipes/`, whose parent would be the recipe's project
    recipes.mkdir()
    return recipes, secret


def _recipe(folder: Path, body: str) -> Path:
    path = folder / "hostile.toml"
    path.write_text(f'[recipe]\nname = "hostile"\n{body}')
    return path


def _refused(folder: Path, recipe: Path, *needles: str) -> str:
    out = toolkit_here(folder, "build", "--recipe", str(recipe), "--dry-run")
    line = out.assert_refused(*needles)
    assert TOKEN not in out.stderr and "root:" not in out.stderr
    return line


@pytest.mark.parametrize("series", ["/proc/self/environ", "/sys/kernel/hostname", "/dev/stdin"])
def test_series_in_a_system_folder_is_refused_without_reading_it(canary, series):
    recipes, _ = canary
    recipe = _recipe(recipes, f'\n[patches]\nseries = "{series}"\n')
    _refused(recipes, recipe, f"{recipe}: key 'patches.series'", "is a system folder (/proc, /sys, /dev)")


@pytest.mark.parametrize("series", ["/etc/passwd", "../elsewhere/secret.txt"])
def test_series_outside_the_allowed_folders_is_refused(canary, series):
    recipes, secret = canary
    recipe = _recipe(recipes, f'\n[patches]\nseries = "{series}"\n')
    line = _refused(recipes, recipe, "key 'patches.series'", "is outside the project, the recipe's folder")
    assert "first line" not in line


def test_a_link_next_to_the_recipe_is_resolved_and_refused(canary):
    recipes, secret = canary
    (recipes / "series").symlink_to(secret)
    recipe = _recipe(recipes, '\n[patches]\nseries = "series"\n')
    _refused(recipes, recipe, "key 'patches.series'", f"{secret} is outside")


def test_extends_and_source_path_are_confined_too(canary):
    recipes, secret = canary
    _refused(recipes, _recipe(recipes, 'extends = "/proc/self/environ"\n'), "key 'recipe.extends'",
             "system folder")
    _refused(recipes, _recipe(recipes, 'extends = "../elsewhere/secret.txt"\n'), "key 'recipe.extends'",
             "is outside")
    _refused(recipes, _recipe(recipes, '\n[source]\npath = "/etc"\n'), "key 'source.path'", "/etc is outside")
    _refused(recipes, _recipe(recipes, '\n[source]\npath = "/dev/shm"\n'), "key 'source.path'", "system folder")


def test_a_series_in_the_recipe_folder_quotes_only_a_bounded_excerpt(canary):
    """A series the recipe may name, but whose line is junk: the error quotes at most a short piece of it."""
    recipes, _ = canary
    (recipes / "series").write_text("# why\n" + "x" * 50_000 + f"{TOKEN} phase=base\n")
    recipe = _recipe(recipes, '\n[patches]\nseries = "series"\n')
    out = toolkit_here(recipes, "build", "--recipe", str(recipe), "--dry-run")
    assert out.rc == 2 and "Traceback" not in out.stderr
    assert TOKEN not in out.stderr and len(out.stderr) < 1000, len(out.stderr)
    assert "(50000 characters)" in out.stderr or "characters)" in out.stderr


def test_a_recipes_folder_reaches_its_project(tmp_path):
    """recipes/NAME.toml naming ../patches/NAME/series: the layout of this checkout, and of a copy of it."""
    (tmp_path / "patches" / "r").mkdir(parents=True)
    (tmp_path / "patches" / "r" / "series").write_text("")
    (tmp_path / "recipes").mkdir()
    recipe = _recipe(tmp_path / "recipes", '\n[patches]\nseries = "../patches/r/series"\n')
    out = toolkit_here(tmp_path, "build", "--recipe", str(recipe), "--dry-run")
    assert "outside the project" not in out.stderr and "has no [source]" in out.stderr, out.stderr   # got past it
    recipe = _recipe(tmp_path / "recipes", '\n[patches]\nseries = "../../x/series"\n')
    toolkit_here(tmp_path, "build", "--recipe", str(recipe), "--dry-run").assert_refused("is outside the project")


def test_the_recipes_own_folder_and_the_project_still_work(canary):
    recipes, _ = canary
    (recipes / "sub").mkdir()
    (recipes / "sub" / "series").write_text("")
    recipe = _recipe(recipes, '\n[patches]\nseries = "sub/series"\n')
    out = toolkit_here(recipes, "build", "--recipe", str(recipe), "--dry-run")
    assert "outside the project" not in out.stderr and "system folder" not in out.stderr
    assert os.path.exists(recipes / "sub" / "series")
