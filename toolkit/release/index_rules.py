"""What a package index refuses, found before `publish` uploads anything: an upload that fails partway leaves an
index serving some wheels of a release and not others (a meta-package whose variant was refused, say).

The rules are data (`index_rules.json`): PyPI's for its upload URLs, none for any other index unless
`--index-rules` names a set (a mirror or proxy in front of PyPI) or `--size-limit` gives the index's own limit.
"""

from __future__ import annotations

import fnmatch
import json
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import urlsplit

from packaging.version import InvalidVersion, Version
from twine.utils import DEFAULT_REPOSITORY, TEST_REPOSITORY

from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON
from toolkit.wheel.wheelfile import dist_info_dir, parse_wheel_filename, read_headers

RULES_FILE = Path(__file__).resolve().parent / "index_rules.json"
MIB = 1024 * 1024
# twine's own repositories, by the names its configuration gives them.
TWINE_REPOSITORIES = {"pypi": DEFAULT_REPOSITORY, "testpypi": TEST_REPOSITORY}
# Where a dist-info folder keeps license files without PEP 639 (setuptools before 2.4 metadata wrote them there).
_LICENSE_NAMES = ("LICENSE*", "LICENCE*", "COPYING*")


@dataclass(frozen=True)
class IndexRules:
    name: str
    title: str
    upload_urls: tuple[str, ...]
    size_limit_mib: float | None
    size_by_option: bool               # the limit came from --size-limit, not from the index's rules
    refused_platform_tags: tuple[str, ...]
    allowed_platform_tags: tuple[str, ...]
    public_versions_only: bool
    license_file: bool
    hints: dict[str, str]


@dataclass(frozen=True)
class Violation:
    path: Path
    rule: str
    said: str
    hint: str


@cache
def _table() -> JSON:
    indexes: JSON = json.loads(RULES_FILE.read_text(encoding="utf-8"))["indexes"]
    return indexes


def names() -> tuple[str, ...]:
    return tuple(_table())


def rules_named(name: str, size_limit_mib: float | None = None) -> IndexRules:
    entry = _table().get(name)
    if entry is None:
        raise ToolkitError(f"--index-rules {name}: no such set of index rules in {RULES_FILE.name}",
                           hint=f"choose one of {', '.join(names())}")
    limit = entry["size_limit_mib"] if size_limit_mib is None else size_limit_mib
    return IndexRules(name, entry["title"], _upload_urls(entry), limit, size_limit_mib is not None,
                      tuple(entry["refused_platform_tags"]), tuple(entry["allowed_platform_tags"]),
                      bool(entry["public_versions_only"]), bool(entry["license_file"]),
                      {key.removesuffix("_hint"): value for key, value in entry.items() if key.endswith("_hint")})


def _upload_urls(entry: JSON) -> tuple[str, ...]:
    return tuple(TWINE_REPOSITORIES[name] for name in entry["twine_repositories"])


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/"


def rules_for(url: str, name: str | None = None, size_limit_mib: float | None = None) -> IndexRules:
    """The rules of the index `url` uploads to: those named, else the set whose upload origins hold the URL."""
    if name is None:
        name = next((key for key, entry in _table().items()
                     if url.startswith(tuple(_origin(u) for u in _upload_urls(entry)))), "none")
    return rules_named(name, size_limit_mib)


def _licenses(archive: zipfile.ZipFile, info: str, metadata_version: str, named: list[str]) -> tuple[bool, list[str]]:
    """(whether the wheel holds a license file, the License-File values METADATA names that it lacks)."""
    members = set(archive.namelist())
    files = [m for m in members if m.startswith(f"{info}/licenses/") and not m.endswith("/")]
    files += [m for m in members if m.count("/") == 1 and m.startswith(f"{info}/")
              and any(fnmatch.fnmatch(m.split("/")[1].upper(), pattern) for pattern in _LICENSE_NAMES)]
    # PEP 639 (Metadata-Version 2.4) puts License-File paths under licenses/; before it, beside METADATA.
    modern = _version(metadata_version) >= Version("2.4")
    missing = [value for value in named
               if (f"{info}/licenses/{value}" if modern else f"{info}/{value}") not in members
               and f"{info}/licenses/{value}" not in members]
    return bool(files) or len(named) > len(missing), missing


def _version(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        return Version("0")


def violations(path: Path, rules: IndexRules) -> list[Violation]:
    """What `rules` refuse of the wheel at `path`, each naming its rule."""
    found: list[Violation] = []

    def refuse(rule: str, said: str, hint_key: str) -> None:
        found.append(Violation(path, rule, said, rules.hints.get(hint_key, "")))

    try:
        with zipfile.ZipFile(path) as archive:
            info = dist_info_dir(archive)
            headers = read_headers(archive, "METADATA")
            if headers is None:
                raise ToolkitError(f"{path}: no {info}/METADATA in it: not a wheel")
            has_license, missing = _licenses(archive, info, headers.get("Metadata-Version", ""),
                                             headers.get_all("License-File") or [])
    except (zipfile.BadZipFile, OSError, UnicodeDecodeError) as exc:
        raise ToolkitError(f"{path}: not a readable wheel ({exc})") from None
    for tag in parse_wheel_filename(path.name).platform_tags:
        if any(fnmatch.fnmatchcase(tag, p) for p in rules.refused_platform_tags) and \
                tag not in rules.allowed_platform_tags:
            refuse("platform tags", f"platform tag {tag}, which {rules.title} refuses", "platform")
    size = path.stat().st_size
    if rules.size_limit_mib is not None and size > rules.size_limit_mib * MIB:
        whose = "the --size-limit" if rules.size_by_option else f"{rules.title}'s upload limit"
        refuse("file size", f"{size / MIB:.1f} MiB, over {whose} of {rules.size_limit_mib:g} MiB", "size")
    version = headers.get("Version", "")
    if rules.public_versions_only and "+" in version:
        refuse("public versions", f"version {version} has a local part (+...), which {rules.title} refuses",
               "version")
    if rules.license_file and missing:
        refuse("license files", f"METADATA names License-File {missing[0]}, which is not in {info}/licenses/; "
                                f"{rules.title} refuses it", "license")
    elif rules.license_file and not has_license:
        refuse("license files", f"no license file in it (nothing in {info}/licenses/, no License-File in "
                                f"METADATA), so it is not published to {rules.title}", "license")
    return found


def check(wheels: list[Path], rules: IndexRules) -> None:
    """Refuse, before any upload, the first wheel `rules` refuse: one error naming the file and the rule, with how
    many other refusals there are."""
    found = [v for path in wheels for v in violations(path, rules)]
    if not found:
        return
    first = found[0]
    more = f" (and {len(found) - 1} more: {', '.join(f'{v.path.name} ({v.rule})' for v in found[1:])})" \
        if len(found) > 1 else ""
    raise ToolkitError(f"{first.path}: {first.said} (rule: {first.rule}){more}; nothing was uploaded",
                       hint=first.hint or None)
