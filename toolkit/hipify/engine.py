"""The built-in CUDA-to-HIP converter for one source text.

It lexes C/C++ properly instead of running regexes over raw text:
- identifiers are replaced whole, never inside a longer name (`mycudaMalloc` stays as it is);
- comments and string literals (raw strings too) are left exactly as written and are not reported:
  they are text for people, log messages or ABI names (EP names, registry keys) that a blind rename
  would corrupt; a recipe changes them on purpose with a [[hipify.substitute]] rule;
- `#include <...>` / `#include "..."` header names are renamed through the tables, and quoted
  includes follow the recipe's path renames, so an include keeps pointing at its renamed output;
- in `#if`/`#elif` lines `__CUDA_ARCH__ >= N` (or `>`) becomes `defined(__HIP_DEVICE_COMPILE__)` and
  `< N` (or `<=`) becomes `!defined(__HIP_DEVICE_COMPILE__)`: an AMD device pass counts as "new
  enough" for every CUDA compute capability; each such rewrite is reported as a note;
- warp intrinsics are rewritten as calls (the mask argument dropped), see tables/warp_intrinsics.json;
- kernel launches stay `<<<...>>>` or become hipLaunchKernelGGL(...), as the recipe says.
Whatever looks like CUDA (tables/_detect.json) and is not mapped is returned as an unmapped finding.
"""

from __future__ import annotations

import re

from toolkit.hipify.declarations import declared_by_keyword, declares, defined_macro
from toolkit.hipify.launches import launches_to_ggl
from toolkit.hipify.lexer import Lines, at_line_start, skip_ws, split_args
from toolkit.hipify.results import FileResult, Finding, Warning
from toolkit.hipify.tables import Tables
from toolkit.hipify.warp import lane_warnings, rewrite_call
from toolkit.recipe.hipify import HipifySettings, Substitution
from toolkit.util.globs import glob_match

__all__ = ["ENGINE_VERSION", "FileResult", "Finding", "Warning", "apply_substitutions", "convert_text",
           "split_args", "still_present", "substitution_matches"]

# Bump when a change here or in lexer, declarations, warp or launches changes any output: cached
# conversions from other versions are redone.
ENGINE_VERSION = "4"  # 4: hipify-perl findings name the source line (perl.py)

_INCLUDES = frozenset({"include", "include_next", "import"})
_HEADER = re.compile(r'[ \t]*(<[^>\n]*>|"[^"\n]*")')
_ARCH_CMP = re.compile(r"\s*(>=|<=|>|<|==|!=)\s*(\d+)")
_WORD = re.compile(r"[A-Za-z_]\w*")
_QUALIFIER = re.compile(r"((?:[A-Za-z_]\w*\s*::\s*)+)$")


def convert_text(text: str, rel: str, settings: HipifySettings, tables: Tables,
                 detect_only: bool = False) -> FileResult:
    """Convert one file's text. With detect_only, report what is left unmapped without changing it."""
    result = FileResult(text="")
    converted, defines = _convert_tokens(text, rel, settings, tables, detect_only, result)
    if not detect_only and settings.launch_syntax == "hipLaunchKernelGGL" and "<<<" in converted:
        converted = launches_to_ggl(converted, result)
    if not detect_only:
        matched: set[int] = set()
        converted = apply_substitutions(converted, rel, settings, matched)
        result.substituted = sorted(matched)
        result.unmapped = still_present(result.unmapped, converted)
    result.text = converted
    lane_warnings(text, result)
    result.defines = sorted(defines)
    # A name the file defines itself (CUDA_CHECK, a cudaFoo helper) is the project's, not CUDA's; a name
    # written twice on one line (`defined(CUDA_VERSION) && CUDA_VERSION >= 11080`) is one finding.
    result.unmapped = [f for f in dict.fromkeys(result.unmapped) if f.name not in defines]
    result.warnings.sort(key=lambda w: (w.line, w.kind))
    return result


class _Edits:
    """The converted text, built piece by piece, and the findings with their line numbers."""

    def __init__(self, text: str, result: FileResult):
        self.text = text
        self.result = result
        self.lines = Lines(text)
        self.out: list[str] = []
        self.copied = 0  # text[copied:] is not yet in out

    def emit(self, start: int, end: int, new: str) -> None:
        self.out.append(self.text[self.copied:start])
        self.out.append(new)
        self.copied = end

    def unmapped(self, at: int, name: str, reason: str) -> None:
        self.result.unmapped.append(Finding(self.lines.at(at), name, reason))

    def finish(self) -> str:
        self.out.append(self.text[self.copied:])
        return "".join(self.out)


