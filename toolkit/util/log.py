"""Progress messages: one prefix, to stderr, so stdout stays clean for plans and JSON.

Three levels: quiet (errors and warnings only; build tools' output goes to a log file), normal, and
verbose (also every command the toolkit runs, and the build tools' own command lines).
"""

from __future__ import annotations

import shlex
import sys
from typing import Any

from toolkit.util.hostview import host_text
from toolkit.util.redact import redact_text

_quiet = False
_verbose = False
_hooked = False


def set_quiet(quiet: bool) -> None:
    global _quiet
    _quiet = quiet


def set_verbose(verbose: bool) -> None:
    global _verbose
    _verbose = verbose


def is_quiet() -> bool:
    return _quiet


def is_verbose() -> bool:
    return _verbose and not _quiet


def shown(message: str) -> str:
    """A message as it is printed: URLs' secrets masked, and in a container the host path of every folder mounted
    at another path (toolkit.util.hostview): the user's path."""
    return host_text(redact_text(message))


def info(message: str) -> None:
    if not _quiet:
        print(f"[toolkit] {shown(message)}", file=sys.stderr, flush=True)


def stage(name: str, message: str) -> None:
    if not _quiet:
        print(f"[toolkit] {name}: {shown(message)}", file=sys.stderr, flush=True)


def debug(message: str) -> None:
    if is_verbose():
        print(f"[toolkit] {shown(message)}", file=sys.stderr, flush=True)


def show_every_command() -> None:
    """-v: print every process the toolkit starts (CMake, patchelf, auditwheel, git, pip, ...).

    An audit hook sees each subprocess however the module that starts it spells the call, so no
    stage has to remember to log its commands.
    """

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "subprocess.Popen" and is_verbose():
            _, argv, cwd, _ = args
            argv = [argv] if isinstance(argv, (str, bytes)) else list(argv)
            line = shlex.join(str(a) for a in argv)
            print(f"[toolkit] $ {redact_text(line)}" + (f"   (in {cwd})" if cwd else ""), file=sys.stderr, flush=True)

    global _hooked
    if not _hooked:  # audit hooks cannot be removed: one is enough for the process
        sys.addaudithook(hook)
        _hooked = True


def warn(message: str) -> None:
    print(f"[toolkit] warning: {shown(message)}", file=sys.stderr, flush=True)


def human_size(size: float) -> str:
    """Bytes as a user reads them: `512 B`, `6.3 MiB`, `5.0 GiB`."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"
