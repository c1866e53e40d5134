"""The user's paths in what a session inside a container prints.

A container mounts host folders at fixed paths inside (/work/project, /work/build, ...: toolkit/container/engine.py),
and a session there knows its folders by those. The process that starts the container hands the mapping in
(TOOLKIT_HOST_PATHS: a JSON object, inside path -> host path), and every line the toolkit prints (toolkit.util.log,
the error line) names the host path instead: the one the user gave, and can open. Files the session writes (records,
lock files) keep what they hold; only printed text is translated.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

ENV = "TOOLKIT_HOST_PATHS"


def encode(pairs: Iterable[tuple[Path | str, str]]) -> str:
    """The value of TOOLKIT_HOST_PATHS for mounts given as (host path, inside path); a mount seen at its own path
    needs no entry."""
    return json.dumps({inside: str(host) for host, inside in pairs if str(host) != inside}, sort_keys=True)


@functools.lru_cache(maxsize=8)
def _mapping(raw: str) -> tuple[re.Pattern[str], dict[str, str]] | None:
    try:
        given = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(given, dict):
        return None
    mapping = {str(k).rstrip("/"): str(v) for k, v in given.items() if str(k).startswith("/") and len(str(k)) > 1}
    if not mapping:
        return None
    # An inside path where a path starts (not in the middle of another, e.g. /x/work/build; a file:// URL is one),
    # and whole (/work/build, not /work/builds).
    alternatives = "|".join(re.escape(k) for k in sorted(mapping, key=len, reverse=True))
    return re.compile(rf"(?:(?<=file://)|(?<![\w./~-]))({alternatives})(?![\w.~-])"), mapping


def host_text(text: str, environ: Mapping[str, str] | None = None) -> str:
    """`text` with every path inside this container written as the host path it is mounted from (unchanged outside
    a container, or where no mount is at another path)."""
    raw = (os.environ if environ is None else environ).get(ENV)
    found = _mapping(raw) if raw else None
    if found is None:
        return text
    pattern, mapping = found
    return pattern.sub(lambda m: mapping[m.group(1)], text)
