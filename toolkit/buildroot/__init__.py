"""Build roots: Debian root filesystems made from a declared package set, cached, recorded exactly
(every package and version, like a lock file) and used to run build stages in.

    ensure_root(name) -> Path       make the root (or reuse the cached one); TOOLKIT_BUILDROOT overrides
    run_in_root(root, argv, ...)    run a command inside it with host paths bound at the same paths

Package sets are data: containers/roots/<name>.toml, each recorded in <name>.lock beside it.
"""

from toolkit.buildroot.make import ENV_BUILDROOT, ensure_root
from toolkit.buildroot.sandbox import run_in_root

__all__ = ["ENV_BUILDROOT", "ensure_root", "run_in_root"]
