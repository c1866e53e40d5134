"""The recipe a bump is building up, in a scratch copy of its files, until it is written all at once.

The copy keeps the recipe's folder and its series' folder at the same places relative to each other, so
`extends`, `[patches] series` and the lock file resolve as in the project, and a build (the survey) can run
on the copy as on the real recipe. At the end, what differs is mapped back onto the project's files.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.recipe.load import Recipe, load_recipe
from toolkit.sources.lock import LockFile, lock_path_for, write_lock
from toolkit.upstream import edit
from toolkit.upstream.patches import SeriesPlan, write_to

if TYPE_CHECKING:
    from toolkit.upstream.dep_changes import DepChange


@dataclass
class Staging:
    recipe: Recipe
    base: Path  # the project folder the copied folders are relative to
    root: Path  # the scratch copy
    # Project files the bump changed in the copy: only these are written back (another recipe edited meanwhile
    # in the project is never reverted to the copy's older text).
    touched: set[Path] = field(default_factory=set)

    @classmethod
    def create(cls, recipe: Recipe, scratch: Path) -> Staging:
        """Copy the recipe, its lock file, the file it extends and its series' folder into `scratch`."""
        files = [recipe.file, lock_path_for(recipe.file)] + _extended(recipe.file)
        folders = [recipe.series.parent] if recipe.series else []
        base = Path(os.path.commonpath([str(p.parent) for p in files] + [str(f) for f in folders]))
        shutil.rmtree(scratch, ignore_errors=True)
        for path in files:
            if path.is_file():
                (scratch / path.relative_to(base)).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, scratch / path.relative_to(base))
        for folder in folders:
            shutil.copytree(folder, scratch / folder.relative_to(base), dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("*.toolkit-bump.tmp"))
        return cls(recipe, base, scratch)

    def here(self, path: Path) -> Path:
        return self.root / Path(path).relative_to(self.base)

    @property
    def recipe_file(self) -> Path:
        return self.here(self.recipe.file)

    @property
    def lock_file(self) -> Path:
        return lock_path_for(self.recipe_file)

    def edit_recipe(self, change: Callable[[str], str]) -> None:
        path = self.recipe_file
        self.touched.add(self.recipe.file)
        path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8")

    def set_content(self, url: str, content: str | None, drop: str | None = None) -> None:
        """Pin `url` by content in the copy's lock file (dropping the pin of the URL it replaces)."""
        lock = LockFile.load(self.lock_file)
        self.touched.add(lock_path_for(self.recipe.file))
        contents = dict(lock.contents)
        if drop is not None:
            contents.pop(drop, None)
        if content is not None:
            contents[url] = content
        write_lock(self.lock_file, self.recipe.file.name, dict(lock.pins), contents)

    def write_series(self, plan: SeriesPlan) -> None:
        folder = self.here(plan.series.path.parent)
        self.touched.add(plan.series.path)
        for entry in plan.series.entries:
            self.touched.add(entry.path)
            self.here(entry.path).unlink(missing_ok=True)
        write_to(plan, folder)

    def load(self) -> Recipe:
        """The copy's recipe, read and validated as any recipe is."""
        return load_recipe(self.recipe_file)

    def changes(self) -> tuple[dict[Path, bytes], list[Path]]:
        """(project file -> new bytes, project files to delete): what the bump changed in the copy."""
        writes: dict[Path, bytes] = {}
        deletes: list[Path] = []
        for real in sorted(self.touched):
            copy = self.here(real)
            if not copy.is_file():
                if real.is_file():
                    deletes.append(real)
                continue
            data = copy.read_bytes()
            if not real.is_file() or real.read_bytes() != data:
                writes[real] = data
        return writes, deletes


def dep_edits(staging: Staging, changes: Iterable[DepChange]) -> None:
    """Apply pinned dependency changes (added, re-versioned, removed) to the copy's recipe and lock."""
    from toolkit.upstream.dep_changes import ADDED, REMOVED, REVERSIONED

    # partial rather than a lambda binding c as a default: mypy cannot match such a lambda to Callable[[str], str].
    for c in changes:
        if c.kind == REVERSIONED and c.content:
            assert c.new_url is not None  # deps.pin sets it with the content
            staging.edit_recipe(partial(edit.set_dep_url, name=c.name, url=c.new_url))
            staging.set_content(c.new_url, c.content, drop=c.recipe_url)
        elif c.kind == ADDED and c.content:
            assert c.new_url is not None  # deps.pin sets it with the content
            why = f"Added by `bump`: the tree declares {c.declared}."
            staging.edit_recipe(partial(edit.add_dep, name=c.name, url=c.new_url, why=why))
            staging.set_content(c.new_url, c.content)
        elif c.kind == REMOVED:
            assert c.recipe_url is not None  # a removed dependency is one the recipe has
            staging.edit_recipe(partial(edit.remove_dep, name=c.name))
            staging.set_content(c.recipe_url, None, drop=c.recipe_url)


def _extended(recipe_file: Path) -> list[Path]:
    """The shared fragment a recipe extends ([recipe] extends), if any."""
    import tomllib

    data = tomllib.loads(recipe_file.read_text(encoding="utf-8"))
    extends = data.get("recipe", {}).get("extends")
    return [(recipe_file.parent / extends).resolve()] if extends else []
