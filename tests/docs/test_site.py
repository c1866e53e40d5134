"""The documentation site builds with `mkdocs build --strict` (any warning fails: a broken link or anchor, a page
left out of the navigation), every page of docs/ is in the navigation, and README fits in two screens."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

from tests.support.tools import ROOT, require_tool

README_MAX_LINES = 120


def test_site_builds_strict(tmp_path):
    require_tool(importlib.util.find_spec("mkdocs") is not None,
                 "mkdocs is not installed (pip install -e '.[test]' or '.[docs]')")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "WARNING" not in proc.stderr, proc.stderr[-3000:]
    for page in ("index.html", "guides/using-the-wheel.html", "reference/recipe-keys.html"):
        assert (tmp_path / "site" / page).is_file(), page


def test_every_page_is_in_the_navigation():
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = sorted(p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md"))
    missing = [p for p in pages if f": {p}" not in text]
    assert not missing, f"docs pages not in mkdocs.yml's nav: {missing}"
    assert "\ndocs_dir: docs\n" in text


def test_readme_fits_two_screens():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md is {len(lines)} lines; move detail into docs/"


def test_readme_sessions_table_is_the_noxfiles():
    """README's table of sessions names every session of noxfile.py, each with the command it really runs."""
    from toolkit.docs.sessions import sessions

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("## Sessions and commands")[1].split("\n\n")[1]
    rows = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].strip("`").removeprefix("nox -s ")] = [c.strip("` ") for c in cells[1].split(",")]
    real = {s.name: s.runs for s in sessions(ROOT / "noxfile.py")}
    assert set(rows) == set(real), f"README's sessions {sorted(rows)} vs noxfile.py's {sorted(real)}"
    for name, shown in rows.items():
        for command in shown:   # each command README shows is (the start of) one the session runs
            assert any(run == command or run.startswith(command + " ") for run in real[name]), \
                (name, command, real[name])
