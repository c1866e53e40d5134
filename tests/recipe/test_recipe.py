"""Recipe validation: every mistake names the file and the key."""

from pathlib import Path

import pytest

from tests.support.tools import ROOT
from toolkit.recipe.features import select_features
from toolkit.recipe.load import load_recipe
from toolkit.util.errors import RecipeError, ToolkitError

SAMPLE = ROOT / "recipes" / "amdgpu-ep.toml"


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "src").mkdir(exist_ok=True)
    path = tmp_path / "r.toml"
    path.write_text(text)
    return path


MINIMAL = """
[recipe]
name = "r"
[source]
path = "src"
[features.a]
define = "USE_A"
default = true
"""


def test_sample_recipe_loads():
    r = load_recipe(SAMPLE)
    assert r.name == "amdgpu-ep"
    assert set(r.features) == {"amdgpu", "migraphx", "dml", "hipdnn"}
    assert [s.define for s in r.features["hipdnn"].spellings] == ["USE_HIPDNN", "USE_HIP", "USE_HIPEP"]
    assert r.features["hipdnn"].default is False
    assert r.source.path == (ROOT / "samples" / "umbrella-ep").resolve()


@pytest.mark.parametrize("text, key, expected", [
    (MINIMAL.replace('default = true', 'default = "yes"'), "features.a.default",
     "expected a boolean, got string 'yes'"),
    (MINIMAL.replace('name = "r"', 'name = 3'), "recipe.name", "expected a string, got integer 3"),
    (MINIMAL.replace('[source]\npath = "src"', '[source]\npath = 3'), "source.path",
     "expected a string, got integer 3"),
    (MINIMAL + 'typo = 1\n', "features.a.typo", "unknown key"),
    (MINIMAL.replace('define = "USE_A"', 'define = "USE A"'), "features.a.define",
     "expected a CMake option name"),
    (MINIMAL + '[[outputs]]\nfeature = "nope"\n', "outputs[0].feature", "no feature named 'nope'"),
    (MINIMAL.replace('default = true', 'default = true\nimplies = ["b"]'), "features.a.implies[0]",
     "no feature named 'b'"),
    (MINIMAL.replace('default = true', 'default = true\nplatforms = ["macos"]'), "features.a.platforms[0]",
     "expected one of linux, windows"),
])
def test_bad_recipe_names_file_and_key(tmp_path, text, key, expected):
    path = write(tmp_path, text)
    with pytest.raises(RecipeError) as err:
        load_recipe(path)
    message = str(err.value)
    assert str(path) in message
    assert f"key '{key}'" in message
    assert expected in message


def test_source_needs_exactly_one_kind(tmp_path):
    path = write(tmp_path, MINIMAL.replace('[source]\npath = "src"', '[source]\npth = "src"'))
    with pytest.raises(RecipeError, match=r"r\.toml: table 'source': expected exactly one of 'path', 'url', 'git'"):
        load_recipe(path)


def test_invalid_toml_names_file(tmp_path):
    path = write(tmp_path, "[recipe\nname=1")
    with pytest.raises(RecipeError, match=r"r\.toml: not valid TOML"):
        load_recipe(path)


def test_feature_selection_defaults_and_flags():
    r = load_recipe(SAMPLE)
    assert select_features(r, [], [], "linux") == {"amdgpu": True, "migraphx": True, "dml": False,
                                                   "hipdnn": False}
    assert select_features(r, ["hipdnn"], [], "linux")["hipdnn"] is True


def test_feature_errors():
    r = load_recipe(SAMPLE)
    with pytest.raises(ToolkitError, match="unknown feature 'cuda'.*"):
        select_features(r, ["cuda"], [], "linux")
    with pytest.raises(ToolkitError, match="feature 'dml' is not available on linux"):
        select_features(r, ["dml"], [], "linux")
    with pytest.raises(ToolkitError, match="feature 'migraphx' is required by 'amdgpu'"):
        select_features(r, [], ["migraphx"], "linux")
    assert select_features(r, [], ["amdgpu", "migraphx"], "linux")["migraphx"] is False


def test_unknown_recipe_key_lists_every_key_recipe_takes(tmp_path):
    """A typo under [recipe] names all four keys it takes, the optional ones left out of this file included."""
    path = tmp_path / "r.toml"
    path.write_text('[recipe]\nname = "r"\nstage = ["hipify"]\n')
    with pytest.raises(RecipeError) as caught:
        load_recipe(path)
    said = str(caught.value)
    assert (f"{path}: key 'recipe.stage': unknown key (did you mean 'stages'? known keys here: extends, name, "
            "stages, summary)") in said


