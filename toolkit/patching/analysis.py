"""What each patch of a series would do to a tree: one analysis line per patch, plus details on failure.

The analysis never writes. It runs over a TreeView: the tree on disk plus the in-memory results of
the patches before, so patch N is judged on the tree patch N-1 leaves, exactly as apply will see it.

Per patch, in this order:
1. forward, exact (offsets allowed): "applies cleanly" / "applies with offset +3 (src/a.cc hunk #2)";
2. reverse, exact: "already applied, skipping" (the patch's result is in the tree);
3. forward with fuzz up to the allowed factor: "applies with fuzz 1 (src/a.cc hunk #1)";
4. otherwise "FAILS", with the file, hunk header, expected lines, lines found near there, and what to
   do; hunks that are already in the tree while others are not make it "partly applied".
A series whose first K patches are all in the tree (an applied series, re-run) is recognised by
reversing patches K..1 in memory first, so patches that touch the same lines are skipped as well.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from toolkit.patching.diff import DiffSyntaxError, FileDiff, Patch, parse_patch
from toolkit.patching.hunks import MAX_FUZZ, FileOutcome, Placement, apply_file, nearest_text
from toolkit.patching.series import Series, SeriesEntry, checksum_problem

JOURNAL = ".toolkit-patch-journal.json"
SKIP_DIRS = (".git", ".hg", ".svn")

CLEAN, OFFSET, FUZZ, APPLIED, FAILS, CHECKSUM, MALFORMED, DISABLED = (
    "clean", "offset", "fuzz", "applied", "fails", "checksum", "malformed", "disabled")
OK_STATUSES = (CLEAN, OFFSET, FUZZ, APPLIED, DISABLED)

WHAT_TO_DO_DRIFT = (
    "what to do: the source changed under this patch. Refresh it: on a copy of the pristine source run "
    "`python -m toolkit patch apply --partial SERIES COPY`, make this hunk's change by hand, then run "
    "`python -m toolkit patch refresh SERIES PRISTINE COPY` (in a recipe's work tree: "
    "`nox -s patch -- --refresh`), which rewrites the patch and its checksum. If upstream already made "
    "this change, drop the patch from the series.")


class TreeView:
    """A directory as `relative path -> bytes`, with in-memory changes laid over it."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.changes: dict[str, bytes | None] = {}
        self.modes: dict[str, int] = {}
        self._cache: dict[str, bytes | None] = {}
        self._names: dict[str, list[str]] | None = None

    def copy(self) -> "TreeView":
        other = TreeView(self.root)
        other.changes = dict(self.changes)
        other.modes = dict(self.modes)
        other._cache = self._cache  # disk content is shared; it does not change during an analysis
        other._names = self._names
        return other

    def read(self, rel: str) -> bytes | None:
        if rel in self.changes:
            return self.changes[rel]
        if rel not in self._cache:
            path = self.root / rel
            self._cache[rel] = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        return self._cache[rel]

    def mode(self, rel: str) -> int:
        if rel in self.modes:
            return self.modes[rel]
        try:
            return 0o100000 | stat.S_IMODE(os.stat(self.root / rel).st_mode)
        except FileNotFoundError:
            return 0o100644

    def write(self, rel: str, data: bytes | None, mode: int | None = None) -> None:
        self.changes[rel] = data
        if mode is not None:
            self.modes[rel] = mode

    def same_name(self, rel: str) -> list[str]:
        """Other files in the tree with the same base name (where a renamed file may have gone)."""
        if self._names is None:
            self._names = {}
            for dirpath, dirnames, filenames in os.walk(self.root):
                dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
                base = Path(dirpath).relative_to(self.root)
                for name in sorted(filenames):
                    self._names.setdefault(name, []).append((base / name).as_posix())
        name = PurePosixPath(rel).name
        found = [p for p in self._names.get(name, []) if p != rel and self.read(p) is not None]
        found += [p for p, d in self.changes.items() if d is not None and PurePosixPath(p).name == name
                  and p != rel and p not in found]
        return sorted(found)


@dataclass
class FileReport:
    path: str  # relative to the tree, strip level applied
    diff: FileDiff
    outcome: FileOutcome


