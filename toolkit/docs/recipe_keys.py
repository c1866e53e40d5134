"""Every recipe key, with its type, default and meaning, read from the code that reads recipes.

Recipes are read through toolkit.util.tomlread.Table by each section's reader (toolkit/recipe/load.py and the
`from_table` functions of the section modules beside it). Rather than list the keys a second time, this module
loads recipes with a recording Table: every key a reader asks for, with the type it expects, the default it passes
and the choices it allows, is what the reference shows. The recipes loaded are the project's own (recipes/):
together they open every section and every array of tables (tests/docs checks that each table a reader
opens was opened), and a reader asks for each key of a table it reads, present or not. What each key means is
the one thing written by hand, on the dataclass field the key fills (toolkit/recipe/schema.py); tests/docs
checks that the keys given a meaning are exactly the recorded ones.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolkit.recipe import schema
from toolkit.recipe.load import PROJECT_ROOT
from toolkit.util import tomlclass, tomlread, tomltypes

_MISSING = tomlread._MISSING

# Table methods and the type name they expect, as the reference writes it.
_TYPES = {"a string": "string", "a boolean": "boolean", "an integer": "integer", "a number": "number",
          "an array of strings": "array of strings", "an array of arrays of strings": "array of arrays of strings",
          "a table of strings": "table of strings", "a table": "table", "an array of tables": "array of tables"}


@dataclass
class Key:
    """One recipe key: `features.<name>.default`, `hipify.exclude[].glob`."""

    path: str
    types: set[str] = field(default_factory=set)
    defaults: list[str] = field(default_factory=list)   # as TOML would write them; empty: required
    choices: tuple[str, ...] = ()
    required: bool = False
    optional: bool = False   # asked with has() first, or read with a default somewhere

    @property
    def section(self) -> str:
        return re.split(r"[.\[]", self.path, maxsplit=1)[0]


def normalize(path: str) -> str:
    """`hipify.exclude[3].glob` -> `hipify.exclude[].glob`; a feature's name -> `<name>`."""
    path = re.sub(r"\[\d+\]", "[]", path)
    path = re.sub(r"^features\.[^.\[]+", "features.<name>", path)
    # A CMake variable named in a defines table is a value of that table's key, not a key of its own.
    path = re.sub(r"(defines)\.[^.\[]+$", r"\1", path)
    return re.sub(r"^requires\.features\.[^.\[]+", "requires.features.<feature>", path)


def toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"
    return str(value)


class Recorder:
    """Collects what the readers ask of every Table while it is installed (see `recording`)."""

    def __init__(self) -> None:
        self.keys: dict[str, Key] = {}
        self._asked: set[tuple[int, str]] = set()   # (id of the table's data, key) asked with has()
        # The tables' data, held for the length of the recording: a freed table's id is given to the next one,
        # which would then count as asked (a key's `required` changing from run to run).
        self._held: list[object] = []

    def key(self, path: str) -> Key:
        path = normalize(path)
        return self.keys.setdefault(path, Key(path))

    def on_get(self, table: tomlread.Table, key: str, default: object, expected: str) -> None:
        entry = self.key(table.key_path(key))
        entry.types.add(_TYPES.get(expected, expected))
        if default is _MISSING:
            if (id(table.data), key) in self._asked:
                entry.optional = True
            else:
                entry.required = True
        else:
            entry.optional = True
            if default is not None and toml_value(default) not in entry.defaults:
                entry.defaults.append(toml_value(default))

    def on_has(self, table: tomlread.Table, key: str) -> None:
        self._asked.add((id(table.data), key))
        self._held.append(table.data)

    def on_choices(self, table: tomlread.Table, key: str, choices: tuple[str, ...]) -> None:
        self.key(table.key_path(key)).choices = choices

    def on_field(self, table: tomlread.Table, key: str, f: Any, hint: Any) -> None:
        """A key the dataclass reader reads: its type, choices and default are the field's."""
        tp = f.metadata.get("toml", hint)
        entry = self.key(table.key_path(key))
        entry.types.add(tomltypes.without_article(tomltypes.expected(tp)))
        said = tomltypes.choices(tomltypes.without_none(tp)[0])
        if said:
            entry.choices = said
        if tomlclass.required(f):
            entry.required = True
            return
        entry.optional = True
        default = f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
        if "toml" not in f.metadata and tomltypes.is_pairs(tomltypes.without_none(tp)[0]):
            default = dict(default)
        if default is not None and "computed" not in f.metadata and not _holds_tables(default):
            if toml_value(default) not in entry.defaults and not ("toml" in f.metadata and not default):
                entry.defaults.append(toml_value(default))


