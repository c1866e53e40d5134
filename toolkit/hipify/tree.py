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
from pathlib import Path

from toolkit.hipify.engine import ENGINE_VERSION
from toolkit.hipify.plan import plan_outputs
from toolkit.hipify.report import HipifyReport, Located
from toolkit.hipify.tables import tables_digest
from toolkit.hipify.worker import Job, convert_one, tables_for
from toolkit.recipe.hipify import HipifySettings
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON, atomic_write_text
from toolkit.util.globs import glob_match

CACHE_NAME = ".hipify-cache.json"
CACHE_FORMAT = 2  # 2: which substitutions matched each file
# A process pool pays for itself only on a large tree: starting it and sending results back cost about 0.1 s,
# while one process converts about 20 MB/s (ORT's CUDA EP, 1.9 MB, converts in 0.1 s on one core).
_PARALLEL_MIN_BYTES = 8_000_000


def _load_cache(path: Path) -> JSON:
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


def engine_identity() -> dict[str, str]:
    """What decides a converted file's bytes besides the settings: the engine's version and mapping tables."""
    return {"engine_version": ENGINE_VERSION, "tables": tables_digest()}


def hipify_tree(settings: HipifySettings, src_dir: Path, out_dir: Path, jobs: int | None = None,
                progress: bool = True, perl_cache: Path | None = None) -> HipifyReport:
    """Convert every selected file of src_dir into out_dir; see the module docstring. `perl_cache`: where
    hipify-perl's outputs are kept by content (toolkit/hipify/perl.py), None to keep none.

    With settings.strict, unmapped CUDA names raise ToolkitError after the outputs and cache are written.
    """
    started = time.monotonic()
    src_dir, out_dir = _check_dirs(src_dir, out_dir)
    perl = None
    if settings.engine == "hipify-perl":
        from toolkit.hipify.perl import PerlRun
        perl = PerlRun.find(settings, perl_cache)
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

    entries, changed = plan_outputs(settings, src_dir, out_dir, old_files, report)
    todo = [(settings, str(src_dir / rel), str(out_dir / report.outputs[rel]), rel, perl) for rel in changed]
    for rel, res in zip(changed, _convert_all(todo, jobs, _Progress(len(todo), progress)), strict=False):
        res["output"] = report.outputs[rel]
        report.converted.append(rel)
        if res.pop("written"):
            report.written.append(report.outputs[rel])
        entries[rel] = res
    _remove_stale(out_dir, stale_outputs - set(report.outputs.values()), report)
    atomic_write_text(cache_path, _cache_text(key, entries))

    _collect_findings(entries, report)
    if not settings.only_units:  # a part of the tree says nothing about a rule meant for another part
        report.unused_substitutions = unused_substitutions(settings, entries)
    report.seconds = time.monotonic() - started
    if settings.strict:
        report.check_strict()
    return report


def _cache_text(key: JSON, entries: dict[str, JSON]) -> str:
    """The cache as JSON with one line per file: readable, and written by json's C encoder (an indented dump
    takes the pure-Python one, a tenth of a large tree's conversion)."""
    head = json.dumps(key)[:-1]
    files = ",\n".join(f"  {json.dumps(rel)}: {json.dumps(entries[rel])}" for rel in sorted(entries))
    return f'{head}, "files": {{\n{files}\n}}}}\n'


def _check_dirs(src_dir: Path, out_dir: Path) -> tuple[Path, Path]:
    src_dir, out_dir = Path(src_dir).resolve(), Path(out_dir).resolve()
    if src_dir.exists() and not src_dir.is_dir():
        raise ToolkitError(f"hipify: source {src_dir} is a file, not a folder; hipify converts a source tree",
                           f"give the folder that holds it ({src_dir.parent}): every C/C++/CUDA file under it "
                           "is converted")
    if not src_dir.is_dir():
        raise ToolkitError(f"hipify: source folder {src_dir} does not exist")
    if out_dir.exists() and not out_dir.is_dir():
        raise ToolkitError(f"hipify: output {out_dir} is a file, not a folder; OUT is the folder the converted "
                           "tree is written to", "give a folder path (it is created when missing)")
    if out_dir == src_dir or src_dir in out_dir.parents:
        raise ToolkitError(f"hipify: output folder {out_dir} is inside the source tree {src_dir}",
                           "hipify writes out of tree: choose an output folder outside the sources")
    return src_dir, out_dir


def _convert_all(todo: list[Job], jobs: int | None, bar: _Progress) -> list[JSON]:
    """convert_one over every job, in order; in a process pool when there are enough of them."""
    results = []
    workers = max(1, jobs or os.cpu_count() or 1)
    if workers > 1 and len(todo) > 1 and sum(os.path.getsize(job[1]) for job in todo) >= _PARALLEL_MIN_BYTES:
        import multiprocessing  # only when parallel: start-up counts
        from concurrent.futures import ProcessPoolExecutor
        if multiprocessing.get_start_method() == "fork":
            tables_for(todo[0][0])  # loaded once here; forked workers inherit them
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for i, res in enumerate(pool.map(convert_one, todo, chunksize=max(1, len(todo) // (workers * 8)))):
                results.append(res)
                bar.update(i + 1)
    else:
        for i, job in enumerate(todo):
            results.append(convert_one(job))
            bar.update(i + 1)
    return results


def _remove_stale(out_dir: Path, stale: set[str], report: HipifyReport) -> None:
    """Remove outputs of inputs that are gone or now go elsewhere (only files this cache wrote)."""
    for out_rel in sorted(stale):
        target = out_dir / out_rel
        if target.is_file():
            target.unlink()
            report.removed.append(out_rel)


def _collect_findings(entries: dict[str, JSON], report: HipifyReport) -> None:
    """Every file's findings and warnings, less the names some file of the tree defines."""
    defined = {name for e in entries.values() for name in e.get("defines", [])}
    for rel in sorted(entries):
        e = entries[rel]
        report.unmapped += [Located(rel, line, "unmapped", name, reason)
                            for line, name, reason in e["unmapped"] if name not in defined]
        report.warnings += [Located(rel, line, kind, "", msg) for line, kind, msg in e["warnings"]]


def unused_substitutions(settings: HipifySettings, entries: dict[str, JSON]) -> list[str]:
    """A line per [[hipify.substitute]] rule that changed no file of the tree, with the likeliest reason."""
    done = {i for e in entries.values() for i in e.get("substituted", [])}
    out = []
    where = settings.recipe or "the recipe"
    for i, sub in enumerate(settings.substitutions):
        if i in done or not sub.applies(settings.engine):  # a rule of the other engine is not this run's
            continue
        selected = [rel for rel in entries if glob_match(sub.glob, rel)]
        in_input = sorted(rel for rel, e in entries.items() if i in e.get("in_input", []))
        if not selected:
            why = f"its glob {sub.glob!r} selects none of the {len(entries)} converted files"
        elif in_input:
            why = (f"the CUDA input has it ({in_input[0]}{' and more' if len(in_input) > 1 else ''}), but a rule "
                   "runs on hipify's output, where it was already rewritten: write it against the HIP text")
        else:
            why = f"none of the {len(selected)} converted files its glob selects has it"
        out.append(f"{where}: [[hipify.substitute]] #{i + 1} (from = {sub.from_!r}) matched nothing: {why}")
    return out
