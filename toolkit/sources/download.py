"""Verified downloads into the shared cache: resume, retries with backoff, mirrors, offline mode.

A file enters the cache only after its sha256 matched, by a rename from partial/ to downloads/, so a
reader never sees half a file or a wrong one. While a download runs it holds the cache lock for that
checksum: a second process fetching the same file waits and then reuses it instead of downloading again.
A cache hit is hashed again before it is used. A download joined from several answers (a resume) that fails
its checksum is downloaded once more from byte 0 without resuming, so a server whose 206 answers do not start
where they say costs a second download, not a failed run.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import requests
import urllib3

from toolkit import __version__
from toolkit.sources.cache import Cache, url_key
from toolkit.sources.mirrors import ENV_MIRRORS, local_path, mirror_url, mirrors_from_env, sources_for
from toolkit.sources.progress import Progress
from toolkit.sources.pypi import PYPI_SCHEME, pip_download
from toolkit.util import log
from toolkit.util.debian_mirror import resolve_url
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import sha256_file
from toolkit.util.redact import redact_url

__all__ = ["ENV_MIRRORS", "mirror_url", "mirrors_from_env", "candidate_urls", "fetch", "fetch_unpinned",
           "fetch_unpinned_from", "DownloadOptions"]
_CHUNK = 1 << 16


@dataclass(frozen=True)
class DownloadOptions:
    connect_timeout: float = 15.0
    read_timeout: float = 60.0  # longest silence between two reads of the body
    retries: int = 4  # further attempts per URL after the first, for 5xx and dropped connections
    backoff: float = 1.0  # seconds before the first retry, doubled for each next one
    progress: bool = True
    insecure_mirror: bool = False  # --insecure-mirror: a plain http:// mirror may serve https:// URLs


class _Transient(Exception):
    """Worth another try at the same URL: 5xx, a dropped or stalled connection, a short body."""


class _Permanent(Exception):
    """Not worth retrying at this URL: 4xx, a redirect loop, a checksum mismatch."""


def candidate_urls(url: str, mirrors: list[str] | tuple[str, ...] = (), insecure: bool = False) -> list[str]:
    """Mirrors first, in the order given (an internal artifact server is closer and trusted), then upstream;
    a plain-http mirror serves no https:// URL (toolkit.sources.mirrors).

    A `debian:<path>` URL is first resolved against this machine's Debian mirror (debian_mirror.py).
    """
    return [candidate for _, candidate in sources_for(resolve_url(url), mirrors, insecure)]


def _offline_error(url: str, sha256: str | None, cache: Cache) -> ToolkitError:
    what = f"{redact_url(url)} (sha256 {sha256})" if sha256 else redact_url(url)
    return ToolkitError(
        f"offline: {what} is not in the download cache {cache.root / 'downloads'}",
        hint="run the same command once with network access (or fill the cache from a machine that has it, "
        "or point TOOLKIT_CACHE_DIR at a cache that holds it), then retry with --offline",
    )


def fetch(url: str, sha256: str, cache: Cache, mirrors: list[str] | tuple[str, ...] = (),
          offline: bool = False, options: DownloadOptions = DownloadOptions()) -> Path:
    """The cached, verified file for (url, sha256), downloading it once if the cache lacks it.

    A cache hit is hashed again before use: a file changed on disk is reported, dropped and fetched again.
    """
    sha256 = sha256.lower()
    hit = cache.find_download(sha256)
    if hit is not None and sha256_file(hit) == sha256:
        return hit
    if url.startswith(PYPI_SCHEME):
        return _fetch_wheel(url, sha256, cache, offline)
    candidates = _candidates(url, mirrors, offline, options.insecure_mirror)
    if offline and hit is None and not candidates:
        raise _offline_error(url, sha256, cache)
    with cache.lock(sha256, redact_url(url)):
        hit = _verified_hit(cache, sha256, url, offline and not candidates)
        if hit is not None:
            return hit  # another process finished it while this one waited
        part = cache.partial_path(sha256)
        _download_from_any(url, candidates, part, sha256, options)
        return _publish(part, cache.download_path(sha256, url))


def _fetch_wheel(url: str, sha256: str | None, cache: Cache, offline: bool) -> Path:
    """A `pypi:` wheel, fetched by pip from the index its configuration names (toolkit/sources/pypi.py)."""
    if offline:
        raise _offline_error(url, sha256, cache)
    key = sha256 or "url-" + url_key(url)
    with cache.lock(key, url):
        hit = _verified_hit(cache, sha256, url, False) if sha256 else None
        if hit is not None:
            return hit
        staging = cache.root / "partial"
        staging.mkdir(parents=True, exist_ok=True)
        wheel = pip_download(url, sha256, staging)
        return _publish(wheel, cache.download_path(sha256 or sha256_file(wheel), url))


def _verified_hit(cache: Cache, sha256: str, url: str, offline: bool) -> Path | None:
    """The cached file for sha256 if its bytes still hash to it; corrupt ones are dropped. Hold the lock."""
    url = redact_url(url)
    while (hit := cache.find_download(sha256)) is not None:
        got = sha256_file(hit)
        if got == sha256:
            return hit
        try:
            hit.unlink()
        except OSError as exc:
            raise ToolkitError(f"the cache entry {hit} for {url} is corrupt (sha256 {got}, expected {sha256}) "
                               f"and cannot be removed: {exc.strerror}",
                               hint=f"delete {hit.parent} by hand, then run the command again") from None
        if offline:
            raise ToolkitError(
                f"offline: the cache entry {hit} for {url} was corrupt (sha256 {got}, expected {sha256}); "
                "it was dropped",
                hint="run the same command once with network access to download it again, then retry with "
                "--offline")
        log.warn(f"cache entry {hit} is corrupt (sha256 {got}, expected {sha256}): dropped it, "
                 f"downloading it again from {url}")
    return None


def fetch_unpinned(url: str, cache: Cache, mirrors: list[str] | tuple[str, ...] = (),
                   options: DownloadOptions = DownloadOptions(), *, offline: bool = False) -> tuple[Path, str]:
    """Download a URL that has no checksum yet (for `lock`); returns the cached file and its sha256. Offline,
    only a local file (a file:// mirror's copy, or a file:// URL) can serve it."""
    path, digest, _ = fetch_unpinned_from(url, cache, mirrors, options, offline=offline)
    return path, digest


def fetch_unpinned_from(url: str, cache: Cache, mirrors: list[str] | tuple[str, ...] = (),
                        options: DownloadOptions = DownloadOptions(), *,
                        offline: bool = False) -> tuple[Path, str, str]:
    """fetch_unpinned, and where the bytes came from: "mirror BASE" (redacted) or "upstream"."""
    if url.startswith(PYPI_SCHEME):
        wheel = _fetch_wheel(url, None, cache, offline)
        return wheel, sha256_file(wheel), "the package index pip is configured with"
    key = "url-" + url_key(url)
    candidates = _candidates(url, mirrors, offline, options.insecure_mirror)
    if not candidates:
        raise ToolkitError(f"offline: {redact_url(url)} has no sha256 yet, and no file:// mirror holds it",
                           hint="give --mirror file://DIR with a copy at its mirror path, or run without --offline")
    with cache.lock(key, redact_url(url)):
        part = cache.partial_path(key)
        where = _download_from_any(url, candidates, part, None, options)
        digest = sha256_file(part)
        with cache.lock(digest, redact_url(url)):
            existing = _verified_hit(cache, digest, url, offline=False)
            if existing is not None:
                part.unlink()
                return existing, digest, where
            return _publish(part, cache.download_path(digest, url)), digest, where


def _candidates(url: str, mirrors: list[str] | tuple[str, ...], offline: bool,
                insecure: bool) -> list[tuple[str, str]]:
    """Where url may come from, as (where, URL): its mirrors, then url itself. Reading a local file is not
    network access, so offline still takes a file:// mirror or URL that exists."""
    candidates = sources_for(resolve_url(url), mirrors, insecure)
    if offline:
        candidates = [(w, c) for w, c in candidates if c.startswith("file://") and local_path(c).is_file()]
    return candidates


def _download_from_any(url: str, candidates: list[tuple[str, str]], part: Path, sha256: str | None,
                       options: DownloadOptions) -> str:
    """Download url into part from the first of its candidate locations that serves it (verified against
    sha256 when given) and return which one did; raises an error listing every location's failure when none
    does. Every URL in a message is redacted: a mirror or source URL may carry credentials."""
    failures = []
    for where, candidate in candidates:
        try:
            _download_verified(candidate, part, sha256, options)
            return where
        except _Permanent as exc:
            failures.append(f"{redact_url(candidate)}: {exc}")
    lines = "\n".join(f"  {f}" for f in failures)
    raise ToolkitError(
        f"download failed: {redact_url(url)}\n{lines}",
        hint="check the URL and your network; a checksum mismatch means the file changed upstream or the "
        "recipe/lock holds a wrong sha256 (nothing was kept)",
    )


def _publish(part: Path, dest: Path) -> Path:
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.replace(part, dest)
    return dest


def _download_verified(url: str, part: Path, sha256: str | None, options: DownloadOptions) -> None:
    """Download url into part (resuming what is there) and check its sha256; raises _Permanent on failure."""
    for fresh_retry in (False, True):
        resumed = _download_with_retries(url, part, options, resume=not fresh_retry)
        if sha256 is None:
            return
        got = sha256_file(part)
        if got == sha256:
            return
        part.unlink()
        # Bytes joined from more than one answer may be what is wrong (kept from an earlier run, or a server
        # whose 206 body does not start where it says): once more from zero, never resuming, before blaming
        # the URL.
        if not resumed or fresh_retry:
            raise _Permanent(f"sha256 mismatch: expected {sha256}, got {got} (file discarded)")
        log.info(f"{redact_url(url)}: sha256 mismatch after resuming a partial download; downloading it again "
                 "from byte 0")


def _download_with_retries(url: str, part: Path, options: DownloadOptions, resume: bool = True) -> bool:
    """Download url into part; True when the file was joined from more than one piece (a resume)."""
    if url.startswith("file://"):
        # A mirror on a local disk (--mirror file://<folder>): copied, then verified like any download.
        local = local_path(url)
        if not local.is_file():
            raise _Permanent(f"no such file {local}")
        part.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(local, part)
        return False
    attempt = 0
    joined = part.exists() and part.stat().st_size > 0 and resume
    with requests.Session() as session:
        session.headers["User-Agent"] = f"ort-amdgpu-toolkit/{__version__}"
        # Raw bytes only: a transparent gzip decode would change the checksum and break Range offsets.
        session.headers["Accept-Encoding"] = "identity"
        while True:
            try:
                joined = _attempt(session, url, part, options, resume) or joined
                return joined
            except _Transient as exc:
                attempt += 1
                if attempt > options.retries:
                    raise _Permanent(f"{exc} (gave up after {attempt} attempts)") from None
                delay = options.backoff * (2 ** (attempt - 1))
                log.info(f"{redact_url(url)}: {exc}; retry {attempt}/{options.retries} in {delay:g} s")
                time.sleep(delay)


def _attempt(session: requests.Session, url: str, part: Path, options: DownloadOptions, resume: bool = True) -> bool:
    """One request; appends to part (a 206 answer to a Range request, then returns True) or rewrites it."""
    part.parent.mkdir(parents=True, exist_ok=True)
    offset = part.stat().st_size if part.exists() and resume else 0
    headers = {"Range": f"bytes={offset}-"} if offset else {}
    timeout = (options.connect_timeout, options.read_timeout)
    try:
        response = session.get(url, headers=headers, stream=True, timeout=timeout, allow_redirects=True)
    except requests.TooManyRedirects:
        raise _Permanent("too many redirects") from None
    except requests.ConnectTimeout:
        raise _Transient(f"connect timed out after {options.connect_timeout:g} s") from None
    except requests.ReadTimeout:
        raise _Transient(f"no response within the read timeout of {options.read_timeout:g} s") from None
    except requests.ConnectionError as exc:
        raise _Transient(f"connection failed: {_reason(exc)}") from None
    except requests.RequestException as exc:
        raise _Permanent(f"request failed: {_reason(exc)}") from None

    with response:
        code = response.status_code
        if code == 416 and offset:
            part.unlink()
            raise _Transient("server refused to resume (HTTP 416); starting over")
        if code >= 500 or code in (408, 429):
            raise _Transient(f"HTTP {code} {response.reason}")
        if code >= 400:
            raise _Permanent(f"HTTP {code} {response.reason}")
        if code == 206 and offset:
            if _range_start(response) != offset:
                part.unlink()
                raise _Transient(f"server answered a different range than bytes={offset}-; starting over")
            mode = "ab"
        elif code == 200:
            offset, mode = 0, "wb"  # the server ignored Range: start over
        else:
            raise _Permanent(f"unexpected HTTP {code} {response.reason}")
        length = response.headers.get("Content-Length")
        total = offset + int(length) if length and length.isdigit() else None
        progress = Progress(redact_url(url), total, start=offset, enabled=options.progress)
        ok = False
        try:
            with open(part, mode) as handle:
                for chunk in _body(response):
                    handle.write(chunk)
                    progress.update(len(chunk))
                handle.flush()
                os.fsync(handle.fileno())
            ok = True
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
            if _is_timeout(exc):
                raise _Transient(f"body stalled longer than the read timeout of {options.read_timeout:g} s "
                                 f"(got {_got(part, total)})") from None
            raise _Transient(f"truncated body: connection closed after {_got(part, total)}") from None
        finally:
            progress.finish(ok)
        size = part.stat().st_size
        if total is not None and size != total:
            raise _Transient(f"truncated body: got {size} of {total} bytes")
        return mode == "ab"


def _body(response: requests.Response) -> Iterator[bytes]:
    """The raw body in pieces as they arrive, so bytes received before a drop are kept for the resume."""
    raw = response.raw
    if not hasattr(raw, "read1"):  # urllib3 < 2.2
        yield from response.iter_content(_CHUNK)
        return
    while chunk := raw.read1(_CHUNK, decode_content=False):
        yield chunk


def _is_timeout(first: BaseException) -> bool:
    exc: BaseException | None = first
    while exc is not None:
        if isinstance(exc, (urllib3.exceptions.TimeoutError, TimeoutError, requests.Timeout)):
            return True
        if "timed out" in str(exc).lower():
            return True
        exc = exc.__context__ or (exc.args[0] if exc.args and isinstance(exc.args[0], BaseException) else None)
    return False


def _range_start(response: requests.Response) -> int | None:
    value = response.headers.get("Content-Range", "")
    if not value.startswith("bytes "):
        return None
    start = value[6:].split("-", 1)[0]
    return int(start) if start.isdigit() else None


def _got(part: Path, total: int | None) -> str:
    size = part.stat().st_size if part.exists() else 0
    return f"{size} of {total} bytes" if total is not None else f"{size} bytes"


def _reason(exc: Exception) -> str:
    # requests nests urllib3 errors several levels deep; the innermost message is the useful one.
    inner = exc
    while inner.args and isinstance(inner.args[0], Exception):
        inner = inner.args[0]
    reason = getattr(inner, "reason", None)
    return str(reason or inner)
