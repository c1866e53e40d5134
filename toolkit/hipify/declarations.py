"""Names a source file defines itself (macros, types, aliases, declarations that look like CUDA).

A name the tree defines (CUDA_CHECK, a cudaFoo helper, a `cuFoo` parameter) is the project's, not
CUDA's: such names are never reported as unmapped, in this file or, through the cache, in any other.
"""

from __future__ import annotations

import re

DECLARING = frozenset({"struct", "class", "enum", "union", "using"})

_DEFINE_NAME = re.compile(r"[ \t]*([A-Za-z_]\w*)")
_NEW_NAME = re.compile(r"\s*(?:struct|class|enum(?:\s+class)?|union)\s+([A-Za-z_]\w*)")
_ALIAS = re.compile(r"\s+([A-Za-z_]\w*)\s*=")
_DECL_AFTER = re.compile(r"\s*(?:\(|=(?!=)|;|,|\[|\{|\))")
_NOT_A_TYPE = frozenset({
    "return", "new", "delete", "throw", "case", "goto", "else", "do", "sizeof", "alignof", "decltype",
    "co_return", "co_yield", "co_await", "operator", "and", "or", "not", "typeid", "if", "while", "for",
    "switch",
})


def defined_macro(text: str, pos: int) -> re.Match | None:
    """The macro name after `#define` (pos is just past the directive's name)."""
    return _DEFINE_NAME.match(text, pos)


def declared_type(text: str, keyword: str, start: int, pos: int) -> str | None:
    """The name a `struct`/`class`/`enum`/`union` keyword at start introduces, or a `using X =` alias."""
    if keyword == "using":
        alias = _ALIAS.match(text, pos)
        return alias.group(1) if alias else None
    new_m = _NEW_NAME.match(text, start)
    return new_m.group(1) if new_m else None


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
