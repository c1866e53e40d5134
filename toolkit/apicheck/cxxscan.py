"""Reading C/C++ sources well enough to tell which names they use, without a compiler.

The API check must run before anything compiles, and a tree's own generated headers do not exist yet then,
so the preprocessor cannot be asked. What is read here instead:
- code only: comments, string and character literals are blanked (an option key "migraphx_fp16_enable" in a
  string is not a call), line numbers kept;
- preprocessor blocks: code under a condition that names a probe macro (one the tree's CMake sets from a
  check_* test, or a library's own version macro) is *guarded*, since the tree handles the API's absence
  itself; code only for Windows (`#ifdef _WIN32`) is skipped; include guards and everything else count;
- names the tree declares itself (`#define X`, `struct X`, `enum { X }`, `T x = ...`), which are never the
  library's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_IDENT = re.compile(r"[A-Za-z_]\w*")
_DIRECTIVE = re.compile(r"^\s*#\s*(\w+)\s*(.*)$")
_INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
_KEYWORDS = frozenset("""return case else throw new delete sizeof alignof co_return co_yield co_await goto decltype
typeid not and or if while for switch do""".split())
# `T name =`, `T* name;`, `T& name(`, `> name{`: a name declared after a type (or a template's closing `>`).
_DECLARED = re.compile(r"(\w+|[>*&])[\s*&]+([A-Za-z_]\w*)\s*(?=[=;({\[,):])")
_TYPE_DECL = re.compile(
    r"\b(?:struct|class|enum|union|namespace|using|typedef)\s+(?:class\s+|struct\s+)?([A-Za-z_]\w*)")
_DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)", re.M)
_ENUM_BODY = re.compile(r"\benum\b[^{;()]*\{([^{}]*)\}")
_ENUMERATOR = re.compile(r"(?:^|,)\s*([A-Za-z_]\w*)")
_MACRO_HEAD = re.compile(r"^\s*#\s*define\s+[A-Za-z_]\w*(?:\([^)]*\))?")
_ANY_DIRECTIVE = re.compile(r"^\s*#.*$", re.M)
_CHECKS = re.compile(r"\bcheck_\w+\s*\(", re.I)


def strip_code(text: str) -> str:
    """`text` with comments, string and character literals replaced by spaces; newlines kept."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
        elif c == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            match = re.match(r'R"([^(\s]{0,16})\(', text[i:])
            if not match:
                out.append(c)
                i += 1
                continue
            close = f"){match.group(1)}\""
            end = text.find(close, i + match.end())
            end = n if end < 0 else end + len(close)
        elif c in "\"'":
            end = _literal_end(text, i)
        else:
            out.append(c)
            i += 1
            continue
        out.append("".join(ch if ch == "\n" else " " for ch in text[i:end]))
        i = end
    return "".join(out)


def _literal_end(text: str, start: int) -> int:
    quote, i = text[start], start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote or text[i] == "\n":
            return i + 1
        i += 1
    return len(text)


def probe_macros(cmake_texts: list[str]) -> set[str]:
    """Macro names a tree's CMake sets from a probe: the upper-case words inside check_*(...) calls
    (check_cxx_source_compiles(CODE VAR), check_symbol_exists(SYMBOL HEADER VAR), ...)."""
    names: set[str] = set()
    for text in cmake_texts:
        for match in _CHECKS.finditer(text):
            args = _call_arguments(text, match.end())
            args = re.sub(r"\[(=*)\[.*?\]\1\]", " ", args, flags=re.S)  # bracket arguments: the probe's code
            args = re.sub(r'"(?:[^"\\]|\\.)*"', " ", args)
            names.update(w for w in _IDENT.findall(args) if w.isupper() and len(w) > 3)
    return names


def _call_arguments(text: str, start: int) -> str:
    depth, i = 1, start
    while i < len(text) and depth:
        if text.startswith("[[", i) or re.match(r"\[=+\[", text[i:i + 8]):
            close = "]" + text[i + 1:text.index("[", i + 1)] + "]"
            end = text.find(close, i + 2)
            i = len(text) if end < 0 else end + len(close)
            continue
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return text[start:i - 1]


