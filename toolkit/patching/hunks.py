"""Placing hunks in one file's lines and computing the patched content, in memory.

How a hunk is placed (the rules GNU patch made familiar, kept small and deterministic):
- Search for the hunk's old lines (context and removed) nearest to its header's line plus the offset
  the previous hunk of the file needed (at equal distance the later place wins, as +1 before -1),
  never before the end of the previous hunk: hunks stay in order and never overlap.
- Fuzz: if no exact place exists, drop up to F leading and trailing context lines (F = 1, then 2) and
  search again. The dropped lines are not checked and are left as the file has them.

Whitespace and line endings, decided deliberately:
- Line endings do not take part in matching: a patch written with LF lines applies to a file with
  CRLF lines and the other way round. All other whitespace (trailing blanks, tabs, indentation) is
  content and must match: C/C++ sources are compared exactly, and a whitespace drift is reported like
  any other drift instead of being papered over.
- The patched file keeps its own line endings: context lines are copied from the file, not from the
  patch, and added lines get the ending most of the file's lines use (CRLF if more lines end in CRLF
  than in LF). A file the patch creates gets the patch's endings byte for byte. When file and patch
  disagree, the analysis says so ("CRLF file, LF patch").
- "\\ No newline at end of file" is honoured for added lines: such a line is written without one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from toolkit.patching.diff import FileDiff, Hunk, Line, split_lines, strip_eol

MAX_FUZZ = 2
NEAR_WINDOW = 40  # how far around the expected place a failure report looks for the closest text


@dataclass(frozen=True)
class Placement:
    """Where one hunk goes, or that it goes nowhere."""

    number: int  # 1-based hunk number in its file
    hunk: Hunk
    pos: int | None  # 0-based index in the file of the first line of `core`; None: not found
    core: tuple[Line, ...]  # the hunk's lines that were matched (fewer than all with fuzz)
    offset: int  # lines between where the header says and where it was found
    fuzz: int
    expected: int  # 0-based index the header (plus earlier offsets) pointed at

    @property
    def found(self) -> bool:
        return self.pos is not None


@dataclass
class FileOutcome:
    """All hunks of one file placed (or not), and the content the file would get."""

    placements: list[Placement] = field(default_factory=list)
    new_data: bytes | None = None  # None with ok: the file is deleted
    ok: bool = False
    problem: str | None = None  # a whole-file problem (missing, exists, left-over content)
    eol_note: str | None = None
    partial_data: bytes | None = None  # with hunks failing: the file with the hunks that do apply

    @property
    def failed(self) -> list[Placement]:
        return [p for p in self.placements if not p.found]


def keys_of(lines: list[bytes]) -> list[bytes]:
    return [strip_eol(ln)[0] for ln in lines]


def dominant_eol(lines: list[bytes]) -> bytes | None:
    crlf = sum(1 for ln in lines if ln.endswith(b"\r\n"))
    lf = sum(1 for ln in lines if ln.endswith(b"\n")) - crlf
    if crlf > lf:
        return b"\r\n"
    if lf:
        return b"\n"
    return None


def _patch_eol(fd: FileDiff) -> bytes | None:
    ends = [ln.eol for h in fd.hunks for ln in h.lines if ln.eol]
    if not ends:
        return None
    return b"\r\n" if ends.count(b"\r\n") > len(ends) // 2 else b"\n"


def _expected_index(hunk: Hunk) -> int:
    # "@@ -5,0 ..." inserts after line 5; "@@ -5,3 ..." starts at line 5.
    return hunk.old_start if hunk.old_len == 0 else hunk.old_start - 1


def _index(keys: list[bytes]) -> dict[bytes, list[int]]:
    index: dict[bytes, list[int]] = {}
    for pos, key in enumerate(keys):
        index.setdefault(key, []).append(pos)
    return index


def _search(keys: list[bytes], index: dict[bytes, list[int]], old: list[bytes], start: int,
            min_pos: int) -> int | None:
    """The place nearest `start` (ties: the later one) at or after min_pos where `old` matches."""
    last = len(keys) - len(old)
    if not old:  # nothing to match (pure insertion without context): only where the header says
        return min(max(start, min_pos), len(keys))
    if last < min_pos:
        return None
    # Only places where the hunk's rarest line sits can match: look those up instead of scanning.
    j, rare = min(enumerate(old), key=lambda item: len(index.get(item[1], ())))
    candidates = [pos - j for pos in index.get(rare, ()) if min_pos <= pos - j <= last]
    candidates.sort(key=lambda pos: (abs(pos - start), -pos))
    for pos in candidates:
        if keys[pos:pos + len(old)] == old:
            return pos
    return None


def place(keys: list[bytes], index: dict[bytes, list[int]], hunk: Hunk, number: int, carry: int, min_pos: int,
          max_fuzz: int) -> Placement:
    header_pos = _expected_index(hunk)
    expected = header_pos + carry
    lines = hunk.lines
    lead = next((i for i, ln in enumerate(lines) if ln.tag != " "), len(lines))
    trail = next((i for i, ln in enumerate(reversed(lines)) if ln.tag != " "), len(lines))
    for fuzz in range(0, max_fuzz + 1):
        drop_l, drop_t = min(fuzz, lead), min(fuzz, trail)
        if fuzz and not (drop_l == fuzz or drop_t == fuzz):
            break  # no context left to drop: more fuzz cannot change anything
        core = lines[drop_l:len(lines) - drop_t]
        old = [ln.text for ln in core if ln.tag != "+"]
        pos = _search(keys, index, old, expected + drop_l, min_pos)
        if pos is not None:
            return Placement(number, hunk, pos, core, pos - drop_l - header_pos, fuzz, expected)
    return Placement(number, hunk, None, lines, 0, 0, expected)


def place_all(data: bytes, fd: FileDiff, max_fuzz: int) -> tuple[list[bytes], list[Placement]]:
    lines = split_lines(data)
    keys = keys_of(lines)
    index = _index(keys)
    carry = 0
    min_pos = 0
    out: list[Placement] = []
    for number, hunk in enumerate(fd.hunks, start=1):
        p = place(keys, index, hunk, number, carry, min_pos, max_fuzz)
        out.append(p)
        if p.pos is not None:
            carry = p.offset
            min_pos = p.pos + sum(1 for ln in p.core if ln.tag != "+")
    return lines, out


def build(lines: list[bytes], placements: list[Placement], fallback_eol: bytes | None) -> bytes:
    """The file with every found hunk applied; added lines take the file's dominant line ending."""
    eol = dominant_eol(lines) or fallback_eol or b"\n"
    out: list[bytes] = []
    cursor = 0
    for p in placements:
        if p.pos is None:
            continue
        out.extend(lines[cursor:p.pos])
        at = p.pos
        for ln in p.core:
            if ln.tag == " ":
                out.append(lines[at])
                at += 1
            elif ln.tag == "-":
                at += 1
            else:
                out.append(ln.text + (eol if ln.eol else b""))
        cursor = at
    out.extend(lines[cursor:])
    return b"".join(out)


