"""ROCm's hipify-perl as the engine, for recipes that ask for it (what ORT itself used).

Its failures are never ignored: a non-zero exit or an empty output for a non-empty input is an error
naming the file and quoting hipify-perl's stderr; its warnings are carried into the report, and the
output is scanned with the built-in tables for CUDA names hipify-perl left behind.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from toolkit.hipify.engine import FileResult, Warning, apply_substitutions, convert_text, still_present
from toolkit.hipify.settings import HipifySettings
from toolkit.hipify.tables import Tables
from toolkit.util.errors import ToolkitError
from toolkit.util.process import run

_WARNING = re.compile(r"(?:warning|error)\s*:\s*\S*?:#?(\d+)\s*:?\s*(.*)")


def find_hipify_perl(setting: str) -> str:
    found = shutil.which(setting)
    if found is None:
        raise ToolkitError(
            f"hipify engine 'hipify-perl' requested, but '{setting}' was not found",
            "install ROCm's hipify (it ships bin/hipify-perl), set hipify.hipify_perl to its path, "
            "or use the built-in engine (hipify.engine = \"builtin\")")
    return found


def convert_with_perl(exe: str, path: Path, text: str, rel: str, settings: HipifySettings,
                      tables: Tables) -> FileResult:
    proc = run([exe, Path(path).absolute()], f"hipify-perl on {rel}",
               hint="fix the input, exclude the file with a reason, or use the built-in engine")
    if text.strip() and not proc.stdout.strip():
        raise ToolkitError(f"hipify-perl produced no output for {rel}:\n{_tail(proc.stderr)}")
    leftovers = convert_text(proc.stdout, rel, settings, tables, detect_only=True)
    text_out = apply_substitutions(proc.stdout, rel, settings)
    result = FileResult(text_out, still_present(leftovers.unmapped, text_out), leftovers.warnings,
                        leftovers.defines)
    for line in proc.stderr.splitlines():
        m = _WARNING.search(line)
        if m:
            result.warnings.append(Warning(int(m.group(1)), "hipify-perl", m.group(2).strip()))
        elif line.strip():
            result.warnings.append(Warning(0, "hipify-perl", line.strip()))
    return result


def _tail(stderr: str, lines: int = 20) -> str:
    kept = stderr.strip().splitlines()[-lines:]
    return "\n".join(f"  {line}" for line in kept) or "  (no output on stderr)"
