"""One reader for every TOML table a dataclass declares: the fields' types, defaults and metadata say it all.

    settings = read(HipifySettings, load_toml(path).table("hipify"))

Each field with `doc()` metadata (toolkit/util/tomlfields.py) is a key: the reader takes it from the table, checks
its value against the field's type (toolkit/util/tomltypes.py) and its metadata's checks, and leaves a key the
file leaves out at the field's default; a field with no default is a required key. Nested dataclasses are
sub-tables and arrays of tables, read the same way. Once the fields are read, the class's own `validated(site)`
hook (where it has one) checks what spans several keys and returns the instance to keep; then a key no field
reads is an error that names the keys the table takes, and the one a typo most likely meant.

The reader is handed a Context: what the checks need beyond the file itself (the folder relative paths are
relative to), passed down to every site rather than kept anywhere global.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast, get_type_hints

from toolkit.util import tomltypes
from toolkit.util.errors import RecipeError
from toolkit.util.tomlfields import is_inline, is_key, key_of
from toolkit.util.tomlread import MISSING, Site, Table, describe

T = TypeVar("T")


@dataclass(frozen=True)
class Context:
    """What every check is handed besides the value: the folder the file's relative paths are relative to."""

    folder: Path


def read(cls: type[T], table: Table, context: Context | None = None,
         names: Mapping[str, Any] | None = None) -> T:
    """`table` read into `cls`, every key it holds read by some field. `names`: the classes `cls`'s annotations
    name that its module imports only when reading (importing them up front would slow every command)."""
    context = context or Context(Path(table.file).parent)
    made = fill(cls, table, context, names)
    table.done()
    return validated(made, table, context)


def validated(made: T, table: Table, context: Context) -> T:
    """`made` as its class's `validated(site)` hook returns it: the checks across its keys, once every key of its
    table is known to be one it takes (a typo is named as one, not as the key it misses)."""
    hook = getattr(made, "validated", None)
    return cast(T, hook(_site(table, context))) if hook is not None else made


def fill(cls: type[T], table: Table, context: Context, names: Mapping[str, Any] | None = None,
         omit: tuple[str, ...] = ()) -> T:
    """`cls` read from the keys of `table` its fields hold (but those in `omit`); the table's other keys, and the
    class's hook, are left to the caller (an inline class shares its table with its holder's keys)."""
    _exactly_one(getattr(cls, "ONE_OF", ()), table)
    hints = get_type_hints(cls, localns=dict(names or {}))
    values: dict[str, Any] = {}
    groups: dict[str, Table | None] = {}
    for f in _fields(cls):
        if key_of(f.name, f.metadata) in omit:
            continue
        if is_inline(f.metadata):
            value = _inline(f, hints[f.name], table, context)
        elif is_key(f.metadata):
            holder, key = _holder(cls, f, table, groups)
            value = MISSING if holder is None else read_key(holder, key, f, hints[f.name], context)
        else:
            continue
        if value is not MISSING:
            values[f.name] = value
    for group in groups.values():
        if group is not None:
            group.done()
    return cls(**values)


def _exactly_one(keys: tuple[str, ...], table: Table) -> None:
    """A class whose `ONE_OF` names keys (`path`, `url`, `git`) is one kind of table or another: its table holds
    exactly one of them, which says first what the rest of it may hold."""
    if not keys:
        return
    given = [key for key in keys if key in table.data]
    if len(given) != 1:
        said = ", ".join(repr(key) for key in keys)
        raise RecipeError(f"{table.file}: table '{table.prefix or table.name}': expected exactly one of {said}, got "
                          f"{', '.join(repr(g) for g in given) or 'none'}")


def _site(table: Table, context: Context) -> Site:
    """A table's own site: its checks may ask which keys it holds."""
    return Site(table.file, table.prefix, context, table.name, frozenset(table.data))


def _fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    return dataclasses.fields(cast(Any, cls))


def required(f: dataclasses.Field[Any]) -> bool:
    """A key the table must hold: its field has no default, or says it is required all the same."""
    return _no_default(f) or bool(f.metadata.get("required"))


def _no_default(f: dataclasses.Field[Any]) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def _holder(cls: type, f: dataclasses.Field[Any], table: Table,
            groups: dict[str, Table | None]) -> tuple[Table | None, str]:
    """The table a field's key is in, and the key there: a dotted key (`recipe.name`) is a key of a sub-table no
    field holds, required when one of its keys has no default (one that is only required in it leaves it optional:
    `patches.series`)."""
    key = key_of(f.name, f.metadata)
    group, dot, rest = key.partition(".")
    if not dot:
        return table, key
    if group not in groups:
        inside = [g for g in _fields(cls) if key_of(g.name, g.metadata).startswith(group + ".")]
        groups[group] = table.table(group) if any(_no_default(g) for g in inside) else table.table(group, None)
    return groups[group], rest


