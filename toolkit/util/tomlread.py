"""Typed, strict reading of TOML tables, with errors that name the file and the dotted key.

Every TOML file the toolkit reads goes through a Table (recipes through the dataclass reader beside this module,
toolkit/util/tomlclass.py), so a wrong key, type or value reads the same everywhere:
    recipes/amdgpu-ep.toml: key 'features.hipdnn.default': expected a boolean, got string 'yes'
Unknown keys are errors too (call `done()` after reading a table), which catches typos early. A Site names one
value's place in a file, for the errors of the checks run on it.
"""

from __future__ import annotations

import builtins
import difflib
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit.util.errors import RecipeError

# A key's default where it has none (the key is required), and what take() returns for a key left out.
MISSING: Any = object()
_MISSING = MISSING

_TYPE_NAMES = {str: "string", bool: "boolean", int: "integer", float: "float", list: "array", dict: "table"}


def describe(value: Any) -> str:
    """A TOML value as an error names it: its type, and a scalar's value (`string 'yes'`, `array`)."""
    kind = _TYPE_NAMES.get(type(value), type(value).__name__)
    if isinstance(value, (dict, list)):
        return kind
    return f"{kind} {value!r}"


def load_toml(path: Path) -> Table:
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RecipeError(f"{path}: file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise RecipeError(f"{path}: not valid TOML: {exc}") from None
    return Table(data, path, "")


@dataclass(frozen=True)
class Site:
    """Where one value sits in a file (`hipify.exclude[2].reason`), for the errors about it: a check that refuses
    a value raises `site.error(...)`. `context` is what the reader was handed for the checks (the folder relative
    paths are relative to); `name`, the last key of the path (a table's name in a table of tables); `given`, at a
    table's own site, the keys the table holds."""

    file: Path
    path: str
    context: Any = None
    name: str = ""
    given: frozenset[str] = frozenset()

    @property
    def where(self) -> str:
        return f"{self.file}: key '{self.path}'"

    def key(self, name: str) -> Site:
        return Site(self.file, f"{self.path}.{name}" if self.path else name, self.context, name)

    def item(self, index: int) -> Site:
        return Site(self.file, f"{self.path}[{index}]", self.context, self.name)

    def has(self, key: str) -> bool:
        return key in self.given

    def error(self, message: str, hint: str | None = None) -> RecipeError:
        return RecipeError(f"{self.where}: {message}", hint=hint)


class Table:
    """A view of one TOML table that remembers which keys were read; `name` is the key it sits under."""

    def __init__(self, data: dict[str, Any], file: Path, prefix: str, name: str = ""):
        self.data = data
        self.file = file
        self.prefix = prefix
        self.name = name
        self._seen: set[str] = set()
        self._asked: set[str] = set()  # keys has() was asked about: known to the reader, absent or not

    # -- naming ---------------------------------------------------------------------------------
    def key_path(self, key: str) -> str:
        return f"{self.prefix}.{key}" if self.prefix else key

    def error(self, key: str, message: str) -> RecipeError:
        return RecipeError(f"{self.file}: key '{self.key_path(key)}': {message}")

    # -- reading --------------------------------------------------------------------------------
    def has(self, key: str) -> bool:
        self._asked.add(key)
        return key in self.data

    def keys(self) -> list[str]:
        return list(self.data)

    def take(self, key: str, expected: str, required: bool) -> Any:
        """The key's value as the file holds it, marked read; MISSING where the file leaves it out. A required key
        left out is an error, `expected` saying what it holds."""
        self._seen.add(key)
        if key in self.data:
            return self.data[key]
        if required:
            # A required key missing beside a key nobody reads that is spelled like it: name the typo.
            unread = [k for k in self.data if k not in self._seen]
            typo = difflib.get_close_matches(key, unread, n=1, cutoff=0.6)
            if typo:
                raise self.error(typo[0], f"unknown key; did you mean '{key}' (required, expected {expected})?")
            raise self.error(key, f"required, expected {expected}")
        return MISSING

    def _get(self, key: str, default: Any, types: tuple[type, ...], expected: str) -> Any:
        value = self.take(key, expected, default is _MISSING)
        if value is MISSING:
            return default
        # bool is an int subclass in Python; TOML keeps them apart, so do we.
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise self.error(key, f"expected {expected}, got {describe(value)}")
        return value

    def str(self, key: str, default: Any = _MISSING, choices: Iterable[str] | None = None) -> Any:
        value = self._get(key, default, (str,), "a string")
        if choices is not None and value is not default:
            allowed = list(choices)
            if value not in allowed:
                raise self.error(key, f"expected one of {', '.join(map(repr, allowed))}, got {value!r}")
        return value

    def bool(self, key: builtins.str, default: Any = _MISSING) -> Any:
        return self._get(key, default, (bool,), "a boolean")

    def int(self, key: builtins.str, default: Any = _MISSING) -> Any:
        return self._get(key, default, (int,), "an integer")

    def number(self, key: builtins.str, default: Any = _MISSING) -> Any:
        """A float or an integer (TOML writes 1e-4 as a float and 0 as an integer), as a float."""
        value = self._get(key, default, (float, int), "a number")
        return value if value is default else float(value)

    def str_list(self, key: builtins.str, default: Any = _MISSING) -> Any:
        value = self._get(key, default, (list,), "an array of strings")
        if value is default:
            return value
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise self.error(f"{key}[{i}]", f"expected a string, got {describe(item)}")
        return list(value)

    def str_list_list(self, key: builtins.str, default: Any = _MISSING,
                      item: builtins.str = "an array of strings") -> Any:
        """An array of arrays of strings (e.g. feature sets [[], ["hipdnn"]]), as a list of lists.

        `item` says what each inner array is, for the error message.
        """
        value = self._get(key, default, (list,), "an array of arrays of strings")
        if value is default:
            return value
        for i, inner in enumerate(value):
            if not isinstance(inner, list) or not all(isinstance(s, str) for s in inner):
                raise self.error(f"{key}[{i}]", f"expected {item}, got {describe(inner)}")
        return [list(item) for item in value]

    def str_or_list(self, key: builtins.str, default: Any = _MISSING) -> Any:
        """A string or an array of strings, always returned as a list."""
        self._seen.add(key)
        if isinstance(self.data.get(key), str):
            return [self.data[key]]
        return self.str_list(key, default)

    def str_map(self, key: builtins.str, default: Any = _MISSING) -> Any:
        value = self._get(key, default, (dict,), "a table of strings")
        if value is default:
            return value
        for k, v in value.items():
            if not isinstance(v, str):
                raise self.error(f"{key}.{k}", f"expected a string, got {describe(v)}")
        return dict(value)

    def table(self, key: builtins.str, default: Any = _MISSING) -> Any:
        value = self._get(key, default, (dict,), "a table")
        if value is default:
            return value
        return Table(value, self.file, self.key_path(key), key)

    def tables(self, key: builtins.str, default: Any = _MISSING) -> Any:
        """An array of tables ([[key]]), each as a Table named key[i]."""
        value = self._get(key, default, (list,), "an array of tables")
        if value is default:
            return value
        out = []
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                raise self.error(f"{key}[{i}]", f"expected a table, got {describe(item)}")
            out.append(Table(item, self.file, f"{self.key_path(key)}[{i}]", key))
        return out

    def subtables(self) -> list[tuple[builtins.str, Table]]:
        """Every key of this table as a named sub-table ([features.X] style)."""
        return [(k, self.table(k)) for k in list(self.data)]

    def done(self) -> None:
        """Fail on keys nobody read: they are typos or options this version does not know."""
        unknown = [k for k in self.data if k not in self._seen]
        if unknown:
            # Every key the reader knows, those this file leaves out (asked with has()) included.
            known = sorted(self._seen | self._asked)
            hint = f"known keys here: {', '.join(known)}" if known else "this table takes no keys"
            close = difflib.get_close_matches(unknown[0].replace("-", "_"), known, n=1, cutoff=0.6)
            meant = f"did you mean '{close[0]}'? " if close else ""
            raise self.error(unknown[0], f"unknown key ({meant}{hint})")
