"""`nox -s lint` type-checks every package of the toolkit, not a chosen few: a contributor changing wheel/,
release/ or upstream/ gets the same check as one changing the engine (pyproject.toml's [tool.mypy])."""

from __future__ import annotations

import tomllib

from tests.support.tools import ROOT


def test_mypy_covers_every_toolkit_package():
    with open(ROOT / "pyproject.toml", "rb") as handle:
        mypy = tomllib.load(handle)["tool"]["mypy"]
    files = [f.rstrip("/") for f in mypy["files"]]
    packages = sorted(p.parent.relative_to(ROOT).as_posix() for p in (ROOT / "toolkit").glob("*/__init__.py"))
    uncovered = [p for p in packages if not any(p == f or p.startswith(f + "/") for f in files)]
    assert uncovered == [], f"[tool.mypy] files leaves out {uncovered}"
    assert mypy.get("check_untyped_defs") is True   # the bodies of unannotated functions are checked too
