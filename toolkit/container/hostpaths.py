"""Which host folders `container` may mount: checked, resolved, before the engine (or anything else) runs.

A build, out, source, cache or bind folder is mounted into the container, most of them read-write; a
mistyped or hostile `--build-dir /` would hand the session the host's root. So each one is resolved (links
followed) and refused when it is:

- `/`, a system folder or anything under one (/etc, /usr, /boot, /proc, /sys, /dev, /bin, /sbin, /lib,
  /lib64), a home folder itself (/root, /home/NAME) or a dot-folder in one (~/.ssh, ~/.config, ...): the
  toolkit cache (~/.cache/ort-amdgpu-toolkit by default) is the one exception, since sessions share it;
- a path holding ':' (the engine's --volume separator: the rest would be read as the mount's options).
"""

from __future__ import annotations

import pwd
from pathlib import Path

from toolkit.util.errors import ToolkitError
from toolkit.util.redact import shorten

SYSTEM = tuple(Path(p) for p in ("/etc", "/usr", "/boot", "/proc", "/sys", "/dev", "/bin", "/sbin", "/lib",
                                  "/lib64"))


def _homes() -> set[Path]:
    """/root, this user's home and the users' folders under /home (service accounts' homes such as /var/lib/x
    are not what a user would mount by mistake)."""
    homes = {Path("/root")}
    try:
        homes.add(Path.home().resolve())
    except (KeyError, RuntimeError):   # no home for this user id
        pass
    homes.update(Path(entry.pw_dir) for entry in pwd.getpwall() if entry.pw_dir.startswith("/home/"))
    return {h for h in homes if h not in (Path("/"), Path("/tmp"))}


def _toolkit_cache() -> Path:
    from toolkit.util.cachedir import default_cache_dir

    return default_cache_dir().resolve()


def host_path_problem(path: Path) -> str | None:
    """Why `path` may not be mounted into a container (None: it may)."""
    if ":" in str(path):
        return "holds ':', which the engine's --volume reads as the start of the mount options"
    resolved = Path(path).resolve()
    if ":" in str(resolved):
        return f"resolves to {shorten(resolved, 200)}, which holds ':' (the engine's --volume separator)"
    cache = _toolkit_cache()
    if resolved == cache or resolved.is_relative_to(cache):
        return None
    shown = "" if resolved == Path(path) else f" (resolves to {shorten(resolved, 200)})"
    if resolved == Path("/"):
        return f"is the host's root folder{shown}"
    for system in SYSTEM:
        if resolved == system or resolved.is_relative_to(system):
            return f"is in the system folder {system}{shown}"
    for home in _homes():
        if resolved == home:
            return f"is a home folder{shown}: it holds its owner's keys and settings"
        if resolved.is_relative_to(home) and resolved.relative_to(home).parts[0].startswith("."):
            return f"is in a dot-folder of the home folder {home}{shown} (keys, settings, credentials)"
    return None


def check_host_paths(named: list[tuple[str, Path | None]]) -> None:
    """Refuse, with one line naming the option, the first (option, path) that may not be mounted."""
    for option, path in named:
        if path is None:
            continue
        problem = host_path_problem(Path(path))
        if problem:
            raise ToolkitError(f"container {option} {shorten(path, 200)}: {problem}; refused as a folder to "
                               "mount (give a project or scratch folder, e.g. ./build or /tmp/NAME)")
