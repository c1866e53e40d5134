"""Git sources pinned by commit: a shallow fetch of exactly that commit (and its submodules), cached.

Fetching one commit by id needs the server to allow it (uploadpack.allowReachableSHA1InWant; GitHub and
GitLab do). The checkout is built in a temporary folder and renamed into the cache only when complete,
so the cache never holds a half-cloned tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from toolkit.sources.cache import Cache, url_key
from toolkit.util import log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import replace_dir
from toolkit.util.process import run


def _is_local(url: str) -> bool:
    return url.startswith("file://") or "://" not in url and ":" not in url.split("/", 1)[0]


def _git(args: list[str], cwd: Path, url: str, local: bool, what: str, hint: str | None = None,
         check: bool = True) -> subprocess.CompletedProcess:
    # The file protocol is off by default for submodules (CVE-2022-39253); allow it only when the
    # superproject itself is local, as a test or an internal mirror on disk would be.
    config = ["-c", "protocol.file.allow=always"] if local else []
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="true")
    return run(["git", *config, *args], f"git source {url}: {what}", cwd=cwd, env=env, hint=hint, check=check)


def fetch_git(url: str, commit: str, cache: Cache, submodules: bool = False, offline: bool = False,
              mirrors: tuple[str, ...] = ()) -> Path:
    """The cached checkout of url at commit (with submodules when asked), fetching it once.

    Mirrors (BASE/<host>/<path>, a bare repository there) are tried first; a file:// mirror also offline,
    since reading a folder is not network access. The commit pins the content whichever repository serves it.
    """
    if shutil.which("git") is None:
        raise ToolkitError(f"git source {url}: the git command is not installed", hint="apt-get install -y git")
    final = cache.git_path(url, commit)
    if final.is_dir():
        return final
    from toolkit.sources.download import mirror_url

    candidates = [mirror_url(m, url) for m in mirrors if not offline or m.startswith("file://")]
    candidates = [c for c in candidates if not c.startswith("file://") or Path(c[len("file://"):]).is_dir()]
    # Reading a local repository is not network access: offline still reads a file:// (or plain path) source.
    if not offline or _is_local(url):
        candidates.append(url)
    if not candidates:
        raise ToolkitError(
            f"offline: git source {url} at commit {commit} is not in the cache {final.parent}",
            hint="run once with network access (or pass --mirror file://<mirror> holding the repository), "
            "then retry with --offline",
        )
    with cache.lock(f"git-{url_key(url)}-{commit}", f"{url} at {commit}"):
        if final.is_dir():
            return final
        final.parent.mkdir(parents=True, exist_ok=True)
        failures = []
        for candidate in candidates:
            tmp = Path(tempfile.mkdtemp(prefix=f".{commit[:12]}.", dir=final.parent))
            try:
                _checkout(candidate, commit, tmp, submodules)
                os.replace(tmp, final)
                return final
            except ToolkitError as exc:
                shutil.rmtree(tmp, ignore_errors=True)
                failures.append(str(exc))
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
    if len(failures) == 1:
        raise ToolkitError(failures[0])
    raise ToolkitError(f"git source {url} at {commit}: every location failed:\n" + "\n".join(failures))


def _checkout(url: str, commit: str, work: Path, submodules: bool) -> None:
    local = _is_local(url)
    log.info(f"git: fetching {url} at {commit}")
    _git(["init", "-q"], work, url, local, f"making a repository in {work}")
    _git(["remote", "add", "origin", url], work, url, local, f"adding the remote in {work}")
    _git(["fetch", "-q", "--depth", "1", "--no-tags", "origin", commit], work, url, local,
         f"fetching commit {commit}",
         hint="check that the commit exists in that repository (a full 40-hex id) and that the server allows "
         "fetching a commit by id (uploadpack.allowReachableSHA1InWant)")
    _git(["checkout", "-q", "--detach", "FETCH_HEAD"], work, url, local, f"checking out commit {commit}")
    head = _git(["rev-parse", "HEAD"], work, url, local, "reading HEAD").stdout.strip()
    if head != commit:
        raise ToolkitError(f"git source {url}: checked out {head or 'nothing'} instead of commit {commit}")
    if not submodules:
        return
    shallow = _git(["submodule", "update", "--init", "--recursive", "--depth", "1"], work, url, local,
                   "shallow submodule update", check=False)
    if shallow.returncode != 0:
        # Some servers refuse shallow fetches by commit id; a full submodule fetch still pins the same commits.
        log.info(f"git: shallow submodule fetch failed for {url}; fetching submodules in full")
        _git(["submodule", "update", "--init", "--recursive"], work, url, local,
             f"submodule update at {commit}", hint="check .gitmodules URLs are reachable and their commits exist")


def copy_checkout(src: Path, dest: Path) -> Path:
    """Copy a cached checkout to dest (replacing it) through a temporary folder."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        shutil.copytree(src, tmp / "tree", symlinks=True)
        replace_dir(tmp / "tree", dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest
