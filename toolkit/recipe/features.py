"""Which features a build turns on, and how the source tree at hand spells each one.

Option resolution is kept apart from execution (as cibuildwheel does): the build first settles the
feature set and the CMake defines, prints them, and only then runs anything.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from toolkit.recipe.core import Feature, Output, Spelling
from toolkit.recipe.load import Recipe
from toolkit.util.errors import ToolkitError


def host_platform() -> str:
    return "windows" if sys.platform.startswith("win") else "linux"


def select_features(recipe: Recipe, with_: Iterable[str], without: Iterable[str],
                    platform: str | None = None) -> dict[str, bool]:
    """Defaults from the recipe, then --with/--without; implied features follow their parent."""
    platform = platform or host_platform()
    with_, without = list(with_), list(without)
    for name in with_ + without:
        if name not in recipe.features:
            raise ToolkitError(
                f"unknown feature '{name}' for recipe '{recipe.name}'",
                hint=f"features: {', '.join(recipe.features)} (see {recipe.file})",
            )
    both = sorted(set(with_) & set(without))
    if both:
        raise ToolkitError(f"feature '{both[0]}' given both as --with-{both[0]} and --without-{both[0]}")

    chosen = {name: f.default and platform in f.platforms for name, f in recipe.features.items()}
    for name in with_:
        chosen[name] = True
    for name in without:
        chosen[name] = False

    for name, on in chosen.items():
        feature = recipe.features[name]
        if on and platform not in feature.platforms:
            raise ToolkitError(
                f"feature '{name}' is not available on {platform} "
                f"(recipe {recipe.file}, features.{name}.platforms = {list(feature.platforms)})",
                hint=f"drop --with-{name}",
            )
        if not on:
            continue
        for implied in feature.implies:
            if implied in without:
                raise ToolkitError(
                    f"feature '{implied}' is required by '{name}' "
                    f"(recipe {recipe.file}, features.{name}.implies)",
                    hint=f"pass --without-{name} as well, or drop --without-{implied}",
                )
            chosen[implied] = True
    return chosen


_OPTION = re.compile(r"\boption\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)")


def declared_options(read_files: Iterable[tuple[str, str]]) -> set[str]:
    """Names of every CMake `option(...)` in the given (path, text) pairs."""
    names: set[str] = set()
    for _, text in read_files:
        names.update(_OPTION.findall(text))
    return names


def cmake_option_files(tree: Path, roots: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(relative path, text) of every CMakeLists.txt and *.cmake file under the given roots."""
    for root in roots:
        base = tree / root
        if base.is_file():
            yield root, base.read_text(encoding="utf-8", errors="replace")
        elif base.is_dir():
            for path in sorted(base.rglob("*")):
                if path.is_file() and (path.name == "CMakeLists.txt" or path.suffix == ".cmake"):
                    yield path.relative_to(tree).as_posix(), path.read_text(encoding="utf-8", errors="replace")


@dataclass(frozen=True)
class ResolvedFeature:
    name: str
    on: bool
    spelling: Spelling


def resolve_spellings(recipe: Recipe, chosen: dict[str, bool], options: set[str] | None,
                      tree_label: str) -> dict[str, ResolvedFeature]:
    """Map each feature to the first spelling the tree declares; a feature that is off may be absent.

    options=None means the tree is not there yet (a dry run before fetching): take the preferred spelling.
    """
    resolved = {}
    for name, feature in recipe.features.items():
        spelling = feature.spellings[0] if options is None else _pick(feature, options)
        if spelling is None:
            if chosen[name]:
                wanted = ", ".join(s.define for s in feature.spellings)
                raise ToolkitError(
                    f"feature '{name}' is on, but the source tree {tree_label} declares none of its "
                    f"CMake options ({wanted})",
                    hint=f"check the source revision, or add its spelling to features.{name} in {recipe.file}",
                )
            spelling = feature.spellings[0]
        resolved[name] = ResolvedFeature(name, chosen[name], spelling)
    return resolved


def _pick(feature: Feature, options: set[str]) -> Spelling | None:
    for spelling in feature.spellings:
        if spelling.define in options:
            return spelling
    return None


def cmake_defines(recipe: Recipe, resolved: dict[str, ResolvedFeature]) -> dict[str, str]:
    """Each feature's option ON or OFF, with the extra defines the feature gives in that state."""
    out = {}
    for f in resolved.values():
        out[f.spelling.define] = "ON" if f.on else "OFF"
        feature = recipe.features[f.name]
        out.update(feature.on_defines if f.on else feature.off_defines)
    return out


def output_wanted(output: Output, resolved: dict[str, ResolvedFeature]) -> bool:
    """Whether this feature set builds the output: its `feature` on, its `unless` off."""
    return ((output.feature is None or resolved[output.feature].on)
            and (output.unless is None or not resolved[output.unless].on))


def carried_libraries(recipe: Recipe, resolved: dict[str, ResolvedFeature]) -> set[str]:
    """The expected libraries the tree installs but does not build ([[outputs]] carried)."""
    return {o.library for o in recipe.outputs if o.carried and o.library and output_wanted(o, resolved)}


def expected_libraries(recipe: Recipe, resolved: dict[str, ResolvedFeature]) -> list[tuple[str, tuple[str, ...]]]:
    """(library name, required exports) for every output this feature set must produce."""
    out = []
    for output in recipe.outputs:
        if not output_wanted(output, resolved):
            continue
        library = output.library
        if library is None and output.feature is not None:
            library = resolved[output.feature].spelling.library
        if library is None:
            raise ToolkitError(f"{recipe.file}: an [[outputs]] entry names no library, and feature "
                               f"{output.feature!r} spells none for this tree",
                               hint="give the output a 'library', or the feature's spelling one")
        out.append((library, output.exports))
    return out


