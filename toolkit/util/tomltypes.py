"""The TOML shape of a field's type: what the reader accepts for it and what the reference calls it.

    str, Path            a string (a Path is relative to the file's folder)
    bool, int, float     a boolean, an integer, a number (an integer is taken as a float)
    Literal["a", "b"]    a string, one of the choices
    X | None             X, or left out (None)
    str | tuple[str, ...]  a string or an array of strings
    tuple[X, ...]        an array of X (of tables, when X is a dataclass)
    dict[str, X]         a table of X (of tables, when X is a dataclass: `[features.NAME]`)
    tuple[tuple[str, X], ...]  a table of X, kept in the file's order as (key, value) pairs
    a dataclass          a table, read into that class
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

SCALARS: dict[Any, str] = {str: "a string", Path: "a string", bool: "a boolean", int: "an integer",
                           float: "a number"}
# What each scalar type accepts as Python's tomllib gives it; bool is kept apart from int, as TOML keeps them.
ACCEPTS: dict[Any, tuple[type, ...]] = {str: (str,), Path: (str,), bool: (bool,), int: (int,), float: (int, float)}


def without_none(tp: Any) -> tuple[Any, bool]:
    """(the type with None taken out of its union, whether None was in it)."""
    if get_origin(tp) in (Union, types.UnionType):
        args = get_args(tp)
        kept = [a for a in args if a is not type(None)]
        if len(kept) < len(args):
            return functools.reduce(operator.or_, kept), True
    return tp, False


def choices(tp: Any) -> tuple[str, ...] | None:
    """A Literal's choices; None for any other type."""
    return tuple(get_args(tp)) if get_origin(tp) is Literal else None


def alternatives(tp: Any) -> tuple[Any, ...]:
    """The types of a union (no None among them); () for any other type."""
    return get_args(tp) if get_origin(tp) in (Union, types.UnionType) else ()


def array_item(tp: Any) -> Any:
    """X of tuple[X, ...]; None for any other type."""
    args = get_args(tp)
    if get_origin(tp) is tuple and len(args) == 2 and args[1] is Ellipsis:
        return args[0]
    return None


def table_value(tp: Any) -> Any:
    """X of dict[str, X] and of tuple[tuple[str, X], ...] (a table kept as pairs); None for any other type."""
    if get_origin(tp) is dict:
        return get_args(tp)[1]
    pair = array_item(tp)
    args = get_args(pair)
    if get_origin(pair) is tuple and len(args) == 2 and args[0] is str and args[1] is not Ellipsis:
        return args[1]
    return None


def is_pairs(tp: Any) -> bool:
    return get_origin(tp) is not dict and table_value(tp) is not None


def is_table_class(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def expected(tp: Any) -> str:
    """What a value of this type is, as an error says it: "a string", "an array of tables"."""
    tp, _ = without_none(tp)
    if tp in SCALARS or choices(tp) is not None:
        return SCALARS.get(tp, "a string")
    if alternatives(tp):
        return " or ".join(expected(a) for a in alternatives(tp))
    value = table_value(tp)
    if value is not None:
        return "a table" if is_table_class(value) else f"a table of {plural(expected(value))}"
    item = array_item(tp)
    if item is not None:
        return f"an array of {plural(expected(item))}"
    if is_table_class(tp):
        return "a table"
    raise TypeError(f"no TOML shape for the type {tp!r}")


def plural(said: str) -> str:
    """"a string" -> "strings"; "a string or an array of strings" -> "strings or arrays of strings"."""
    out = []
    for part in said.split(" or "):
        words = part.split(" ", 2)[1:]
        words[0] += "s"
        out.append(" ".join(words))
    return " or ".join(out)


def without_article(said: str) -> str:
    """"an array of strings" -> "array of strings", as the reference's type column writes it."""
    return " or ".join(part.split(" ", 1)[1] if part.startswith(("a ", "an ")) else part
                       for part in said.split(" or "))


def table_classes(tp: Any) -> list[tuple[str, type]]:
    """The dataclasses a key of this type holds tables of, each with how the reference writes the step to its keys:
    "" (a table), "[]" (an array of tables), ".<name>" (a table of tables)."""
    tp, _ = without_none(tp)
    if is_table_class(tp):
        return [("", tp)]
    value = table_value(tp)
    if value is not None and is_table_class(value):
        return [(".<name>", value)]
    item = array_item(tp)
    if item is not None and is_table_class(item):
        return [("[]", item)]
    return []
