"""Convert a source tree out of tree, one output per input, incrementally and in parallel.

The cache (OUT/.hipify-cache.json, written atomically) keys every file by its input's content hash,
the engine version, the tables' hash and the settings' hash. On a rerun a file whose key and output
(size and mtime) are unchanged is not converted; a converted file whose bytes come out the same is
not rewritten, so its mtime stays and ninja rebuilds nothing.
"""

from __future__ import annotations

import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import atomic_write_bytes, atomic_write_text, iter_files, sha256_bytes
from toolkit.hipify.engine import ENGINE_VERSION, FileResult, convert_text
from toolkit.hipify.report import HipifyReport, Located
from toolkit.hipify.settings import HipifySettings
from toolkit.hipify.tables import Tables, load_tables, tables_digest

CACHE_NAME = ".hipify-cache.json"
CACHE_FORMAT = 1
_PARALLEL_MIN = 24  # below this many files a process pool costs more than it saves

_worker_tables: dict[tuple, Tables] = {}


def _tables_for(settings: HipifySettings) -> Tables:
    key = tuple(sorted(settings.options().items()))
    if key not in _worker_tables:
        _worker_tables[key] = load_tables(settings.options())
    return _worker_tables[key]


def _convert_one(job: tuple[HipifySettings, str, str, str, str]) -> dict:
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


def _load_cache(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and data.get("format") == CACHE_FORMAT else {}


class _Progress:
    """One updating line on a terminal; a line per quarter otherwise. Only for large trees."""

    def __init__(self, total: int, enabled: bool):
        self.total = total
        self.enabled = enabled and total >= 200
        self.tty = sys.stderr.isatty()
        self.last = 0.0
        self.quarter = 0

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        if self.tty:
            now = time.monotonic()
            if now - self.last >= 0.1 or done == self.total:
                self.last = now
                end = "\n" if done == self.total else ""
                print(f"\r[toolkit] hipify: {done}/{self.total} files", end=end, file=sys.stderr, flush=True)
        elif done * 4 >= (self.quarter + 1) * self.total:
            self.quarter = done * 4 // self.total
            log.stage("hipify", f"{done}/{self.total} files")


def engine_identity() -> dict:
    """What decides a converted file's bytes besides the settings: the engine's version and mapping tables."""
    return {"engine_version": ENGINE_VERSION, "tables": tables_digest()}


def hipify_tree(settings: HipifySettings, src_dir: Path, out_dir: Path, jobs: int | None = None,
                progress: bool = True) -> HipifyReport:
    """Convert every selected file of src_dir into out_dir; see the module docstring.

    With settings.strict, unmapped CUDA names raise ToolkitError after the outputs and cache are written.
    """
    started = time.monotonic()
    src_dir, out_dir = Path(src_dir).resolve(), Path(out_dir).resolve()
    if not src_dir.is_dir():
        raise ToolkitError(f"hipify: source folder {src_dir} does not exist")
    if out_dir == src_dir or src_dir in out_dir.parents:
        raise ToolkitError(f"hipify: output folder {out_dir} is inside the source tree {src_dir}",
                           "hipify writes out of tree: choose an output folder outside the sources")
    perl = ""
    if settings.engine == "hipify-perl":
        from toolkit.hipify.perl import find_hipify_perl
        perl = find_hipify_perl(settings.hipify_perl)
    report = HipifyReport(engine=settings.engine)
    cache_path = out_dir / CACHE_NAME
    old = _load_cache(cache_path)
    key = {
        "format": CACHE_FORMAT,
        "engine": settings.engine,
        **engine_identity(),
        "settings": settings.digest(),
    }
    old_files = old.get("files", {}) if all(old.get(k) == v for k, v in key.items()) else {}
    stale_outputs = {e["output"] for e in old.get("files", {}).values() if "output" in e}

    # Select inputs and plan outputs.
    entries: dict[str, dict] = {}
    jobs_todo: list[tuple[str, str]] = []  # (rel, input sha)
    owners: dict[str, str] = {}
    files = [p.as_posix() for p in iter_files(src_dir)]
    # A hand-written overlay file takes the place of the converted file that would land on its path
    # (ORT's ROCm build put its hand-written folder first on the include path).
    overlays = {settings.rename_path(rel): rel for rel in files
                if settings.overlay and settings.overlaid(rel) and settings.excluded(rel) is None}
    for rel in files:
        report.total += 1
        rule = settings.excluded(rel)
        if rule is not None:
            report.excluded.append((rel, rule.reason))
            continue
        if not settings.included(rel) and not settings.overlaid(rel):
            report.ignored += 1
            continue
        out_rel = settings.rename_path(rel)
        if settings.left_out(out_rel):
            report.ignored += 1
            continue
        if out_rel in overlays and overlays[out_rel] != rel:
            report.excluded.append((rel, f"the hand-written {overlays[out_rel]} takes its place (overlay)"))
            continue
        if out_rel in owners:
            raise ToolkitError(f"hipify: {owners[out_rel]} and {rel} would both be written to {out_rel}",
                               "exclude the CUDA file a hand-written overlay replaces ([[hipify.exclude]]), "
                               "or change the [[hipify.rename]] / suffixes rules")
        owners[out_rel] = rel
        report.outputs[rel] = out_rel
        sha = sha256_bytes((src_dir / rel).read_bytes())
        cached = old_files.get(rel)
        out = out_dir / out_rel
        if cached and cached.get("input_sha256") == sha and cached.get("output") == out_rel:
            try:
                st = out.stat()
            except FileNotFoundError:
                st = None
            if st and st.st_size == cached["output_size"] and st.st_mtime_ns == cached["output_mtime_ns"]:
                entries[rel] = cached
                report.unchanged += 1
                continue
        jobs_todo.append((rel, sha))

    # Convert what changed.
    todo = [(settings, str(src_dir / rel), str(out_dir / report.outputs[rel]), rel, perl) for rel, _ in jobs_todo]
    bar = _Progress(len(todo), progress)
    workers = max(1, jobs or os.cpu_count() or 1)
    if workers > 1 and len(todo) >= _PARALLEL_MIN:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = []
            for i, res in enumerate(pool.map(_convert_one, todo, chunksize=max(1, len(todo) // (workers * 8)))):
                results.append(res)
                bar.update(i + 1)
    else:
        results = []
        for i, job in enumerate(todo):
            results.append(_convert_one(job))
            bar.update(i + 1)
    for (rel, _), res in zip(jobs_todo, results):
        res["output"] = report.outputs[rel]
        report.converted.append(rel)
        if res.pop("written"):
            report.written.append(report.outputs[rel])
        entries[rel] = res

    # Remove outputs of inputs that are gone or now go elsewhere (only files this cache wrote).
    for out_rel in sorted(stale_outputs - set(report.outputs.values())):
        target = out_dir / out_rel
        if target.is_file():
            target.unlink()
            report.removed.append(out_rel)

    atomic_write_text(cache_path, json.dumps({**key, "files": dict(sorted(entries.items()))}, indent=1) + "\n")

    defined = {name for e in entries.values() for name in e.get("defines", [])}
    for rel in sorted(entries):
        e = entries[rel]
        report.unmapped += [Located(rel, line, "unmapped", name, reason)
                            for line, name, reason in e["unmapped"] if name not in defined]
        report.warnings += [Located(rel, line, kind, "", msg) for line, kind, msg in e["warnings"]]
    report.seconds = time.monotonic() - started
    if settings.strict:
        report.check_strict()
    return report
