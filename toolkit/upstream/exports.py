"""The symbols a revision's libraries export, as its link declares them, against the recipe's [[outputs]] exports.

Read from what a configure wrote, not from CMakeLists text: CMake resolves each shared library's link flags
(target properties, generator expressions, the variables that name the script) into build.ninja, so the
version script the linker will get is the one named there. Its `global:` list is what the library exports;
a library linked without one exports whatever the compiler leaves visible, which only a build can tell
(reported as undeclared, never as a change).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

_LIBRARY = re.compile(r"^lib(.+)\.so$")
_COMMENT = re.compile(r"/\*.*?\*/|#[^\n]*|//[^\n]*", re.S)
_SECTION = re.compile(r"\b(global|local)\s*:")


def declared(binary_dir: Path) -> dict[str, list[str] | None]:
    """{library name (no lib, no .so): the symbols its version script exports, or None without one} for every
    shared library the tree itself links (FetchContent dependencies' own libraries, under _deps/, left out)."""
    ninja = Path(binary_dir) / "build.ninja"
    if not ninja.is_file():
        return {}
    out: dict[str, list[str] | None] = {}
    for target, flags in _link_blocks(ninja.read_text(encoding="utf-8", errors="replace")):
        if target.startswith("_deps/"):
            continue
        name = _LIBRARY.match(Path(target).name)
        if name is None:
            continue
        script = version_script(flags)
        out[name.group(1)] = None if script is None or not script.is_file() else global_symbols(script.read_text())
    return out


def _link_blocks(text: str) -> list[tuple[str, str]]:
    """(TARGET_FILE, LINK_FLAGS) of each link statement of a build.ninja."""
    found = []
    target = flags = None
    for line in text.splitlines():
        if line.startswith("build "):
            target = flags = None
        elif line.startswith("  LINK_FLAGS = "):
            flags = line.split("=", 1)[1].strip()
        elif line.startswith("  TARGET_FILE = "):
            target = line.split("=", 1)[1].strip()
        if target is not None and flags is not None:
            found.append((target, flags))
            target = flags = None
    return found


def version_script(flags: str) -> Path | None:
    """The path given to --version-script in any spelling a link line carries it: `-Wl,--version-script,P`,
    `-Wl,--version-script=P`, `-Xlinker --version-script=P`, `-Xlinker --version-script -Xlinker P`."""
    words: list[str] = []
    for word in shlex.split(flags.replace("$ ", " ")):
        words += word[4:].split(",") if word.startswith("-Wl,") else [word]
    words = [w for w in words if w != "-Xlinker"]
    for i, word in enumerate(words):
        if word.startswith("--version-script="):
            return Path(word.split("=", 1)[1])
        if word == "--version-script" and i + 1 < len(words):
            return Path(words[i + 1])
    return None


def global_symbols(script: str) -> list[str]:
    """The names under `global:` in a GNU ld version script (every version node; patterns kept as written)."""
    text = _COMMENT.sub(" ", script)
    names: list[str] = []
    for node in re.findall(r"\{(.*?)\}", text, re.S):
        section = "global"  # a node with no label lists global names
        pos = 0
        for match in [*_SECTION.finditer(node), None]:
            end = match.start() if match else len(node)
            if section == "global":
                names += [n.strip().strip('"') for n in node[pos:end].split(";") if n.strip()]
            if match:
                section, pos = match.group(1), match.end()
    return sorted(dict.fromkeys(n for n in names if n and not n.startswith("extern")))


@dataclass
class ExportChange:
    library: str
    added: list[str] = field(default_factory=list)  # declared by the tree, not in the recipe's exports
    removed: list[str] = field(default_factory=list)  # in the recipe's exports, no longer declared


def compare(expected: dict[str, list[str]], found: dict[str, list[str] | None]) -> list[ExportChange]:
    """One change per expected library whose version script now lists other symbols than the recipe's exports
    (libraries the recipe lists no exports for, or that link without a version script, are not compared)."""
    out = []
    for library, wanted in sorted(expected.items()):
        have = found.get(library)
        if not wanted or have is None:
            continue
        change = ExportChange(library, sorted(set(have) - set(wanted)), sorted(set(wanted) - set(have)))
        if change.added or change.removed:
            out.append(change)
    return out
