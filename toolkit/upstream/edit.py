"""Edits to a recipe's text that keep everything else as written (comments, order, spacing): the source
commit, a [[fetchcontent]] entry's URL, an entry added or removed. TOML is never re-serialised, so a
reviewer's diff shows exactly what `bump` changed; the result is loaded and validated before it is used.
"""

from __future__ import annotations

import json
import re

from toolkit.util.errors import ToolkitError

_HEADER = re.compile(r"^\s*\[")
_KEY = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*=")


def _tables(lines: list[str]) -> list[tuple[str, int, int]]:
    """(header, first line, end) of every table; a table's end excludes the comment lines and blank lines
    directly above the next header, which describe that one."""
    starts = [i for i, line in enumerate(lines) if _HEADER.match(line)]
    out = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        while end > start + 1 and (lines[end - 1].lstrip().startswith("#") or not lines[end - 1].strip()):
            end -= 1
        out.append((lines[start].strip(), start, end))
    return out


def _key(line: str) -> str | None:
    match = _KEY.match(line)
    return match.group(1) if match else None


def _value(line: str) -> str | None:
    match = re.match(r'^\s*[A-Za-z0-9_-]+\s*=\s*"([^"]*)"', line)
    return match.group(1) if match else None


def _fetchcontent(lines: list[str], name: str) -> tuple[int, int]:
    for header, start, end in _tables(lines):
        if header == "[[fetchcontent]]" and any(_key(ln) == "name" and (_value(ln) or "").lower() == name.lower()
                                                for ln in lines[start:end]):
            return start, end
    raise ToolkitError(f"bump: no [[fetchcontent]] entry named {name!r} to edit")


def set_commit(text: str, commit: str) -> str:
    lines = text.splitlines()
    for header, start, end in _tables(lines):
        if header == "[source]":
            for i in range(start, end):
                if _key(lines[i]) == "commit":
                    lines[i] = f'commit = "{commit}"'
                    return "\n".join(lines) + "\n"
    raise ToolkitError("bump: the recipe has no [source] commit to move", hint="bump moves a git source's commit")


def set_dep_url(text: str, name: str, url: str) -> str:
    """Point an entry at `url`; its own sha256/content pins (of the old archive) go: the lock pins the new one."""
    lines = text.splitlines()
    start, end = _fetchcontent(lines, name)
    block = []
    for line in lines[start:end]:
        key = _key(line)
        if key in ("sha256", "content"):
            continue
        block.append(f"url = {json.dumps(url)}" if key == "url" else line)
    return "\n".join(lines[:start] + block + lines[end:]) + "\n"


def add_dep(text: str, name: str, url: str, why: str) -> str:
    """A new entry after the last [[fetchcontent]] one (or at the end), with a comment saying why."""
    lines = text.splitlines()
    tables = [t for t in _tables(lines) if t[0] == "[[fetchcontent]]"]
    at = tables[-1][2] if tables else len(lines)
    block = ["", f"# {why}", "[[fetchcontent]]", f"name = {json.dumps(name)}", f"url = {json.dumps(url)}"]
    return "\n".join(lines[:at] + block + lines[at:]) + "\n"


def remove_dep(text: str, name: str) -> str:
    """Drop an entry with the comment lines directly above it."""
    lines = text.splitlines()
    start, end = _fetchcontent(lines, name)
    while start > 0 and lines[start - 1].lstrip().startswith("#"):
        start -= 1
    while start > 0 and not lines[start - 1].strip() and (end >= len(lines) or not lines[end].strip()):
        start -= 1
    return "\n".join(lines[:start] + lines[end:]) + "\n"
