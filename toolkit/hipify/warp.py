"""Warp-size hazards: warp intrinsic calls rewritten, and code that assumes 32 lanes flagged.

CUDA warps have 32 lanes; AMD wavefronts have warpSize lanes (64 on gfx9 data-center GPUs). Code
that converts cleanly can still be wrong there, so each hazard found becomes a warning, never an edit.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

from toolkit.hipify.lexer import SKIPPED, Lines, skip_ws, split_args
from toolkit.hipify.results import FileResult, Finding, Warning
from toolkit.hipify.tables import CallRule

_FULL_MASK = re.compile(r"^\s*(?:0[xX][fF]{8}[uUlL]*|~0[uU]?|0[xX]FFFFFFFF[uUlL]*)\s*$")
# Both start with a character set or a literal, so the regex engine skips ahead to candidates quickly.
_LANE_MATH = re.compile(r"[%&/>](?:(?<=[%&/])\s*(?:32|31|0[xX]1[fF])\b(?!\.)|(?<=>)>\s*5\b)")
_FULL_MASK_ANY = re.compile(r"0(?<!\w0)[xX][fF]{8}[uUlL]*\b")
_LANE_WORDS = re.compile(r"threadIdx|lane|warp|Lane|Warp|LANE|WARP|__shfl|__ballot|activemask")
_SHFL = re.compile(r"^__shfl(?:_up|_down|_xor)?_sync$")


def rewrite_call(text: str, m: re.Match[str], rule: CallRule, lines: Lines, result: FileResult,
                 emit: Callable[[int, int, str], None], detect_only: bool) -> int:
    """Rewrite a warp intrinsic call; returns where scanning goes on."""
    name, start, pos = m.group("ident"), m.start("ident"), m.end("ident")
    open_pos = skip_ws(text, pos)
    parsed = split_args(text, open_pos) if text.startswith("(", open_pos) else None
    if parsed is None:
        if not detect_only:
            emit(start, pos, rule.to)
        return pos
    spans, close = parsed
    line = lines.at(start)
    _call_warnings(text, name, rule, spans, line, result)
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


def _call_warnings(text: str, name: str, rule: CallRule, spans: list[tuple[int, int]], line: int,
                   result: FileResult) -> None:
    """A shuffle without a width, and a lane mask that is dropped or assumes 32 lanes."""
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


def lane_warnings(text: str, result: FileResult) -> None:
    """Literal 32-lane arithmetic and full 32-bit masks on lines that talk about lanes or warps (not in
    comments or string literals)."""
    hits = [(m.start(), "lane-math", m.group()) for m in _LANE_MATH.finditer(text)]
    hits += [(m.start(), "lane-mask", m.group()) for m in _FULL_MASK_ANY.finditer(text)]
    if not hits:
        return
    seen = {(w.line, w.kind) for w in result.warnings}
    skipped: list[tuple[int, int]] | None = None  # comment and literal spans, found only when needed
    lines = Lines(text)
    for at, kind, snippet in sorted(hits):
        bol = text.rfind("\n", 0, at) + 1
        eol = text.find("\n", at)
        if not _LANE_WORDS.search(text, bol, eol if eol != -1 else len(text)):
            continue
        if skipped is None:
            skipped = [m.span() for m in SKIPPED.finditer(text)]
            starts = [s for s, _ in skipped]
        i = bisect.bisect_right(starts, at) - 1
        if i >= 0 and skipped[i][0] <= at < skipped[i][1]:
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
