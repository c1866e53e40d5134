"""One patch applied to a TreeView in memory: its strip level, the tree paths it touches, the outcome per file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from toolkit.patching.diff import DiffSyntaxError, FileDiff, Patch
from toolkit.patching.hunks import FileOutcome, apply_file
from toolkit.patching.treeview import TreeView

# -- strip level --------------------------------------------------------------------------------------

def _strip(path: str, level: int) -> str | None:
    parts = PurePosixPath(path).parts
    if len(parts) <= level:
        return None
    return "/".join(parts[level:])


def detect_strip(patch: Patch, view: TreeView) -> int:
    """The strip level (like patch -pN) under which most of the patch's files exist in the tree.

    Ties go to 1 (a/ b/ prefixes, what git and the series format use), then to the lowest level. Only levels
    that leave every path a path count: a level that strips some path away entirely cannot be the patch's, and
    choosing it because a few names happen to exist deeper in a tree the series is not for would make a
    well-formed patch look malformed.
    """
    paths = [p for fd in patch.files for p in (fd.old_path, fd.new_path) if p]
    best, best_score = 1, -1
    for level in (1, 0, 2, 3, 4):
        if any(_strip(p, level) is None for p in paths):
            continue
        score = sum(1 for p in paths if (rel := _strip(p, level)) and view.read(rel) is not None)
        if score > best_score:
            best, best_score = level, score
    if best_score == 0:
        prefixed = all(PurePosixPath(p).parts[0] in ("a", "b") for p in paths if len(PurePosixPath(p).parts) > 1)
        return 1 if prefixed else 0
    return best


def _rel(path: str | None, level: int, fd: FileDiff) -> str | None:
    if path is None:
        return None
    rel = _strip(path, level)
    if rel is None or rel.startswith("/") or ".." in PurePosixPath(rel).parts:
        raise DiffSyntaxError(fd.patch_line, f"path '{path}' is empty or leaves the tree at strip level {level}")
    return rel


def file_paths(patch: Patch, strip: int) -> list[str]:
    """Every tree path the patch touches (both ends of a rename), in patch order."""
    out: list[str] = []
    for fd in patch.files:
        for path in (fd.old_path, fd.new_path):
            rel = _rel(path, strip, fd)
            if rel and rel not in out:
                out.append(rel)
    return out


# -- one patch -----------------------------------------------------------------------------------------

@dataclass
class FileReport:
    path: str  # relative to the tree, strip level applied
    diff: FileDiff
    outcome: FileOutcome


@dataclass
class Attempt:
    ok: bool
    files: list[FileReport]
    view: TreeView | None  # the tree after the patch, when ok
    partial: TreeView | None = None  # the tree with every hunk that applies, when asked for

    @property
    def max_fuzz(self) -> int:
        return max((p.fuzz for f in self.files for p in f.outcome.placements), default=0)


def attempt(patch: Patch, strip: int, view: TreeView, max_fuzz: int, reverse: bool = False,
            partial: bool = False, stop_early: bool = False) -> Attempt:
    """Apply `patch` to a copy of `view` in memory; stop_early: stop at the first failing file
    (when only ok/not ok matters)."""
    after = view.copy()
    reports: list[FileReport] = []
    ok = True
    for fd in patch.files:
        fd = fd.reversed() if reverse else fd
        old_rel = _rel(fd.old_path, strip, fd)
        new_rel = _rel(fd.new_path, strip, fd)
        rel = old_rel or new_rel or ""  # a diff names at least one path (the parser refuses one naming none)
        source = after.read(old_rel) if old_rel else after.read(new_rel) if new_rel else None
        if fd.hunks or fd.creates or fd.deletes:
            outcome = apply_file(source, fd, max_fuzz)
        else:  # a mode change or a pure rename
            outcome = FileOutcome(ok=source is not None, new_data=source,
                                  problem=None if source is not None else "missing")
        if fd.rename and outcome.ok and new_rel and after.read(new_rel) is not None:
            outcome.ok, outcome.problem = False, "target-exists"
        reports.append(FileReport(new_rel if fd.rename and new_rel else rel, fd, outcome))
        if not outcome.ok:
            ok = False
            if stop_early:
                break
            if partial and outcome.partial_data is not None and rel:
                after.write(rel, outcome.partial_data)
            continue
        mode = fd.new_mode if fd.new_mode is not None else (after.mode(old_rel) if old_rel else None)
        if fd.rename and old_rel and new_rel:
            after.write(old_rel, None)
            after.write(new_rel, outcome.new_data, mode)
        else:
            after.write(rel, outcome.new_data, mode)
    return Attempt(ok, reports, after if ok else None, after if partial else None)


def changed_files(before: TreeView, after: TreeView) -> dict[str, tuple[bytes | None, int | None]]:
    """The files a patch changed: what `after` has that differs from `before`."""
    return {rel: (data, after.modes.get(rel)) for rel, data in after.changes.items()
            if rel not in before.changes or before.changes[rel] != data
            or before.modes.get(rel) != after.modes.get(rel)}
