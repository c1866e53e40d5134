"""A revision's CMake surface against the recipe: the options it declares, the libraries its install rules
ship. Read the way the build reads them: options with toolkit.recipe.features (the spelling each feature
takes), libraries from the cmake_install.cmake files a configure wrote (what `cmake --install` would copy).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.recipe import features as feat
from toolkit.recipe.load import Recipe

_INSTALLED = re.compile(r'FILES\s+((?:"[^"]*"\s*)+)')
_QUOTED = re.compile(r'"([^"]*)"')
_LIBRARY = re.compile(r"^lib(.+)\.so$")


def tree_options(recipe: Recipe, tree: Path) -> set[str]:
    """The CMake options the tree declares where the build looks for them ([build] option_files)."""
    return feat.declared_options(feat.cmake_option_files(tree, recipe.build.option_files))


def install_libraries(binary_dir: Path) -> list[str]:
    """Names (without lib and .so) of the shared libraries the tree's own install rules ship; the FetchContent
    dependencies' rules (under _deps/) are theirs, not the tree's."""
    names: set[str] = set()
    for script in sorted(Path(binary_dir).rglob("cmake_install.cmake")):
        if "_deps" in script.relative_to(binary_dir).parts:
            continue
        for match in _INSTALLED.finditer(script.read_text(encoding="utf-8", errors="replace")):
            for path in _QUOTED.findall(match.group(1)):
                found = _LIBRARY.match(Path(path).name)
                if found:
                    names.add(found.group(1))
    return sorted(names)


@dataclass
class FeatureChange:
    feature: str
    old: str | None  # the option the pinned tree spells it with
    new: str | None  # the one the new tree does (None: it declares none of the recipe's spellings)
    candidates: list[str] = field(default_factory=list)  # options the new tree added that may be it

    @property
    def lost(self) -> bool:
        return self.new is None and self.old is not None


@dataclass
class OptionChanges:
    added: list[str]
    removed: list[str]
    features: list[FeatureChange]  # features whose spelling changed, or that the new tree lacks

    @property
    def lost(self) -> list[FeatureChange]:
        return [f for f in self.features if f.lost]


def compare_options(recipe: Recipe, old: set[str], new: set[str]) -> OptionChanges:
    added, removed = sorted(new - old), sorted(old - new)
    changes = []
    for name, feature in recipe.features.items():
        before = next((s.define for s in feature.spellings if s.define in old), None)
        after = next((s.define for s in feature.spellings if s.define in new), None)
        if before == after:
            continue
        change = FeatureChange(name, before, after)
        if after is None and before is not None:
            change.candidates = difflib.get_close_matches(before, added, n=3, cutoff=0.4) or added[:3]
        changes.append(change)
    return OptionChanges(added, removed, changes)


@dataclass
class LibraryChanges:
    expected: list[str]  # what the recipe's outputs say for the surveyed features
    installed: list[str]  # what the new tree's install rules ship
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (recipe's name, the likely new one)
    missing: list[str] = field(default_factory=list)  # expected, not shipped, no likely new name
    extra: list[str] = field(default_factory=list)  # shipped, not expected

    @property
    def changed(self) -> bool:
        return bool(self.renamed or self.missing)


def compare_libraries(expected: list[str], installed: list[str]) -> LibraryChanges:
    out = LibraryChanges(sorted(expected), sorted(installed))
    gone = [n for n in expected if n not in installed]
    new = [n for n in installed if n not in expected]
    for name in gone:
        match = difflib.get_close_matches(name, new, n=1, cutoff=0.5)
        if match:
            out.renamed.append((name, match[0]))
            new.remove(match[0])
        else:
            out.missing.append(name)
    out.extra = new
    return out
