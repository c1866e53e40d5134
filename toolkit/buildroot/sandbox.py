"""Run a command inside a build root with bubblewrap (`bwrap`, Debian's `bubblewrap`).

Why bwrap and not `chroot` + bind mounts: every mount it makes lives in a mount namespace of its own,
so nothing is ever mounted on the host and nothing can be left mounted, whatever happens to the
command; `--die-with-parent` and a PID namespace end the whole process tree when the caller dies.

Layout inside: the root's own top-level folders (read-only, unless the root is being made), fresh
/proc, /dev, a private /tmp, /var/tmp and /run, the host's resolv.conf and CA bundle (the host's
network is kept unless `network=False`, which gives the command a network namespace of its own with
only a loopback device), the toolkit cache (TOOLKIT_CACHE_DIR, with CCACHE_DIR under it) and each
requested bind, all at the same path as on the host, so host paths stay valid inside. `timeout`
kills the command (and, through the PID namespace, everything it started) after that many seconds.

A bind whose path does not exist in a read-only root needs a folder made for it: the folders of its
path that do exist in the root are rebuilt in bwrap's own tmpfs "/" from binds of their entries, so
the root itself is never written to.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from toolkit.container.rootfs import SYSTEM_PATH
from toolkit.util.errors import RUN_TOOLKIT, ToolkitError
from toolkit.util.process import run as run_command

# Top-level folders the sandbox provides itself (fresh or private) instead of the root's.
_PROVIDED = ("proc", "dev", "sys", "tmp", "run")
_FORBIDDEN = ("/proc", "/dev", "/sys")


def bwrap_path() -> str:
    tool = shutil.which("bwrap")
    if tool is None:
        raise ToolkitError("bwrap is not installed: build roots run commands with bubblewrap",
                           hint="apt-get install bubblewrap")
    return tool


def cache_dir() -> Path:
    """The toolkit cache (TOOLKIT_CACHE_DIR or the user cache dir), as the download cache uses it."""
    from toolkit.util.cachedir import default_cache_dir

    return default_cache_dir()


def ccache_dir(cache: Path) -> Path:
    """Where every build keeps its ccache: one folder in the toolkit cache, shared by builds on the host and
    inside any root, so each route hits what another compiled (ccache keys entries by the compiler, so
    roots with other compilers do not collide)."""
    return Path(cache) / "ccache"


def run_in_root(root: Path, argv: list[str], *, binds: Sequence[Path] = (), env: Mapping[str, str] | None = None,
                cwd: Path | None = None, check: bool = True, capture: bool = False, network: bool = True,
                timeout: float | None = None, what: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run `argv` inside `root` (read-only) with `binds` and the toolkit cache mounted at their own paths.

    The environment inside is clean: PATH, HOME=/tmp, LANG, TOOLKIT_CACHE_DIR, CCACHE_DIR (in the
    toolkit cache), then `env`. `cwd` defaults to the caller's folder when a bind holds it, else /.
    A failure (with `check`) is a ToolkitError naming `what` (default "a command"), the root, `argv`, its
    exit code and, with `capture`, its last lines of output. `network=False` cuts the command off from every
    network (only a loopback device inside); `timeout` (seconds) kills it, and everything it started, when it
    runs longer, with a ToolkitError naming it and the limit.
    """
    cache = cache_dir()
    ccache = ccache_dir(cache)
    ccache.mkdir(parents=True, exist_ok=True)
    base = {"TOOLKIT_CACHE_DIR": str(cache), "CCACHE_DIR": str(ccache)}
    return run(root, argv, binds=[cache, *binds], env={**base, **(env or {})}, cwd=cwd, check=check,
               capture=capture, writable=False, network=network, timeout=timeout, what=what)


def run(root: Path, argv: list[str], *, binds: Sequence[Path] = (), env: Mapping[str, str] | None = None,
        cwd: Path | None = None, check: bool = True, capture: bool = False, writable: bool = False,
        network: bool = True, timeout: float | None = None,
        what: str | None = None) -> subprocess.CompletedProcess[str]:
    """run_in_root without the toolkit cache; `writable` lets the command change the root (making it)."""
    if timeout is not None and not timeout > 0:
        raise ToolkitError(f"run_in_root: timeout must be a positive number of seconds, got {timeout!r}")
    full = bwrap_argv(root, argv, binds=binds, env=env, cwd=cwd, writable=writable, network=network)
    # On timeout bwrap is killed; --die-with-parent and the PID namespace take the rest down.
    return run_command(full, f"{what or 'a command'} in build root {root}", output="capture" if capture else "terminal",
                       check=check, shown=argv, timeout=timeout)