def _convert_tokens(text: str, rel: str, settings: HipifySettings, tables: Tables, detect_only: bool,
                    result: FileResult) -> tuple[str, set[str]]:
    """The token pass: the converted text and the names the file defines.

    The scanner hands over only words that could be CUDA's (tables.scanner): most of a file never reaches
    this loop. A candidate in no table costs a few dict look-ups; anything rarer is a call.
    """
    edits = _Edits(text, result)
    defines: set[str] = set()
    pos = 0
    directive_end = -1
    directive_name = ""
    ids, calls, namespaces, qualified = tables.identifiers, tables.calls, tables.namespaces, tables.qualified
    assert tables.scanner is not None  # load_tables always sets it
    match = tables.scanner.match
    plain = tables.plain
    while True:
        m = match(text, pos)
        if m is None:
            break
        kind = m.lastgroup or ""  # every match ends in one named group
        start, pos = m.start(kind), m.end()
        if kind == "directive":
            if not at_line_start(text, start):  # `#x` or `a##b` in a macro body: the name is still code
                pos = start + 1
                continue
            directive_name = m.group("dname")
            directive_end = _logical_line_end(text, pos)
            pos = _directive(text, pos, directive_name, rel, settings, tables, edits, detect_only, defines)
            continue
        if kind != "ident":
            continue
        name = m.group(kind)
        if name in plain:
            continue
        new = ids.get(name)
        if new is None:
            rule = calls.get(name)
            scoped = name in namespaces or name in qualified
            if rule is None and not scoped and name not in tables.unsupported and not tables.is_cuda_identifier(name):
                plain.add(name)  # `__device__`, `current`: in no table and not CUDA's, now or in any later file
                continue
            if rule is not None:
                pos = rewrite_call(text, m, rule, edits.lines, result, edits.emit, detect_only)
            elif not (scoped and _renamed_in_scope(text, start, pos, name, tables, edits, detect_only)):
                _check_unknown(text, start, pos, name, tables, edits, defines)
            continue
        if start < directive_end and name == "__CUDA_ARCH__" and directive_name in ("if", "elif"):
            arch_end = _cuda_arch(text, start, pos, edits, detect_only)
            if arch_end is not None:
                pos = arch_end
                continue
        if new != name:
            if detect_only:
                edits.unmapped(start, name, f"left as is (HIP name: {new})")
            else:
                edits.emit(start, pos, new)
    return edits.finish(), defines


def _logical_line_end(text: str, pos: int) -> int:
    """The end of the line holding pos, following backslash continuations."""
    eol = text.find("\n", pos)
    while eol != -1 and text[eol - 1] == "\\":
        eol = text.find("\n", eol + 1)
    return len(text) if eol == -1 else eol


def _directive(text: str, pos: int, name: str, rel: str, settings: HipifySettings, tables: Tables,
               edits: _Edits, detect_only: bool, defines: set[str]) -> int:
    """An #include's header renamed, a #define's name noted; returns where scanning goes on."""
    if name in _INCLUDES:
        return _include(text, pos, rel, settings, tables, edits, detect_only)
    if name == "define":
        name_m = defined_macro(text, pos)
        if name_m:
            defines.add(name_m.group(1))
            return name_m.end()
    return pos


def _include(text: str, pos: int, rel: str, settings: HipifySettings, tables: Tables, edits: _Edits,
             detect_only: bool) -> int:
    m = _HEADER.match(text, pos)
    if not m:
        return pos
    token = m.group(1)
    header = token[1:-1]
    start = m.start(1)
    new = tables.map_header(header)
    if new is not None:
        if not detect_only:
            edits.emit(start, m.end(), token[0] + new + token[-1])
        else:
            edits.unmapped(start, header, f"left as is (HIP header: {new})")
    elif header in tables.unsupported_headers:
        edits.unmapped(start, header, tables.unsupported_headers[header])
    elif token[0] == '"' and settings.rename_path(header) != header:
        # A project header that the recipe's path renames move (e.g. "cuda/x.cuh" -> "rocm/x.cuh").
        if not detect_only:
            edits.emit(start, m.end(), f'"{settings.rename_path(header)}"')
    elif tables.is_cuda_header(header):
        edits.unmapped(start, header, "no HIP header known")
    return m.end()


