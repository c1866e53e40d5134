"""One file's conversion, as a worker process runs it: convert, write only changed bytes, describe the result.

What it returns is plain data (it crosses the process pool) and is what the tree's cache keeps per file.
"""

from __future__ import annotations

import os
from pathlib import Path

from toolkit.hipify.engine import FileResult, convert_text
from toolkit.hipify.settings import HipifySettings
from toolkit.hipify.tables import Tables, load_tables
from toolkit.util.fsutil import atomic_write_bytes, sha256_bytes

# Loaded once per process and option set: a worker converts many files with the same tables.
_worker_tables: dict[tuple, Tables] = {}


def _tables_for(settings: HipifySettings) -> Tables:
    key = tuple(sorted(settings.options().items()))
    if key not in _worker_tables:
        _worker_tables[key] = load_tables(settings.options())
    return _worker_tables[key]


def convert_one(job: tuple[HipifySettings, str, str, str, str]) -> dict:
    """Convert one file and write its output if the bytes differ. Runs in a worker process."""
    settings, src, dst, rel, perl = job
    data = Path(src).read_bytes()
    text = data.decode("utf-8", errors="surrogateescape")
    tables = _tables_for(settings)
    if settings.overlaid(rel):
        # Hand-written HIP source: copied as it is; only the names it defines count.
        result = FileResult(text, defines=convert_text(text, rel, settings, tables, detect_only=True).defines)
    elif settings.engine == "hipify-perl":
        from toolkit.hipify.perl import convert_with_perl
        result = convert_with_perl(perl, Path(src), text, rel, settings, tables)
    else:
        result = convert_text(text, rel, settings, tables)
    new = result.text.encode("utf-8", errors="surrogateescape")
    out = Path(dst)
    written = False
    if not (out.is_file() and out.stat().st_size == len(new) and out.read_bytes() == new):
        atomic_write_bytes(out, new, os.stat(src).st_mode & 0o777)
        written = True
    st = out.stat()
    return {
        "input_sha256": sha256_bytes(data),
        "output_size": st.st_size,
        "output_mtime_ns": st.st_mtime_ns,
        "written": written,
        "unmapped": [[f.line, f.name, f.reason] for f in result.unmapped],
        "warnings": [[w.line, w.kind, w.message] for w in result.warnings],
        "defines": result.defines,
    }
