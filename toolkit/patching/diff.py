"""Unified diffs as data: a parser for patch files and a writer for refresh.

Everything is bytes: a patch is applied to files whose encoding we do not know, and line endings are
part of the content (see hunks.py for how CRLF is treated). Accepted input: plain `diff -u` output,
`git diff` / `git format-patch` output (a mail header and message before the first diff, extended
headers: new/deleted file mode, old/new mode, rename from/to, index), "\\ No newline at end of file"
markers. Binary patches are refused with a message naming the file. Hunk bodies are read by the line
counts of their `@@` header, so a format-patch signature ("-- ") after the last hunk is not taken as a
removed line.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field, replace

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
_GIT_HEADER = re.compile(rb"^diff --git (\S+|\"[^\"]*\") (\S+|\"[^\"]*\")$")
DEV_NULL = "/dev/null"


class DiffSyntaxError(Exception):
    """A patch file that is not a readable unified diff; `line` is 1-based."""

    def __init__(self, line: int, message: str):
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


@dataclass(frozen=True)
class Line:
    tag: str  # " " context, "-" removed, "+" added
    text: bytes  # without its line ending
    eol: bytes  # b"\n", b"\r\n", or b"" when followed by "\ No newline at end of file"


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    section: str  # text after the second @@ (a function name, usually)
    lines: tuple[Line, ...]
    patch_line: int  # line of the @@ header in the patch file

    @property
    def header(self) -> str:
        def rng(start: int, length: int) -> str:
            return f"{start}" if length == 1 else f"{start},{length}"
        return f"@@ -{rng(self.old_start, self.old_len)} +{rng(self.new_start, self.new_len)} @@{self.section}"

    def old_lines(self) -> list[Line]:
        return [ln for ln in self.lines if ln.tag != "+"]

    def new_lines(self) -> list[Line]:
        return [ln for ln in self.lines if ln.tag != "-"]

    def reversed(self) -> Hunk:
        swap = {"+": "-", "-": "+", " ": " "}
        return Hunk(self.new_start, self.new_len, self.old_start, self.old_len, self.section,
                    tuple(Line(swap[ln.tag], ln.text, ln.eol) for ln in self.lines), self.patch_line)


@dataclass(frozen=True)
class FileDiff:
    old_path: str | None  # as written in the header (prefix included); None for /dev/null
    new_path: str | None
    hunks: tuple[Hunk, ...]
    patch_line: int  # first header line of this file in the patch
    old_mode: int | None = None
    new_mode: int | None = None
    rename: bool = False

    @property
    def creates(self) -> bool:
        return self.old_path is None

    @property
    def deletes(self) -> bool:
        return self.new_path is None

    def reversed(self) -> FileDiff:
        return replace(self, old_path=self.new_path, new_path=self.old_path, old_mode=self.new_mode,
                       new_mode=self.old_mode, hunks=tuple(h.reversed() for h in self.hunks))


@dataclass(frozen=True)
class Patch:
    preamble: bytes  # everything before the first file header (a commit message, say)
    files: tuple[FileDiff, ...] = field(default=())


def split_lines(data: bytes) -> list[bytes]:
    """Lines with their endings kept; only b"\\n" ends a line, a lone b"\\r" is content."""
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def strip_eol(line: bytes) -> tuple[bytes, bytes]:
    if line.endswith(b"\r\n"):
        return line[:-2], b"\r\n"
    if line.endswith(b"\n"):
        return line[:-1], b"\n"
    return line, b""


def _unquote(path: bytes) -> str:
    """git C-quotes paths with unusual characters: "a/with\\ttab"."""
    if len(path) >= 2 and path.startswith(b'"') and path.endswith(b'"'):
        return path[1:-1].decode("unicode_escape").encode("latin-1").decode("utf-8", "surrogateescape")
    return path.decode("utf-8", "surrogateescape")


def _header_path(rest: bytes) -> str | None:
    rest = rest.rstrip(b"\r")
    if not rest.startswith(b'"'):
        rest = rest.split(b"\t", 1)[0]  # diff -u appends "\t<timestamp>"
    path = _unquote(rest.strip())
    return None if path == DEV_NULL else path


def _epoch(header: bytes) -> bool:
    stamp = header.split(b"\t", 1)[1] if b"\t" in header else b""
    return stamp.startswith(b"1970-01-01 ") or stamp.startswith(b"1969-12-31 ")


def parse_patch(data: bytes) -> Patch:
    lines = split_lines(data)
    n = len(lines)
    i = 0
    files: list[FileDiff] = []
    preamble_end: int | None = None
    while i < n:
        line = _text(lines, i)
        starts_git = line.startswith(b"diff --git ")
        starts_plain = line.startswith(b"--- ") and i + 1 < n and _text(lines, i + 1).startswith(b"+++ ")
        if not (starts_git or starts_plain):
            if preamble_end is not None and line.startswith(b"@@ "):
                raise DiffSyntaxError(i + 1, "hunk header outside of a file's diff")
            if preamble_end is not None and line.startswith(b"GIT binary patch"):
                raise DiffSyntaxError(i + 1, "binary patches are not supported")
            i += 1
            continue
        if preamble_end is None:
            preamble_end = i
        fd, i = _parse_file(lines, i, starts_git)
        files.append(fd)
    if not files:
        raise DiffSyntaxError(1, "no file diff in it (expected '--- a/FILE' and '+++ b/FILE' lines)")
    if preamble_end and lines[preamble_end - 1].startswith(b"diff "):
        preamble_end -= 1  # `diff -ruN old new` names the command that made the first file's diff
    preamble = b"".join(lines[:preamble_end]) if preamble_end else b""
    return Patch(preamble, tuple(files))


def _text(lines: list[bytes], k: int) -> bytes:
    return strip_eol(lines[k])[0]


@dataclass
class _Header:
    """What a file diff's header lines say, as far as they have been read."""
    old_path: str | None = None
    new_path: str | None = None
    old_mode: int | None = None
    new_mode: int | None = None
    rename: bool = False
    creates: bool = False
    deletes: bool = False


