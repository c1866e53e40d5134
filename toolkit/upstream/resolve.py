"""A revision a person names (a commit, a branch, a tag; for a local repository anything git understands,
`main~1` included) as the commit it is, asked of the recipe's git source or its mirror.

Mirrors come first, as for fetching: an internal mirror is closer and is what a build will read. A local
repository (file:// or a path) is asked with `git rev-parse`, which also expands a short commit id; a
remote one with `git ls-remote`, which knows branches and tags only, so a commit is given there in full.
Offline, only local repositories are asked: reading a folder is not network access.

Each repository is first listed with `git ls-remote`, as a fetch would read it, so "git could not read the
repository" (no network, DNS, access, not a repository) is told apart from "the repository has no such
revision"; the first is reported with git's own words, never as a bad revision.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from toolkit.sources.cache import Cache
from toolkit.sources.download import mirror_url
from toolkit.sources.git_shadow import readable_url
from toolkit.util import argcheck, log
from toolkit.util.errors import ToolkitError
from toolkit.util.process import run_git
from toolkit.util.redact import shorten

_FULL = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class Revision:
    asked: str  # as the person wrote it
    commit: str
    ref: str | None  # the branch or tag it named, when it named one
    where: str  # the repository that answered

    def describe(self) -> str:
        named = f" ({self.ref})" if self.ref and self.ref != self.commit else ""
        return f"{self.asked}{named} = {self.commit}"


def local_path(url: str) -> Path | None:
    """The folder of a local repository URL (a file:// URL of /x, or a plain path), else None."""
    if url.startswith("file://"):
        return Path(url[len("file://"):])
    if "://" not in url and ":" not in url.split("/", 1)[0]:
        return Path(url)
    return None


def repositories(url: str, mirrors: tuple[str, ...], offline: bool) -> list[str]:
    """Where to ask: each mirror's copy that could exist (a local one only if it does), then upstream."""
    out = []
    for base in mirrors:
        candidate = mirror_url(base, url)
        if argcheck.git_url_problem(candidate) is not None:
            continue  # a mirror for archives only (http://, ...): git is never asked there
        path = local_path(candidate)
        if path is not None and path.is_dir():
            out.append(candidate)
        elif path is None and not offline:
            out.append(candidate)
    if local_path(url) is not None or not offline:
        out.append(url)
    return out


def resolve(url: str, rev: str, mirrors: tuple[str, ...] = (), offline: bool = False) -> Revision:
    """The commit `rev` names in the first repository that knows it."""
    argcheck.git_revision(rev, "--to")
    shown = shorten(rev, 80)   # echoed in the lines below: a 100 kB revision must not be printed whole
    argcheck.git_url(url, "[source] git")
    where = repositories(url, mirrors, offline)
    if not where:
        raise ToolkitError(f"offline: cannot resolve {shown!r}: {url} is not local and no local mirror holds it",
                           hint="pass --mirror file://<mirror> holding the repository, or drop --offline")
    tried: list[str] = []
    unread: dict[str, str] = {}  # repository -> git's reason
    for repo in where:
        try:
            # A bare repository a copy left without its refs/ folder is read through its shadow; reports name `repo`.
            found = _ask(readable_url(repo, Cache.default().root), rev)
        except _Unreadable as exc:
            unread[repo] = exc.reason
            continue
        if found is not None:
            for skipped, reason in unread.items():
                log.warn(f"git could not read {skipped} ({reason}); {shown!r} was resolved in {repo}")
            return Revision(rev, found[0], found[1], repo)
        tried.append(repo)
    if _FULL.fullmatch(rev) and any(local_path(r) is None for r in [*tried, *unread]):
        # A remote cannot list commits; fetching it by id (what a build does, from its cache first) is the check.
        return Revision(rev, rev, None, url)
    if unread:
        # The revision may well be in a repository git could not read: saying it is not would mislead.
        reasons = "; ".join(f"git cannot read {repo}: {reason}" for repo, reason in unread.items())
        lacking = f" ({shown!r} is not in {' nor in '.join(tried)})" if tried else ""
        raise ToolkitError(reasons + lacking,
                           hint="no network? pass --mirror file://<mirror> holding the repository as "
                                "<mirror>/<host>/<path>; else check the URL and your access to it")
    raise ToolkitError(f"revision {shown!r} is not in {' nor in '.join(tried)}", hint=missing_hint(rev, tried))


LOCAL_CLONE = ("a local clone answers those: put it at DIR/<host>/<path> (the source URL's host and path) and "
               "pass --mirror file://DIR")


def missing_hint(rev: str, tried: list[str]) -> str:
    """What a person can give instead of a revision none of `tried` has: what those repositories understand."""
    if any(local_path(repo) is not None for repo in tried):
        return ("give a branch, a tag, a commit id (a short one too) or any revision git understands "
                "(main~1, v1.2^) that the repository holds")
    if not _FULL.fullmatch(rev) and re.fullmatch(r"[0-9a-f]{4,39}", rev):
        return f"a remote repository lists no short commit ids: give all 40 hex digits, or {LOCAL_CLONE}"
    return f"a remote repository knows branches, tags and full 40-hex commits; for main~1 or a short id, {LOCAL_CLONE}"


class _Unreadable(Exception):
    """git could not read the repository at all (network, DNS, access, no repository there)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _ask(repo: str, rev: str) -> tuple[str, str | None] | None:
    """(commit, ref) of `rev` in `repo`, None when it has no such revision; raises _Unreadable."""
    listing = _list(repo)
    path = local_path(repo)
    if path is not None:
        if not path.is_dir():
            # git also reads <path>.git for <path>; rev-parse below needs the folder itself.
            raise _Unreadable(f"{path} is not a folder: give the repository's own path")
        out = _git(["rev-parse", "--verify", "--quiet"], f"{rev}^{{commit}}", cwd=path)
        if out is None:
            return None
        commit = out.strip()
        ref = _git(["rev-parse", "--verify", "--quiet", "--symbolic-full-name"], rev, cwd=path) or ""
        return commit, ref.strip() or None
    refs = {}
    for line in listing.splitlines():
        sha, _, name = line.partition("\t")
        refs[name] = sha
    for name in (f"refs/heads/{rev}", f"refs/tags/{rev}^{{}}", f"refs/tags/{rev}", rev):
        if name in refs:
            return refs[name], name.removesuffix("^{}")
    return None


# git's closing advice after any failed read: true, but it hides the line that says what went wrong.
_BOILERPLATE = ("fatal: Could not read from remote repository.", "Please make sure you have the correct access rights",
                "and the repository exists.")


def _list(repo: str) -> str:
    """`git ls-remote`: the repository's refs, read as a fetch reads it. A local one is opened as itself, never
    as a repository in a folder above it (what rev-parse in a non-repository folder would find)."""
    proc = run_git(["ls-remote"], [repo], f"git ls-remote {repo}", file_protocol=local_path(repo) is not None,
                   check=False, timeout=120)
    if proc.returncode == 0:
        return proc.stdout
    lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
    said = [line for line in lines if line not in _BOILERPLATE] or lines
    raise _Unreadable(said[-1] if said else f"git ls-remote exited {proc.returncode}")


def _git(args: list[str], operand: str, cwd: Path) -> str | None:
    proc = run_git(args, [operand], f"git {args[0]} {operand}", cwd=cwd, file_protocol=True, check=False,
                   timeout=120)
    return proc.stdout if proc.returncode == 0 else None
