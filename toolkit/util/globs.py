"""Path globs over posix relative paths, the syntax recipes use for file sets.

`*` and `?` stay within one path component, `**/` spans any number of folders (none included), and a
trailing `**` matches everything below. Every file set of a recipe uses them (hipify's include, exclude and
overlay, compile-check's units, an archive's `paths` pin), so one glob means the same everywhere.
"""

from __future__ import annotations

import re
from functools import lru_cache


@lru_cache(maxsize=512)
def glob_regex(pattern: str) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def glob_match(pattern: str, rel: str) -> bool:
    """Whether the posix relative path `rel` matches `pattern`."""
    return bool(glob_regex(pattern).match(rel))


def bad_glob(pattern: str) -> str | None:
    """Why `pattern` cannot name files inside a tree (absolute, '..', empty), or None when it can."""
    if not pattern or pattern.startswith("/") or "\\" in pattern:
        return "expected a relative path glob with '/' separators"
    if ".." in pattern.split("/"):
        return "'..' leaves the tree"
    return None