def _parse_file(lines: list[bytes], start: int, starts_git: bool) -> tuple[FileDiff, int]:
    """One file's diff from its first header line; returns it and the index of the line after it."""
    n = len(lines)
    h = _Header()
    i = _read_git_header(lines, start, h) if starts_git else start
    have_paths = False
    old_epoch = new_epoch = False
    if i < n and _text(lines, i).startswith(b"--- "):
        if not (i + 1 < n and _text(lines, i + 1).startswith(b"+++ ")):
            raise DiffSyntaxError(i + 2, "expected a '+++ ' line after the '--- ' line")
        h.old_path = _header_path(_text(lines, i)[4:])
        h.new_path = _header_path(_text(lines, i + 1)[4:])
        old_epoch, new_epoch = _epoch(_text(lines, i)), _epoch(_text(lines, i + 1))
        have_paths = True
        i += 2
    hunks: list[Hunk] = []
    while i < n and _text(lines, i).startswith(b"@@ "):
        if not have_paths and not starts_git:
            raise DiffSyntaxError(i + 1, "hunk without '--- ' / '+++ ' file lines")
        hunk, i = _parse_hunk(lines, i)
        hunks.append(hunk)
    if not starts_git and len(hunks) == 1:
        # `diff -N` names an absent file with its path and an epoch timestamp, and a 0,0 range.
        if old_epoch and hunks[0].old_start == 0 and hunks[0].old_len == 0:
            h.old_path = None
        if new_epoch and hunks[0].new_start == 0 and hunks[0].new_len == 0:
            h.new_path = None
    if h.old_path is None and h.new_path is None:
        raise DiffSyntaxError(start + 1, "a file diff with neither an old nor a new file")
    if (h.old_path is None or h.new_path is None) and not hunks and not (h.creates or h.deletes):
        raise DiffSyntaxError(start + 1, "a file diff without hunks")
    if not hunks and not h.rename and h.old_mode is None and h.new_mode is None and not (h.creates or h.deletes):
        raise DiffSyntaxError(start + 1, f"no hunks for {h.new_path or h.old_path}")
    return FileDiff(h.old_path, h.new_path, tuple(hunks), start + 1, h.old_mode, h.new_mode, h.rename), i


