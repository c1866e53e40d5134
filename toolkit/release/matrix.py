"""The release matrix: Python versions x GPU target sets x feature sets, one entry per wheel.

Planning is kept apart from building so a CI system can ask for the matrix (`--print-matrix`), fan the
entries out across machines, and have each machine build one entry (`--only ID`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from toolkit.release.settings import ReleaseSettings
from toolkit.util.errors import ToolkitError


@dataclass(frozen=True)
class Entry:
    id: str                      # e.g. cp311-gfx90a_gfx942-hipdnn
    python: str                  # "3.11"
    target_set: str              # the set's name
    gpu_targets: tuple[str, ...]
    features: tuple[str, ...]

    @property
    def python_tag(self) -> str:
        return "cp" + self.python.replace(".", "")

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "python": self.python,
            "python_tag": self.python_tag,
            "target_set": self.target_set,
            "gpu_targets": list(self.gpu_targets),
            # CMake and hipcc take target lists separated by ';'
            "gpu_targets_cmake": ";".join(self.gpu_targets),
            "features": list(self.features),
            "args": ["--only", self.id],
        }


def entry_id(python: str, target_set: str, features: tuple[str, ...]) -> str:
    parts = ["cp" + python.replace(".", ""), target_set]
    if features:
        parts.append("+".join(features))
    return "-".join(parts)


def plan_matrix(settings: ReleaseSettings) -> list[Entry]:
    entries = []
    for python in settings.python:
        for target_set in settings.target_sets:
            for features in settings.features:
                entries.append(Entry(entry_id(python, target_set.name, features), python,
                                     target_set.name, target_set.targets, features))
    return entries


def select(entries: list[Entry], only: list[str] | None) -> list[Entry]:
    """The entries named in `only` (all when None), in matrix order; unknown ids are an error."""
    if not only:
        return list(entries)
    by_id = {e.id: e for e in entries}
    unknown = [i for i in only if i not in by_id]
    if unknown:
        raise ToolkitError(f"--only {unknown[0]}: no such matrix entry",
                           hint="known entries: " + ", ".join(by_id) + " (see --print-matrix)")
    wanted = set(only)
    return [e for e in entries if e.id in wanted]


def matrix_json(entries: list[Entry]) -> str:
    """GitHub Actions-style `{"include": [...]}`: usable as `strategy.matrix` via fromJSON()."""
    return json.dumps({"include": [e.to_json() for e in entries]}, indent=2) + "\n"
