"""A build root's package set, read from `containers/roots/<name>.toml`: which of Debian's packages
(suites, pins, apt options) to install.

The set is data; its digest (over the normalised fields, not the file's bytes, so comments and order
of groups do not count) keys the cached root, and the root's exact package record lives beside it as
`<name>.lock`. The set names no Debian mirror: the mirror is where the packages come from, not what they
are, so it is this machine's (toolkit.util.debian_mirror: $TOOLKIT_DEBIAN_MIRROR, else the first
Debian archive in its apt sources), resolved when the root is made and left out of the digest.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from toolkit.util.errors import ToolkitError
from toolkit.util.tomlread import Table, load_toml

ROOTS_DIR = Path(__file__).resolve().parents[2] / "containers" / "roots"
DEFAULT = "debian-sid-rocm"

# Bumped when the way a root is made changes, so cached roots made the old way are not reused.
FORMAT = 1

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# Debian package names, with apt's glob characters allowed in pins.
_PACKAGE = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")
_PIN_PACKAGE = re.compile(r"^[a-z0-9*?][a-z0-9+.*?-]*$")


@dataclass(frozen=True)
class Pin:
    packages: tuple[str, ...]
    release: str
    priority: int


@dataclass(frozen=True)
class PackageSet:
    name: str
    file: Path
    suite: str
    variant: str
    apt_suites: tuple[str, ...]
    components: tuple[str, ...]
    apt_options: tuple[str, ...]
    pins: tuple[Pin, ...]
    path_exclude: tuple[str, ...]   # dpkg --path-exclude globs: files the root never unpacks
    packages: tuple[str, ...]   # sorted, unique
    # The toolkit's Python dependencies the root provides itself (as Debian packages): not in the digest,
    # they do not change the root, only what the toolkit's venv inside it leaves out.
    from_root: tuple[str, ...] = ()
    groups: tuple[tuple[str, tuple[str, ...]], ...] = ()   # [packages] by group, as the file (and its base) give
    extends: str | None = None      # the set this one is based on ([root] extends)
    # dpkg --path-include globs: files kept inside an excluded folder (the copyright files in /usr/share/doc, which
    # a wheel that bundles a library from the root carries as its license)
    path_include: tuple[str, ...] = ()

    @property
    def lock_file(self) -> Path:
        return self.file.with_suffix(".lock")

    def digest(self) -> str:
        fields = {
            "format": FORMAT, "suite": self.suite, "variant": self.variant,
            "apt_suites": self.apt_suites, "components": self.components, "apt_options": self.apt_options,
            "pins": [[list(p.packages), p.release, p.priority] for p in self.pins],
            "path_exclude": self.path_exclude,
            # Only where a set has some: sets without keep the digest, and their roots, they had.
            **({"path_include": self.path_include} if self.path_include else {}),
            "packages": self.packages,
        }
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()

    def sources_list(self, mirror: str) -> str:
        """apt's sources.list for the root: every suite of the set from `mirror` (the resolved Debian mirror)."""
        components = " ".join(self.components)
        return "".join(f"deb {mirror} {suite} {components}\n" for suite in self.apt_suites)

    def apt_conf(self) -> str:
        return "".join(f"{option}\n" for option in self.apt_options)

    def dpkg_excludes(self) -> str:
        """dpkg's path filters: the excludes, then the includes that take files back out of them (dpkg reads them
        in order, the last match wins)."""
        return "".join([*(f"path-exclude={glob}\n" for glob in self.path_exclude),
                        *(f"path-include={glob}\n" for glob in self.path_include)])

    def preferences(self) -> str:
        return "\n".join(f"Package: {' '.join(p.packages)}\nPin: release {p.release}\nPin-Priority: {p.priority}\n"
                         for p in self.pins)


def find(name_or_path: str | Path) -> Path:
    """`debian-sid-rocm` -> containers/roots/debian-sid-rocm.toml; a path to a .toml file as is."""
    text = str(name_or_path)
    if text.endswith(".toml") or "/" in text:
        path = Path(text)
        if not path.is_file():
            raise ToolkitError(f"{path}: package set file not found")
        return path.resolve()
    path = ROOTS_DIR / f"{text}.toml"
    if not path.is_file():
        known = sorted(p.stem for p in ROOTS_DIR.glob("*.toml"))
        raise ToolkitError(f"unknown build root {text!r}: no {path}",
                           hint=f"known roots: {', '.join(known) or 'none'}; or give a package set .toml path")
    return path


def load(name_or_path: str | Path) -> PackageSet:
    return _load(find(name_or_path), ())