def _read_git_header(lines: list[bytes], i: int, h: _Header) -> int:
    """The `diff --git` line and git's extended header lines after it; returns the index after them."""
    m = _GIT_HEADER.match(_text(lines, i))
    if m:
        h.old_path, h.new_path = _unquote(m.group(1)), _unquote(m.group(2))
    i += 1
    while i < len(lines):
        line = _text(lines, i)
        if line.startswith(b"diff --git ") or line.startswith(b"--- ") or line.startswith(b"@@ "):
            break
        if not _extended_header(line, i, h):
            break  # end of this header (the next commit's mail, say)
        i += 1
    if h.creates:
        h.old_path = None
    if h.deletes:
        h.new_path = None
    return i


def _extended_header(line: bytes, i: int, h: _Header) -> bool:
    """Read one git extended header line into h; False when the line is not one."""
    if line.startswith(b"new file mode "):
        h.creates, h.new_mode = True, _new_mode(line, i, h)
    elif line.startswith(b"deleted file mode "):
        h.deletes, h.old_mode = True, _read_mode(line, i)
    elif line.startswith(b"old mode "):
        h.old_mode = _read_mode(line, i)
    elif line.startswith(b"new mode "):
        h.new_mode = _new_mode(line, i, h)
    elif line.startswith(b"rename from "):
        h.rename, h.old_path = True, _unquote(b"a/" + line[len(b"rename from "):])
    elif line.startswith(b"rename to "):
        h.rename, h.new_path = True, _unquote(b"b/" + line[len(b"rename to "):])
    elif line.startswith(b"copy from ") or line.startswith(b"copy to "):
        raise DiffSyntaxError(i + 1, "git copies are not supported; write the new file as a creation")
    elif line.startswith(b"Binary files ") or line.startswith(b"GIT binary patch"):
        raise DiffSyntaxError(i + 1, f"binary patch for {h.new_path or h.old_path} is not supported")
    elif not (line.startswith(b"index ") or line.startswith(b"similarity index ")
              or line.startswith(b"dissimilarity index ")):
        return False
    return True


# The only modes a patch may give a file: a regular file, executable or not. A symlink (120000) would be
# written as a file holding its target, and setuid/setgid/sticky bits or a device type have no place in a
# source tree (archives strip them too).
APPLIED_MODES = (0o100644, 0o100755)


def _read_mode(line: bytes, i: int) -> int:
    word = line.split()[-1]
    try:
        return int(word, 8)
    except ValueError:
        raise DiffSyntaxError(i + 1, f"bad file mode {word[:20].decode('utf-8', 'replace')!r} (expected octal "
                                     "such as 100644)") from None


def _new_mode(line: bytes, i: int, h: _Header) -> int:
    mode = _read_mode(line, i)
    if mode not in APPLIED_MODES:
        path = str(h.new_path or h.old_path)
        path = path[2:] if path.startswith(("a/", "b/")) else path
        raise DiffSyntaxError(i + 1, f"mode {mode:o} for {path} is refused: only 100644 and "
                                     "100755 are applied (no symlink, setuid/setgid/sticky bit or device file)")
    return mode