def bwrap_argv(root: Path, argv: list[str], *, binds: Sequence[Path] = (), env: Mapping[str, str] | None = None,
               cwd: Path | None = None, writable: bool = False, network: bool = True) -> list[str]:
    root = Path(root).resolve()
    if not (root / "usr").is_dir():
        raise ToolkitError(f"{root}: not a build root (no usr/ in it)",
                           hint=f"make one with `{RUN_TOOLKIT} root make`, or point TOOLKIT_BUILDROOT at one")
    if not argv:
        raise ToolkitError("run_in_root: no command given")
    hosts = _binds(binds)
    out = [bwrap_path(), "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    if not network:
        out.append("--unshare-net")   # a network namespace of its own: loopback only, nothing reachable
    out += _root_layout(root, hosts, writable)
    # /tmp world-writable with the sticky bit, as apt's unprivileged _apt user and every build expect.
    out += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp", "--tmpfs", "/run"]
    if not writable and (root / "var/tmp").is_dir():
        out += ["--perms", "1777", "--tmpfs", "/var/tmp"]
    # The host's name servers and CA bundle: the network inside is the host's, TLS-intercepting proxies
    # (whose CA only the host's bundle holds) included.
    for shared in ("etc/resolv.conf", "etc/ssl/certs/ca-certificates.crt"):
        if (Path("/") / shared).exists() and (root / shared).is_file():
            out += ["--ro-bind", f"/{shared}", f"/{shared}"]
    for host in hosts:
        out += ["--bind", str(host), str(host)]
    out += ["--clearenv"]
    inside = {"PATH": SYSTEM_PATH, "HOME": "/tmp", "LANG": "C.UTF-8"}
    if os.environ.get("TERM"):
        inside["TERM"] = os.environ["TERM"]
    inside.update(env or {})
    for key, value in inside.items():
        out += ["--setenv", key, value]
    out += ["--chdir", str(_workdir(cwd, hosts))]
    return out + ["--", *argv]


def _binds(binds: Sequence[Path]) -> list[Path]:
    hosts = []
    for bind in binds:
        host = Path(bind).resolve()
        if not host.exists():
            raise ToolkitError(f"{bind}: folder to bind into the build root does not exist")
        if any(str(host) == f or str(host).startswith(f + "/") for f in _FORBIDDEN) or host == Path("/"):
            raise ToolkitError(f"{bind}: cannot bind into a build root (the sandbox provides {host} itself)")
        if host not in hosts:
            hosts.append(host)
    # Parents before children, so a bind inside another bind lands on top of it.
    return sorted(hosts, key=lambda p: len(p.parts))


def _root_layout(root: Path, hosts: list[Path], writable: bool) -> list[str]:
    mode = "--bind" if writable else "--ro-bind"
    # Folders rebuilt entry by entry (inside bwrap's own tmpfs "/"), so binds can get mount points
    # without writing to the root. A writable root takes the mount points itself.
    expand: set[Path] = set()
    if not writable:
        for host in hosts:
            deepest = _deepest_existing(root, host)
            if deepest != Path("/") and deepest.parts[1] not in _PROVIDED:
                expand.update(p for p in [deepest, *deepest.parents] if p != Path("/"))
    out: list[str] = []

    def mount(rel: Path) -> None:
        for entry in sorted(os.listdir(root / rel.relative_to("/"))):
            inside = rel / entry
            if rel == Path("/") and entry in _PROVIDED:
                continue
            src = root / inside.relative_to("/")
            if src.is_symlink():
                out.extend(["--symlink", os.readlink(src), str(inside)])
            elif inside in expand:
                out.extend(["--dir", str(inside)])
                mount(inside)
            else:
                out.extend([mode, str(src), str(inside)])

    mount(Path("/"))
    return out


def _deepest_existing(root: Path, host: Path) -> Path:
    """The deepest folder of `host`'s path that exists (as a real folder) inside `root`."""
    current = Path("/")
    for part in host.parts[1:]:
        candidate = current / part
        src = root / candidate.relative_to("/")
        if src.is_symlink() or not src.is_dir():
            break
        current = candidate
    return current if current != host else Path("/")


def _workdir(cwd: Path | None, hosts: list[Path]) -> Path:
    if cwd is not None:
        return Path(cwd).resolve()
    here = Path.cwd().resolve()
    if any(here == h or h in here.parents for h in hosts):
        return here
    return Path("/")