def _holds_tables(value: object) -> bool:
    return dataclasses.is_dataclass(value) or any(dataclasses.is_dataclass(v) for v in _items(value))


def _items(value: object) -> list[object]:
    return list(value) if isinstance(value, (list, tuple)) else []


@contextmanager
def recording() -> Iterator[Recorder]:
    """Every Table read inside the block reports to the recorder; the class is restored after."""
    recorder = Recorder()
    cls = tomlread.Table
    get, has, read_str = cls._get, cls.has, cls.str
    read_key = tomlclass.read_key

    def _read_key(table: tomlread.Table, key: str, f: Any, hint: Any, context: tomlclass.Context) -> Any:
        recorder.on_field(table, key, f, hint)
        return read_key(table, key, f, hint, context)

    def _get(self: tomlread.Table, key: str, default: Any, types: tuple[type, ...], expected: str) -> Any:
        recorder.on_get(self, key, default, expected)
        return get(self, key, default, types, expected)

    def _has(self: tomlread.Table, key: str) -> bool:
        recorder.on_has(self, key)
        return has(self, key)

    def _str(self: tomlread.Table, key: str, default: Any = _MISSING, choices: Iterable[str] | None = None) -> Any:
        if choices is not None:
            choices = tuple(choices)
            recorder.on_choices(self, key, choices)
        return read_str(self, key, default, choices)

    # Patched on the class for the length of one reading: every reader module reads through these.
    cls._get, cls.has, cls.str = _get, _has, _str  # type: ignore[method-assign]
    tomlclass.read_key = _read_key
    try:
        yield recorder
    finally:
        cls._get, cls.has, cls.str = get, has, read_str  # type: ignore[method-assign]
        tomlclass.read_key = read_key


def recipe_files(project_root: Path) -> list[Path]:
    return sorted(p for p in (project_root / "recipes").glob("*.toml") if not p.name.endswith(".lock.toml"))


def recorded_keys(project_root: Path) -> dict[str, Key]:
    """Every key the readers ask for while loading the project's recipes and the probe."""
    from toolkit.recipe.load import load_recipe

    with recording() as recorder:
        for path in recipe_files(project_root):
            load_recipe(path)
    # Tables (`[hipify]`, `[[outputs]]`) are kept too: the reference says what each section is for.
    return dict(sorted(recorder.keys.items()))


def _import_recipe_classes(project_root: Path) -> None:
    """Every class a recipe is read into, imported: loading a recipe imports each section's reader (see
    read_sections), and with it the classes whose fields say what the keys mean."""
    from toolkit.recipe.load import load_recipe

    for path in recipe_files(project_root):
        load_recipe(path)


def meanings(project_root: Path = PROJECT_ROOT) -> dict[str, str]:
    """key -> what it means, as the fields of the recipe classes declare it."""
    _import_recipe_classes(project_root)
    return schema.meanings()


def computed_defaults(project_root: Path = PROJECT_ROOT) -> dict[str, str]:
    """key -> its default in words, for defaults a reader computes from other keys (declared on the field)."""
    _import_recipe_classes(project_root)
    return schema.computed_defaults()