def _renamed_in_scope(text: str, start: int, pos: int, name: str, tables: Tables, edits: _Edits,
                      detect_only: bool) -> bool:
    """A CUDA namespace used as one (`cub::`, `namespace cub`), or a name mapped only under a given
    qualifier (`thrust::cuda::par`): renamed. False when the name is not used that way here."""
    if name in tables.namespaces and (text.startswith("::", skip_ws(text, pos))
                                      or text[max(0, start - 16):start].rstrip().endswith("namespace")):
        if not detect_only:
            edits.emit(start, pos, tables.namespaces[name])
        return True
    quals = tables.qualified.get(name)
    if quals:
        qual = _qualifier(text, start)
        if qual in quals:
            if not detect_only:
                edits.emit(start, pos, quals[qual].rpartition("::")[2])
            return True
    return False


def _qualifier(text: str, start: int) -> str:
    """The `a::b` qualifier written right before position start ('' when none)."""
    before = text[max(0, start - 200):start]
    if not before.rstrip().endswith("::"):
        return ""
    m = _QUALIFIER.search(before)
    if not m:
        return ""
    return re.sub(r"\s+", "", m.group(1))[:-2]


def _check_unknown(text: str, start: int, pos: int, name: str, tables: Tables, edits: _Edits,
                   defines: set[str]) -> None:
    """A name in no mapping table: unmapped if it is CUDA's, noted as the file's own if declared here."""
    reason = tables.unsupported.get(name)
    if reason is None and not tables.is_cuda_identifier(name):
        return
    if declared_by_keyword(text, start) or (reason is None and declares(text, start, pos)):
        defines.add(name)
    else:
        edits.unmapped(start, name, reason or "no HIP mapping known")


def _cuda_arch(text: str, start: int, pos: int, edits: _Edits, detect_only: bool) -> int | None:
    """`__CUDA_ARCH__ >= N` in an #if: rewritten for HIP's device pass; returns where scanning goes on
    when rewritten, None when the name is left to the identifier table."""
    cmp = _ARCH_CMP.match(text, pos)
    if not cmp:
        return None
    op, number = cmp.group(1), cmp.group(2)
    if op not in (">=", ">", "<", "<="):
        edits.result.warnings.append(Warning(
            edits.lines.at(start), "cuda-arch",
            f"'__CUDA_ARCH__ {op} {number}' compares a CUDA compute capability; it has no meaning on AMD"))
        return None
    expr = "defined(__HIP_DEVICE_COMPILE__)"
    if op in ("<", "<="):
        expr = "!" + expr
    edits.result.warnings.append(Warning(
        edits.lines.at(start), "cuda-arch",
        f"'__CUDA_ARCH__ {op} {number}' read as '{expr}': every AMD device pass "
        "counts as newer than any CUDA compute capability"))
    if not detect_only:
        edits.emit(start, cmp.end(), expr)
    return cmp.end()


def still_present(findings: list[Finding], final_text: str) -> list[Finding]:
    """Findings whose name the final text (after the recipe's substitutions) still holds."""
    if not findings:
        return findings
    kept = {}
    for name in {f.name for f in findings}:
        if _WORD.fullmatch(name):  # an identifier: still there as a whole word
            kept[name] = _has_word(final_text, name)
        else:  # a header path with a suffix: still there as text
            kept[name] = "." in name and name in final_text
    return [f for f in findings if kept[f.name]]


def _has_word(text: str, word: str) -> bool:
    """Whether `word` occurs in text outside a longer identifier (str.find: no regex compiled per name)."""
    at = text.find(word)
    while at != -1:
        end = at + len(word)
        if not (at and _is_word_char(text[at - 1])) and not (end < len(text) and _is_word_char(text[end])):
            return True
        at = text.find(word, at + 1)
    return False


def _is_word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def apply_substitutions(text: str, rel: str, settings: HipifySettings, matched: set[int] | None = None) -> str:
    """The recipe's [[hipify.substitute]] rules, in order, over the whole converted text; the index of each rule
    that found its text goes into `matched` (a rule that never does is reported for the whole tree)."""
    for i, sub in enumerate(settings.substitutions):
        if sub.applies(settings.engine) and glob_match(sub.glob, rel):
            new = re.sub(sub.from_, sub.to, text) if sub.regex else text.replace(sub.from_, sub.to)
            if matched is not None and (new != text or substitution_matches(sub, text)):
                matched.add(i)
            text = new
    return text


def substitution_matches(sub: Substitution, text: str) -> bool:
    """Whether a [[hipify.substitute]] rule's `from` occurs in text."""
    return re.search(sub.from_, text) is not None if sub.regex else sub.from_ in text
