"""What the analysis says about a patch that does not apply: per file and per hunk, what was expected,
what the tree has near there, and what to do.

A hunk whose change is already in the tree counts as applied, so a half-applied patch is told apart
from one that drifted ("partly applied").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from toolkit.patching.attempt import Attempt, FileReport
from toolkit.patching.diff import FileDiff
from toolkit.patching.hunks import Placement, apply_file, nearest_text
from toolkit.patching.treeview import TreeView
from toolkit.util.errors import RUN_TOOLKIT

WHAT_TO_DO_DRIFT = (
    "what to do: the source changed under this patch. Refresh it: on a copy of the pristine source run "
    f"`{RUN_TOOLKIT} patch apply --partial --recipe NAME COPY` (with the build's --with/--without, so the "
    "same patches are chosen), make this hunk's change by hand, then run "
    f"`{RUN_TOOLKIT} patch refresh --recipe NAME PRISTINE COPY` with the same options (in a recipe's work "
    "tree: `nox -s patch -- --refresh`), which rewrites the patch and its checksum. If upstream already made "
    "this change, drop the patch from the series.")

_FILE_PROBLEMS = ("missing", "exists", "target-exists", "leftover")


@dataclass
class _Found:
    details: list[str]
    first: str | None = None  # the first failure's heading, for the analysis line
    in_tree: list[str] = field(default_factory=list)  # files and hunks already in the tree
    not_in_tree: list[str] = field(default_factory=list)

    def fail(self, label: str, head: str, details: list[str]) -> None:
        self.not_in_tree.append(label)
        self.first = self.first or head
        self.details += details


def describe_failure(patch_path: Path, view: TreeView, fuzzy: Attempt, max_fuzz: int) -> tuple[str, list[str]]:
    """The summary (the text after "NAME: ") and the detail lines for a patch that fails on `view`."""
    found = _Found([f"patch file: {patch_path}"])
    for report in fuzzy.files:
        if report.outcome.problem in _FILE_PROBLEMS:
            _file_failure(report, view, found)
        else:
            _hunk_failures(report, view, max_fuzz, found)
    if found.in_tree and found.not_in_tree:
        summary = (f"FAILS: partly applied: {', '.join(found.in_tree)} already in the tree, "
                   f"{', '.join(found.not_in_tree)} not")
        found.details.append("what to do: the tree holds part of this patch. Start again from a pristine copy of "
                             "the source; if the rest was changed by hand on purpose, refresh the series "
                             "(`nox -s patch -- --refresh`)")
    else:
        summary = f"FAILS: {found.first}"
    return summary, found.details


def _file_failure(report: FileReport, view: TreeView, found: _Found) -> None:
    """A whole file the patch cannot handle: missing, already there, or with content left over."""
    fd, problem, path = report.diff, report.outcome.problem, report.path
    source = view.root / path
    if problem == "missing":
        head = f"{path}: file not found (renamed or deleted in this source?)"
        details = [f"{head}; the patch changes it from line {fd.patch_line} of the patch",
                   f"source file: {source} (missing)"]
        elsewhere = view.same_name(path)
        if elsewhere:
            details.append(f"a file with that name exists at: {', '.join(elsewhere)}")
        details.append("what to do: if the file moved, fix the paths in the patch and refresh it; if the "
                       "code is gone upstream, drop the patch from the series")
        found.fail(path, head, details)
    elif problem == "exists":
        if view.read(path) == apply_file(None, fd, 0).new_data:
            found.in_tree.append(f"{path} (created)")
            return
        head = f"{path}: the patch creates this file, but it already exists with other content"
        found.fail(path, head, [head, f"source file: {source}",
                                "what to do: remove the file from the tree if it is a leftover, or refresh the "
                                "patch so it changes the file instead of creating it"])
    elif problem == "target-exists":
        head = f"{path}: the patch renames a file to this path, which already exists"
        found.fail(path, head, [head, f"source file: {source}", WHAT_TO_DO_DRIFT])
    else:
        head = f"{path}: the patch deletes this file, but it has content the patch does not remove"
        found.fail(path, head, [head, f"source file: {source}", WHAT_TO_DO_DRIFT])


def _hunk_failures(report: FileReport, view: TreeView, max_fuzz: int, found: _Found) -> None:
    """Each hunk of a file that neither applies nor is already in the tree, with what the file has instead."""
    data = view.read(report.path) or b""
    reverse_fd = report.diff.reversed()
    for p in report.outcome.placements:
        label = f"{report.path} hunk #{p.number}"
        if p.found and p.fuzz <= max_fuzz:
            found.not_in_tree.append(label)
        elif _hunk_in_tree(data, reverse_fd, p.number):
            found.in_tree.append(label)
        else:
            found.fail(label, f"{report.path} hunk #{p.number} {p.hunk.header}",
                       _hunk_details(report.path, view.root / report.path, data, p, max_fuzz))


def _hunk_in_tree(data: bytes, reverse_fd: FileDiff, number: int) -> bool:
    hunk = reverse_fd.hunks[number - 1]
    single = FileDiff(reverse_fd.old_path, reverse_fd.new_path, (hunk,), reverse_fd.patch_line)
    outcome = apply_file(data, single, 0)
    return outcome.ok


def _hunk_details(path: str, source: Path, data: bytes, p: Placement, max_fuzz: int) -> list[str]:
    out = [f"{path} hunk #{p.number} {p.hunk.header} (line {p.hunk.patch_line} of the patch) does not apply",
           f"source file: {source}"]
    if p.pos is not None:
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
