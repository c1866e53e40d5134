"""What the linker read to make each library, as the linker itself recorded it.

CMake (3.27 and newer, with GNU ld or lld on ELF) has the linker write a dependency file, which Ninja keeps in its
deps log: `ninja -t deps <library>` then lists every file the link read, static archives included. A static
archive from outside the work tree (the build machine's `/usr/lib/llvm-22/lib/libLLVMCore.a`) is code of another
project that now sits inside the library, so the wheel must carry its license (wheel/linked_licenses.py).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

from toolkit.util.process import run

# CMake's Ninja rules that link a library: C_SHARED_LIBRARY_LINKER__t_Release, CXX_MODULE_LIBRARY_LINKER__t_Release.
_LINK_RULE = re.compile(r"^(?P<output>.+): (?:\w+_)?(?:SHARED|MODULE)_LIBRARY_LINKER__\S*$")
_DEPS_HEAD = re.compile(r"^(?P<output>\S.*): #deps \d+")


def library_outputs(build_dir: Path, ninja: str) -> dict[str, str]:
    """File name -> the path Ninja builds it at (relative to `build_dir`), for each library a link rule makes."""
    done = run([ninja, "-C", str(build_dir), "-t", "targets", "all"], "listing the build's targets", check=False)
    outputs: dict[str, str] = {}
    for line in done.stdout.splitlines():
        match = _LINK_RULE.match(line)
        # ninja reads a target that starts with '-' as an option; CMake writes none.
        if match and not match["output"].startswith("-"):
            outputs.setdefault(os.path.basename(match["output"]), match["output"])
    return outputs


def archives_linked(build_dir: Path, files: Iterable[str], inside: Path) -> dict[str, tuple[str, ...] | None]:
    """For each library file name in `files`, the static archives outside `inside` (the work tree) that the linker
    read to make it, sorted; None where the link left no record (no Ninja, an older CMake, a linker that writes no
    dependency file) or the build made no such library."""
    files = list(files)
    ninja = shutil.which("ninja")
    if ninja is None or not (Path(build_dir) / ".ninja_deps").is_file():
        return dict.fromkeys(files)
    outputs = library_outputs(build_dir, ninja)
    inside = Path(os.path.realpath(inside))
    found: dict[str, tuple[str, ...] | None] = {}
    for name in files:
        output = outputs.get(name)
        if output is None:
            found[name] = None
            continue
        done = run([ninja, "-C", str(build_dir), "-t", "deps", output], f"reading the linker's record of {name}",
                   check=False)
        lines = done.stdout.splitlines()
        if not lines or not _DEPS_HEAD.match(lines[0]):
            found[name] = None
            continue
        inputs = [line.strip() for line in lines[1:] if line.startswith(" ") and line.strip()]
        found[name] = tuple(sorted({p for p in inputs if p.endswith(".a") and os.path.isabs(p)
                                    and not Path(os.path.realpath(p)).is_relative_to(inside)}))
    return found
