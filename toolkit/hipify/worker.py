"""One file's conversion, as a worker process runs it: convert, write only changed bytes, describe the result.

What it returns is plain data (it crosses the process pool) and is what the tree's cache keeps per file.
"""

from __future__ import annotations

import contextlib
import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.hipify.engine import FileResult, convert_text, substitution_matches
from toolkit.hipify.tables import Tables, load_tables
from toolkit.recipe.hipify import HipifySettings
from toolkit.util.fsutil import JSON, current_umask, sha256_bytes
from toolkit.util.globs import glob_match

if TYPE_CHECKING:
    from toolkit.hipify.perl import PerlRun

# Loaded once per process and option set: a worker converts many files with the same tables.
_worker_tables: dict[tuple[tuple[str, str], ...], Tables] = {}
_umask = functools.cache(current_umask)


def tables_for(settings: HipifySettings) -> Tables:
    key = tuple(sorted(settings.options().items()))
    if key not in _worker_tables:
        _worker_tables[key] = load_tables(settings.options())
    return _worker_tables[key]


# A file to convert: the settings, the input's and the output's path, the input's relative path, hipify-perl's runner.
Job = tuple[HipifySettings, str, str, str, "PerlRun | None"]


def convert_one(job: Job) -> JSON:
    """Convert one file and write its output if the bytes differ. Runs in a worker process."""
    settings, src, dst, rel, perl = job
    data = Path(src).read_bytes()
    text = data.decode("utf-8", errors="surrogateescape")
    tables = tables_for(settings)
    if settings.overlaid(rel):
        # Hand-written HIP source: copied as it is; only the names it defines count.
        result = FileResult(text, defines=convert_text(text, rel, settings, tables, detect_only=True).defines)
    elif settings.engine == "hipify-perl" and perl is not None:
        from toolkit.hipify.perl import convert_with_perl  # the built-in engine's start-up does without it
        result = convert_with_perl(perl, Path(src), data, text, rel, settings, tables)
    else:
        result = convert_text(text, rel, settings, tables)
    new = result.text.encode("utf-8", errors="surrogateescape")
    written, st = _write_if_changed(dst, new, os.stat(src).st_mode & 0o777)
    return {
        "input_sha256": sha256_bytes(data),
        "output_size": st.st_size,
        "output_mtime_ns": st.st_mtime_ns,
        "written": written,
        "unmapped": [[f.line, f.name, f.reason] for f in result.unmapped],
        "warnings": [[w.line, w.kind, w.message] for w in result.warnings],
        "defines": result.defines,
        "substituted": result.substituted,
        # Rules that did not match here but whose text is in the CUDA input: written against what hipify rewrites.
        "in_input": [] if settings.overlaid(rel) else _in_input_only(settings, rel, text, result.substituted),
    }


def _in_input_only(settings: HipifySettings, rel: str, text: str, substituted: list[int]) -> list[int]:
    return [i for i, sub in enumerate(settings.substitutions)
            if i not in substituted and glob_match(sub.glob, rel) and substitution_matches(sub, text)]


def _write_if_changed(dst: str, data: bytes, mode: int) -> tuple[bool, os.stat_result]:
    """Replace dst with data unless it already holds exactly that: (whether written, the output's stat).

    Atomic (a temporary file beside it, then a rename), but not flushed to disk: an output is rebuilt from its
    input at will, and the cache notices one a crash left short (size and mtime are part of its key). A flush
    per file was a third of a cold conversion's time.
    """
    try:
        st = os.stat(dst)
        if st.st_size == len(data):
            with open(dst, "rb") as handle:
                if handle.read() == data:
                    return False, st
    except FileNotFoundError:
        pass
    folder, name = os.path.split(dst)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    try:
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        except FileNotFoundError:  # the output's folder is not there yet
            os.makedirs(folder, exist_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if mode & _umask():  # open() applied the umask; the output keeps the input's mode
                os.fchmod(fd, mode)
            st = os.fstat(fd)  # what the rename keeps: size and mtime
        os.replace(tmp, dst)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return True, st
