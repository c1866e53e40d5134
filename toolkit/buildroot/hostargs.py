"""Host paths in the arguments of a session run in a build root or a container: each is resolved once, and that
one resolved path is both what is bound inside and what the session is handed.

A path that works on the host may not exist inside: `file://$PWD/../shared/mirror` goes through `..` (inside, the
project's parent is the root's own folder), and `../shared` may be a symbolic link to a folder elsewhere. The bind
is made at the resolved path (links followed, `..` gone), so the argument names that same path:

    /x  ./x  ../x  --opt=/x  file://<path>  git+file://<path>@COMMIT  file://<path>.tar.gz#sha256=HEX

An argument that names no existing host path (a recipe name, an https URL, a path that exists only inside) is
handed on as it is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

_SPECIAL = ("/proc", "/dev", "/sys")


@dataclass(frozen=True)
class HostArguments:
    args: tuple[str, ...]       # as the session inside gets them
    binds: tuple[Path, ...]     # the resolved host paths they name, to bind at their own path


def host_arguments(args: list[str] | tuple[str, ...], cwd: Path | None = None) -> HostArguments:
    """`args` with every existing host path they name resolved (relative ones against `cwd`, default this
    process's working directory), and those paths."""
    out, binds = [], []
    for arg in args:
        rewritten, path = _rewrite(arg, Path(cwd) if cwd is not None else Path.cwd())
        out.append(rewritten)
        if path is not None:
            binds.append(path)
    return HostArguments(tuple(out), tuple(dict.fromkeys(binds)))


def host_value(value: str, cwd: Path | None = None) -> str:
    """One value (a mirror of $TOOLKIT_MIRRORS) as a session inside gets it."""
    return _rewrite(value, Path(cwd) if cwd is not None else Path.cwd())[0]


def _rewrite(arg: str, cwd: Path) -> tuple[str, Path | None]:
    option, value = ("", arg)
    if arg.startswith("-"):
        if "=" not in arg:
            return arg, None
        option, value = arg.split("=", 1)
        option += "="
    scheme = ""
    for prefix in ("git+", "file://"):
        if value.startswith(prefix):
            scheme, value = scheme + prefix, value[len(prefix):]
    value, hash_mark, fragment = value.partition("#")
    url = scheme.endswith("file://")
    if not (value.startswith("/") or (not url and (value in (".", "..") or value.startswith(("./", "../"))))):
        return arg, None
    # A git source names its revision after the last '@'; a path may hold an '@' of its own, so the whole value
    # is tried first.
    whole, at, revision = value, "", ""
    if not (cwd / whole).exists() and "@" in value:
        whole, at, revision = value.rpartition("@")
    candidate = cwd / whole
    if whole.startswith(_SPECIAL) or not candidate.exists():
        return arg, None
    resolved = Path(os.path.realpath(candidate))
    if str(resolved).startswith(_SPECIAL):
        return arg, None
    return f"{option}{scheme}{resolved}{at}{revision}{hash_mark}{fragment}", resolved
