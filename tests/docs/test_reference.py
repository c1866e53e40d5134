"""docs/reference/ is generated from the code: the committed pages are what the code gives now, the recipe key
meanings cover exactly the keys the readers read, and the environment table covers what the code reads."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys

import pytest

from tests.support.tools import ROOT
from toolkit.cli.main import build_parser
from toolkit.docs import recipe_keys, reference
from toolkit.util.envvars import CMAKE_VARIABLES, ENVIRONMENT, SAMPLE, TOOLKIT

READERS = [ROOT / "toolkit/recipe/load.py", ROOT / "toolkit/recipe/core.py",
           *sorted(ROOT.glob("toolkit/*/settings.py")), ROOT / "toolkit/recipe/pinned.py"]


def test_committed_reference_is_what_the_code_gives():
    stale = reference.stale_pages(build_parser())
    assert not stale, (f"docs/reference/{', '.join(stale)} out of date with the code: run "
                       "`python -m toolkit docs reference` and commit the result")


def test_reference_check_command_fails_on_a_stale_page(tmp_path):
    def check() -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "toolkit", "docs", "reference", "--check", "--out", str(tmp_path)]
        return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)

    assert check().returncode == 1  # nothing written yet
    write = subprocess.run([sys.executable, "-m", "toolkit", "docs", "reference", "--out", str(tmp_path)],
                           cwd=ROOT, capture_output=True, text=True)
    assert write.returncode == 0, write.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(reference.PAGES)
    assert check().returncode == 0
    (tmp_path / "commands.md").write_text("# edited by hand\n")
    stale = check()
    assert stale.returncode == 1 and "commands.md differs from the code" in stale.stderr


def test_every_recipe_key_read_has_a_meaning_and_every_meaning_a_key():
    recorded = set(recipe_keys.recorded_keys(ROOT))
    meant = set(recipe_keys.meanings())
    assert not recorded - meant, \
        f"recipe keys without a meaning (doc() on the field they fill, see toolkit/recipe/schema.py): " \
        f"{sorted(recorded - meant)}"
    assert not meant - recorded, \
        f"meanings declared for keys no reader reads (toolkit/recipe/schema.py): {sorted(meant - recorded)}"
    assert all(text.strip() for text in recipe_keys.meanings().values())


def test_computed_defaults_are_where_a_reader_computes_one():
    keys = recipe_keys.recorded_keys(ROOT)
    for key in recipe_keys.computed_defaults():
        assert key in keys, f"computed default of {key}: no such key"
    varying = {path for path, key in keys.items() if len(key.defaults) > 1}
    assert varying <= set(recipe_keys.computed_defaults()), \
        f"keys whose default varies from recipe to recipe need doc(default=...) on their field: {sorted(varying)}"


def _opened_tables(path) -> set[str]:
    """Names passed as literals to Table.table()/tables() in a reader module."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("table", "tables") and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            names.add(node.args[0].value)
    return names


def test_every_table_a_reader_opens_is_opened_by_some_recipe():
    """The recorder sees a section's keys only when a recipe has that section: each one must be in some recipe."""
    keys = recipe_keys.recorded_keys(ROOT)
    last_parts = {re.split(r"[.\[\]]+", path.rstrip("[]"))[-1] for path in keys}
    missing = {(path.relative_to(ROOT).as_posix(), name) for path in READERS for name in _opened_tables(path)
               if name not in last_parts}
    assert not missing, f"tables no recipe in recipes/ has, so their keys are not in the reference: {sorted(missing)}"


def test_recorder_reads_types_defaults_choices_and_arrays(tmp_path):
    recipe = tmp_path / "r.toml"
    recipe.write_text('[recipe]\nname = "r"\nstages = ["patch"]\n[build]\ntoolchain = "zig"\n'
                      '[[outputs]]\nlibrary = "x"\n[hipify]\n[[hipify.exclude]]\nglob = "a/**"\nreason = "why"\n')
    from toolkit.recipe.load import load_recipe

    with recipe_keys.recording() as recorder:
        load_recipe(recipe)
    keys = recorder.keys
    assert keys["build.toolchain"].choices == ("system", "zig", "mingw")
    assert keys["build.toolchain"].defaults == ['"system"']
    assert keys["hipify.exclude[].reason"].required and keys["hipify.strict"].types == {"boolean"}
    assert keys["recipe.stages"].optional and not keys["recipe.stages"].defaults   # asked with has() first
    assert keys["outputs[].exports"].defaults == ["[]"]



def _code_files():
    return [p for p in sorted((ROOT / "toolkit").rglob("*"))
            if p.suffix in (".py", ".json", ".cmake", ".toml") and p.name != "envvars.py"]


def test_every_environment_variable_the_toolkit_names_is_in_the_table():
    listed = {v.name for v in ENVIRONMENT}
    named: dict[str, str] = {}
    for path in _code_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        rel = path.relative_to(ROOT).as_posix()
        for name in re.findall(r"\b(TOOLKIT_[A-Z_]+)\b", text):
            named.setdefault(name, rel)
        for name in re.findall(r"environ(?:\.get)?[\[(]\s*\"([A-Z_][A-Z0-9_]*)\"", text):
            named.setdefault(name, rel)
        if path.suffix == ".json":
            for name in re.findall(r"\"env\":\s*\[?\s*\"([A-Z_][A-Z0-9_]*)\"", text):
                named.setdefault(name, rel)
    for component in json.loads((ROOT / "toolkit/sources/components.json").read_text()).values():
        for name in component["env"]:
            named.setdefault(name, "toolkit/sources/components.json")
    missing = {name: where for name, where in named.items()
               if name not in listed and name not in CMAKE_VARIABLES and name != "PATH"}
    assert not missing, f"environment variables missing from toolkit/util/envvars.py: {missing}"


def test_every_variable_the_sample_reads_is_in_the_table():
    listed = {v.name for v in ENVIRONMENT if v.read_by == SAMPLE}
    read = set()
    for path in (ROOT / "samples/umbrella-ep").rglob("*"):
        if path.suffix in (".cc", ".h", ".txt"):
            text = path.read_text(encoding="utf-8")
            read |= set(re.findall(r"(?:getenv|Env)\(\"(AMDGPU_[A-Z_]+)\"\)", text))
            read |= set(re.findall(r"ENV_VAR (AMDGPU_[A-Z_]+)", text))
    read = {"AMDGPU_HIPDNN_EP_LIBRARY" if n == "AMDGPU_HIPEP_EP_LIBRARY" else n for n in read}  # patched name
    assert read <= listed, f"sample variables missing from toolkit/util/envvars.py: {sorted(read - listed)}"


@pytest.mark.parametrize("var", ENVIRONMENT, ids=[v.name for v in ENVIRONMENT])
def test_each_entry_is_where_it_says(var):
    for rel in var.files:
        assert var.name in (ROOT / rel).read_text(encoding="utf-8"), f"{var.name}: not named in {rel}"
    if var.read_by == TOOLKIT:
        assert var.files, f"{var.name}: say which files read it"


def test_recording_restores_the_table_class():
    from toolkit.util import tomlread

    before = tomlread.Table._get
    with recipe_keys.recording():
        assert tomlread.Table._get is not before
    assert tomlread.Table._get is before