def _parse_hunk(lines: list[bytes], i: int) -> tuple[Hunk, int]:
    header = strip_eol(lines[i])[0]
    m = _HUNK.match(header)
    if not m:
        raise DiffSyntaxError(i + 1, f"bad hunk header {header.decode('utf-8', 'replace')!r}")
    old_start, new_start = int(m.group(1)), int(m.group(3))
    old_len = int(m.group(2)) if m.group(2) is not None else 1
    new_len = int(m.group(4)) if m.group(4) is not None else 1
    section = m.group(5).decode("utf-8", "replace").rstrip("\r")
    body: list[Line] = []
    old_left, new_left = old_len, new_len
    header_line = i + 1
    i += 1
    while old_left > 0 or new_left > 0:
        if i >= len(lines):
            raise DiffSyntaxError(i, f"hunk at line {header_line} ends early: {old_left} old and "
                                     f"{new_left} new lines missing (a truncated or hand-edited patch?)")
        content, eol = strip_eol(lines[i])
        tag = content[:1].decode("latin-1") if content else " "  # an empty line: context whose space was stripped
        if tag == "\\":  # "\ No newline at end of file" belongs to the line before it
            if body:
                body[-1] = replace(body[-1], eol=b"")
            i += 1
            continue
        if tag not in " -+":
            raise DiffSyntaxError(i + 1, f"unexpected line in hunk at line {header_line} "
                                         f"(expected ' ', '-' or '+' first): {content[:60]!r}")
        if tag in " -":
            old_left -= 1
        if tag in " +":
            new_left -= 1
        if old_left < 0 or new_left < 0:
            raise DiffSyntaxError(i + 1, f"hunk at line {header_line} has more lines than its header says")
        body.append(Line(tag, content[1:], eol))
        i += 1
    if i < len(lines) and lines[i].startswith(b"\\"):
        i += 1
        body[-1] = replace(body[-1], eol=b"")
    return Hunk(old_start, old_len, new_start, new_len, section, tuple(body), header_line), i


# -- writing ----------------------------------------------------------------------------------------

def _range(index: int, length: int) -> str:
    """A hunk range from a 0-based start index; an empty range names the line it follows."""
    if length == 0:
        return f"{index},0"
    if length == 1:
        return f"{index + 1}"
    return f"{index + 1},{length}"


def _emit(out: list[bytes], tag: bytes, line: bytes) -> None:
    out.append(tag + line)
    if not line.endswith(b"\n"):
        out.append(b"\n\\ No newline at end of file\n")


def write_file_diff(path: str, old: bytes | None, new: bytes | None, old_mode: int | None = None,
                    new_mode: int | None = None, context: int = 3) -> bytes:
    """A git-style unified diff of one file with a/ b/ headers, `context` lines, no timestamps.

    old None: the file is created; new None: it is deleted. Returns b"" when nothing changed.
    """
    if old == new and old_mode == new_mode:
        return b""
    out: list[bytes] = [f"diff --git a/{path} b/{path}\n".encode()]
    if old is None:
        out.append(f"new file mode {new_mode or 0o100644:o}\n".encode())
    elif new is None:
        out.append(f"deleted file mode {old_mode or 0o100644:o}\n".encode())
    elif old_mode != new_mode and old_mode is not None and new_mode is not None:
        out.append(f"old mode {old_mode:o}\nnew mode {new_mode:o}\n".encode())
    if old == new:
        return b"".join(out)
    a = split_lines(old or b"")
    b = split_lines(new or b"")
    out.append(b"--- /dev/null\n" if old is None else f"--- a/{path}\n".encode())
    out.append(b"+++ /dev/null\n" if new is None else f"+++ b/{path}\n".encode())
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        out.append(f"@@ -{_range(i1, i2 - i1)} +{_range(j1, j2 - j1)} @@\n".encode())
        for tag, ai1, ai2, bj1, bj2 in group:
            if tag == "equal":
                for ln in a[ai1:ai2]:
                    _emit(out, b" ", ln)
                continue
            for ln in a[ai1:ai2]:
                _emit(out, b"-", ln)
            for ln in b[bj1:bj2]:
                _emit(out, b"+", ln)
    return b"".join(out)
