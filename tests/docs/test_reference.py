"""docs/reference/ is generated from the code: the committed pages are what the code gives now, the recipe-key
reference is the recipe classes' fields (every key the project's recipes hold among them), and the environment table
covers what the code reads."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field

import pytest

from tests.support.tools import ROOT
from toolkit.cli.main import build_parser
from toolkit.docs import recipe_keys, reference
from toolkit.util.envvars import CMAKE_VARIABLES, ENVIRONMENT, SAMPLE, TOOLKIT
from toolkit.util.tomlfields import doc


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


def test_every_key_the_project_recipes_hold_is_in_the_reference():
    keys = recipe_keys.recipe_keys()
    held = set()
    for path in sorted((ROOT / "recipes").glob("**/*.toml")):
        if not path.name.endswith(".lock.toml"):
            held |= set(_held(tomllib.loads(path.read_text(encoding="utf-8")), "", keys))
    assert held - set(keys) == set()
    assert {"source.url", "fetchcontent[].name", "features.<name>.spelling[].define", "wheel.components[].library",
            "recipe.extends"} <= held


def _held(table: dict, prefix: str, keys: dict) -> list[str]:
    """The key paths a TOML table holds, as the reference writes them (`[]` for an item, `<name>` for a table's)."""
    out = []
    for key, value in table.items():
        path = f"{prefix}.{key}" if prefix else key
        if path not in keys and any(k.startswith(f"{prefix}.<name>.") for k in keys):
            out += _held(value, f"{prefix}.<name>", keys)
            continue
        out.append(path)
        kind = keys[path].type if path in keys else ""
        if kind == "table":
            out += _held(value, path, keys)
        elif kind == "array of tables":
            out += [p for item in value for p in _held(item, path + "[]", keys)]
    return out


def test_the_reference_takes_each_keys_type_choices_default_and_meaning_from_its_field():
    keys = recipe_keys.recipe_keys()
    assert keys["build.toolchain"].choices == ("system", "zig", "mingw")
    assert keys["build.toolchain"].default == '"system"' and not keys["build.toolchain"].required
    assert keys["hipify.exclude[].reason"].required and keys["hipify.strict"].type == "boolean"
    assert not keys["recipe.stages"].required and keys["recipe.stages"].default == ""
    assert keys["outputs[].exports"].default == "[]"
    assert keys["features.<name>.platforms"].choices == ("linux", "windows")
    assert keys["requires.features"].type == "table of arrays of strings"
    assert keys["release.target_set[].name"].computed == "the targets joined by `_`"
    assert keys["release.target_set"].default == '[{name = "gfx90a_gfx942", targets = ["gfx90a", "gfx942"]}]'
    assert all(key.meaning.strip() for key in keys.values())


def test_an_inline_class_gives_its_keys_to_its_holder_with_the_holders_meanings():
    keys = recipe_keys.recipe_keys()
    # [source] holds a pinned archive only where it names a url: none of its keys is then required.
    assert keys["source.url"].meaning.startswith("A pinned archive") and not keys["source.url"].required
    assert keys["fetchcontent[].url"].required and keys["fetchcontent[].url"].meaning == "Its archive."
    # The source's own subdir is the one for every kind; a compile-check dep takes none.
    assert keys["source.subdir"].meaning.startswith("The folder inside the tree that is built")
    assert "compile_check.dep[].subdir" not in keys and "fetchcontent[].subdir" in keys


def test_a_key_declared_twice_is_refused():
    @dataclass(frozen=True)
    class Twice:
        name: str = field(metadata=doc("Said here..."))
        other: str = field(metadata=doc("...and here.", key="name"))

    with pytest.raises(ValueError, match="recipe key 'demo.name' is declared twice"):
        recipe_keys.walk(Twice, "demo", {})


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
