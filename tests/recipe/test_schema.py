"""A recipe key's meaning is declared on the field it fills (toolkit/recipe/schema.py): key paths follow the
class's table, a field may name its key, a class may declare keys no field holds, and a key declared twice is
refused."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from toolkit.recipe import schema
from toolkit.recipe.schema import recipe_table
from toolkit.util.tomlfields import doc


def test_meanings_follow_tables_fields_and_declared_keys(monkeypatch):
    monkeypatch.setattr(schema, "_TABLES", [])

    @recipe_table("demo.item[]", keys={"url": "Its archive."})
    @dataclass(frozen=True)
    class Item:
        from_: str = field(metadata=doc("Text replaced.", key="from"))
        name: str = field(default="", metadata=doc("Its name.", computed="the text replaced"))
        internal: int = 0   # no key of its own: no meaning

    @recipe_table("", keys={"demo": "A demo section."})
    @dataclass(frozen=True)
    class Top:
        items: tuple[Item, ...] = field(default=(), metadata=doc("The items.", key="demo.item"))

    assert schema.meanings() == {"demo.item[].url": "Its archive.", "demo.item[].from": "Text replaced.",
                                 "demo.item[].name": "Its name.", "demo": "A demo section.",
                                 "demo.item": "The items."}
    assert schema.computed_defaults() == {"demo.item[].name": "the text replaced"}


def test_a_key_declared_twice_is_refused(monkeypatch):
    monkeypatch.setattr(schema, "_TABLES", [])

    @recipe_table("demo", keys={"name": "Said here..."})
    @dataclass(frozen=True)
    class Demo:
        name: str = field(metadata=doc("...and here."))

    with pytest.raises(ValueError, match="recipe key 'demo.name' is declared twice"):
        schema.meanings()
