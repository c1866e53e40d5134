"""Every recipe key, with its type, choices, default and meaning, derived from the classes a recipe is read into.

A recipe is read by its classes' fields (toolkit/util/tomlclass.py), so the classes are the list of keys: this module
walks them from `Recipe` down, as the reader does, and says of each key field what the reader would take (its type,
a `Literal`'s choices, the field's default, whether it is required) and what `doc()` says it means. A nested class is a
sub-table (`release.container.root`), an array of tables (`hipify.exclude[].glob`) or a table of tables
(`features.<name>.define`); an inline class's keys are its holder's (`source.url`). docs/reference/recipe-keys.md is
made from this (toolkit/docs/reference.py).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, get_type_hints

from toolkit.util import tomltypes
from toolkit.util.tomlclass import required
from toolkit.util.tomlfields import is_inline, is_key, key_of


@dataclass(frozen=True)
class Key:
    """One recipe key: `features.<name>.default`, `hipify.exclude[].glob`."""

    path: str
    type: str                  # "string", "array of tables", ...
    meaning: str
    choices: tuple[str, ...] = ()
    default: str = ""          # as TOML writes it; "" for none
    computed: str = ""         # the default in words, where the reader computes it from other keys
    required: bool = False     # in its table, when that table is given

    @property
    def section(self) -> str:
        return re.split(r"[.\[]", self.path, maxsplit=1)[0]


def recipe_keys() -> dict[str, Key]:
    """Every key a recipe may hold, by path, sorted."""
    from toolkit.recipe.load import Recipe, section_classes

    keys = {name: Key(name, "table", meaning) for name, meaning in Recipe.TABLES.items()}
    walk(Recipe, "", keys, section_classes())
    return dict(sorted(keys.items()))


def walk(cls: type, prefix: str, keys: dict[str, Key], names: Mapping[str, Any] | None = None, *,
         optional: bool = False, meanings: Mapping[str, str] | None = None, omit: tuple[str, ...] = ()) -> None:
    """The keys of `cls`'s fields, under `prefix`, into `keys`. optional: `cls` is an inline class read only where
    its table holds its keys (none of them is then required); meanings: what a key means in its holder's table,
    where the holder says more than `cls`; omit: keys the holder takes itself."""
    hints = get_type_hints(cls, localns=dict(names or {}))
    for f in dataclasses.fields(cls):
        key = key_of(f.name, f.metadata)
        if key in omit:
            continue
        if is_inline(f.metadata):
            inner, maybe = tomltypes.without_none(hints[f.name])
            walk(inner, prefix, keys, optional=optional or maybe, meanings=f.metadata["meanings"],
                 omit=f.metadata["omit"])
        elif is_key(f.metadata):
            path = f"{prefix}.{key}" if prefix else key
            if path in keys:
                raise ValueError(f"recipe key {path!r} is declared twice (again by {cls.__qualname__}.{f.name})")
            keys[path] = _key(path, f, hints[f.name], optional, (meanings or {}).get(key))
            for step, inner in tomltypes.table_classes(hints[f.name]):
                walk(inner, path + step, keys, names)


def _key(path: str, f: dataclasses.Field[Any], hint: Any, optional: bool, meaning: str | None) -> Key:
    tp = f.metadata.get("toml", hint)
    return Key(path, tomltypes.without_article(tomltypes.expected(tp)), meaning or f.metadata["doc"], _choices(tp),
               _default(f, tp), f.metadata.get("computed", ""), required(f) and not optional)


def _choices(tp: Any) -> tuple[str, ...]:
    """A Literal's choices, of the key itself or of the items of its arrays and tables."""
    tp, _ = tomltypes.without_none(tp)
    inner = tomltypes.table_value(tp) or tomltypes.array_item(tp)
    return tomltypes.choices(tp) or (_choices(inner) if inner is not None else ())


def _default(f: dataclasses.Field[Any], tp: Any) -> str:
    if f.metadata.keys() & {"computed", "toml", "required"}:  # computed, of another shape, or only a placeholder
        return ""
    if f.default is not dataclasses.MISSING:
        value = f.default
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:
        return ""
    if value is None or dataclasses.is_dataclass(value):  # a table's defaults are its keys'
        return ""
    return toml_value(dict(value) if tomltypes.is_pairs(tomltypes.without_none(tp)[0]) else value)


def toml_value(value: object) -> str:
    """A default as TOML writes it; an array of tables as an array of inline tables."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return toml_value({key_of(f.name, f.metadata): getattr(value, f.name) for f in dataclasses.fields(value)
                           if is_key(f.metadata) and getattr(value, f.name) is not None})
    return str(value)
