"""Every optional section of `Recipe` is read: a field after `stages` that read_sections forgot would stay None
for every recipe. The project's recipes together hold every section (the recipe-keys reference needs them to)."""

from __future__ import annotations

import dataclasses

from tests.support.tools import ROOT
from toolkit.recipe.load import Recipe, load_recipe


def _section_fields() -> list[str]:
    names = [f.name for f in dataclasses.fields(Recipe)]
    return names[names.index("stages") + 1:]


def test_every_section_field_is_filled_from_some_project_recipe():
    filled: set[str] = set()
    for path in sorted((ROOT / "recipes").glob("*.toml")):
        if path.name.endswith(".lock.toml"):
            continue
        recipe = load_recipe(path)
        defaults = {f.name: f.default for f in dataclasses.fields(Recipe)}
        filled |= {name for name in _section_fields() if getattr(recipe, name) != defaults[name]}
    assert sorted(set(_section_fields()) - filled) == []


def test_a_section_field_is_named_as_its_toml_section(tmp_path):
    """A recipe with a [requires] table gets it on `recipe.requires`, and one without gets None."""
    text = (ROOT / "recipes" / "amdgpu-ep.toml").read_text(encoding="utf-8")
    assert "[requires]" in text or "[requires." in text
    recipe = load_recipe(ROOT / "recipes" / "amdgpu-ep.toml")
    assert recipe.requires is not None
    bare = tmp_path / "bare.toml"
    bare.write_text('[recipe]\nname = "bare"\n', encoding="utf-8")
    assert [name for name in _section_fields() if getattr(load_recipe(bare), name) not in (None, ())] == []
