"""Check a series against a tree, and apply it all or nothing.

apply_series computes every patched file in memory first (analysis.py); if any patch fails, it raises
PatchError with the whole analysis and the tree is not touched. Otherwise it commits the new contents
through a journal, so that a crash (power loss, kill -9) can never leave a half-patched tree:
1. write the journal (state "staging": the temporary files about to be written);
2. write every new file's content to a temporary file beside its destination and fsync it;
3. rewrite the journal with state "committing" (the point of no return);
4. rename every temporary file over its destination, then delete the files the patches delete;
5. remove the journal.
A crash before 3 is rolled back (temporaries removed, tree as before); a crash after 3 is rolled
forward (the remaining renames and deletions done). Either happens on the next apply; check refuses
to judge a tree with a journal in it. Works the same on git and non-git trees (.git is never touched).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from toolkit.patching.analysis import (
    JOURNAL,
    OK_STATUSES,
    PatchAnalysis,
    TreeView,
    analyze_view,
    detect_strip,
    file_paths,
    format_report,
)
from toolkit.patching.diff import DiffSyntaxError, parse_patch
from toolkit.patching.errors import PatchError
from toolkit.patching.hunks import MAX_FUZZ
from toolkit.patching.series import PHASES, Series
from toolkit.util import log
from toolkit.util.errors import RUN_TOOLKIT
from toolkit.util.fsutil import JSON, atomic_write_text

_TMP_SUFFIX = ".toolkit-patch.tmp"


def _phases(phase: str | None) -> list[str | None]:
    if phase in (None, "all"):
        return list(PHASES)
    if phase not in PHASES:
        raise PatchError(f"unknown patch phase '{phase}'", f"use one of: {', '.join(PHASES)}, all")
    return [phase]


def _check_tree(tree: Path) -> Path:
    tree = Path(tree)
    if not tree.is_dir():
        raise PatchError(f"{tree}: tree to patch is not a directory")
    return tree


def analyze(series: Series, tree: Path, phase: str | None = None, features: list[str] | tuple[str, ...] = (),
            max_fuzz: int = MAX_FUZZ) -> list[PatchAnalysis]:
    """One analysis per patch of `phase` (None or "all": base, then hipified). Writes nothing."""
    tree = _check_tree(tree)
    if (tree / JOURNAL).exists():
        raise PatchError(f"{tree}: an earlier apply was interrupted ({tree / JOURNAL} exists)",
                         f"run `{RUN_TOOLKIT} patch apply SERIES TREE` to finish or undo it first")
    _refuse_paths_leaving(series, tree, _phases(phase), features)
    results, _ = analyze_view(series, TreeView(tree), _phases(phase), list(features), max_fuzz)
    return results


def _refuse_paths_leaving(series: Series, tree: Path, phases: list[str | None], features: Iterable[str]) -> None:
    """Every file an enabled patch touches must resolve inside the tree.

    '..' and absolute paths are refused when the patch is parsed; this catches the tree's own symlinks
    (lnk -> /elsewhere, a patch editing lnk/file), before anything is read for the analysis or written.
    """
    view = TreeView(tree)
    for phase in phases:
        for entry in series.select(phase, features)[0]:
            try:
                patch = parse_patch(entry.path.read_bytes())
                paths = file_paths(patch, detect_strip(patch, view))
            except (DiffSyntaxError, OSError):
                continue  # the analysis reports a patch that cannot be read or parsed
            for rel in paths:
                _require_inside(tree, rel, str(entry.path))


def _require_inside(tree: Path, rel: str, patch: str) -> None:
    root = os.path.realpath(tree)
    real = os.path.realpath(os.path.join(tree, rel))
    if real != root and not real.startswith(root + os.sep):
        raise PatchError(f"{patch}: path '{rel}' resolves to {real}, outside the tree {tree} (through a "
                         f"symlink); refusing to patch it, the tree was not changed",
                         "a patch may only change files inside the tree: fix the patch's path, or replace the "
                         "symlink in the tree by the folder it stands for")


def failure_message(series: Series, tree: Path, analyses: list[PatchAnalysis], phase: str | None) -> str:
    bad = [a for a in analyses if a.status not in OK_STATUSES]
    names = ", ".join(str(a.entry.path) for a in bad)
    return (f"patch series {series.path} (phase {phase or 'all'}) does not apply to {tree}: "
            f"{len(bad)} of {len(analyses)} patches fail ({names}); the tree was not changed\n"
            f"{format_report(analyses)}")


def apply_series(series: Series, tree: Path, phase: str | None = None,
                 features: list[str] | tuple[str, ...] = (), max_fuzz: int = MAX_FUZZ,
                 partial: bool = False) -> list[PatchAnalysis]:
    """Apply every enabled patch of `phase`, or none: raises PatchError, tree untouched, on any failure.

    partial=True is for someone about to refresh a series by hand (never for a build): every hunk
    that applies is written, failures are only reported in the returned analyses.
    """
    tree = _check_tree(tree)
    recover(tree)
    _refuse_paths_leaving(series, tree, _phases(phase), features)
    view = TreeView(tree)
    analyses, after = analyze_view(series, view, _phases(phase), list(features), max_fuzz, partial)
    if any(a.status not in OK_STATUSES for a in analyses) and not partial:
        raise PatchError(failure_message(series, tree, analyses, phase))
    writes: dict[str, tuple[bytes, int | None]] = {}
    deletes: list[str] = []
    for rel, data in sorted(after.changes.items()):
        path = tree / rel
        if data is None:
            if path.exists() or path.is_symlink():
                deletes.append(rel)
            continue
        mode = after.modes.get(rel)
        current = view.read(rel)
        if current == data and (mode is None or mode == view.mode(rel)):
            continue
        writes[rel] = (data, mode)
    for rel in [*writes, *deletes]:  # checked again on what is about to be written, whatever strip was chosen
        _require_inside(tree, rel, ", ".join(str(a.entry.path) for a in analyses if rel in a.changes) or "a patch")
    commit(tree, writes, deletes)
    return analyses


def patched_contents(series: Series, tree: Path, phase: str | None = None,
                     features: list[str] | tuple[str, ...] = (), max_fuzz: int = MAX_FUZZ) -> dict[str, bytes | None]:
    """What apply_series would write, computed in memory: relative path -> new bytes (None: deleted).

    For reading a tree "as the patches will leave it" without copying it; fails like apply_series.
    """
    tree = _check_tree(tree)
    _refuse_paths_leaving(series, tree, _phases(phase), features)
    view = TreeView(tree)
    analyses, after = analyze_view(series, view, _phases(phase), list(features), max_fuzz)
    if any(a.status not in OK_STATUSES for a in analyses):
        raise PatchError(failure_message(series, tree, analyses, phase))
    return {rel: data for rel, data in sorted(after.changes.items()) if data != view.read(rel)}


# -- the journal -------------------------------------------------------------------------------------------

def _tmp_for(rel: str) -> str:
    p = PurePosixPath(rel)
    return str(p.with_name(f".{p.name}{_TMP_SUFFIX}"))


def _new_dirs(tree: Path, rels: list[str]) -> list[str]:
    dirs: set[str] = set()
    for rel in rels:
        parent = PurePosixPath(rel).parent
        while str(parent) != "." and not (tree / parent).is_dir():
            dirs.add(str(parent))
            parent = parent.parent
    return sorted(dirs, key=lambda d: d.count("/"))


def commit(tree: Path, writes: dict[str, tuple[bytes, int | None]], deletes: list[str]) -> None:
    """Write and delete files under `tree` as one unit (see the module docstring)."""
    if not writes and not deletes:
        return
    journal = tree / JOURNAL
    entries = [{"path": rel, "tmp": _tmp_for(rel)} for rel in sorted(writes)]
    record = {"state": "staging", "writes": entries, "deletes": sorted(deletes),
              "new_dirs": _new_dirs(tree, list(writes))}
    atomic_write_text(journal, json.dumps(record, indent=1))
    for e in entries:
        data, mode = writes[e["path"]]
        dest = tree / e["path"]
        if mode is None:
            mode = stat.S_IMODE(os.stat(dest).st_mode) if dest.exists() else None
        tmp = tree / e["tmp"]
        tmp.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, stat.S_IMODE(mode))
    record["state"] = "committing"
    atomic_write_text(journal, json.dumps(record, indent=1))
    _finish(tree, record)


def _finish(tree: Path, record: JSON) -> None:
    for e in record["writes"]:
        tmp = tree / e["tmp"]
        if tmp.exists():
            os.replace(tmp, tree / e["path"])
    for rel in record["deletes"]:
        (tree / rel).unlink(missing_ok=True)
        _prune(tree, (tree / rel).parent)
    (tree / JOURNAL).unlink()


def _prune(tree: Path, directory: Path) -> None:
    """Remove directories a deletion left empty, as git and GNU patch do."""
    while directory != tree and directory.is_dir() and not any(directory.iterdir()):
        directory.rmdir()
        directory = directory.parent


def recover(tree: Path) -> str | None:
    """Finish or undo an apply that was interrupted; returns what was done, None when nothing was."""
    journal = Path(tree) / JOURNAL
    if not journal.exists():
        return None
    try:
        record = json.loads(journal.read_text(encoding="utf-8"))
        state = record["state"]
    except (ValueError, KeyError) as exc:
        raise PatchError(f"{journal}: unreadable patch journal ({exc})",
                         "restore the tree from a pristine copy, then delete the journal") from None
    if state == "committing":
        _finish(Path(tree), record)
        log.warn(f"{tree}: finished an interrupted patch apply (rolled forward)")
        return "rolled forward"
    for e in record["writes"]:
        (Path(tree) / e["tmp"]).unlink(missing_ok=True)
    for d in reversed(record.get("new_dirs", [])):
        path = Path(tree) / d
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    journal.unlink()
    log.warn(f"{tree}: undid an interrupted patch apply (rolled back; the tree is as before it)")
    return "rolled back"
