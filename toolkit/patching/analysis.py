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

from dataclasses import dataclass, field

from toolkit.patching.attempt import Attempt, FileReport, attempt, changed_files, detect_strip, file_paths
from toolkit.patching.diff import DiffSyntaxError, Patch, parse_patch
from toolkit.patching.failure import WHAT_TO_DO_DRIFT, describe_failure
from toolkit.patching.hunks import MAX_FUZZ
from toolkit.patching.series import Series, SeriesEntry, checksum_problem
from toolkit.patching.treeview import SKIP_DIRS, TreeView

# TreeView, SKIP_DIRS (treeview.py), attempt and the strip-level helpers (attempt.py) and WHAT_TO_DO_DRIFT
# (failure.py) are re-exported: apply.py and older callers import them from here.
__all__ = ["APPLIED", "Attempt", "CHECKSUM", "CLEAN", "DISABLED", "FAILS", "FUZZ", "FileReport", "JOURNAL",
           "MALFORMED", "OFFSET", "OK_STATUSES", "PatchAnalysis", "SKIP_DIRS", "TreeView", "WHAT_TO_DO_DRIFT",
           "analyze_patch", "analyze_view", "applied_prefix", "attempt", "detect_strip", "file_paths",
           "format_report"]

JOURNAL = ".toolkit-patch-journal.json"

CLEAN, OFFSET, FUZZ, APPLIED, FAILS, CHECKSUM, MALFORMED, DISABLED = (
    "clean", "offset", "fuzz", "applied", "fails", "checksum", "malformed", "disabled")
OK_STATUSES = (CLEAN, OFFSET, FUZZ, APPLIED, DISABLED)


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


# -- one patch -----------------------------------------------------------------------------------------

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
        summary, details = describe_failure(entry.path, view, fuzzy, max_fuzz)
        failure = PatchAnalysis(entry, FAILS, summary, details, strip, paths=file_paths(patch, strip))
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
    return PatchAnalysis(entry, status, summary, strip=strip, changes=changed_files(before, result.view)), result.view


# -- a series --------------------------------------------------------------------------------------------

def applied_prefix(series: Series, patches: list[tuple[SeriesEntry, Patch]], view: TreeView) -> int:
    """How many leading patches are already in the tree: the largest K such that reversing patches
    K..1, each exactly, succeeds in memory."""
    for k in range(len(patches), 0, -1):
        state = view
        for _entry, patch in reversed(patches[:k]):
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