def apply_file(data: bytes | None, fd: FileDiff, max_fuzz: int) -> FileOutcome:
    """Patch one file's content (None: the file does not exist) in memory."""
    result = FileOutcome()
    if fd.creates:
        if data:
            result.problem = "exists"
            return result
        data = b""
    elif data is None:
        result.problem = "missing"
        return result
    lines, placements = place_all(data, fd, max_fuzz)
    result.placements = placements
    if result.failed:
        result.partial_data = build(lines, placements, _patch_eol(fd))
        return result
    patch_eol = _patch_eol(fd)
    new = build(lines, placements, patch_eol)
    file_eol = dominant_eol(lines)
    if file_eol and patch_eol and file_eol != patch_eol:
        name = {b"\r\n": "CRLF", b"\n": "LF"}
        result.eol_note = (f"{name[file_eol]} file, {name[patch_eol]} patch: the file keeps its "
                           f"{name[file_eol]} line endings")
    if fd.deletes:
        if new:
            result.problem = "leftover"
            return result
        result.new_data = None
    else:
        result.new_data = new
    result.ok = True
    return result


def nearest_text(data: bytes, old: list[bytes], expected: int) -> tuple[int, list[bytes]]:
    """The place near `expected` whose lines agree most with `old`: (0-based start, its lines)."""
    lines = split_lines(data)
    keys = keys_of(lines)
    size = max(len(old), 1)
    best, best_score = min(max(expected, 0), max(len(keys) - size, 0)), -1
    lo = max(0, expected - NEAR_WINDOW)
    hi = min(max(len(keys) - size, 0), expected + NEAR_WINDOW)
    for pos in sorted(range(lo, hi + 1), key=lambda p: (abs(p - expected), p)):
        score = sum(1 for i, k in enumerate(old) if pos + i < len(keys) and keys[pos + i] == k)
        if score > best_score:
            best, best_score = pos, score
    return best, keys[best:best + size]
