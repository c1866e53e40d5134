"""What a dataclass field says about the TOML key it is read from: the one place a key is written.

A class a TOML table is read into (toolkit/util/tomlclass.py) declares each key as a field: the field's type is
the key's type (a `Literal` gives its choices), its default the key's default, and its metadata, spelled with
`doc()`, what the key means and how its value is checked:

    @dataclass(frozen=True)
    class Rename:
        from_: str = field(metadata=doc("Text replaced.", key="from", check=not_empty))
        to: str = field(metadata=doc("Replacement."))

A field without `doc()` metadata is no key: the reader leaves it at its default (a class's `validated` hook may
fill it). A field marked `inline()` holds a dataclass whose keys sit in the same table as the field's class's own
(a pinned archive's `url`, `sha256`, ... beside a dependency's `name`).

Checks are small functions of (value, site) that raise `site.error(message)`; `problem()` makes one from a function
that returns what is wrong, or None. Standard library only: recipe classes are imported inside bare containers too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # a check only calls the site it is handed: a class that declares keys needs no TOML reader
    from toolkit.util.tomlread import Site

Check = Callable[[Any, "Site"], None]
Convert = Callable[[Any, "Site"], Any]


def doc(meaning: str, *, key: str | None = None, check: Check | None = None, each: Check | None = None,
        convert: Convert | None = None, toml: object = None, required: bool = False, computed: str | None = None,
        item: str | None = None) -> dict[str, Any]:
    """A field's metadata: the TOML key it is read from, and what the key means.

    key:      the key's name where it is not the field's (`from`), or a dotted name for a key of a sub-table
              the class has no field for (`recipe.name`);
    check:    run on the value read (not on the default);
    each:     run on every item of an array and every entry of a table, at that item's site (`paths[2]`,
              `env.NAME`), before `check`;
    convert:  turns the value read (checked) into the field's value (`toml` is then the type the file holds);
    required: required although the field has a default (a default that only keeps the fields' order);
    computed: the default in words, where a `validated` hook computes it from other keys;
    item:     what each item of an array is, for the error about an item of the wrong type.
    """
    metadata: dict[str, Any] = {"doc": meaning}
    given = {"key": key, "check": check, "each": each, "convert": convert, "toml": toml, "computed": computed,
             "item": item}
    metadata.update({name: value for name, value in given.items() if value is not None})
    if required:
        metadata["required"] = True
    return metadata


def inline(*, omit: tuple[str, ...] = (), check: Check | None = None, **meanings: str) -> dict[str, Any]:
    """A field whose dataclass's keys sit in the same table as its class's own keys. `omit`: keys of that class
    this table does not take (its own field holds them); `meanings`: what a key means here where it means more
    than the class says; `check`: run on the value read."""
    metadata: dict[str, Any] = {"inline": True, "omit": omit, "meanings": meanings}
    if check is not None:
        metadata["check"] = check
    return metadata


def problem(find: Callable[[Any], str | None]) -> Check:
    """A check from a function that says what is wrong with a value (None: nothing)."""
    def check(value: Any, site: Site) -> None:
        said = find(value)
        if said:
            raise site.error(said)
    return check


def key_of(name: str, metadata: Any) -> str:
    """The TOML key of a field named `name` with this metadata."""
    return str(metadata.get("key", name))


def is_key(metadata: Any) -> bool:
    return "doc" in metadata


def is_inline(metadata: Any) -> bool:
    return bool(metadata.get("inline"))
