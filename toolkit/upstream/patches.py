"""The patch series on a new revision: what happens to each patch, and the series `bump` would write.

Each patch is judged by the toolkit's analysis (toolkit.patching.analyze) on the new tree, in order, as a
build would apply it, and given one action:
- keep:       it applies cleanly;
- refresh:    it applies with an offset or fuzz: regenerated against the new tree, so the next drift starts
              from exact context (same preamble, same effect, new line numbers);
- drop:       the tree already holds its change (upstream took it): removed from the series;
- conflict:   it does not apply: the analysis' hunks say where, and a person must fix it;
- not needed: its revision condition (if-tree-has / unless-tree-has) says this tree does not need it: kept,
              since the series serves the revisions that do.
The new series is checked before anything is written: applied to the new tree in memory, every patch must
apply cleanly.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from toolkit import patching
from toolkit.patching.diff import parse_patch, write_file_diff
from toolkit.patching.series import rewrite_series
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import sha256_bytes

KEEP, REFRESH, DROP, CONFLICT, NOT_NEEDED, NOT_CHECKED = (
    "keep", "refresh", "drop", "conflict", "not needed", "not checked")
_ACTIONS = {"clean": KEEP, "offset": REFRESH, "fuzz": REFRESH, "applied": DROP, "disabled": NOT_CHECKED}


@dataclass
class Verdict:
    name: str
    action: str
    summary: str  # the analysis line (what the build would print)
    details: list[str] = field(default_factory=list)  # the failing hunks, for a conflict


@dataclass
class SeriesPlan:
    series: patching.Series
    verdicts: list[Verdict] = field(default_factory=list)
    rewritten: dict[str, bytes] = field(default_factory=dict)  # patch file name -> new content
    text: str = ""  # the new series file

    @property
    def conflicts(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.action == CONFLICT]

    @property
    def dropped(self) -> list[str]:
        return [v.name for v in self.verdicts if v.action == DROP]

    @property
    def changed(self) -> bool:
        return self.text != self.series.text or bool(self.rewritten)


def series_features(series: patching.Series, defaults: list[str]) -> list[str]:
    """Every feature a patch of the series asks for, with the defaults: so each patch is judged."""
    asked = {w for e in series.entries for w in e.when if not w.startswith("!")}
    return sorted(set(defaults) | asked)


def plan(series: patching.Series, tree: Path, features: list[str]) -> SeriesPlan:
    """Judge every patch of `series` on `tree` (the new revision's pristine source)."""
    result = SeriesPlan(series)
    needed, skipped = series.for_tree(tree)
    not_needed = {e.name: why for e, why in skipped}
    analyses = {a.entry.name: a for a in patching.analyze(needed, tree, "base", features)}
    state: dict[str, bytes | None] = {}
    sha_updates: dict[str, str] = {}
    for entry in series.entries:
        if entry.name in not_needed:
            result.verdicts.append(Verdict(entry.name, NOT_NEEDED, not_needed[entry.name]))
            continue
        if entry.phase != "base":
            result.verdicts.append(Verdict(entry.name, NOT_CHECKED, "phase hipified: judged by a build, on "
                                                                    "hipify's output of this revision"))
            continue
        a = analyses[entry.name]
        action = _ACTIONS.get(a.status, CONFLICT)
        result.verdicts.append(Verdict(entry.name, action, a.summary, list(a.details) if action == CONFLICT else []))
        if action == REFRESH:
            data = regenerate(entry.path.read_bytes(), a.changes, state, tree)
            result.rewritten[entry.name] = data
            sha_updates[entry.name] = sha256_bytes(data)
        for rel, (after, _mode) in a.changes.items():
            state[rel] = after
    result.text = rewrite_series(series, sha_updates, set(result.dropped), [])
    if not result.conflicts:
        verify(result, tree, features)
    return result


def regenerate(original: bytes, changes: dict[str, tuple[bytes | None, int | None]], state: dict[str, bytes | None],
               tree: Path) -> bytes:
    """The patch made anew from what it does (`changes`) to the tree as the patches before it left it."""
    body = []
    for rel in sorted(changes):
        new, new_mode = changes[rel]
        old = state[rel] if rel in state else _read(tree / rel)
        old_mode = _mode(tree / rel) if old is not None else None
        if new_mode is None and new is not None:
            new_mode = old_mode  # the patch leaves the mode as it was
        body.append(write_file_diff(rel, old, new, old_mode, new_mode))
    return parse_patch(original).preamble + b"".join(body)


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() and not path.is_symlink() else None


def _mode(path: Path) -> int | None:
    try:
        return 0o100000 | (os.stat(path).st_mode & 0o7777)
    except FileNotFoundError:
        return None


def verify(result: SeriesPlan, tree: Path, features: list[str]) -> None:
    """The new series, in a scratch copy of its folder, must apply cleanly to the new tree."""
    scratch = Path(tempfile.mkdtemp(prefix=".bump-series-"))
    try:
        staged = write_to(result, scratch)
        needed, _ = patching.load_series(staged).for_tree(tree)
        bad = [a for a in patching.analyze(needed, tree, "base", features) if a.status not in ("clean", "disabled")]
        if bad:
            raise ToolkitError("bump: the refreshed series does not apply cleanly to the new revision:\n"
                               + patching.format_report(bad), hint="this is a toolkit bug: please report it")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def write_to(result: SeriesPlan, folder: Path) -> Path:
    """The new series and its patch files (dropped ones left out) in `folder`; returns the series path."""
    folder.mkdir(parents=True, exist_ok=True)
    dropped = set(result.dropped)
    for entry in result.series.entries:
        if entry.name in dropped:
            continue
        target = folder / entry.name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(result.rewritten.get(entry.name) or entry.path.read_bytes())
    path = folder / result.series.path.name
    path.write_text(result.text, encoding="utf-8")
    return path
