"""Root filesystems for images built with no registry in reach (`containers/local-rootfs.Containerfile`).

Two ways: `debootstrap` (a Debian tree from this machine's Debian mirror; needs it, about half a minute) or
`from_host_python` (the host's Debian python3, its standard library and every library they link; no
network, a few seconds). Either tree goes into the build context as `rootfs/`.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from toolkit.util import argcheck
from toolkit.util.errors import ToolkitError
from toolkit.util.process import run

# Parts of the standard library a toolkit session never imports: left out to keep the image small.
_SKIP = ("test", "__pycache__", "site-packages", "dist-packages", "idlelib", "tkinter", "ensurepip")


def from_host_python(root: Path, python: Path = Path("/usr/bin/python3")) -> None:
    root = Path(root)
    real = Path(os.path.realpath(python))
    if not real.is_file():
        raise ToolkitError(f"{python}: no such interpreter to build a root filesystem from")
    stdlib = Path(run([real, "-c", "import sysconfig; print(sysconfig.get_paths()['stdlib'])"],
                      f"asking {real} for its standard library").stdout.strip())
    shutil.copytree(stdlib, root / stdlib.relative_to("/"), symlinks=True, ignore=shutil.ignore_patterns(*_SKIP))
    (root / "usr/bin").mkdir(parents=True, exist_ok=True)
    shutil.copy2(real, root / "usr/bin" / real.name)
    if real.name != "python3":
        os.symlink(real.name, root / "usr/bin/python3")
    binaries = [real, *sorted((stdlib / "lib-dynload").glob("*.so"))]
    ldd = run(["ldd", *binaries], check=False).stdout
    # ldd prints "<file>:" headers for several inputs, then "name => /path (addr)" lines
    for lib in sorted({w for w in ldd.split() if w.startswith("/") and not w.endswith(":")}):
        dest = root / lib.lstrip("/")
        if not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(os.path.realpath(lib), dest)
    (root / "tmp").mkdir(exist_ok=True)
    (root / "tmp").chmod(0o1777)


def debootstrap(root: Path, suite: str = "bookworm", mirror: str | None = None,
                include: tuple[str, ...] = ("python3",)) -> None:
    """A minbase `suite` tree in root, from `mirror` (default: this machine's Debian mirror,
    toolkit.util.debian_mirror: $TOOLKIT_DEBIAN_MIRROR, else its apt sources)."""
    if mirror is None:
        from toolkit.util.debian_mirror import debian_mirror

        mirror = debian_mirror().url
    argcheck.plain(suite, "debootstrap suite", "a Debian suite name (bookworm, sid, ...)")
    for package in include:
        argcheck.plain(package, "debootstrap --include", "Debian package names")
    argcheck.plain(mirror, "debootstrap mirror", "the Debian archive's base URL")
    tool = shutil.which("debootstrap")
    if tool is None:
        raise ToolkitError("debootstrap is not installed", hint="apt-get install debootstrap")
    argv = [tool, "--variant=minbase", f"--include={','.join(include)}", suite, str(Path(root).absolute()), mirror]
    run(argv, f"debootstrap {suite} from {mirror}", output="merge",
        hint=f"check that {mirror} is reachable and carries suite {suite!r}")
