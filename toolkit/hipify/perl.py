"""ROCm's hipify-perl as the engine, for recipes that ask for it (what ORT itself used).

Its failures are never ignored: a non-zero exit or an empty output for a non-empty input is an error
naming the file and quoting hipify-perl's stderr; its warnings are carried into the report, and the
output is scanned with the built-in tables for CUDA names hipify-perl left behind.

hipify-perl takes up to seconds per file (its regexes run over the whole text once per CUDA name), so what it
printed for an input is kept in the toolkit cache, keyed by the script's and the input's content: another work
tree of the same sources (a second `compile-check --engine both`, a fresh build folder) reads it back. Its
warnings name the file's path, which is stored as a placeholder and put back on reading.

Those warnings (names deprecated, removed or unsupported, found line by line) are most of its time: 1.52 s for
a 110-line kernel file, 0.06 s without them. `perl_warnings = false` runs it with -quiet-warnings: the same
output, no warnings (the names it leaves are still found by the scan of its output).
"""

from __future__ import annotations

import difflib
import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from toolkit.hipify.engine import FileResult, Warning, apply_substitutions, convert_text, still_present
from toolkit.hipify.tables import Tables
from toolkit.recipe.hipify import HipifySettings
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import atomic_write_text, keyed_record, read_json, sha256_bytes, sha256_file
from toolkit.util.process import run

_WARNING = re.compile(r"(?:warning|error)\s*:\s*\S*?:#?(\d+)\s*:?\s*(.*)")
_PATH = "\0path\0"   # the input's path in a kept stderr: no file path holds a NUL


@dataclass(frozen=True)
class PerlRun:
    """hipify-perl as a worker runs it: the executable, its content digest, its options, and the folder of kept
    outputs (None: nothing kept)."""
    exe: str
    digest: str
    options: tuple[str, ...]
    cache: str | None

    @classmethod
    def find(cls, settings: HipifySettings, cache: Path | None) -> PerlRun:
        exe = find_hipify_perl(settings.hipify_perl)
        options = () if settings.perl_warnings else ("-quiet-warnings",)
        return cls(exe, sha256_file(Path(exe)), options, str(cache) if cache is not None else None)


def find_hipify_perl(setting: str) -> str:
    found = shutil.which(setting)
    if found is None:
        raise ToolkitError(
            f"hipify engine 'hipify-perl' requested, but '{setting}' was not found",
            "install ROCm's hipify (it ships bin/hipify-perl), set hipify.hipify_perl to its path, "
            "or use the built-in engine (hipify.engine = \"builtin\")")
    return found


def convert_with_perl(perl: PerlRun, path: Path, data: bytes, text: str, rel: str, settings: HipifySettings,
                      tables: Tables) -> FileResult:
    stdout, stderr = _run(perl, Path(path).absolute(), data, rel)
    if text.strip() and not stdout.strip():
        raise ToolkitError(f"hipify-perl produced no output for {rel}:\n{_tail(stderr)}")
    leftovers = convert_text(stdout, rel, settings, tables, detect_only=True)
    matched: set[int] = set()
    text_out = apply_substitutions(stdout, rel, settings, matched)
    # The scan read hipify-perl's output, which has lines of its own (the HIP include it adds): a finding
    # names the line of the source it came from.
    source_line = _source_lines(text, stdout)
    unmapped = [replace(f, line=source_line(f.line)) for f in still_present(leftovers.unmapped, text_out)]
    result = FileResult(text_out, unmapped, [replace(w, line=source_line(w.line)) for w in leftovers.warnings],
                        leftovers.defines, sorted(matched))
    for line in stderr.splitlines():
        m = _WARNING.search(line)
        if m:
            result.warnings.append(Warning(int(m.group(1)), "hipify-perl", m.group(2).strip()))
        elif line.strip():
            result.warnings.append(Warning(0, "hipify-perl", line.strip()))
    return result


def _source_lines(source: str, output: str) -> Callable[[int], int]:
    """Output line -> source line (1-based), from a diff of the two: a line hipify-perl rewrote keeps its place,
    a line it added (an #include) is named by the source line that follows it."""
    ours, theirs = source.splitlines(), output.splitlines()
    where = {}
    matcher = difflib.SequenceMatcher(None, ours, theirs, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        for k in range(j2 - j1):
            if tag == "insert":
                where[j1 + k + 1] = min(i1 + 1, max(len(ours), 1))
            else:  # equal or replace (a rewritten line, or a block of them)
                where[j1 + k + 1] = min(i1 + k, i2 - 1) + 1
    return lambda line: where.get(line, line)


def _run(perl: PerlRun, path: Path, data: bytes, rel: str) -> tuple[str, str]:
    """hipify-perl's stdout and stderr for the input at `path` (bytes `data`): kept ones, else a run's."""
    key = sha256_bytes("\0".join(["hipify-perl", perl.digest, *perl.options, sha256_bytes(data)]).encode())
    kept = keyed_record(Path(perl.cache), key) if perl.cache else None
    found = read_json(kept) if kept else None
    if isinstance(found, dict) and isinstance(found.get("stdout"), str) and isinstance(found.get("stderr"), str):
        return found["stdout"], found["stderr"].replace(_PATH, str(path))
    proc = run([perl.exe, *perl.options, path], f"hipify-perl on {rel}",
               hint="fix the input, exclude the file with a reason, or use the built-in engine")
    if kept is not None:
        atomic_write_text(kept, json.dumps({"stdout": proc.stdout, "stderr": proc.stderr.replace(str(path), _PATH)}))
    return proc.stdout, proc.stderr


def _tail(stderr: str, lines: int = 20) -> str:
    kept = stderr.strip().splitlines()[-lines:]
    return "\n".join(f"  {line}" for line in kept) or "  (no output on stderr)"
