"""FetchContent dependencies: what a revision's configure asked for (the provider's survey) against the
recipe's [[fetchcontent]], and pinning a new or re-versioned one.

A version is read from a URL or git tag as its dotted number (`v4.2.1.zip`, `releases/download/12.1.0/...`,
`20250512.1`): the tree declares release assets (`.zip`) where the recipe names tag archives a mirror serves
(`archive/refs/tags/v4.2.1.tar.gz`), so URLs are compared by version, not by spelling. A re-versioned
dependency keeps the recipe's URL form with the new version; a new one takes the tree's URL (or GitHub's tag
archive of it). Each candidate is fetched mirror first; the pin is the unpacked tree's digest, as for
`nox -s lock`.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from toolkit.recipe.pinned import version_of
from toolkit.recipe.sources import FetchContentDep
from toolkit.sources.context import FetchContext
from toolkit.sources.download import fetch_unpinned, mirror_url
from toolkit.sources.extract import extract_archive
from toolkit.sources.mirrors import may_serve
from toolkit.sources.provider_survey import Request
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import tree_digest
from toolkit.util.redact import redact_url

_GITHUB = re.compile(r"^https://github\.com/([^/]+)/([^/]+?)(?:\.git)?/?$")
ADDED, REMOVED, REVERSIONED, SAME = "added", "removed", "re-versioned", "same"


@dataclass
class DepChange:
    name: str
    kind: str
    recipe_url: str | None  # what the recipe has now
    declared: str | None  # what the tree declares (URL, or repository@tag)
    old_version: str | None = None
    new_version: str | None = None
    new_url: str | None = None  # the recipe's URL after the bump
    content: str | None = None  # its pin (digest of the unpacked tree)
    problem: str | None = None  # why bump could not pin it


def compare(recipe_deps: Iterable[FetchContentDep], requests: list[Request]) -> list[DepChange]:
    """One change per dependency the recipe lists or the configure asked for (SAME included)."""
    by_name = {d.name.lower(): d for d in recipe_deps}
    out = []
    for r in requests:
        declared = r.url if not r.tag else f"{r.url}@{r.tag}"
        dep = by_name.pop(r.name, None)
        if dep is None:
            out.append(DepChange(r.name, ADDED, None, declared, new_version=version_of(r.tag or r.url)))
            continue
        old, new = version_of(dep.archive.url), version_of(r.tag or r.url)
        kind = REVERSIONED if old and new and old != new else SAME
        out.append(DepChange(r.name, kind, dep.archive.url, declared, old, new))
    out += [DepChange(name, REMOVED, dep.archive.url, None, version_of(dep.archive.url))
            for name, dep in by_name.items()]
    return out


def candidate_urls(change: DepChange) -> list[str]:
    """Archive URLs that may hold the version the tree declares, the recipe's own form first."""
    out = []
    if change.recipe_url and change.old_version and change.new_version:
        out.append(change.recipe_url.replace(change.old_version, change.new_version))
    declared = change.declared or ""
    url, _, tag = declared.partition("@") if "://" in declared.split("@", 1)[0] else (declared, "", "")
    github = _GITHUB.match(url)
    if tag and github:
        out.append(f"https://github.com/{github.group(1)}/{github.group(2)}/archive/refs/tags/{tag}.tar.gz")
    elif url and not tag:
        out.append(url)
        if url.endswith(".zip") and "/archive/" in url:
            out.append(url[: -len(".zip")] + ".tar.gz")
    return list(dict.fromkeys(out))


def pin(change: DepChange, ctx: FetchContext) -> None:
    """Find the first candidate URL that downloads (mirror first), and pin the digest of its tree."""
    tried = []
    for url in candidate_urls(change):
        for location in _locations(url, ctx):
            try:
                archive, _ = fetch_unpinned(location, ctx.cache, (), ctx.options)
            except ToolkitError:
                tried.append(redact_url(location))   # a mirror's URL may carry credentials: the report is a file
                continue
            change.new_url, change.content = url, content_digest(archive)
            return
    change.problem = ("no archive of it found: tried " + ", ".join(tried)) if tried else \
        "no archive URL can be made from what the tree declares"


def _locations(url: str, ctx: FetchContext) -> list[str]:
    out = []
    for base in ctx.mirrors:
        if not may_serve(base, url, ctx.insecure_mirror):
            continue
        candidate = mirror_url(base, url)
        if candidate.startswith("file://"):
            if Path(candidate[len("file://"):]).is_file():
                out.append(candidate)
        elif not ctx.offline:
            out.append(candidate)
    return out + ([url] if not ctx.offline else [])


def content_digest(archive: Path) -> str:
    """The digest of the unpacked tree (toolkit.util.fsutil.tree_digest), as the lock file pins it."""
    tmp = Path(tempfile.mkdtemp(prefix=".bump-content."))
    try:
        extract_archive(archive, tmp / "tree", None)
        return tree_digest(tmp / "tree")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
