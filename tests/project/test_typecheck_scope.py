"""`nox -s lint` type-checks every package of the toolkit, not a chosen few, and strictly: a contributor changing
wheel/, release/ or upstream/ gets the same check as one changing the engine (pyproject.toml's [tool.mypy])."""

from __future__ import annotations

import tomllib
from typing import Any

from tests.support.tools import ROOT

# The flags mypy's --strict turns on (`mypy --help`), as the config file names them, with the value strict gives
# each: implicit_reexport is the one strict turns off.
STRICT_FLAGS: dict[str, bool] = {
    "disallow_any_generics": True,
    "disallow_subclassing_any": True,
    "disallow_untyped_calls": True,
    "disallow_untyped_defs": True,
    "disallow_incomplete_defs": True,
    "check_untyped_defs": True,
    "disallow_untyped_decorators": True,
    "warn_redundant_casts": True,
    "warn_unused_ignores": True,
    "warn_return_any": True,
    "implicit_reexport": False,
    "strict_equality": True,
    "extra_checks": True,
}


def _mypy() -> dict[str, Any]:
    with open(ROOT / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)["tool"]["mypy"]


def _toolkit_packages() -> list[str]:
    return sorted(p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "toolkit").glob("*/__init__.py"))


def _weakened(section: dict[str, Any]) -> list[str]:
    """The settings of one section that undo a strict flag or skip checks. mypy's config also reads a flag
    inverted: allow_untyped_defs = true is disallow_untyped_defs off, no_implicit_reexport = false is
    implicit_reexport on."""
    found = []
    for key, value in section.items():
        name, on = key, value
        if key.startswith("allow_") and "dis" + key in STRICT_FLAGS:
            name, on = "dis" + key, not value
        elif key.startswith("no_") and key[3:] in STRICT_FLAGS:
            name, on = key[3:], not value
        undone = name in STRICT_FLAGS and on != STRICT_FLAGS[name]
        skipped = (key == "strict" and value is not True) or (key == "ignore_errors" and value is True) \
            or key == "disable_error_code"
        if undone or skipped:
            found.append(f"{key} = {value!r}")
    return found


def test_mypy_covers_every_toolkit_package():
    mypy = _mypy()
    files = [f.rstrip("/") for f in mypy["files"]]
    uncovered = [p for p in _toolkit_packages() if not any(p == f or p.startswith(f + "/") for f in files)]
    assert uncovered == [], f"[tool.mypy] files leaves out {uncovered}"


def test_mypy_is_strict_for_every_toolkit_package():
    mypy = _mypy()
    assert mypy.get("strict") is True, "[tool.mypy] strict = true: every toolkit module fully annotated"
    assert _weakened(mypy) == [], "[tool.mypy] turns a strict flag off"
    for override in mypy.get("overrides", []):
        modules = override["module"] if isinstance(override["module"], list) else [override["module"]]
        toolkit = [m for m in modules if m == "toolkit" or m.startswith("toolkit.")]
        assert not (toolkit and _weakened(override)), \
            f"[[tool.mypy.overrides]] for {toolkit} turns a strict flag off: {_weakened(override)}"


def test_weakening_settings_are_seen():
    # The check above would pass vacuously if it missed the spellings that undo strict.
    assert _weakened({"disallow_untyped_defs": False}) == ["disallow_untyped_defs = False"]
    assert _weakened({"allow_untyped_defs": True}) == ["allow_untyped_defs = True"]
    assert _weakened({"implicit_reexport": True}) == ["implicit_reexport = True"]
    assert _weakened({"no_implicit_reexport": False}) == ["no_implicit_reexport = False"]
    assert _weakened({"check_untyped_defs": False, "ignore_errors": True, "strict": False}) == [
        "check_untyped_defs = False", "ignore_errors = True", "strict = False"]
    assert _weakened({"disable_error_code": ["no-untyped-def"]}) == ["disable_error_code = ['no-untyped-def']"]
    assert _weakened({"disallow_untyped_defs": True, "warn_return_any": True, "ignore_missing_imports": True}) == []
