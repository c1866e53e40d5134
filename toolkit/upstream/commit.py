"""Writing a bump into the project: several files (recipe, lock, series, patch files) all or nothing.

Every new file is first written beside its destination under a temporary name and synced; then a journal
(<project>/.toolkit-bump-journal.json) lists the renames and deletions still to do, and only then are they
done. A crash before the journal exists leaves the project as it was (at most a stray `*.toolkit-bump.tmp`,
which the next bump of that file overwrites); after, the next bump finishes what the journal lists. No
half-written recipe is ever left in place.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from toolkit.util import log
from toolkit.util.fsutil import atomic_write_text

JOURNAL = ".toolkit-bump-journal.json"
_TMP = ".toolkit-bump.tmp"


def _fsync_write(path: Path, data: bytes) -> None:
    with open(path, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())


def commit(project: Path, writes: dict[Path, bytes], deletes: list[Path]) -> list[Path]:
    """Replace every file in `writes` and remove every file in `deletes`, all or nothing; returns what changed."""
    project = Path(project)
    recover(project)
    changed = [p for p, data in writes.items() if not p.is_file() or p.read_bytes() != data]
    deletes = [p for p in deletes if p.exists()]
    if not changed and not deletes:
        return []
    staged = []
    try:
        for path in changed:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(path.name + _TMP)
            _fsync_write(tmp, writes[path])
            if path.exists():
                os.chmod(tmp, path.stat().st_mode & 0o7777)
            staged.append((str(tmp), str(path)))
    except BaseException:
        for name, _ in staged:
            Path(name).unlink(missing_ok=True)
        raise
    atomic_write_text(project / JOURNAL, json.dumps({"rename": staged, "delete": [str(p) for p in deletes]}) + "\n")
    _finish(project)
    return changed + deletes


def recover(project: Path) -> None:
    """Finish a bump a crash interrupted after its journal was written; drop temporaries of one before."""
    journal = Path(project) / JOURNAL
    if journal.is_file():
        log.warn(f"bump: finishing an interrupted bump ({journal})")
        _finish(Path(project))


def _finish(project: Path) -> None:
    journal = project / JOURNAL
    todo = json.loads(journal.read_text(encoding="utf-8"))
    for tmp, dest in todo["rename"]:
        if Path(tmp).exists():
            os.replace(tmp, dest)
    for path in todo["delete"]:
        Path(path).unlink(missing_ok=True)
    journal.unlink()