@dataclass
class PatchAnalysis:
    entry: SeriesEntry
    status: str
    summary: str  # the text after "NAME: " on the analysis line
    details: list[str] = field(default_factory=list)  # indented lines under a failure
    strip: int = 1
    changes: dict[str, tuple[bytes | None, int | None]] = field(default_factory=dict, repr=False)
    paths: list[str] = field(default_factory=list)  # the tree files the patch touches

    @property
    def ok(self) -> bool:
        return self.status in OK_STATUSES

    @property
    def line(self) -> str:
        return f"{self.entry.name}: {self.summary}"

    def report(self) -> str:
        return "\n".join([self.line] + [f"    {d}" for d in self.details])

    def __str__(self) -> str:
        return self.line


def format_report(analyses: list[PatchAnalysis]) -> str:
    return "\n".join(a.report() for a in analyses)


# -- strip level --------------------------------------------------------------------------------------

def _strip(path: str, level: int) -> str | None:
    parts = PurePosixPath(path).parts
    if len(parts) <= level:
        return None
    return "/".join(parts[level:])


def detect_strip(patch: Patch, view: TreeView) -> int:
    """The strip level (like patch -pN) under which most of the patch's files exist in the tree.

    Ties go to 1 (a/ b/ prefixes, what git and the series format use), then to the lowest level.
    """
    paths = [p for fd in patch.files for p in (fd.old_path, fd.new_path) if p]
    best, best_score = 1, -1
    for level in (1, 0, 2, 3, 4):
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
        rel = old_rel or new_rel
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


def _changes(before: TreeView, after: TreeView) -> dict[str, tuple[bytes | None, int | None]]:
    """The files a patch changed: what `after` has that differs from `before`."""
    return {rel: (data, after.modes.get(rel)) for rel, data in after.changes.items()
            if rel not in before.changes or before.changes[rel] != data
            or before.modes.get(rel) != after.modes.get(rel)}


def _offsets_text(result: Attempt) -> tuple[list[str], list[str]]:
    offsets, fuzzes = [], []
    for f in result.files:
        for p in f.outcome.placements:
            where = f"{f.path} hunk #{p.number}"
            if p.fuzz:
                fuzzes.append(f"fuzz {p.fuzz} ({where}{f', offset {p.offset:+d}' if p.offset else ''})")
            elif p.offset:
                offsets.append(f"{p.offset:+d} ({where})")
    return offsets, fuzzes


def _some(items: list[str], shown: int = 4) -> str:
    """A list for one analysis line: the first few, then how many more."""
    if len(items) <= shown:
        return ", ".join(items)
    return ", ".join(items[:shown]) + f" and {len(items) - shown} more"


def _notes(result: Attempt, strip: int) -> str:
    notes = [f"{f.path}: {f.outcome.eol_note}" for f in result.files if f.outcome.eol_note]
    if strip != 1:
        notes.append(f"strip level {strip}")
    return f" [{'; '.join(notes)}]" if notes else ""


def analyze_patch(entry: SeriesEntry, series: Series, view: TreeView, max_fuzz: int = MAX_FUZZ,
                  verify: bool = True, partial: bool = False) -> tuple[PatchAnalysis, TreeView]:
    """Judge one patch against `view`; returns the analysis and the view after it (unchanged on
    failure, unless `partial`: then the view has every hunk of the failing patch that applies)."""
    if verify:
        problem = checksum_problem(entry, series.path)
        if problem:
            return PatchAnalysis(entry, CHECKSUM, "CHECKSUM MISMATCH: the patch file changed", [
                problem,
                f"what to do: if the change is intended, run `nox -s patch -- --refresh` or put the new "
                f"sha256 on line {entry.line} of {series.path}; otherwise restore {entry.path} "
                f"(git checkout -- {entry.path})"]), view
    try:
        patch = parse_patch(entry.path.read_bytes())
        strip = detect_strip(patch, view)
        forward = attempt(patch, strip, view, 0)
        if forward.ok:
            offsets, _ = _offsets_text(forward)
            summary = f"applies with offset {_some(offsets)}" if offsets else "applies cleanly"
            return _done(entry, OFFSET if offsets else CLEAN, summary + _notes(forward, strip), strip,
                         view, forward)
        backward = attempt(patch, strip, view, 0, reverse=True, stop_early=True)
        if backward.ok:
            return PatchAnalysis(entry, APPLIED, "already applied, skipping" + _notes(backward, strip),
                                 strip=strip), view
        fuzzy = attempt(patch, strip, view, MAX_FUZZ)
        if fuzzy.ok and fuzzy.max_fuzz <= max_fuzz:
            offsets, fuzzes = _offsets_text(fuzzy)
            summary = "applies with " + _some(fuzzes)
            if offsets:
                summary += "; offset " + _some(offsets)
            return _done(entry, FUZZ, summary + _notes(fuzzy, strip), strip, view, fuzzy)
        failure = _failure(entry, patch, strip, view, fuzzy, max_fuzz)
        if partial:
            part = attempt(patch, strip, view, max_fuzz, partial=True).partial
            assert part is not None
            failure.details.append("--partial: the hunks of this patch that apply were applied, the failed "
                                   "ones were not; make their changes by hand, then refresh")
            return failure, part
        return failure, view
    except DiffSyntaxError as exc:
        return PatchAnalysis(entry, MALFORMED, f"MALFORMED: {entry.path}: {exc}", [
            f"patch file: {entry.path}, line {exc.line}",
            "what to do: regenerate the patch (git format-patch, diff -u, or `nox -s patch -- --refresh`); "
            "a hand-edited hunk must keep its @@ line counts right"]), view


