"""A compile cache that many build machines share: ccache with remote storage, from one setting.

One URL (`[release] compile_cache`, or env TOOLKIT_COMPILE_CACHE, which wins; "off" disables) becomes
the environment and CMake defines a build needs:

    redis://cache.internal:6379      ccache remote storage on Redis
    http://cache.internal:8080/cc    ccache remote storage over HTTP (GET/PUT, e.g. nginx WebDAV)

Builds on different machines and in different folders hit the same entries because CCACHE_BASEDIR
makes paths below the work tree relative, CCACHE_NOHASHDIR leaves the working directory out of the
hash, and CCACHE_COMPILERCHECK=content identifies the compiler by its bytes, not its file time (each
container or runner has its own copy of the same compiler).
"""

from __future__ import annotations

import os
import re
import shutil
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.util.errors import ToolkitError
from toolkit.util.process import run

ENV_VAR = "TOOLKIT_COMPILE_CACHE"
SETTING = "release.compile_cache"
# URL scheme -> the ccache feature (from `ccache --version`) that serves it
_FEATURES = {"redis": "redis-storage", "http": "http-storage", "https": "http-storage"}
_LANGUAGES = ("C", "CXX", "HIP")


@dataclass(frozen=True)
class CacheConfig:
    url: str | None                      # None: no shared cache
    launcher: str | None = None          # absolute path of ccache
    env: dict[str, str] = field(default_factory=dict)
    cmake_defines: dict[str, str] = field(default_factory=dict)

    @property
    def enabled(self) -> bool:
        return self.url is not None

    def describe(self) -> str:
        return f"ccache, remote storage {redact(self.url)}" if self.url else "no shared compile cache"

    def cmake_args(self) -> list[str]:
        return [f"-D{k}={v}" for k, v in self.cmake_defines.items()]

    def build_env(self) -> dict[str, str]:
        """`env` plus the launchers as environment variables, which CMake (>= 3.17) reads on the first
        configure: a build picks up the cache without being told about it."""
        return {**self.env, **self.cmake_defines}


def resolve_url(setting: str | None) -> tuple[str | None, str]:
    """The cache URL in effect and where it came from (for messages)."""
    value, origin = setting, SETTING
    if ENV_VAR in os.environ:
        value, origin = os.environ[ENV_VAR], f"env {ENV_VAR}"
    if value is None or value.strip() in ("", "off", "none"):
        return None, origin
    return value.strip(), origin


def redact(url: str | None) -> str:
    """The URL without its password, for logs."""
    if not url:
        return ""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username or ''}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def compile_cache_config(url: str | None, *, basedir: Path | None = None, origin: str = SETTING,
                         ccache: str | None = None) -> CacheConfig:
    """Env and CMake defines that make a build use ccache with `url` as shared remote storage.

    basedir: the folder that holds the source and build trees (paths below it are hashed relative).
    """
    if url is None:
        return CacheConfig(None)
    scheme = _check_url(url, origin)
    launcher = ccache or shutil.which("ccache")
    if launcher is None:
        raise ToolkitError(f"{origin} = {redact(url)!r} needs ccache, which is not installed",
                           hint="install ccache >= 4.4 (apt-get install ccache), or set the cache to \"off\"")
    features = ccache_features(launcher)
    if _FEATURES[scheme] not in features:
        raise ToolkitError(f"{origin} = {redact(url)!r}: {launcher} was built without {_FEATURES[scheme]} "
                           f"(its features: {', '.join(sorted(features)) or 'none'})",
                           hint="use a ccache >= 4.4 built with remote storage support (Debian's 4.7 has it)")
    env = {
        "CCACHE_REMOTE_STORAGE": url,
        "CCACHE_NOHASHDIR": "true",
        "CCACHE_COMPILERCHECK": "content",
    }
    if basedir is not None:
        env["CCACHE_BASEDIR"] = str(Path(basedir).resolve())
    defines = {f"CMAKE_{lang}_COMPILER_LAUNCHER": launcher for lang in _LANGUAGES}
    return CacheConfig(url, launcher, env, defines)


def _check_url(url: str, origin: str) -> str:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in _FEATURES:
        raise ToolkitError(f"{origin} = {redact(url)!r}: unsupported scheme {parts.scheme!r}",
                           hint="use redis://HOST[:PORT] or http(s)://HOST[:PORT]/PATH, or \"off\"")
    if not parts.hostname:
        raise ToolkitError(f"{origin} = {redact(url)!r}: the URL names no host",
                           hint="for example redis://127.0.0.1:6379")
    try:
        _ = parts.port  # urllib checks the port only when it is read
    except ValueError:
        raise ToolkitError(f"{origin} = {redact(url)!r}: the port is not a number") from None
    return parts.scheme


def ccache_features(launcher: str) -> set[str]:
    out = run([launcher, "--version"], "asking ccache for its features", timeout=30, check=False).stdout
    match = re.search(r"^Features:\s*(.*)$", out, re.MULTILINE)
    return set(match.group(1).split()) if match else set()


def ccache_stats(env: dict[str, str] | None = None, launcher: str = "ccache") -> dict[str, int]:
    """ccache's counters (`--print-stats`) for the cache that `env` selects (CCACHE_DIR etc.)."""
    proc = run([launcher, "--print-stats"], "reading ccache's statistics", timeout=30,
               env={**os.environ, **(env or {})})
    stats = {}
    for line in proc.stdout.splitlines():
        key, _, value = line.partition("\t")
        if value.strip().isdigit():
            stats[key] = int(value)
    return stats
