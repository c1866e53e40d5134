"""The one place URLs and other echoed values are made safe to print or write.

A URL may carry a secret in two places: its userinfo (`https://user:TOKEN@host/...`) and query parameters
that look like credentials (`?token=...`, `&X-Amz-Signature=...`). Every line the toolkit prints or file it
writes that holds a URL (download progress, `pinned ...`, download errors, lock files, SBOM, provenance,
logs) goes through redact_url (one URL) or redact_text (free text that may hold URLs), so a secret never
leaves the process. Credentials are for the HTTP client only: they come from the environment or ~/.netrc
(requests reads it), never from a recipe or a lock key, and a URL's userinfo is not part of its identity
(lock keys are stored redacted, see toolkit/sources/lock.py).

shorten bounds any value echoed back in an error line (a 100 kB revision, a line of a file): the start and
the length, never the whole.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"

# Query parameter names (lowercased) whose values are credentials: exact names, and names holding one of
# the parts below (`access_token`, `x-amz-signature`, `private-token`, `api_key`).
_SECRET_NAMES = frozenset({"sig", "pass", "pwd", "jwt", "auth", "key"})
_SECRET_PARTS = ("token", "secret", "password", "passwd", "signature", "credential", "apikey", "api_key",
                 "api-key", "access_key", "accesskey", "authorization", "private_key", "session_key")

# scheme://userinfo@ anywhere in a text; userinfo holds no '/', '@' or whitespace.
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/@\s'\"<>]+)@")
# key=value pairs after '?' or '&' in a URL inside a text.
_QUERY_PAIR = re.compile(r"(?P<lead>[?&;])(?P<key>[A-Za-z0-9_.\-]+)=(?P<value>[^&#\s'\"<>]*)")


def secret_param(name: str) -> bool:
    """Whether a query parameter of this name carries a credential."""
    low = name.lower()
    return low in _SECRET_NAMES or any(part in low for part in _SECRET_PARTS)


def redact_url(url: str) -> str:
    """url with its userinfo replaced by *** and the values of credential-like query parameters by ***."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact_text(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(secret_param(k) for k, _ in pairs):
            query = urlencode([(k, MASK if secret_param(k) else v) for k, v in pairs], safe="*/:")
    if netloc == parts.netloc and query == parts.query:
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def strip_userinfo(url: str) -> str:
    """url without its userinfo (user:password@): what identifies the file, with no credential in it."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, parts.query, parts.fragment))


def redact_text(text: str) -> str:
    """text with every URL's userinfo and credential-like query values replaced by ***."""
    if "@" in text:
        text = _USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)
    if "=" in text and ("?" in text or "&" in text):
        text = _QUERY_PAIR.sub(
            lambda m: f"{m['lead']}{m['key']}={MASK}" if secret_param(m["key"]) and m["value"] else m[0], text)
    return text


def shorten(value: object, limit: int = 120) -> str:
    """repr-like echo of a value bounded to `limit` characters: its start, then how long it was."""
    text = str(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def public_url(url: str) -> str:
    """What identifies a URL's file with no credential in it: no userinfo, credential-like query values ***.
    Lock keys, SBOM and provenance records use it."""
    return strip_userinfo(redact_url(url))


def redact_tree(value: object) -> object:
    """A JSON-like value (dicts, lists, strings) with redact_text applied to every string in it."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {redact_text(str(k)) if isinstance(k, str) else k: redact_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_tree(v) for v in value]
    return value