@dataclass(frozen=True)
class CodeLine:
    number: int  # 1-based
    text: str  # comments and literals blanked
    guard: str | None  # the probe macro(s) a condition around this line names, if any


def code_lines(text: str, guard_macros: set[str], skip_macros: set[str]) -> list[CodeLine]:
    """The lines of a source that a Linux build compiles, each with the guard it sits under (if any).

    skip_macros: conditions true only elsewhere (_WIN32): their branch is left out, their #else kept.
    """
    lines = strip_code(text).split("\n")
    stack: list[list[Any]] = []  # per open #if: [kind of the current branch, guard name, kind of the first branch]
    out: list[CodeLine] = []
    for index, line in enumerate(lines):
        match = _DIRECTIVE.match(line)
        if match and match.group(1) != "define":
            _directive(stack, match.group(1), match.group(2), guard_macros, skip_macros,
                       lines[index + 1] if index + 1 < len(lines) else "")
            continue
        if match:
            # A macro's body is code wherever the macro is used: keep it, without the name it defines.
            body = _MACRO_HEAD.match(line)
            line = " " * body.end() + line[body.end():] if body else line
        if any(frame[0] == "skip" for frame in stack):
            continue
        guards = [frame[1] for frame in stack if frame[0] == "guarded"]
        out.append(CodeLine(index + 1, line, ", ".join(guards) if guards else None))
    return out


def _directive(stack: list[list[Any]], word: str, rest: str, guard_macros: set[str], skip_macros: set[str],
               next_line: str) -> None:
    if word in ("if", "ifdef", "ifndef"):
        names = set(_IDENT.findall(rest))
        negative = word == "ifndef" or (word == "if" and rest.lstrip().startswith("!"))
        include_guard = word == "ifndef" and re.match(rf"\s*#\s*define\s+{re.escape(rest.strip())}\b", next_line)
        kind, guard = _branch_kind(names, negative, guard_macros, skip_macros)
        if include_guard:
            kind, guard = "plain", None
        stack.append([kind, guard, kind])
    elif word == "elif" and stack:
        kind, guard = _branch_kind(set(_IDENT.findall(rest)), False, guard_macros, skip_macros)
        if stack[-1][0] == "guarded":
            kind, guard = "guarded", stack[-1][1]
        stack[-1][0], stack[-1][1] = kind, guard
    elif word == "else" and stack:
        first = stack[-1][2]
        # The other branch of a platform test is the other platform; of a probe, the fallback (still guarded).
        stack[-1][0] = {"skip": "plain", "windows-not": "skip", "guarded": "guarded"}.get(first, "plain")
    elif word == "endif" and stack:
        stack.pop()


def _branch_kind(names: set[str], negative: bool, guard_macros: set[str],
                 skip_macros: set[str]) -> tuple[str, str | None]:
    guards = sorted(names & guard_macros)
    if guards or "__has_include" in names:
        return "guarded", ", ".join(guards) or "__has_include"
    if names & skip_macros:
        return ("windows-not", None) if negative else ("skip", None)
    return "plain", None


def declared_names(code: str) -> set[str]:
    """Names a source declares itself (macros, types, variables, functions, parameters)."""
    names = set(_DEFINE.findall(code))
    code = _ANY_DIRECTIVE.sub("", code)  # a macro body names what it uses, it declares nothing
    names |= set(_TYPE_DECL.findall(code))
    for body in _ENUM_BODY.findall(code):
        names |= set(_ENUMERATOR.findall(body))
    for prev, name in _DECLARED.findall(code):
        if prev not in _KEYWORDS and name not in _KEYWORDS:
            names.add(name)
    return names


def includes(text: str) -> list[tuple[str, str]]:
    """(kind, name) of each #include: kind '<' or '"'."""
    return _INCLUDE.findall(text)
