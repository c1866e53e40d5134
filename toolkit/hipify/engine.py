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

import bisect
import re
from dataclasses import dataclass, field

from toolkit.hipify.settings import HipifySettings, glob_match
from toolkit.hipify.tables import Tables

# Bump when a change here changes any output: cached conversions from other versions are redone.
ENGINE_VERSION = "2"

_SCAN = re.compile(
    r"""
     (?P<comment>//[^\n]*(?:\\\n[^\n]*)*|/\*.*?\*/)
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
_HEADER = re.compile(r'[ \t]*(<[^>\n]*>|"[^"\n]*")')
_ARCH_CMP = re.compile(r"\s*(>=|<=|>|<|==|!=)\s*(\d+)")
_FULL_MASK = re.compile(r"^\s*(?:0[xX][fF]{8}[uUlL]*|~0[uU]?|0[xX]FFFFFFFF[uUlL]*)\s*$")
_LANE_MATH = re.compile(r"(?:%|&|/)\s*(?:32|31|0[xX]1[fF])\b(?!\.)|>>\s*5\b")
_FULL_MASK_ANY = re.compile(r"\b0[xX][fF]{8}[uUlL]*\b")
_LANE_WORDS = re.compile(r"threadIdx|lane|warp|Lane|Warp|LANE|WARP|__shfl|__ballot|activemask")
_SHFL = re.compile(r"^__shfl(?:_up|_down|_xor)?_sync$")
_NEW_NAME = re.compile(r"\s*(?:struct|class|enum(?:\s+class)?|union)\s+([A-Za-z_]\w*)")


@dataclass(frozen=True)
class Finding:
    """A CUDA identifier or header left unmapped: where, what, and why."""
    line: int
    name: str
    reason: str


@dataclass(frozen=True)
class Warning:
    """Code that converts but may be wrong on AMD (warp size 64) or was read with a policy."""
    line: int
    kind: str
    message: str


@dataclass
class FileResult:
    text: str
    unmapped: list[Finding] = field(default_factory=list)
    warnings: list[Warning] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)  # names this file defines (macros, types)


class _Lines:
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
            m = _SCAN.match(text, i)
            i = m.end() if m else i + 1
            continue
        if c == "/" and i + 1 < n and text[i + 1] in "/*":
            m = _SCAN.match(text, i)
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


def convert_text(text: str, rel: str, settings: HipifySettings, tables: Tables,
                 detect_only: bool = False) -> FileResult:
    """Convert one file's text. With detect_only, report what is left unmapped without changing it."""
    out: list[str] = []
    result = FileResult(text="")
    lines = _Lines(text)
    skipped_spans: list[tuple[int, int]] = []  # comments and strings, for the warning pass
    copied = 0  # text[copied:] is not yet in out
    pos = 0
    directive_end = -1
    directive_name = ""
    defines = set()
    ids = tables.identifiers

    def emit(start: int, end: int, new: str) -> None:
        nonlocal copied
        out.append(text[copied:start])
        out.append(new)
        copied = end

    def unmapped(at: int, name: str, reason: str) -> None:
        result.unmapped.append(Finding(lines.at(at), name, reason))

    while True:
        m = _SCAN.search(text, pos)
        if m is None:
            break
        kind = m.lastgroup
        start, pos = m.start(), m.end()
        if kind in ("comment", "raw", "string", "char"):
            skipped_spans.append((start, pos))
            continue
        if kind == "directive":
            directive_name = m.group("dname")
            eol = text.find("\n", pos)
            while eol != -1 and text[eol - 1] == "\\":
                eol = text.find("\n", eol + 1)
            directive_end = len(text) if eol == -1 else eol
            if directive_name in ("include", "include_next", "import"):
                pos = _include(text, m.end(), rel, settings, tables, emit, unmapped, detect_only)
            elif directive_name == "define":
                name_m = re.compile(r"[ \t]*([A-Za-z_]\w*)").match(text, pos)
                if name_m:
                    defines.add(name_m.group(1))
                    pos = name_m.end()
            continue
        if kind != "ident":
            continue
        name = m.group()
        if name in ("struct", "class", "enum", "union"):
            new_m = _NEW_NAME.match(text, start)
            if new_m:
                defines.add(new_m.group(1))
            continue
        if name == "using":
            alias = re.compile(r"\s+([A-Za-z_]\w*)\s*=").match(text, pos)
            if alias:
                defines.add(alias.group(1))
            continue
        new = ids.get(name)
        if new is None:
            rule = tables.calls.get(name)
            if rule is not None:
                pos = _call(text, m, rule, lines, result, emit, detect_only)
                continue
            if name in tables.namespaces and (text.startswith("::", _skip_ws(text, pos))
                                              or text[max(0, start - 16):start].rstrip().endswith("namespace")):
                if not detect_only:
                    emit(start, pos, tables.namespaces[name])
                continue
            quals = tables.qualified.get(name)
            if quals:
                qual = _qualifier(text, start)
                if qual in quals:
                    if not detect_only:
                        emit(start, pos, quals[qual].rpartition("::")[2])
                    continue
            if name in tables.unsupported:
                unmapped(start, name, tables.unsupported[name])
            elif tables.is_cuda_identifier(name):
                if _declares(text, start, pos):
                    defines.add(name)
                else:
                    unmapped(start, name, "no HIP mapping known")
            continue
        if start < directive_end and name == "__CUDA_ARCH__" and directive_name in ("if", "elif"):
            cmp = _ARCH_CMP.match(text, pos)
            if cmp and cmp.group(1) in (">=", ">", "<", "<="):
                expr = "defined(__HIP_DEVICE_COMPILE__)"
                if cmp.group(1) in ("<", "<="):
                    expr = "!" + expr
                result.warnings.append(Warning(
                    lines.at(start), "cuda-arch",
                    f"'__CUDA_ARCH__ {cmp.group(1)} {cmp.group(2)}' read as '{expr}': every AMD device pass "
                    "counts as newer than any CUDA compute capability"))
                if not detect_only:
                    emit(start, cmp.end(), expr)
                pos = cmp.end()
                continue
            if cmp:
                result.warnings.append(Warning(
                    lines.at(start), "cuda-arch",
                    f"'__CUDA_ARCH__ {cmp.group(1)} {cmp.group(2)}' compares a CUDA compute capability; "
                    "it has no meaning on AMD"))
        if new != name:
            if detect_only:
                unmapped(start, name, f"left as is (HIP name: {new})")
            else:
                emit(start, pos, new)

    out.append(text[copied:])
    converted = "".join(out)
    if not detect_only and settings.launch_syntax == "hipLaunchKernelGGL" and "<<<" in converted:
        converted = _launches_to_ggl(converted, result)
    if not detect_only:
        converted = apply_substitutions(converted, rel, settings)
        result.unmapped = still_present(result.unmapped, converted)
    result.text = converted
    _lane_warnings(text, skipped_spans, result)
    result.defines = sorted(defines)
    # A name the file defines itself (CUDA_CHECK, a cudaFoo helper) is the project's, not CUDA's.
    result.unmapped = [f for f in result.unmapped if f.name not in defines]
    result.warnings.sort(key=lambda w: (w.line, w.kind))
    return result


_DECL_AFTER = re.compile(r"\s*(?:\(|=(?!=)|;|,|\[|\{|\))")
_NOT_A_TYPE = frozenset({
    "return", "new", "delete", "throw", "case", "goto", "else", "do", "sizeof", "alignof", "decltype",
    "co_return", "co_yield", "co_await", "operator", "and", "or", "not", "typeid", "if", "while", "for",
    "switch",
})


def _declares(text: str, start: int, end: int) -> bool:
    """Whether the name at text[start:end] is being declared: `void cuFoo(`, `T cudaT =`, `auto* cublasLt;`.

    The tree's own functions, variables and parameters that happen to look like CUDA names are the tree's,
    not CUDA's: they are never reported as unmapped.
    """
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
    return bool(word) and word.group(1) not in _NOT_A_TYPE


def still_present(findings: list[Finding], final_text: str) -> list[Finding]:
    """Findings whose name the final text (after the recipe's substitutions) still holds."""
    if not findings:
        return findings
    words = set(re.findall(r"[A-Za-z_]\w*", final_text))
    return [f for f in findings if f.name in words or ("." in f.name and f.name in final_text)]


def apply_substitutions(text: str, rel: str, settings: HipifySettings) -> str:
    """The recipe's [[hipify.substitute]] rules, in order, over the whole converted text."""
    for sub in settings.substitutions:
        if glob_match(sub.glob, rel):
            text = re.sub(sub.from_, sub.to, text) if sub.regex else text.replace(sub.from_, sub.to)
    return text


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    return pos


def _qualifier(text: str, start: int) -> str:
    """The `a::b` qualifier written right before position start ('' when none)."""
    m = re.search(r"((?:[A-Za-z_]\w*\s*::\s*)+)$", text[max(0, start - 200):start])
    if not m:
        return ""
    return re.sub(r"\s+", "", m.group(1))[:-2]


def _include(text, pos, rel, settings, tables, emit, unmapped, detect_only) -> int:
    m = _HEADER.match(text, pos)
    if not m:
        return pos
    token = m.group(1)
    header = token[1:-1]
    start = m.start(1)
    new = tables.map_header(header)
    if new is not None:
        if not detect_only:
            emit(start, m.end(), token[0] + new + token[-1])
        else:
            unmapped(start, header, f"left as is (HIP header: {new})")
    elif header in tables.unsupported_headers:
        unmapped(start, header, tables.unsupported_headers[header])
    elif token[0] == '"' and settings.rename_path(header) != header:
        # A project header that the recipe's path renames move (e.g. "cuda/x.cuh" -> "rocm/x.cuh").
        if not detect_only:
            emit(start, m.end(), f'"{settings.rename_path(header)}"')
    elif tables.is_cuda_header(header):
        unmapped(start, header, "no HIP header known")
    return m.end()


def _call(text, m, rule, lines, result, emit, detect_only) -> int:
    """Rewrite a warp intrinsic call; returns where scanning goes on."""
    name, start, pos = m.group(), m.start(), m.end()
    open_pos = _skip_ws(text, pos)
    parsed = split_args(text, open_pos) if text.startswith("(", open_pos) else None
    if parsed is None:
        if not detect_only:
            emit(start, pos, rule.to)
        return pos
    spans, close = parsed
    line = lines.at(start)
    if _SHFL.match(name) and len(spans) < 4:
        result.warnings.append(Warning(
            line, "shfl-width",
            f"{name} without a width: CUDA's default is 32 lanes, HIP's is warpSize (64 on gfx9 "
            "data-center GPUs); pass the width the algorithm assumes"))
    if spans and (rule.drop_first or rule.args is not None):
        mask = text[spans[0][0]:spans[0][1]]
        if _FULL_MASK.match(mask):
            result.warnings.append(Warning(
                line, "lane-mask",
                f"{name} with the full 32-bit lane mask '{mask.strip()}' assumes 32 lanes; "
                "the converted call covers the whole wavefront (64 lanes on gfx9)"))
        elif rule.drop_first:
            result.warnings.append(Warning(
                line, "lane-mask",
                f"{name}: lane mask '{mask.strip()}' dropped; on AMD every lane of the wavefront takes part"))
    if detect_only:
        result.unmapped.append(Finding(line, name, f"left as is (HIP: {rule.to})"))
        return pos
    if rule.args is not None:
        emit(start, close + 1, f"{rule.to}({rule.args})")
        return close + 1
    if len(spans) <= 1:
        emit(start, close, f"{rule.to}(")
        return close
    rest = spans[1][0]
    while text[rest] in " \t\n":
        rest += 1
    emit(start, rest, f"{rule.to}(")
    return rest


def _lane_warnings(text: str, skipped: list[tuple[int, int]], result: FileResult) -> None:
    """Literal 32-lane arithmetic and full 32-bit masks on lines that talk about lanes or warps."""
    if "32" not in text and "31" not in text and ">>" not in text and "0x" not in text.lower():
        return
    starts = [s for s, _ in skipped]
    seen = {(w.line, w.kind) for w in result.warnings}

    def in_skipped(pos: int) -> bool:
        i = bisect.bisect_right(starts, pos) - 1
        return i >= 0 and skipped[i][0] <= pos < skipped[i][1]

    lines = _Lines(text)
    hits = [(m.start(), "lane-math", m.group()) for m in _LANE_MATH.finditer(text)]
    hits += [(m.start(), "lane-mask", m.group()) for m in _FULL_MASK_ANY.finditer(text)]
    for at, kind, snippet in sorted(hits):
        if in_skipped(at):
            continue
        bol = text.rfind("\n", 0, at) + 1
        eol = text.find("\n", at)
        line_text = text[bol:eol if eol != -1 else len(text)]
        if not _LANE_WORDS.search(line_text):
            continue
        line = lines.at(at)
        if (line, kind) in seen:
            continue
        seen.add((line, kind))
        if kind == "lane-math":
            msg = (f"'{snippet.strip()}' is 32-lane arithmetic; AMD wavefronts have warpSize lanes "
                   "(64 on gfx9, 32 on gfx10+): use warpSize")
        else:
            msg = f"'{snippet}' is a full 32-bit lane mask; wave64 needs 64 bits (use a 64-bit mask or __ballot)"
        result.warnings.append(Warning(line, kind, msg))


# -- kernel launches ------------------------------------------------------------------------------

def _launches_to_ggl(text: str, result: FileResult) -> str:
    positions = []
    pos = 0
    while True:
        m = _SCAN.search(text, pos)
        if m is None:
            break
        pos = m.end()
        if m.lastgroup == "launch":
            positions.append(m.start())
    for at in reversed(positions):
        rewritten = _launch_at(text, at)
        if rewritten is None:
            result.unmapped.append(Finding(text.count("\n", 0, at) + 1, "<<<",
                                           "kernel launch not understood; left as <<<>>>"))
            continue
        start, end, new = rewritten
        text = text[:start] + new + text[end:]
    return text


def _launch_at(text: str, at: int) -> tuple[int, int, str] | None:
    # The kernel expression before '<<<': a qualified name, optionally with template arguments.
    j = at
    while j > 0 and text[j - 1] in " \t\n":
        j -= 1
    if j > 0 and text[j - 1] == ">":
        depth = 0
        while j > 0:
            j -= 1
            if text[j] == ">":
                depth += 1
            elif text[j] == "<":
                depth -= 1
                if depth == 0:
                    break
        if depth != 0:
            return None
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_:"):
        j -= 1
    kernel = text[j:at].strip()
    if not kernel or not (kernel[0].isalpha() or kernel[0] in "_:"):
        return None
    # The launch configuration up to '>>>'.
    i = at + 3
    depth = 0
    parts, part_start = [], i
    while i < len(text):
        if text.startswith(">>>", i) and depth == 0:
            parts.append(text[part_start:i].strip())
            break
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[part_start:i].strip())
            part_start = i + 1
        i += 1
    else:
        return None
    if not 2 <= len(parts) <= 4:
        return None
    open_pos = i + 3
    while open_pos < len(text) and text[open_pos] in " \t\n":
        open_pos += 1
    if not text.startswith("(", open_pos):
        return None
    parsed = split_args(text, open_pos)
    if parsed is None:
        return None
    spans, close = parsed
    grid, block = parts[0], parts[1]
    shmem = parts[2] if len(parts) > 2 else "0"
    stream = parts[3] if len(parts) > 3 else "0"
    if "<" in kernel:
        kernel = f"({kernel})"
    args = "".join(f", {text[s:e].strip()}" for s, e in spans)
    return j, close + 1, f"hipLaunchKernelGGL({kernel}, dim3({grid}), dim3({block}), {shmem}, {stream}{args})"