def _load(path: Path, seen: tuple[Path, ...]) -> PackageSet:
    """Read the set at `path`; with `[root] extends = "NAME"`, the named set is the base: keys this file gives
    replace the base's, its pins come after the base's, and a package group replaces the base's group of the
    same name (other groups are kept). A ROCm 7 root is the ROCm 6 root plus pins, not a copy of it."""
    doc = load_toml(path)
    root = doc.table("root")
    base = _base(root, path, seen)
    if root.has("mirror"):
        raise root.error("mirror", "a package set names no Debian mirror: the root is made from "
                                   "$TOOLKIT_DEBIAN_MIRROR, else the first Debian archive in this machine's apt "
                                   "sources; remove this key")
    suite = _word(root, "suite") if root.has("suite") or base is None else base.suite
    variant = root.str("variant", base.variant if base else "minbase",
                       choices=("minbase", "buildd", "fakechroot", "-"))
    apt_suites = tuple(root.str_list("apt_suites", list(base.apt_suites) if base else [suite]))
    for i, s in enumerate(apt_suites):
        _check_word(root, f"apt_suites[{i}]", s)
    components = tuple(root.str_list("components", list(base.components) if base else ["main"]))
    for i, component in enumerate(components):
        _check_word(root, f"components[{i}]", component, "a Debian archive component")
    apt_options = tuple(root.str_list("apt_options", list(base.apt_options) if base else []))
    for i, option in enumerate(apt_options):
        if not option.rstrip().endswith(";"):
            raise root.error(f"apt_options[{i}]", f"an apt.conf line ends with ';', got {option!r}")
        if "\n" in option or "\r" in option:
            raise root.error(f"apt_options[{i}]", f"an apt.conf option is one line, got {option!r}")
    pins = (base.pins if base else ()) + tuple(_pin(t) for t in root.tables("pin", []))
    path_exclude = tuple(root.str_list("path_exclude", list(base.path_exclude) if base else []))
    path_include = tuple(root.str_list("path_include", list(base.path_include) if base else []))
    for key, globs in (("path_exclude", path_exclude), ("path_include", path_include)):
        for i, glob in enumerate(globs):
            if not glob.startswith("/") or "\n" in glob:
                raise root.error(f"{key}[{i}]", f"expected an absolute path glob, got {glob!r}")
    root.done()

    groups = dict(base.groups) if base else {}
    table = doc.table("packages") if base is None else doc.table("packages", None)
    if table is not None:
        for group in table.keys():
            names = tuple(table.str_list(group))
            for i, pkg in enumerate(names):
                if not _PACKAGE.match(pkg):
                    raise table.error(f"{group}[{i}]", f"not a Debian package name: {pkg!r}")
            groups[group] = names
        table.done()
    packages = {pkg for names in groups.values() for pkg in names}
    if not packages:
        raise ToolkitError(f"{path}: [packages] lists no packages", hint='add a group, e.g. tools = ["cmake"]')
    python = doc.table("python", None)
    from_root = tuple(python.str_list("from_root", [])) if python else (base.from_root if base else ())
    if python:
        python.done()
    doc.done()
    name = path.stem
    if not _NAME.match(name):
        raise ToolkitError(f"{path}: a root's name (the file's stem) must be letters, digits, '.', '_' or '-'")
    return PackageSet(name, path, suite, variant, apt_suites, components, apt_options, pins,
                      path_exclude, tuple(sorted(packages)), from_root, tuple(sorted(groups.items())),
                      base.name if base else None, path_include)


def _base(root: Table, path: Path, seen: tuple[Path, ...]) -> PackageSet | None:
    name = root.str("extends", None)
    if name is None:
        return None
    if not _NAME.match(name):
        raise root.error("extends", f"expected the name of another set in {path.parent}, got {name!r}")
    base_path = path.parent / f"{name}.toml"
    if base_path == path or base_path in seen:
        raise root.error("extends", f"{name!r} extends itself (through {' -> '.join(p.stem for p in seen)})")
    if not base_path.is_file():
        known = sorted(p.stem for p in path.parent.glob("*.toml") if p != path)
        raise root.error("extends", f"no package set {base_path.name} beside this file "
                                    f"(known: {', '.join(known) or 'none'})")
    return _load(base_path, (*seen, path))


def _word(table: Table, key: str) -> str:
    value: str = table.str(key)
    _check_word(table, key, value)
    return value


def _check_word(table: Table, key: str, value: str, what: str = "a Debian suite name") -> None:
    if not re.match(r"^[a-z0-9][a-z0-9.-]*$", value):
        raise table.error(key, f"expected {what}, got {value!r}")


def _pin(t: Table) -> Pin:
    packages = tuple(t.str_list("packages"))
    for i, pkg in enumerate(packages):
        if not _PIN_PACKAGE.match(pkg):
            raise t.error(f"packages[{i}]", f"not a package name or glob: {pkg!r}")
    release = t.str("release")
    if not re.match(r"^[a-z]=[A-Za-z0-9.~+-]+(,[a-z]=[A-Za-z0-9.~+-]+)*$", release):
        raise t.error("release", f"expected apt's release selector like 'a=experimental', got {release!r}")
    priority = t.int("priority")
    t.done()
    return Pin(packages, release, priority)
