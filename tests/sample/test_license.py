"""The bundled sample tree carries a license of its own, the project's (pyproject.toml's `license`), so a wheel
built from it has a license to ship."""

from __future__ import annotations

import tomllib

from tests.support.tools import ROOT


def test_the_sample_tree_is_licensed_as_the_project_is():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"]["text"]
    assert declared == "MIT"
    text = (ROOT / "samples" / "umbrella-ep" / "LICENSE").read_text()
    assert text.startswith("MIT License\n\nCopyright (c) ")
    assert "Permission is hereby granted, free of charge, to any person obtaining a copy" in text
