"""Mirrors: where a mirror keeps an upstream file, which mirror may serve which URL, and what a plan names.

A mirror is a base URL (`--mirror BASE`, $TOOLKIT_MIRRORS) laid out as a plain copy of upstream:
BASE/<host>/<path>. Rules:

- a `file://` mirror must exist: a mistyped path is an error, not a mirror that silently holds nothing;
- an `https://` URL is served only by an `https://` or `file://` mirror: a plain-http mirror would let
  anyone on the path choose the bytes a lock then pins for the https URL. `--insecure-mirror` (carried to
  here as `insecure`, in DownloadOptions) or $TOOLKIT_INSECURE_MIRROR=1 allows it, saying so;
- a mirror URL may carry credentials (`https://user:TOKEN@host/`): it comes from the command line or the
  environment, never a recipe, and is printed redacted (toolkit.util.redact).
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlsplit

from toolkit.util import argcheck, log
from toolkit.util.errors import ToolkitError
from toolkit.util.redact import redact_url, shorten

ENV_MIRRORS = "TOOLKIT_MIRRORS"
ENV_INSECURE = "TOOLKIT_INSECURE_MIRROR"
_warned: set[str] = set()


def mirrors_from_env() -> list[str]:
    """Mirror base URLs from $TOOLKIT_MIRRORS (separated by spaces or commas)."""
    raw = os.environ.get(ENV_MIRRORS, "")
    return [m for m in raw.replace(",", " ").split() if m]


def insecure_allowed(insecure: bool = False) -> bool:
    """Whether plain-http mirrors may serve https:// URLs: --insecure-mirror (`insecure`), else the environment."""
    return insecure or os.environ.get(ENV_INSECURE, "") not in ("", "0")


def local_path(url: str) -> Path:
    """The file a file:// URL names."""
    return Path(unquote(urlsplit(url).path))


def check_mirrors(mirrors: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The mirrors, each checked: a known scheme, and a file:// one that is an existing folder."""
    for base in mirrors:
        scheme = base.split("://", 1)[0] if "://" in base else ""
        if scheme not in ("http", "https", "file"):
            raise ToolkitError(f"mirror {shorten(redact_url(base))}: expected an http://, https:// or file:// base URL "
                               "(give --mirror or $TOOLKIT_MIRRORS as file://FOLDER or https://HOST/PATH)")
        if scheme == "file" and not local_path(base).is_dir():
            raise ToolkitError(f"mirror {shorten(base)}: no such folder {shorten(local_path(base))} (check --mirror or "
                               "$TOOLKIT_MIRRORS: a mirror is a folder of <host>/<path> copies of upstream files)")
    return tuple(mirrors)


def mirror_url(base: str, url: str) -> str:
    """Where a mirror keeps an upstream file: <base>/<host>/<path>, the layout of a plain copy of upstream."""
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    return f"{base.rstrip('/')}/{parts.hostname or 'localhost'}{path}"


def may_serve(base: str, url: str, insecure: bool = False) -> bool:
    """Whether mirror `base` may serve `url`: not a plain-http mirror for an https URL (unless allowed)."""
    if not (url.startswith("https://") and base.startswith("http://")):
        return True
    if insecure_allowed(insecure):
        if base not in _warned:
            _warned.add(base)
            log.warn(f"mirror {redact_url(base)} serves https:// URLs over plain http (--insecure-mirror): "
                     "what it sends is not authenticated")
        return True
    if base not in _warned:
        _warned.add(base)
        log.warn(f"mirror {redact_url(base)} is plain http: not used for https:// URLs (an unauthenticated "
                 "channel could change what gets pinned); use an https:// or file:// mirror, or pass "
                 "--insecure-mirror (TOOLKIT_INSECURE_MIRROR=1) to allow it")
    return False


def sources_for(url: str, mirrors: list[str] | tuple[str, ...], insecure: bool = False) -> list[tuple[str, str]]:
    """(where, candidate URL) for url: each mirror that may serve it, in order, then upstream itself.
    `where` is "mirror BASE" (redacted) or "upstream"."""
    out = [(f"mirror {redact_url(m)}", mirror_url(m, url)) for m in mirrors if may_serve(m, url, insecure)]
    if url not in [c for _, c in out]:
        out.append(("upstream", url))
    return out


def _plain_path(url: str) -> bool:
    # A git URL without a scheme nor user@host: is a folder on this machine (as toolkit.sources.git reads it).
    return "://" not in url and ":" not in url.split("/", 1)[0]


def origin(url: str, mirrors: list[str] | tuple[str, ...], cached: bool, offline: bool,
           insecure: bool = False, git: bool = False) -> str:
    """Where a dry run says an input would come from: the cache, a local mirror holding it, a remote mirror
    (else upstream), or upstream. With `git`, the input is a repository, which a mirror holds as a bare
    repository: a folder, where an archive is a file (toolkit.sources.git.fetch_git takes the same folders)."""
    if cached:
        return "cached"
    held = Path.is_dir if git else Path.is_file
    for where, candidate in sources_for(url, mirrors, insecure):
        if git and argcheck.git_url_problem(candidate) is not None:
            continue  # fetch_git never asks a mirror git cannot read (an http:// one for archives, ...)
        if candidate.startswith("file://") or git and _plain_path(candidate):
            if held(local_path(candidate)):
                return f"from {where}"
            continue
        if offline:
            continue
        if where == "upstream":
            return f"from upstream {redact_url(url)}"
        return f"from {where} (else the next mirror or upstream)"
    return "not in the cache nor a local mirror: offline cannot get it"
