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
from toolkit.sources.git_shadow import readable_url
from toolkit.util import argcheck, log
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import replace_dir
from toolkit.util.process import run_git
from toolkit.util.redact import public_url, redact_url


def _is_local(url: str) -> bool:
    return url.startswith("file://") or "://" not in url and ":" not in url.split("/", 1)[0]


def _git(args: list[str], cwd: Path, url: str, local: bool, what: str, hint: str | None = None,
         check: bool = True, operands: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    # The file protocol is off for submodules of a remote superproject (CVE-2022-39253); it is allowed only
    # when the superproject itself is local, as a test or an internal mirror on disk would be.
    return run_git(args, operands, f"git source {redact_url(url)}: {what}", cwd=cwd, file_protocol=local, hint=hint,
                   check=check)


def fetch_git(url: str, commit: str, cache: Cache, submodules: bool = False, offline: bool = False,
              mirrors: tuple[str, ...] = (), insecure_mirror: bool = False) -> Path:
    """The cached checkout of url at commit (with submodules when asked), fetching it once.

    Mirrors (BASE/<host>/<path>, a bare repository there) are tried first; a file:// mirror also offline,
    since reading a folder is not network access. The commit pins the content whichever repository serves it.
    """
    argcheck.git_url(url, "git source")
    argcheck.git_commit(commit, f"git source {redact_url(url)}: commit")
    if shutil.which("git") is None:
        raise ToolkitError(f"git source {redact_url(url)}: the git command is not installed",
                           hint="apt-get install -y git")
    final = cache.git_path(url, commit)
    if final.is_dir():
        return final
    from toolkit.sources.mirrors import may_serve, mirror_url

    candidates = [mirror_url(m, url) for m in mirrors
                  if (not offline or m.startswith("file://")) and may_serve(m, url, insecure_mirror)]
    candidates = [c for c in candidates if not c.startswith("file://") or Path(c[len("file://"):]).is_dir()]
    # A local bare repository a copy left without its empty refs/ folder is read through a shadow (git_shadow).
    candidates = [readable_url(c, cache.root) for c in candidates]
    # A mirror for archives only (http://, ...) is never asked for a git repository.
    candidates = [c for c in candidates if argcheck.git_url_problem(c) is None]
    # Reading a local repository is not network access: offline still reads a file:// (or plain path) source.
    if not offline or _is_local(url):
        candidates.append(url)
    if not candidates:
        raise ToolkitError(
            f"offline: git source {redact_url(url)} at commit {commit} is not in the cache {final.parent}",
            hint="run once with network access (or pass --mirror file://<mirror> holding the repository), "
            "then retry with --offline",
        )
    with cache.lock(f"git-{url_key(url)}-{commit}", f"{redact_url(url)} at {commit}"):
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
    raise ToolkitError(f"git source {redact_url(url)} at {commit}: every location failed:\n" + "\n".join(failures))


def _checkout(url: str, commit: str, work: Path, submodules: bool) -> None:
    local = _is_local(url)
    log.info(f"git: fetching {redact_url(url)} at {commit}")
    _git(["init", "-q"], work, url, local, f"making a repository in {work}")
    _git(["remote", "add"], work, url, local, f"adding the remote in {work}", operands=("origin", url))
    _git(["fetch", "-q", "--depth", "1", "--no-tags"], work, url, local,
         f"fetching commit {commit}", operands=("origin", commit),
         hint="check that the commit exists in that repository (a full 40-hex id) and that the server allows "
         "fetching a commit by id (uploadpack.allowReachableSHA1InWant)")
    _git(["checkout", "-q", "--detach", "FETCH_HEAD"], work, url, local, f"checking out commit {commit}")
    head = _git(["rev-parse", "HEAD"], work, url, local, "reading HEAD").stdout.strip()
    if head != commit:
        raise ToolkitError(f"git source {redact_url(url)}: checked out {head or 'nothing'} instead of commit {commit}")
    if submodules:
        _submodules(url, commit, work, local)
    if public_url(url) != url:
        # The checkout is cached and copied into work trees: its .git/config keeps no credential.
        _git(["remote", "set-url"], work, url, local, "dropping credentials from the remote",
             operands=("origin", public_url(url)))


def _submodules(url: str, commit: str, work: Path, local: bool) -> None:
    """Each level's submodules, their .gitmodules URLs checked before git reads them (and git allowed only the
    accepted schemes' protocols besides)."""
    pending = [work]
    while pending:
        repo = pending.pop()
        paths = _checked_gitmodules(url, commit, work, repo, local)
        if not paths:
            continue
        shallow = _git(["submodule", "update", "--init", "--depth", "1"], repo, url, local,
                       "shallow submodule update", check=False)
        if shallow.returncode != 0:
            # Some servers refuse shallow fetches by commit id; a full submodule fetch still pins the same commits.
            log.info(f"git: shallow submodule fetch failed for {redact_url(url)}; fetching submodules in full")
            _git(["submodule", "update", "--init"], repo, url, local, f"submodule update at {commit}",
                 hint="check .gitmodules URLs are reachable and their commits exist")
        pending += [repo / path for path in paths]


def _checked_gitmodules(url: str, commit: str, work: Path, repo: Path, local: bool) -> list[str]:
    """The submodule paths `repo`'s .gitmodules lists, once every submodule URL there is an accepted one."""
    if not (repo / ".gitmodules").is_file():
        return []
    listed = _git(["config", "--file", ".gitmodules", "--null", "--get-regexp", r"^submodule\..*\.(url|path)$"],
                  repo, url, local, "reading .gitmodules", check=False).stdout
    paths = []
    where = f"git source {redact_url(url)} at {commit}: {(repo / '.gitmodules').relative_to(work)}"
    for entry in filter(None, listed.split("\0")):
        key, _, value = entry.partition("\n")
        if key.endswith(".path"):
            paths.append(argcheck.plain(value, f"{where}: {key}", "a relative folder"))
        elif not value.startswith(("./", "../")):  # a relative URL reads as the superproject's
            argcheck.git_url(value, f"{where}: {key}")
    return paths


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