def test_a_recipe_whose_name_is_not_its_file_stem_is_refused(tmp_path):
    """A copy of a recipe that kept the original's name would build into (and clean) the original's work tree."""
    typo = tmp_path / "typo.toml"
    typo.write_text(SAMPLE.read_text().replace('"../', f'"{ROOT}/').replace('extends = "shared/',
                                                                             f'extends = "{ROOT}/recipes/shared/'))
    with pytest.raises(RecipeError) as caught:
        load_recipe(typo)
    assert caught.value.message == (f"{typo}: key 'recipe.name': 'amdgpu-ep' is not the file's name; a recipe's "
                                    "name is its file's stem ('typo' for typo.toml)")
    assert caught.value.hint == 'set name = "typo", or rename the file to amdgpu-ep.toml'
    (tmp_path / "amdgpu-ep.toml").write_text(typo.read_text())
    assert load_recipe(tmp_path / "amdgpu-ep.toml").name == "amdgpu-ep"


def test_every_recipe_in_the_project_is_named_after_its_file():
    for path in sorted((ROOT / "recipes").glob("*.toml")):
        if not path.name.endswith(".lock.toml"):
            assert load_recipe(path).name == path.stem


def test_feature_on_and_off_defines_follow_the_features_state(tmp_path):
    """hip-ep's mock runtime: off (the real runtime), the HIP compiler and the GPU targets, a CMake list, are given."""
    from toolkit.recipe.features import cmake_defines, resolve_spellings

    path = write(tmp_path, MINIMAL + '[features.a.on_defines]\nX = "1"\n'
                 '[features.a.off_defines]\nTARGETS = ["gfx942", "gfx1100"]\nY = "2"\n')
    recipe = load_recipe(path)
    assert "TARGETS" in recipe.build.list_defines  # a list reaches CMake as one ';'-joined value
    on = cmake_defines(recipe, resolve_spellings(recipe, {"a": True}, None, "t"))
    off = cmake_defines(recipe, resolve_spellings(recipe, {"a": False}, None, "t"))
    assert on == {"USE_A": "ON", "X": "1"}
    assert off == {"USE_A": "OFF", "TARGETS": "gfx942;gfx1100", "Y": "2"}
    with pytest.raises(RecipeError, match="features.a.off_defines.Y"):
        load_recipe(write(tmp_path, MINIMAL + '[features.a.off_defines]\nY = "a;b"\n'))


def test_unknown_section_hint_lists_every_section_a_recipe_takes(tmp_path):
    """`[compile-check]` is a typo of a section this file does not have: the hint names it all the same."""
    path = write(tmp_path, MINIMAL + '[compile-check]\nunits = ["a.cc"]\n')
    with pytest.raises(RecipeError) as caught:
        load_recipe(path)
    said = str(caught.value)
    assert f"{path}: key 'compile-check': unknown key (did you mean 'compile_check'? known keys here: " in said
    known = said.split("known keys here: ")[1].rstrip(")").split(", ")
    assert {"compile_check", "hipify", "wheel", "release", "smoke", "patches", "fetchcontent"} <= set(known)


def test_a_typo_of_a_required_key_is_named_as_an_unknown_key(tmp_path):
    path = write(tmp_path, MINIMAL + '[compile_check]\ntargets = ["gfx942"]\nunitz = ["a.cc"]\n')
    with pytest.raises(RecipeError) as caught:
        load_recipe(path)
    assert str(caught.value) == (f"{path}: key 'compile_check.unitz': unknown key; did you mean 'units' (required, "
                                 "expected an array of strings)?")


def test_unless_outputs_and_components_follow_the_feature_being_off(tmp_path):
    """hip-ep's kernel libraries: built and packaged only by the real runtime, the mock feature off; and the targets
    the build facts record come from the tree's own GPU targets define."""
    from toolkit.recipe.features import expected_libraries, resolve_spellings

    text = (MINIMAL + '[build]\ngpu_targets_define = "ARCHS"\n'
            '[features.a.off_defines]\nARCHS = ["gfx942", "gfx1100"]\n'
            '[[outputs]]\nlibrary = "ep"\n[[outputs]]\nlibrary = "kernels"\nunless = "a"\n'
            '[wheel]\nversion = "1.0"\n[[wheel.components]]\nlibrary = "ep"\nep_name = "E"\n'
            '[[wheel.components]]\nlibrary = "kernels"\nunless = "a"\nplugin = false\n')
    recipe = load_recipe(write(tmp_path, text))
    on = expected_libraries(recipe, resolve_spellings(recipe, {"a": True}, None, "t"))
    off = expected_libraries(recipe, resolve_spellings(recipe, {"a": False}, None, "t"))
    assert [name for name, _ in on] == ["ep"] and [name for name, _ in off] == ["ep", "kernels"]
    assert [c.library for c in recipe.wheel.components_for(frozenset({"a"}))] == ["ep"]
    assert [c.library for c in recipe.wheel.components_for(frozenset())] == ["ep", "kernels"]
    assert "ARCHS" in recipe.build.list_defines
    with pytest.raises(RecipeError, match="outputs\\[1\\].unless': no feature named 'b'"):
        load_recipe(write(tmp_path, text.replace('unless = "a"\n[wheel]', 'unless = "b"\n[wheel]')))
