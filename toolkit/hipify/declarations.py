"""Names a source file defines itself (macros, types, aliases, declarations that look like CUDA).

A name the tree defines (CUDA_CHECK, a cudaFoo helper, a `cuFoo` parameter) is the project's, not
CUDA's: such names are never reported as unmapped, in this file or, through the cache, in any other.
"""

from __future__ import annotations

import re

_DEFINE_NAME = re.compile(r"[ \t]*([A-Za-z_]\w*)")
_TYPE_KEYWORDS = ("struct", "class", "enum", "union")
_DECL_AFTER = re.compile(r"\s*(?:\(|=(?!=)|;|,|\[|\{|\))")
_NOT_A_TYPE = frozenset({
    "return", "new", "delete", "throw", "case", "goto", "else", "do", "sizeof", "alignof", "decltype",
    "co_return", "co_yield", "co_await", "operator", "and", "or", "not", "typeid", "if", "while", "for",
    "switch",
})


def defined_macro(text: str, pos: int) -> re.Match[str] | None:
    """The macro name after `#define` (pos is just past the directive's name)."""
    return _DEFINE_NAME.match(text, pos)


def declared_by_keyword(text: str, start: int) -> bool:
    """Whether the name at start follows `struct`/`class`/`enum`/`union` (so this file declares it)."""
    end = start
    while end and text[end - 1] in " \t\n":
        end -= 1
    if end == start:  # a keyword is separated from the name by space
        return False
    for keyword in _TYPE_KEYWORDS:
        at = end - len(keyword)
        if text.startswith(keyword, at) and at >= 0 and not (at and (text[at - 1].isalnum() or text[at - 1] == "_")):
            return True
    return False


def declares(text: str, start: int, end: int) -> bool:
    """Whether the name at text[start:end] is being declared: `void cuFoo(`, `T cudaT =`, `auto* cublasLt;`."""
    if not _DECL_AFTER.match(text, end):
        return False
    before = text[max(0, start - 120):start]
    stripped = before.rstrip()
    if not stripped or stripped == before:  # a declarator is separated from its type by space
        if not stripped.endswith(("*", "&")) or stripped.endswith("&&"):
            return False
    last = stripped.rstrip("*& \t\n")
    if stripped.endswith(("*", "&")) and last[-1:] in "=(,!|+-/%<?:":
        return False
    if last.endswith(">"):
        return True
    word = re.search(r"([A-Za-z_]\w*)$", last)
    return word is not None and word.group(1) not in _NOT_A_TYPE