def _done(entry: SeriesEntry, status: str, summary: str, strip: int, before: TreeView,
          result: Attempt) -> tuple[PatchAnalysis, TreeView]:
    assert result.view is not None
    return PatchAnalysis(entry, status, summary, strip=strip, changes=_changes(before, result.view)), result.view


def _failure(entry: SeriesEntry, patch: Patch, strip: int, view: TreeView, fuzzy: Attempt,
             max_fuzz: int) -> PatchAnalysis:
    details: list[str] = [f"patch file: {entry.path}"]
    first: str | None = None
    in_tree: list[str] = []  # hunks already in the tree
    not_in_tree: list[str] = []
    for report in fuzzy.files:
        fd, outcome = report.diff, report.outcome
        source = view.root / report.path
        if outcome.problem == "missing":
            head = f"{report.path}: file not found (renamed or deleted in this source?)"
            first = first or head
            details.append(f"{head}; the patch changes it from line {fd.patch_line} of the patch")
            details.append(f"source file: {source} (missing)")
            elsewhere = view.same_name(report.path)
            if elsewhere:
                details.append(f"a file with that name exists at: {', '.join(elsewhere)}")
            details.append("what to do: if the file moved, fix the paths in the patch and refresh it; if the "
                           "code is gone upstream, drop the patch from the series")
            not_in_tree.append(report.path)
            continue
        if outcome.problem == "exists":
            data = view.read(report.path)
            new = apply_file(None, fd, 0).new_data
            if data == new:
                in_tree.append(f"{report.path} (created)")
                continue
            head = f"{report.path}: the patch creates this file, but it already exists with other content"
            first = first or head
            details += [head, f"source file: {source}",
                        "what to do: remove the file from the tree if it is a leftover, or refresh the patch "
                        "so it changes the file instead of creating it"]
            not_in_tree.append(report.path)
            continue
        if outcome.problem == "target-exists":
            head = f"{report.path}: the patch renames a file to this path, which already exists"
            first = first or head
            details += [head, f"source file: {source}", WHAT_TO_DO_DRIFT]
            not_in_tree.append(report.path)
            continue
        if outcome.problem == "leftover":
            head = f"{report.path}: the patch deletes this file, but it has content the patch does not remove"
            first = first or head
            details += [head, f"source file: {source}", WHAT_TO_DO_DRIFT]
            not_in_tree.append(report.path)
            continue
        data = view.read(report.path) or b""
        reverse_fd = fd.reversed()
        for p in outcome.placements:
            label = f"{report.path} hunk #{p.number}"
            if p.found and p.fuzz <= max_fuzz:
                not_in_tree.append(label)
                continue
            if _hunk_in_tree(data, reverse_fd, p.number):
                in_tree.append(label)
                continue
            not_in_tree.append(label)
            head = f"{report.path} hunk #{p.number} {p.hunk.header}"
            first = first or head
            details.extend(_hunk_details(report.path, source, data, p, max_fuzz))
    if in_tree and not_in_tree:
        summary = f"FAILS: partly applied: {', '.join(in_tree)} already in the tree, {', '.join(not_in_tree)} not"
        details.append("what to do: the tree holds part of this patch. Start again from a pristine copy of "
                       "the source; if the rest was changed by hand on purpose, refresh the series "
                       "(`nox -s patch -- --refresh`)")
    else:
        summary = f"FAILS: {first}"
    return PatchAnalysis(entry, FAILS, summary, details, strip, paths=file_paths(patch, strip))


