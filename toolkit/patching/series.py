"""The series file: which patches apply, in which order, in which phase, and why.

Format (one entry per patch, in order; the `#` lines directly above an entry say why it exists):

    # Rename the hipep backend to hipdnn, as asked in review.
    0001-rename-hipep-to-hipdnn.patch phase=base sha256=<64 hex>
    # Only for hipDNN builds.
    0002-hipdnn-only.patch phase=hipified sha256=<64 hex> when=hipdnn

Fields: `phase` is `base` (applied before hipify) or `hipified` (after); `sha256` is the patch file's
checksum; `when` (optional) lists features that must all be enabled, `!name` one that must be off.
Revision conditions (optional, for a series that serves several revisions of the tree) say on which trees
the patch is needed, judged on the fetched source before any patch: `if-tree-has=PATH[:TEXT]` (needed only
while the file exists, holding TEXT), `unless-tree-has=PATH[:TEXT]` (not needed once it does: the fix is
upstream). A value with spaces is quoted: `unless-tree-has="src/a.cc:return 0;"`. Revision ranges are not
offered: a build fetches one commit without its history, so only the tree itself can be asked.
Comments separated from an entry by a blank line are file comments, not a reason. Every mistake is an
error naming the series file and line, because a series that is read loosely is a series nobody trusts.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from toolkit.patching.errors import SeriesError
from toolkit.util.argcheck import is_sha256
from toolkit.util.fsutil import atomic_write_text, sha256_file
from toolkit.util.redact import shorten

PHASES = ("base", "hipified")
CONDITIONS = ("if-tree-has", "unless-tree-has")
FIELDS = ("phase", "sha256", "when", *CONDITIONS)
_FEATURE = re.compile(r"!?[A-Za-z0-9][A-Za-z0-9_.-]*")


@dataclass(frozen=True)
class TreeCondition:
    """`if-tree-has` / `unless-tree-has`: whether the source tree holds `text` in `path` (or the file at all)."""

    field: str
    path: str
    text: str | None

    def found(self, tree: Path) -> bool:
        file = Path(tree) / self.path
        if not file.is_file():
            return False
        return self.text is None or self.text.encode("utf-8") in file.read_bytes()

    def why_not_needed(self, tree: Path) -> str | None:
        """None when this condition wants the patch on `tree`, else why not."""
        what = f"{self.path}" + (f" holding {self.text!r}" if self.text is not None else "")
        found = self.found(tree)
        if self.field == "if-tree-has" and not found:
            return f"not needed on this revision: the tree has no {what} ({self.field})"
        if self.field == "unless-tree-has" and found:
            return f"not needed on this revision: the tree has {what} ({self.field})"
        return None

    def token(self) -> str:
        value = self.path if self.text is None else f"{self.path}:{self.text}"
        return f"{self.field}={shlex.quote(value)}"


@dataclass(frozen=True)
class SeriesEntry:
    name: str  # the patch file name as written in the series
    path: Path  # the patch file
    phase: str
    sha256: str
    when: tuple[str, ...]  # features; "!x" means x must be off
    why: str  # the comment lines above the entry, joined with newlines
    line: int  # 1-based line of the entry in the series file
    comment_line: int  # 1-based line where the why-comment starts
    conditions: tuple[TreeCondition, ...] = ()  # on which revisions of the tree it is needed

    def why_not_needed(self, tree: Path) -> str | None:
        """None when the tree (the fetched source, before any patch) needs this patch, else why not."""
        for condition in self.conditions:
            reason = condition.why_not_needed(tree)
            if reason:
                return reason
        return None

    def enabled(self, features: Iterable[str]) -> bool:
        on = set(features)
        for cond in self.when:
            if cond.startswith("!"):
                if cond[1:] in on:
                    return False
            elif cond not in on:
                return False
        return True

    def where(self, series_path: Path) -> str:
        return f"{series_path}:{self.line}"


@dataclass(frozen=True)
class Series:
    path: Path
    entries: tuple[SeriesEntry, ...]
    text: str = field(repr=False)

    @property
    def directory(self) -> Path:
        return self.path.parent

    def select(self, phase: str | None, features: Iterable[str]) -> tuple[list[SeriesEntry], list[SeriesEntry]]:
        """(enabled, disabled-by-features) entries of `phase` (None: every phase), in series order."""
        feats = set(features)
        enabled: list[SeriesEntry] = []
        disabled: list[SeriesEntry] = []
        for e in self.entries:
            if phase is not None and e.phase != phase:
                continue
            (enabled if e.enabled(feats) else disabled).append(e)
        return enabled, disabled

    def for_tree(self, tree: Path) -> tuple[Series, list[tuple[SeriesEntry, str]]]:
        """The series with only the entries this source tree needs, and (entry, why) for those it does not."""
        kept: list[SeriesEntry] = []
        skipped: list[tuple[SeriesEntry, str]] = []
        for e in self.entries:
            reason = e.why_not_needed(tree)
            if reason is None:
                kept.append(e)
            else:
                skipped.append((e, reason))
        return replace(self, entries=tuple(kept)), skipped


def load_series(path: Path) -> Series:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SeriesError(f"{path}: series file not found",
                          "each recipe's series lives at patches/<recipe>/series") from None
    except UnicodeDecodeError as exc:
        raise SeriesError(f"{path}: not UTF-8 text ({exc})") from None
    entries: list[SeriesEntry] = []
    seen: dict[str, int] = {}
    why: list[str] = []
    why_start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            why = []
            continue
        if line.startswith("#"):
            if not why:
                why_start = number
            why.append(line[1:].strip())
            continue
        entry = _parse_entry(path, number, line, why, why_start)
        if entry.name in seen:
            raise SeriesError(f"{path}:{number}: patch '{shorten(entry.name, 80)}' is listed twice "
                              f"(first on line {seen[entry.name]})",
                              "a patch applies once: remove one of the two lines")
        seen[entry.name] = number
        entries.append(entry)
        why = []
    return Series(path, tuple(entries), text)


def _parse_entry(path: Path, number: int, line: str, why: list[str], why_start: int) -> SeriesEntry:
    where = f"{path}:{number}"
    try:
        tokens = shlex.split(line)
    except ValueError as exc:
        raise SeriesError(f"{where}: cannot split the entry into fields ({exc})",
                          "close the quotes around a value with spaces: unless-tree-has=\"PATH:TEXT\"") from None
    name = tokens[0]
    if "=" in name:
        raise SeriesError(f"{where}: expected a patch file name first, got '{shorten(name, 60)}'",
                          "an entry reads: NAME.patch phase=base|hipified sha256=HEX [when=FEATURE,...]")
    if name.startswith("/") or ".." in Path(name).parts:
        raise SeriesError(f"{where}: patch path '{shorten(name, 80)}' must be relative to the series folder, "
                          "without '..'")
    if not why or not any(why):
        raise SeriesError(f"{where}: patch '{shorten(name, 80)}' has no comment saying why it exists",
                          "put one or more '# reason' lines directly above the entry")
    values: dict[str, str] = {}
    for token in tokens[1:]:
        key, eq, value = token.partition("=")
        if not eq:
            raise SeriesError(f"{where}: '{shorten(token, 60)}' is not a key=value field (known fields: "
                              f"{', '.join(FIELDS)})")
        if key not in FIELDS:
            raise SeriesError(f"{where}: unknown field '{shorten(key, 60)}' (known fields: {', '.join(FIELDS)})")
        if key in values:
            raise SeriesError(f"{where}: field '{key}' given twice")
        values[key] = value
    for key in ("phase", "sha256"):
        if key not in values:
            raise SeriesError(f"{where}: patch '{shorten(name, 80)}' lacks the required field '{key}'",
                              "an entry reads: NAME.patch phase=base|hipified sha256=HEX [when=FEATURE,...]")
    if values["phase"] not in PHASES:
        raise SeriesError(f"{where}: phase '{shorten(values['phase'], 60)}' is not one of {', '.join(PHASES)}",
                          "base: applied to the fetched source before hipify; hipified: to hipify's output")
    if not is_sha256(values["sha256"]):
        raise SeriesError(f"{where}: sha256 '{shorten(values['sha256'], 80)}' is not 64 lowercase hex digits",
                          f"compute it with: sha256sum {path.parent / name}")
    when: tuple[str, ...] = ()
    if "when" in values:
        when = tuple(values["when"].split(","))
        bad = [w for w in when if not _FEATURE.fullmatch(w)]
        if bad:
            raise SeriesError(f"{where}: when='{shorten(values['when'], 60)}' has a bad feature name "
                              f"'{shorten(bad[0], 60)}'",
                              "write when=feature1,feature2 (all must be enabled; !feature: must be off)")
    conditions = tuple(_condition(where, key, values[key]) for key in CONDITIONS if key in values)
    patch_path = path.parent / name
    if patch_path.is_symlink() and not patch_path.resolve().is_relative_to(path.parent.resolve()):
        raise SeriesError(f"{where}: patch file {patch_path} is a link out of the series folder "
                          f"({patch_path.resolve()}); a series names only patches inside its folder")
    if not patch_path.is_file():
        raise SeriesError(f"{where}: patch file {shorten(patch_path, 200)} not found",
                          "add the file, or remove its entry from the series")
    return SeriesEntry(name, patch_path, values["phase"], values["sha256"], when, "\n".join(why), number, why_start,
                       conditions)


def _condition(where: str, key: str, value: str) -> TreeCondition:
    file, sep, text = value.partition(":")
    if not file or file.startswith("/") or ".." in Path(file).parts or (sep and not text):
        raise SeriesError(f"{where}: {key}={shorten(value, 80)!r} must be PATH or PATH:TEXT, PATH relative to the "
                          "tree without '..' and TEXT not empty",
                          f"for instance {key}=\"src/CMakeLists.txt:option(USE_HIP\"")
    return TreeCondition(key, file, text if sep else None)


def checksum_problem(entry: SeriesEntry, series_path: Path) -> str | None:
    """None when the patch file still has the checksum the series records, else what is wrong."""
    actual = sha256_file(entry.path)
    if actual == entry.sha256:
        return None
    return (f"sha256 of {entry.path} is {actual}, but {series_path}:{entry.line} records {entry.sha256}: "
            f"the patch file changed since the series was written")


def entry_line(name: str, phase: str, sha256: str, when: tuple[str, ...],
               conditions: tuple[TreeCondition, ...] = ()) -> str:
    fields = f"{name} phase={phase} sha256={sha256}"
    if when:
        fields += f" when={','.join(when)}"
    for condition in conditions:
        fields += f" {condition.token()}"
    return fields


def rewrite_series(series: Series, sha_updates: dict[str, str], dropped: set[str],
                   appended: list[tuple[str, str, str, str]]) -> str:
    """The series text with new checksums, dropped entries (and their comments) removed and entries
    appended. appended: (name, phase, sha256, why). Everything else (comments, blank lines) is kept."""
    lines = series.text.splitlines()
    remove: set[int] = set()
    for e in series.entries:
        if e.name in dropped:
            remove.update(range(e.comment_line, e.line + 1))
        elif e.name in sha_updates:
            lines[e.line - 1] = entry_line(e.name, e.phase, sha_updates[e.name], e.when, e.conditions)
    out = [text for n, text in enumerate(lines, start=1) if n not in remove]
    for name, phase, sha, why in appended:
        if out and out[-1].strip():
            out.append("")
        out.extend(f"# {w}" if w else "#" for w in why.splitlines())
        out.append(entry_line(name, phase, sha, ()))
    return "\n".join(out) + "\n"


def write_series(path: Path, text: str) -> None:
    atomic_write_text(path, text)


def pins(entries: Iterable[SeriesEntry]) -> list[tuple[str, str]]:
    """(name, sha256 of the patch file) of each entry: what a build records of the patches it applied."""
    return [(e.name, sha256_file(e.path)) for e in entries]
