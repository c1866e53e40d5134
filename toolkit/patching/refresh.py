"""Regenerate a series from a tree where someone edited the patched sources.

Inputs: the pristine source (the fetched tree, before any patch of this phase) and the edited tree
(the patched tree after hand edits). Output: the same series, one patch per original patch, in the
same order, with edits folded in, plus one new patch appended for edits to files no patch touched.

Which patch gets an edit: every file belongs to the last enabled patch of the phase that touches it.
That patch is rewritten to take the file from its content before the patch to the edited content;
earlier patches touching the file keep their effect. So the new series, applied to the pristine tree,
gives exactly the edited tree, which is checked in memory before anything is written.

A patch whose result did not change keeps its file byte for byte (its mail header and message too),
so refreshing without edits changes nothing. A rewritten patch keeps its preamble (the commit message
of a git format-patch file) and gets git-style a/ b/ diffs with 3 lines of context and no timestamps.
A patch whose changes are all gone from the edited tree is dropped from the series (its file is left).
Patch files are written first, the series last, each atomically.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from toolkit.patching.analysis import JOURNAL
from toolkit.patching.attempt import attempt, detect_strip, file_paths
from toolkit.patching.diff import DiffSyntaxError, Patch, parse_patch, write_file_diff
from toolkit.patching.errors import PatchError
from toolkit.patching.hunks import MAX_FUZZ
from toolkit.patching.series import Series, SeriesEntry, checksum_problem, rewrite_series, write_series
from toolkit.patching.treeview import SKIP_DIRS, TreeView
from toolkit.util import log
from toolkit.util.errors import RUN_TOOLKIT
from toolkit.util.fsutil import atomic_write_bytes, iter_files, sha256_bytes

_UNKNOWN = object()


@dataclass
class RefreshResult:
    series_path: Path
    statuses: list[tuple[str, str]] = field(default_factory=list)  # (patch name, what happened)
    written: list[Path] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.written)

    def report(self) -> str:
        return "\n".join(f"{name}: {what}" for name, what in self.statuses)


@dataclass
class _Step:
    entry: SeriesEntry
    original: bytes
    preamble: bytes
    touched: list[str]
    before: dict[str, bytes | None]
    before_mode: dict[str, int]
    after: dict[str, object]  # bytes | None | _UNKNOWN (the patch failed on that file)
    after_mode: dict[str, int]
    ok: bool


@dataclass
class _NewSeries:
    """The refreshed series before anything is written."""
    data: dict[str, bytes] = field(default_factory=dict)  # patch name -> its new bytes
    dropped: set[str] = field(default_factory=set)
    sha_updates: dict[str, str] = field(default_factory=dict)
    appended: list[tuple[str, str, str, str]] = field(default_factory=list)  # (name, phase, sha256, why)


def _files(root: Path) -> set[str]:
    return {p.as_posix() for p in iter_files(root, SKIP_DIRS) if p.as_posix() != JOURNAL}


def _next_name(series: Series) -> str:
    # The folder's files count too: the series may be one tree's selection, without the entries the tree
    # does not need (if-tree-has, unless-tree-has), and a new patch must not take one of their numbers.
    names = [e.name for e in series.entries] + [p.name for p in series.directory.glob("*.patch")]
    numbers = [int(m.group(1)) for name in names if (m := re.match(r"(\d+)", name))]
    number = max(numbers, default=0) + 1
    name = f"{number:04d}-refresh-changes.patch"
    while (series.directory / name).exists():
        number += 1
        name = f"{number:04d}-refresh-changes.patch"
    return name


def refresh_series(series: Series, pristine_tree: Path, edited_tree: Path, phase: str = "base",
                   features: list[str] | tuple[str, ...] = (), write: bool = True) -> RefreshResult:
    """Rewrite the patches of `phase` (and the series' checksums) so they turn pristine into edited."""
    pristine, edited = TreeView(Path(pristine_tree)), TreeView(Path(edited_tree))
    for tree in (pristine.root, edited.root):
        if not tree.is_dir():
            raise PatchError(f"{tree}: not a directory (refresh needs PRISTINE and EDITED trees)")
    enabled, _ = series.select(phase, features)
    steps = _replay(series, enabled, pristine)
    last: dict[str, int] = {}  # file -> index of the last patch that touches it
    for index, step in enumerate(steps):
        for rel in step.touched:
            last[rel] = index

    out = RefreshResult(series.path)
    new = _NewSeries()
    for index in range(len(steps)):
        _refresh_patch(index, steps, last, pristine, edited, new, out)
    _append_extra(series, phase, last, pristine, edited, new, out)
    _verify(series, steps, new.dropped, new.data, new.appended, pristine, edited)
    if write:
        _write(series, steps, new, out)
    return out


def _replay(series: Series, enabled: list[SeriesEntry], pristine: TreeView) -> list[_Step]:
    """The enabled patches applied in memory, in order, each with its files before and after it."""
    state = pristine.copy()
    steps: list[_Step] = []
    for entry in enabled:
        if checksum_problem(entry, series.path):
            log.warn(f"{entry.path}: changed since the series was written; refreshing from its new content")
        original = entry.path.read_bytes()
        try:
            patch = parse_patch(original)
            strip = detect_strip(patch, state)
            touched = file_paths(patch, strip)
        except DiffSyntaxError as exc:
            raise PatchError(f"cannot refresh {entry.path}: it is not a readable patch ({exc})",
                             "regenerate it or remove it from the series") from None
        result = attempt(patch, strip, state, MAX_FUZZ)
        step = _Step(entry, original, patch.preamble, touched,
                     {rel: state.read(rel) for rel in touched}, {rel: state.mode(rel) for rel in touched},
                     {}, {}, result.ok)
        if result.ok:
            assert result.view is not None
            state = result.view
            for rel in touched:
                step.after[rel], step.after_mode[rel] = state.read(rel), state.mode(rel)
        else:
            # Keep what the patch does to the files it still applies to; only the files it fails on
            # are unknown (fine when this patch is the last to touch them: they come from EDITED).
            state = state.copy()
            for report in result.files:
                fd, outcome = report.diff, report.outcome
                for rel in file_paths(Patch(b"", (fd,)), strip):
                    if outcome.ok and not fd.rename:
                        state.write(rel, outcome.new_data, fd.new_mode)
                        step.after[rel], step.after_mode[rel] = outcome.new_data, state.mode(rel)
                    else:
                        step.after[rel] = _UNKNOWN
        steps.append(step)
    return steps


def _refresh_patch(index: int, steps: list[_Step], last: dict[str, int], pristine: TreeView, edited: TreeView,
                   new: _NewSeries, out: RefreshResult) -> None:
    """Patch `index` kept, rewritten or dropped: each file goes to the edited content where this patch is
    the last to touch it, else to what the patch made of it."""
    step = steps[index]
    name = step.entry.name
    diffs: list[bytes] = []
    same = step.ok
    for rel in step.touched:
        if last[rel] == index:
            new_data, new_mode = edited.read(rel), edited.mode(rel)
        else:
            found = step.after.get(rel, _UNKNOWN)
            if found is _UNKNOWN:
                later = steps[last[rel]].entry.path
                raise PatchError(
                    f"cannot refresh {step.entry.path}: it does not apply to {pristine.root / rel}, "
                    f"and the later patch {later} changes that file too, so the edits cannot be split "
                    f"between them",
                    f"run `{RUN_TOOLKIT} patch check` to see the failing hunk, fix "
                    f"{step.entry.name} first, then refresh")
            new_data, new_mode = cast("bytes | None", found), step.after_mode.get(rel, 0o100644)
        if step.ok and (new_data != step.after[rel] or new_mode != step.after_mode[rel]):
            same = False
        old = step.before[rel]
        diffs.append(write_file_diff(rel, old, new_data, step.before_mode[rel] if old is not None else None,
                                     new_mode if new_data is not None else None))
    if same:
        out.statuses.append((name, "unchanged"))
        new.data[name] = step.original
        return
    body = b"".join(diffs)
    if not body:
        new.dropped.add(name)
        out.statuses.append((name, "dropped from the series: the edited tree no longer has any of its changes"))
        return
    data = step.preamble + body
    new.data[name] = data
    new.sha_updates[name] = sha256_bytes(data)
    out.statuses.append((name, f"rewritten ({', '.join(step.touched)})"))


def _append_extra(series: Series, phase: str, last: dict[str, int], pristine: TreeView, edited: TreeView,
                  new: _NewSeries, out: RefreshResult) -> None:
    """Edits to files no enabled patch touches go into one new patch at the end."""
    extra: list[bytes] = []
    extra_files: list[str] = []
    for rel in sorted(_files(pristine.root) | _files(edited.root)):
        if rel in last:
            continue
        old, new_data = pristine.read(rel), edited.read(rel)
        old_mode = pristine.mode(rel) if old is not None else None
        new_mode = edited.mode(rel) if new_data is not None else None
        diff = write_file_diff(rel, old, new_data, old_mode, new_mode)
        if diff:
            extra.append(diff)
            extra_files.append(rel)
    if not extra:
        return
    name = _next_name(series)
    data = b"".join(extra)
    new.data[name] = data
    why = (f"Added by refresh: edits to {', '.join(extra_files)}, which no patch touched.\n"
           f"TODO: replace these lines with why this change is needed.")
    new.appended.append((name, phase, sha256_bytes(data), why))
    out.statuses.append((name, f"added ({', '.join(extra_files)}); say why it exists in the series"))


def _write(series: Series, steps: list[_Step], new: _NewSeries, out: RefreshResult) -> None:
    """Patch files first, the series last, each atomically; a patch whose file changed on disk is rewritten."""
    for step in steps:
        name = step.entry.name
        if name in new.sha_updates or (name not in new.dropped and checksum_problem(step.entry, series.path)):
            atomic_write_bytes(step.entry.path, new.data[name])
            new.sha_updates[name] = sha256_bytes(new.data[name])
            out.written.append(step.entry.path)
    for name, *_ in new.appended:
        atomic_write_bytes(series.directory / name, new.data[name])
        out.written.append(series.directory / name)
    text = rewrite_series(series, new.sha_updates, new.dropped, new.appended)
    if text != series.text:
        write_series(series.path, text)
        out.written.append(series.path)


def _verify(series: Series, steps: list[_Step], dropped: set[str], new_bytes: dict[str, bytes],
            appended: list[tuple[str, str, str, str]], pristine: TreeView, edited: TreeView) -> None:
    """Apply the new patches to the pristine tree in memory; the result must be the edited tree."""
    state = pristine.copy()
    names = [s.entry for s in steps if s.entry.name not in dropped]
    order = [(e, new_bytes[e.name]) for e in names] + [(None, new_bytes[a[0]]) for a in appended]
    for entry, data in order:
        label = entry.path if entry else series.directory / appended[0][0]
        patch = parse_patch(data)
        result = attempt(patch, detect_strip(patch, state), state, MAX_FUZZ)
        if not result.ok:
            raise PatchError(f"refresh produced {label}, which does not apply in sequence; nothing was written",
                             "this is a toolkit bug: please report it with the trees")
        assert result.view is not None
        state = result.view
    for rel in sorted(_files(pristine.root) | _files(edited.root) | set(state.changes)):
        if state.read(rel) != edited.read(rel):
            raise PatchError(f"refresh could not reproduce {edited.root / rel} from the new series; "
                             f"nothing was written", "this is a toolkit bug: please report it with the trees")
