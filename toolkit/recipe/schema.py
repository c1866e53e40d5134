"""What each recipe key means, declared with the dataclass field it fills.

A class a recipe table is read into says which table it is, and each field that holds a key says what the key
means:

    @recipe_table("hipify.exclude[]")
    @dataclass(frozen=True)
    class Exclude:
        glob: str = field(metadata=doc("Glob of the files excluded."))
        from_: str = field(metadata=doc("Text replaced.", key="from"))   # a key named unlike its field

A field whose value is a table or an array of tables says what that table is for; the class read from it
declares its own keys. A key that no field of the class holds (a table's own meaning where no field holds the
table, or keys read into a nested value such as a PinnedArchive) goes to recipe_table's `keys`. Key paths are
relative to the class's table and written as the reference writes them: `[]` for an array of tables, `<name>`
for a table's name. docs/reference/recipe-keys.md is made from these (toolkit/docs/recipe_keys.py), and
tests/docs checks that every key the readers read has exactly one meaning here.

Standard library only: recipe classes are read inside bare containers too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import TypeVar

T = TypeVar("T")

# Every class recipe_table marked, in the order their modules were imported.
_TABLES: list[tuple[str, type, dict[str, str]]] = []


def recipe_table(path: str, keys: dict[str, str] | None = None) -> Callable[[type[T]], type[T]]:
    """Class decorator (above @dataclass): the class is read from recipe table `path` ("" for the recipe's
    top level); `keys` are the meanings of keys of that table no field of the class holds."""
    def mark(cls: type[T]) -> type[T]:
        _TABLES.append((path, cls, dict(keys or {})))
        return cls
    return mark


def _join(table: str, key: str) -> str:
    return f"{table}.{key}" if table else key


def _declared() -> list[tuple[str, str, str | None, str]]:
    """(key path, meaning, default in words or None, where it is declared) of every key."""
    out: list[tuple[str, str, str | None, str]] = []
    for table, cls, keys in _TABLES:
        where = f"{cls.__module__}.{cls.__qualname__}"
        for key, meaning in keys.items():
            out.append((_join(table, key), meaning, None, where))
        for f in fields(cls):
            if "doc" in f.metadata:
                out.append((_join(table, f.metadata.get("key", f.name)), f.metadata["doc"],
                            f.metadata.get("computed"), f"{where}.{f.name}"))
    return out


def meanings() -> dict[str, str]:
    """Key path -> what it means, over every class imported so far; a key declared twice is an error."""
    found: dict[str, str] = {}
    seen: dict[str, str] = {}
    for path, meaning, _, where in _declared():
        if path in seen:
            raise ValueError(f"recipe key {path!r} is declared twice: by {seen[path]} and by {where}")
        found[path], seen[path] = meaning, where
    return found


def computed_defaults() -> dict[str, str]:
    """Key path -> its default in words, for the keys whose default a reader computes from other keys."""
    return {path: default for path, _, default, _ in _declared() if default is not None}
