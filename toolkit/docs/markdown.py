"""Small helpers for writing Markdown tables."""

from __future__ import annotations

import re


def cell(text: str) -> str:
    """Text safe inside a table cell: pipes escaped, no line breaks."""
    text = " ".join(str(text).split()).replace("|", "\\|")
    # Outside backticks, <placeholders> would be read as HTML and * as emphasis.
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(p if p.startswith("`") else p.replace("<", "&lt;").replace("*", "\\*") for p in parts)


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines
