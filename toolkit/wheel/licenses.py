"""Licenses in the wheels (PEP 639): the EP tree's own, and those of the libraries repair bundles.

The tree's license files (data/licenses.json's `tree_files`) are copied into the generated project and declared as
`license-files`, so scikit-build-core writes them to `.dist-info/licenses/` with a `License-File` line each. Repair
then adds, for each library it bundled into `<name>.libs/`, `.dist-info/licenses/bundled/<its name>/`: the license
text the build machine has for it (the owning Debian package's copyright file, or data/licenses.json's globs), the
common license texts that file only refers to, and a NOTICE saying what it is, under which license, where its source
is and, for the LGPL, how to replace it. METADATA gains their `License-File` lines and the libraries' licenses in
its `License-Expression` (linked_licenses.py does the same for code of other projects inside the wheel's own
libraries). `license_problems` is the check a finished wheel must pass.
"""

from __future__ import annotations

import fnmatch
import json
import os
import posixpath
import re
import shutil
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from toolkit.recipe.wheel import Component
from toolkit.recipe.wheel_metadata import spdx_tools
from toolkit.util.errors import ToolkitError
from toolkit.util.fsutil import JSON
from toolkit.util.process import run
from toolkit.wheel.data import read_text
from toolkit.wheel.runpath import rewrite_wheel
from toolkit.wheel.wheelfile import dist_info_dir, read_headers

BUNDLED = "bundled"
# auditwheel's and graft.py's name for a bundled copy: the original name with 8 hex of its hash before the first
# dot (libprotobuf-1a2b3c4d.so.32); the licenses are filed under the original name.
_GRAFTED = re.compile(r"^(?P<stem>[^.]+)-[0-9a-f]{8}(?P<rest>\..+)$")
_TABLE_FILE = "toolkit/wheel/data/licenses.json"


@cache
def table() -> JSON:
    """data/licenses.json."""
    data: JSON = json.loads(read_text("data", "licenses.json"))
    return data


def tree_license_files(tree: Path) -> tuple[str, ...]:
    """The tree's license files, relative paths in POSIX form, sorted. Names match case-insensitively: trees spell
    them License.txt or COPYING.md as often as LICENSE."""
    tree = Path(tree)
    patterns = [p.lower() for p in table()["tree_files"]]
    found = []
    for folder in (tree, tree / "LICENSES"):
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            relative = path.relative_to(tree).as_posix()
            if path.is_file() and any(fnmatch.fnmatchcase(relative.lower(), p) for p in patterns):
                found.append(relative)
    return tuple(sorted(found))


def copy_tree_licenses(tree: Path, dest: Path) -> tuple[str, ...]:
    """Copy the tree's license files into the project `dest` at the same relative paths; returns them."""
    files = tree_license_files(tree)
    for relative in files:
        (dest / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(tree) / relative, dest / relative)
    return files


def copy_carried_licenses(components: Iterable[Component], platform: str, dep_dirs: Mapping[str, Path],
                          dest: Path) -> tuple[str, ...]:
    """Copy the license texts of the libraries the wheel carries but its tree did not write (a component's
    `license_files`, found in the build's fetched dependencies) into `dest/bundled/<its file>/`; returns them."""
    copied = []
    for c in components:
        for ref in c.license_files:
            dep, _, inner = ref.partition("/")
            if dep not in dep_dirs:
                raise ToolkitError(f"[[wheel.components]] {c.library}: license_files names {ref!r}, but this build "
                                   f"fetched no [[fetchcontent]] {dep!r}",
                                   hint="declare it in the recipe's [[fetchcontent]] with the feature's `when`")
            top = Path(dep_dirs[dep]).resolve()
            text = (top / inner).resolve()
            if not text.is_relative_to(top) or not text.is_file():
                raise ToolkitError(f"[[wheel.components]] {c.library}: license_files {ref!r} is no file inside "
                                   f"{top}", hint="name a file of the dependency, as its archive lays it out")
            relative = f"{BUNDLED}/{c.file(platform)}/{posixpath.basename(inner)}"
            (dest / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(text, dest / relative)
            copied.append(relative)
    return tuple(sorted(copied))


def original_name(filename: str) -> str:
    """libprotobuf-1a2b3c4d.so.32 -> libprotobuf.so.32; a name without the hash stays as it is."""
    match = _GRAFTED.match(filename)
    return f"{match['stem']}{match['rest']}" if match else filename


def is_bundled_member(member: str) -> bool:
    """A file in a top-level `<name>.libs/` folder: where auditwheel and graft.py put what they bundle."""
    top, _, rest = member.partition("/")
    return top.endswith(".libs") and bool(rest) and not member.endswith("/")


@dataclass(frozen=True)
class LicenseSource:
    """Where bundled libraries' licenses come from: `table`, a file laid out as data/licenses.json (that one when
    None), and `root`, the system whose files hold their texts (DPKG_ROOT's, else /: where the build ran)."""

    table: Path | None = None
    root: Path | None = None

    def data(self) -> JSON:
        if self.table is None:
            return table()
        data: JSON = json.loads(Path(self.table).read_text(encoding="utf-8"))
        return data

    def entries(self) -> list[JSON]:
        return list(self.data()["bundled"])

    def table_name(self) -> str:
        return str(self.table) if self.table is not None else _TABLE_FILE

    def system_root(self) -> Path:
        return Path(self.root or os.environ.get("DPKG_ROOT") or "/")

    def entry_for(self, name: str) -> JSON | None:
        return next((e for e in self.entries() if fnmatch.fnmatchcase(name, e["soname"])), None)


@dataclass(frozen=True)
class Bundled:
    member: str  # the copy's archive path (onnxruntime_ep_hip.libs/libdwarf-1a2b3c4d.so.1)
    path: str | None  # where the build machine has the library it copied, where known


def debian_package(path: str | None, system: Path) -> tuple[str, str, str] | None:
    """(package, source package, version) that dpkg says owns `path` in the system at `system`, or None (no dpkg,
    or no owner)."""
    tool = shutil.which("dpkg-query")
    root = os.path.realpath(system)
    if tool is None or path is None:
        return None
    env = None if root == "/" else {**os.environ, "DPKG_ROOT": root}
    spellings = [p if root == "/" else p[len(root):] for p in dict.fromkeys((path, os.path.realpath(path)))
                 if root == "/" or p.startswith(root + "/")]
    if not spellings:
        return None
    done = run([tool, "--search", *spellings], f"asking dpkg which package owns {path}", check=False, env=env)
    owners = [line.split(": ", 1)[0].split(",")[0].split(":")[0].strip() for line in done.stdout.splitlines()
              if ": " in line and not line.startswith(("diversion by", "local diversion"))]
    if not owners:
        return None
    shown = run([tool, "--show", "--showformat=${source:Package}\t${source:Version}\n", owners[0]],
                f"asking dpkg for the source of {owners[0]}", check=False, env=env).stdout.split("\t")
    return (owners[0], shown[0].strip(), shown[1].strip()) if len(shown) == 2 else (owners[0], "", "")


def text_file(entry: JSON, package: str | None, root: Path) -> Path | None:
    candidates = [root / "usr/share/doc" / package / "copyright"] if package else []
    for pattern in entry["texts"]:
        candidates += sorted(root.glob(pattern))
    return next((c for c in candidates if c.is_file()), None)


def license_text_files(entry: JSON, text: Path, root: Path, name: str) -> dict[str, bytes]:
    """`text` (name -> bytes) with, for a Debian copyright file, the common licenses it names instead of quoting
    them (LGPL-2.1, Apache-2.0) from the machine at `root`; `name` says whose they are in an error."""
    files = {text.name: text.read_bytes()}
    for common in entry["common_licenses"] if text.name == "copyright" else ():
        full = root / "usr/share/common-licenses" / common
        if not full.is_file():
            raise ToolkitError(f"{name}: its copyright file refers to {full}, which this machine lacks",
                               "install base-files (it ships /usr/share/common-licenses)")
        files[common] = full.read_bytes()
    return files


def license_texts(bundled: Bundled, source: LicenseSource) -> dict[str, bytes]:
    """The files for .dist-info/licenses/bundled/<name>/ of one bundled library: name in that folder -> bytes."""
    root = source.system_root()
    name = original_name(posixpath.basename(bundled.member))
    entry = source.entry_for(name)
    if entry is None:
        raise ToolkitError(f"{bundled.member}: repair bundles {name}, but {source.table_name()} names no license for "
                           "it",
                           "add its entry (soname glob, SPDX license, source, where its text lies), or keep it out "
                           "of the wheel with the recipe's [wheel] excludes")
    owner = debian_package(bundled.path, root)
    text = text_file(entry, owner[0] if owner else None, root)
    if text is None:
        raise ToolkitError(f"{name}: repair bundles it, but this machine has no license text for it (looked for "
                           f"{', '.join(entry['texts'])} under {root})",
                           "install its package with its /usr/share/doc/<package>/copyright (a build root whose "
                           "path_exclude has /usr/share/doc/* lacks it), or say where its text lies in "
                           f"{source.table_name()}")
    files = license_text_files(entry, text, root, name)
    files["NOTICE"] = notice(entry, bundled, name, owner, sorted(files)).encode()
    return files


def notice(entry: JSON, bundled: Bundled, name: str, owner: tuple[str, str, str] | None, texts: list[str]) -> str:
    where = f"{entry['source']}"
    if owner and owner[1] and owner[2]:
        where += (f"; the copy bundled is Debian's {owner[0]} {owner[2]}, whose source is Debian's source package "
                  f"{owner[1]} {owner[2]} (`apt-get source {owner[1]}={owner[2]}`)")
    lines = [f"{entry['name']} ({name}) is bundled in this wheel as {bundled.member}.",
             f"License: {entry['license']}; its text: {', '.join(texts)} beside this file.",
             f"Source: {where}."]
    if entry.get("lgpl"):
        lines += [
            "",
            f"{entry['name']} is licensed under the GNU Lesser General Public License; this wheel uses it as a "
            f"separate shared library, {bundled.member}, which its own libraries load at run time. Its code is "
            "unmodified: repair changed only its file name, SONAME and library search path. You may replace it "
            f"with a build of your own of {entry['name']}, from the source above or a modified version of it: put "
            f"it at {bundled.member}, under that file name, and the wheel's libraries load it instead. Nothing in "
            "this wheel's own license forbids modifying the wheel for your own use, or reverse engineering it to "
            "debug such modifications.",
        ]
    return "\n".join(lines) + "\n"


def add_license_lines(metadata: str, files: Iterable[str], expressions: Iterable[str]) -> str:
    """METADATA with `License-File` lines for `files` and `expressions` joined to its License-Expression (kept
    absent where the wheel declares none: the libraries' licenses alone would misstate the EP's)."""
    head, sep, body = metadata.partition("\n\n")
    lines = head.split("\n")
    extra = [f"License-File: {f}" for f in files]
    for i, line in enumerate(lines):
        if line.startswith("Metadata-Version: "):
            version = tuple(int(n) for n in line.split(": ", 1)[1].split("."))
            lines[i] = f"Metadata-Version: {'.'.join(map(str, max(version, (2, 4))))}"  # License-File is 2.4's
        elif line.startswith("License-Expression: "):
            joined = all_of([line.split(": ", 1)[1], *expressions])
            lines[i] = f"License-Expression: {spdx_tools()[0](joined)}"
    return "\n".join(lines + extra) + sep + body


def with_carried_licenses(expression: str | None, components: Iterable[Component],
                          linked: Iterable[str] = ()) -> str | None:
    """The wheel's license expression with those of the libraries it carries but its tree did not write, and of
    the code of other projects linked into its own (`linked`)."""
    return all_of([*([expression] if expression else []), *(c.license for c in components if c.license),
                   *linked]) or None


def _split(expression: str, operator: str) -> list[str]:
    """`expression` split at each `operator` outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(expression):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and expression.startswith(f" {operator} ", i):
            parts.append(expression[start:i].strip())
            start = i + len(operator) + 2
    return [*parts, expression[start:].strip()]


def _closes_at_end(term: str) -> bool:
    """Whether the parenthesis that opens `term` is the one that closes it."""
    depth = 0
    for i, char in enumerate(term):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return i == len(term) - 1
    return False


def _unwrapped(term: str) -> str:
    """`term` without the parentheses that enclose all of it."""
    while term.startswith("(") and _closes_at_end(term):
        term = term[1:-1].strip()
    return term


def _and_terms(expression: str) -> list[str]:
    """The terms an SPDX expression joins with AND at its top level, nested ANDs flattened."""
    parts = _split(_unwrapped(expression), "AND")
    return [_unwrapped(parts[0])] if len(parts) == 1 else [t for part in parts for t in _and_terms(part)]


def all_of(expressions: Iterable[str]) -> str:
    """SPDX expressions joined with AND, each term once: `MIT AND Zlib AND (BSD-3-Clause OR GPL-2.0-only)`."""
    terms = list(dict.fromkeys(t for e in expressions for t in _and_terms(e) if t))
    return " AND ".join(f"({t})" if len(terms) > 1 and len(_split(t, "OR")) > 1 else t for t in terms)


def license_problems(wheel: Path, carried: Iterable[str] = ()) -> list[str]:
    """Why `wheel`'s licenses are incomplete: a bundled library (or one of the `carried` members: libraries the wheel
    ships that its tree did not build) with no license folder, a license file METADATA does not declare, a declared
    one that is missing. Empty when complete."""
    carried = set(carried)
    with zipfile.ZipFile(wheel) as archive:
        dist_info = dist_info_dir(archive)
        prefix = f"{dist_info}/licenses/"
        present = {n[len(prefix):] for n in archive.namelist() if n.startswith(prefix) and not n.endswith("/")}
        headers = read_headers(archive, "METADATA")
        declared = set(headers.get_all("License-File") or []) if headers is not None else set()
        problems = []
        for member in archive.namelist():
            if is_bundled_member(member) or member in carried:
                name = original_name(posixpath.basename(member))
                kind = "bundled" if member not in carried else "carried"
                if not any(p.startswith(f"{BUNDLED}/{name}/") for p in present):
                    problems.append(f"{member}: {kind} library {name} has no license in {prefix}{BUNDLED}/{name}/")
    problems += [f"{prefix}{p}: METADATA has no License-File line for it" for p in sorted(present - declared)]
    problems += [f"METADATA License-File {p}: not in the wheel's {prefix}" for p in sorted(declared - present)]
    return problems


def add_bundled_licenses(wheel: Path, unpacked: Path, bundled: Iterable[Bundled], out: Path,
                         source: LicenseSource | None = None) -> Path:
    """`wheel` (unpacked in `unpacked`) rewritten into the folder `out` with each bundled library's license files
    and the METADATA lines for them; returns the new wheel."""
    bundled, source = list(bundled), source or LicenseSource()
    with zipfile.ZipFile(wheel) as archive:
        dist_info = dist_info_dir(archive)
    added, expressions = [], []
    for b in bundled:
        name = original_name(posixpath.basename(b.member))
        for filename, data in license_texts(b, source).items():
            member = f"{dist_info}/licenses/{BUNDLED}/{name}/{filename}"
            (unpacked / member).parent.mkdir(parents=True, exist_ok=True)
            (unpacked / member).write_bytes(data)
            added.append(member)
        expressions.append(str((source.entry_for(name) or {})["license"]))
    metadata = unpacked / dist_info / "METADATA"
    prefix = f"{dist_info}/licenses/"
    metadata.write_text(add_license_lines(metadata.read_text(encoding="utf-8"),
                                          [m[len(prefix):] for m in added], expressions), encoding="utf-8")
    out.mkdir(parents=True, exist_ok=True)
    rewrite_wheel(wheel, out / wheel.name, unpacked, [f"{dist_info}/METADATA"], added)
    return out / wheel.name