def _hunk_in_tree(data: bytes, reverse_fd: FileDiff, number: int) -> bool:
    hunk = reverse_fd.hunks[number - 1]
    single = FileDiff(reverse_fd.old_path, reverse_fd.new_path, (hunk,), reverse_fd.patch_line)
    outcome = apply_file(data, single, 0)
    return outcome.ok


def _hunk_details(path: str, source: Path, data: bytes, p: Placement, max_fuzz: int) -> list[str]:
    out = [f"{path} hunk #{p.number} {p.hunk.header} (line {p.hunk.patch_line} of the patch) does not apply",
           f"source file: {source}"]
    if p.found:
        out.append(f"it would apply with fuzz {p.fuzz} at line {p.pos + 1}, but at most fuzz {max_fuzz} is allowed")
    old = [ln.text for ln in p.hunk.lines if ln.tag != "+"]
    start = p.hunk.old_start
    out.append(f"the hunk expected (lines {start}-{start + len(old) - 1} of the original):")
    out += [f"  {'-' if ln.tag == '-' else ' '} {_show(ln.text)}" for ln in p.hunk.lines if ln.tag != "+"]
    pos, found = nearest_text(data, old, p.expected)
    if not found:
        out.append(f"found: the file has only {len(data.splitlines())} lines")
    else:
        out.append(f"found near there (lines {pos + 1}-{pos + len(found)} of {path}):")
        width = len(str(pos + len(found)))
        for i, text in enumerate(found):
            mark = " " if i < len(old) and old[i] == text else "!"
            out.append(f"  {mark} {pos + 1 + i:>{width}}| {_show(text)}")
        for i, text in enumerate(found):
            if i >= len(old) or old[i] != text:
                expected = _show(old[i]) if i < len(old) else "(nothing)"
                out.append(f"first difference at line {pos + 1 + i}: expected {expected!r}, found {_show(text)!r}")
                break
    out.append(WHAT_TO_DO_DRIFT)
    return out


def _show(text: bytes) -> str:
    return text.decode("utf-8", "backslashreplace")


# -- a series --------------------------------------------------------------------------------------------

def applied_prefix(series: Series, patches: list[tuple[SeriesEntry, Patch]], view: TreeView) -> int:
    """How many leading patches are already in the tree: the largest K such that reversing patches
    K..1, each exactly, succeeds in memory."""
    for k in range(len(patches), 0, -1):
        state = view
        for entry, patch in reversed(patches[:k]):
            step = attempt(patch, detect_strip(patch, state), state, 0, reverse=True, stop_early=True)
            if not step.ok:
                break
            assert step.view is not None
            state = step.view
        else:
            return k
    return 0


def analyze_view(series: Series, view: TreeView, phases: list[str | None], features: list[str],
                 max_fuzz: int = MAX_FUZZ, partial: bool = False) -> tuple[list[PatchAnalysis], TreeView]:
    results: list[PatchAnalysis] = []
    for phase in phases:
        enabled, disabled = series.select(phase, features)
        skip_disabled = {e.name for e in disabled}
        parsed: list[tuple[SeriesEntry, Patch]] = []
        for entry in enabled:
            if checksum_problem(entry, series.path):
                break
            try:
                patch = parse_patch(entry.path.read_bytes())
                file_paths(patch, detect_strip(patch, view))  # refuses paths that leave the tree
            except DiffSyntaxError:
                break
            parsed.append((entry, patch))
        prefix = {e.name for e, _ in parsed[:applied_prefix(series, parsed, view)]}
        for entry in [e for e in series.entries if e.name in skip_disabled or e in enabled]:
            if entry.name in skip_disabled:
                need = ",".join(entry.when)
                problem = checksum_problem(entry, series.path)
                if problem:  # a changed patch file is an error even where it is not used
                    results.append(analyze_patch(entry, series, view, max_fuzz)[0])
                else:
                    results.append(PatchAnalysis(entry, DISABLED, f"not applied: needs when={need}"))
            elif entry.name in prefix:
                results.append(PatchAnalysis(entry, APPLIED, "already applied, skipping"))
            else:
                analysis, view = analyze_patch(entry, series, view, max_fuzz, partial=partial)
                if analysis.status == FAILS:
                    earlier = [a.entry.name for a in results
                               if a.status == FAILS and set(a.paths) & set(analysis.paths)]
                    if earlier:
                        analysis.details.insert(1, f"note: {', '.join(earlier)} failed before it and changes the "
                                                   f"same files; this failure may go once that one is fixed")
                results.append(analysis)
    return results, view
