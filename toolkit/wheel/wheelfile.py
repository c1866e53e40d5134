"""Wheel file names and dist-info files, read the same way for our wheels and anybody else's, and the hash a
RECORD row holds for the files we write."""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile
from dataclasses import dataclass
from email.message import Message
from email.parser import HeaderParser

from toolkit.util.errors import ToolkitError

_PEP600 = re.compile(r"^manylinux_\d+_\d+_")


@dataclass(frozen=True)
class WheelName:
    distribution: str
    version: str
    build: str | None
    python_tags: tuple[str, ...]
    abi_tags: tuple[str, ...]
    platform_tags: tuple[str, ...]  # PEP 600 manylinux tags first, then the rest as written

    @property
    def tags(self) -> tuple[str, ...]:
        return tuple(f"{p}-{a}-{pl}" for p in self.python_tags for a in self.abi_tags for pl in self.platform_tags)


def record_hash(data: bytes) -> str:
    """RECORD's hash column for a file's bytes: `sha256=` and the digest in urlsafe base64 without padding."""
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def parse_wheel_filename(filename: str) -> WheelName:
    if not filename.endswith(".whl"):
        raise ToolkitError(f"{filename}: not a wheel file name (expected *.whl)")
    parts = filename[: -len(".whl")].split("-")
    if len(parts) not in (5, 6):
        raise ToolkitError(f"{filename}: not a wheel file name (NAME-VERSION[-BUILD]-PY-ABI-PLATFORM.whl)")
    build = parts[2] if len(parts) == 6 else None
    platforms = parts[-1].split(".")
    ordered = tuple(sorted(platforms, key=lambda tag: (not _PEP600.match(tag), platforms.index(tag))))
    return WheelName(parts[0], parts[1], build, tuple(parts[-3].split(".")), tuple(parts[-2].split(".")), ordered)


def dist_info_dir(archive: zipfile.ZipFile) -> str:
    dirs = sorted({n.split("/", 1)[0] for n in archive.namelist() if n.split("/", 1)[0].endswith(".dist-info")})
    if len(dirs) != 1:
        raise ToolkitError(f"{archive.filename}: expected one .dist-info folder, found {len(dirs)}")
    return dirs[0]


def read_headers(archive: zipfile.ZipFile, name: str) -> Message | None:
    """A dist-info file in RFC 822 form (WHEEL, METADATA) as an email.message.Message, or None."""
    path = f"{dist_info_dir(archive)}/{name}"
    try:
        text = archive.read(path).decode("utf-8")
    except KeyError:
        return None
    return HeaderParser().parsestr(text)


def read_entry_points(archive: zipfile.ZipFile) -> dict[str, dict[str, str]]:
    """entry_points.txt as {group: {name: target}}; an INI-like file read without configparser quirks."""
    try:
        text = archive.read(f"{dist_info_dir(archive)}/entry_points.txt").decode("utf-8")
    except KeyError:
        return {}
    groups: dict[str, dict[str, str]] = {}
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = groups.setdefault(line[1:-1].strip(), {})
        elif current is not None and "=" in line:
            name, _, target = line.partition("=")
            current[name.strip()] = target.strip()
    return groups
