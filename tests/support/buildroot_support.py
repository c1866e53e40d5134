"""The Debian sid ROCm build root for tests that build or run inside it.

`sid_root()` makes the root once (cached in the toolkit cache, so later runs and other tests reuse it) or
takes TOOLKIT_BUILDROOT's prepared root. Outside CI it skips, with the reason printed, when the root
cannot be made here (no debootstrap or no bwrap); under CI=true it never skips. Tests take it from the
`sid_root` fixture (tests/conftest.py), which also marks them `buildroot`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.support.tools import require_tool
from toolkit.buildroot import ENV_BUILDROOT, ensure_root

SID_ROOT = "debian-sid-rocm"


def sid_root() -> Path:
    """The `debian-sid-rocm` root: hipcc (clang 21), MIGraphX, ORT 1.27 headers; run commands in it with
    toolkit.buildroot.run_in_root."""
    return build_root(SID_ROOT)


def build_root(name: str) -> Path:
    """Build root `name` (containers/roots/NAME.toml), made once and cached; see sid_root."""
    require_tool(shutil.which("bwrap") is not None, "bwrap is not installed (apt-get install -y bubblewrap)")
    if not os.environ.get(ENV_BUILDROOT):
        require_tool(shutil.which("debootstrap") is not None,
                     f"debootstrap is not installed (apt-get install -y debootstrap), and {ENV_BUILDROOT} "
                     "names no prepared root")
    return ensure_root(name)
