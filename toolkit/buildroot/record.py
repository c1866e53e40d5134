"""The exact record of a build root: every installed package and its version, as dpkg-query lists them.

Written like a lock file (`containers/roots/<name>.lock`, committed next to the package set), so a
rebuild either is the same root or says what changed, package by package:

    changed  hipcc                 7.0.2-1 -> 7.0.2-2
    added    libfoo1               1.0-1
    removed  libbar2               2.1-3
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

from toolkit.buildroot import sandbox
from toolkit.util.errors import RUN_TOOLKIT, ToolkitError
from toolkit.util.fsutil import atomic_write_text

Record = dict[str, str]   # package (with :arch for foreign ones) -> version


@dataclass(frozen=True)
class Change:
    package: str
    old: str | None   # None: not in the old record (added)
    new: str | None   # None: not in the new record (removed)

    def line(self) -> str:
        if self.old is None:
            return f"added    {self.package:<36} {self.new}"
        if self.new is None:
            return f"removed  {self.package:<36} {self.old}"
        return f"changed  {self.package:<36} {self.old} -> {self.new}"


def query(root: Path) -> Record:
    """The packages dpkg says are installed in `root` (asked inside the root, with its own dpkg).

    Keys are package names; a package of a foreign architecture gets dpkg's `:arch` suffix.
    """
    script = ("dpkg --print-architecture; "
              "dpkg-query -W -f '${db:Status-Abbrev}\\t${Package}\\t${Architecture}\\t${Version}\\n'")
    proc = sandbox.run(root, ["sh", "-c", script], capture=True)
    native, *lines = proc.stdout.splitlines()
    record: Record = {}
    for line in lines:
        status, package, arch, version = line.split("\t")
        if status.startswith("ii"):
            record[package if arch in (native, "all") else f"{package}:{arch}"] = version
    if not record:
        raise ToolkitError(f"{root}: dpkg lists no installed packages: not a Debian root")
    return dict(sorted(record.items()))


def diff(old: Record, new: Record) -> list[Change]:
    changes = []
    for package in sorted(set(old) | set(new)):
        if old.get(package) != new.get(package):
            changes.append(Change(package, old.get(package), new.get(package)))
    return changes


def write_lock(path: Path, name: str, digest: str, record: Record) -> None:
    lines = [
        f"# Every package installed in the {name} build root, with its version (dpkg-query).",
        f"# Made from {name}.toml; `{RUN_TOOLKIT} root lock {name}` rewrites this file.",
        f'package_set = "{digest}"',
        "",
        "[packages]",
    ]
    lines += [f"{json.dumps(package)} = {json.dumps(version)}" for package, version in sorted(record.items())]
    atomic_write_text(Path(path), "\n".join(lines) + "\n")


def read_lock(path: Path) -> tuple[str, Record]:
    """(package set digest, record) of a lock file; a malformed one is an error naming it."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ToolkitError(f"{path}: no lock file", hint=f"write it with `{RUN_TOOLKIT} root lock`") from None
    except tomllib.TOMLDecodeError as exc:
        raise ToolkitError(f"{path}: not valid TOML: {exc}") from None
    digest, packages = data.get("package_set"), data.get("packages")
    if not isinstance(digest, str) or not isinstance(packages, dict) \
            or not all(isinstance(v, str) for v in packages.values()):
        raise ToolkitError(f"{path}: expected package_set = \"<sha256>\" and a [packages] table of versions",
                           hint=f"rewrite it with `{RUN_TOOLKIT} root lock`")
    return digest, dict(packages)
