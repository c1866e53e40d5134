"""C/C++ tokens as the converter sees them: the one scanner, line numbers, call argument spans.

The scanner matches only what the converter acts on or must step over whole: comments, string and
character literals (raw strings too), numbers (so `1e5f` is not an identifier), identifiers,
preprocessor directives and `<<<`. Everything between matches is copied through untouched.
"""

from __future__ import annotations

import re

SCAN = re.compile(
    r"""
     (?P<comment>//[^\n\\]*(?:\\.[^\n\\]*)*|/\*.*?\*/)
    |(?P<raw>(?:u8|[uUL])?R"(?P<delim>[^()\\ \t\n]{0,16})\(.*?\)(?P=delim)")
    |(?P<string>(?:u8|[uUL])?"(?:[^"\\\n]|\\.)*")
    |(?P<char>(?:u8|[uUL])?'(?:[^'\\\n]|\\.)*')
    |(?P<number>\.?[0-9](?:[eEpP][+-]|[\w.]|'(?=\w))*)
    |(?P<ident>[A-Za-z_]\w*)
    |(?P<directive>^[ \t]*\#[ \t]*(?P<dname>[A-Za-z_]\w*))
    |(?P<launch><<<)
    """,
    re.S | re.M | re.X,
)


# Comments and literals alone, for passes that must not look inside them (the warp-size warnings).
SKIPPED = re.compile(
    r"""
     //[^\n\\]*(?:\\.[^\n\\]*)*|/\*.*?\*/
    |(?:u8|[uUL])?R"(?P<delim>[^()\\ \t\n]{0,16})\(.*?\)(?P=delim)"
    |(?:u8|[uUL])?"(?:[^"\\\n]|\\.)*"
    |(?<!\w)(?:u8|[uUL])?'(?:[^'\\\n]|\\.)*'
    """,
    re.S | re.X,
)

# What the converter steps over whole, inside one regex match: runs of punctuation and space, every word that
# cannot be a CUDA name, numbers (digit separators too), comments, string and character literals, raw strings.
# The commonest come first; a word whose first character could begin a CUDA name or a literal's prefix
# (u8"", L'', R"()") goes through the slower check.
_STEP_OVER = r"""
     [^/"'\#\w]+
    |[PLAIN]\w*
    |(?!(?:u8|[uUL])?R?["']|PREFIXES)[A-Za-z_]\w*
    |[0-9]\w*(?:'\w+)*
    |//[^\n\\]*(?:\\.[^\n\\]*)*|/\*.*?\*/
    |(?:u8|[uUL])?"(?:[^"\\\n]|\\.)*"
    |(?:u8|[uUL])?R"(?P<delim>[^()\\ \t\n]{0,16})\(.*?\)(?P=delim)"
    |(?<!\w)(?:u8|[uUL])?'(?:[^'\\\n]|\\.)*'
    |/(?![/*])
"""


def candidate_scanner(prefixes: list[str]) -> re.Pattern[str]:
    """The converter's scanner: one match steps over everything that cannot be a CUDA name (atomically, so
    never into a word: `mycudaMalloc` stays one word) and ends at the next token worth a look: a word that
    starts with one of `prefixes` (every name the tables know or detect does), a `#` (a directive when it
    starts its line), or a single character nothing else took (an unterminated quote). None at the end.

    Python's loop then sees a few percent of a file's words instead of all of them.
    """
    alternatives = "|".join(re.escape(p) for p in sorted(prefixes, key=len, reverse=True))
    special = {p[0] for p in prefixes} | set("uULR")
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"
    plain = "".join(c for c in letters if c not in special)
    step = _STEP_OVER.replace("PREFIXES", f"(?:{alternatives})").replace("PLAIN", plain)
    return re.compile(
        rf"""(?:{step})*+
        (?:(?P<ident>(?:{alternatives})\w*)
          |(?P<directive>\#[ \t]*(?P<dname>[A-Za-z_]\w*))
          |(?P<other>\w+|.))""",
        re.S | re.X,
    )


def at_line_start(text: str, pos: int) -> bool:
    """Only spaces or tabs between the start of pos's line and pos."""
    bol = text.rfind("\n", 0, pos) + 1
    return not text[bol:pos].strip(" \t")


class Lines:
    """Line numbers for increasing positions without rescanning from the start."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self.line = 1

    def at(self, pos: int) -> int:
        if pos < self.pos:
            return self.text.count("\n", 0, pos) + 1
        self.line += self.text.count("\n", self.pos, pos)
        self.pos = pos
        return self.line


def skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    return pos


def split_args(text: str, open_pos: int) -> tuple[list[tuple[int, int]], int] | None:
    """Top-level argument spans of the call whose '(' is at open_pos, and the ')' position."""
    depth = 0
    spans: list[tuple[int, int]] = []
    start = open_pos + 1
    i = open_pos
    n = len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            m = SCAN.match(text, i)
            i = m.end() if m else i + 1
            continue
        if c == "/" and i + 1 < n and text[i + 1] in "/*":
            m = SCAN.match(text, i)
            i = m.end() if m else i + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                if text[start:i].strip() or spans:
                    spans.append((start, i))
                return spans, i
        elif c == "," and depth == 1:
            spans.append((start, i))
            start = i + 1
        i += 1
    return None