def read_key(table: Table, key: str, f: dataclasses.Field[Any], hint: Any, context: Context) -> Any:
    """Field `f`'s value from `table[key]`, checked; MISSING where the table leaves the key out."""
    meta = f.metadata
    tp = meta.get("toml", hint)
    raw = table.take(key, tomltypes.expected(tp), required(f))
    if raw is MISSING:
        return MISSING
    site = Site(table.file, table.key_path(key), context, key)
    value = read_value(tp, raw, site, meta.get("item"))
    _each(meta.get("each"), tp, value, site)
    if "check" in meta:
        meta["check"](value, site)
    return meta["convert"](value, site) if "convert" in meta else value


def _each(each: Any, tp: Any, value: Any, site: Site) -> None:
    if each is None:
        return
    tp, _ = tomltypes.without_none(tp)
    if tomltypes.table_value(tp) is not None:
        for name, entry in (value.items() if isinstance(value, dict) else value):
            each(entry, site.key(name))
    else:
        for i, item in enumerate(value):
            each(item, site.item(i))


def _inline(f: dataclasses.Field[Any], hint: Any, table: Table, context: Context) -> Any:
    """A dataclass whose keys are its holder's table's own; an optional one is read only where the table holds a
    key it requires."""
    cls, optional = tomltypes.without_none(hint)
    omit = f.metadata["omit"]
    if optional and not any(key_of(g.name, g.metadata) in table.data for g in _fields(cls) if required(g)):
        return MISSING
    value = validated(fill(cls, table, context, omit=omit), table, context)
    if "check" in f.metadata:
        f.metadata["check"](value, _site(table, context))
    return value


def read_value(tp: Any, raw: Any, site: Site, item: str | None = None, in_array: bool = False) -> Any:
    """`raw` (as tomllib gives it) as a value of type `tp`, or an error at `site`. `item`: what each item of an
    array is, for the error about one of the wrong type; `in_array`: the value is an item of an array."""
    tp, _ = tomltypes.without_none(tp)
    said = tomltypes.choices(tp)
    if said is not None:
        _expect(raw, (str,), "a string", site)
        if raw not in said:
            # An item of an array names its choices bare, as a list of words reads.
            shown = ", ".join(said if in_array else map(repr, said))
            raise site.error(f"expected one of {shown}, got {raw!r}")
        return raw
    if tp in tomltypes.SCALARS:
        _expect(raw, tomltypes.ACCEPTS[tp], tomltypes.expected(tp), site)
        return float(raw) if tp is float else (site.context.folder / raw).resolve() if tp is Path else raw
    either = tomltypes.alternatives(tp)
    if either:
        chosen = next((a for a in either if _fits(a, raw)), None)
        if chosen is None:
            raise site.error(f"expected {tomltypes.expected(tp)}, got {describe(raw)}")
        return read_value(chosen, raw, site)
    if tomltypes.table_value(tp) is not None:
        return _table(tp, raw, site)
    if tomltypes.array_item(tp) is not None:
        _expect(raw, (list,), tomltypes.expected(tp), site)
        inner = tomltypes.array_item(tp)
        for i, value in enumerate(raw):
            if item is not None and not _fits(inner, value):
                raise site.item(i).error(f"expected {item}, got {describe(value)}")
        return tuple(read_value(inner, value, site.item(i), in_array=True) for i, value in enumerate(raw))
    _expect(raw, (dict,), "a table", site)
    return read(tp, Table(raw, site.file, site.path, site.name), site.context)


def _table(tp: Any, raw: Any, site: Site) -> Any:
    _expect(raw, (dict,), tomltypes.expected(tp), site)
    value_type = tomltypes.table_value(tp)
    entries = [(name, read_value(value_type, value, site.key(name))) for name, value in raw.items()]
    return tuple(entries) if tomltypes.is_pairs(tp) else dict(entries)


def _fits(tp: Any, raw: Any) -> bool:
    """Whether `raw` has the TOML type `tp` takes (not yet whether its items do)."""
    tp, _ = tomltypes.without_none(tp)
    if tp in tomltypes.ACCEPTS:
        return isinstance(raw, tomltypes.ACCEPTS[tp]) and not (isinstance(raw, bool) and bool not in
                                                                 tomltypes.ACCEPTS[tp])
    if tomltypes.choices(tp) is not None:
        return isinstance(raw, str)
    if tomltypes.array_item(tp) is not None and not tomltypes.is_pairs(tp):
        return isinstance(raw, list)
    return isinstance(raw, dict)


def _expect(raw: Any, accepted: tuple[type, ...], said: str, site: Site) -> None:
    # bool is an int subclass in Python; TOML keeps them apart, so do we.
    if not isinstance(raw, accepted) or (isinstance(raw, bool) and bool not in accepted):
        raise site.error(f"expected {said}, got {describe(raw)}")
