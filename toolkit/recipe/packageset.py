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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from toolkit.util.errors import ToolkitError
from toolkit.util.tomlclass import read
from toolkit.util.tomlfields import doc
from toolkit.util.tomlread import Site, load_toml

ROOTS_DIR = Path(__file__).resolve().parents[2] / "containers" / "roots"
DEFAULT = "debian-sid-rocm"

# Bumped when the way a root is made changes, so cached roots made the old way are not reused.
FORMAT = 1

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# Debian package names, with apt's glob characters allowed in pins.
_PACKAGE = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")
_PIN_PACKAGE = re.compile(r"^[a-z0-9*?][a-z0-9+.*?-]*$")


def _pin_package(name: str, site: Site) -> None:
    if not _PIN_PACKAGE.match(name):
        raise site.error(f"not a package name or glob: {name!r}")


def _release(release: str, site: Site) -> None:
    if not re.match(r"^[a-z]=[A-Za-z0-9.~+-]+(,[a-z]=[A-Za-z0-9.~+-]+)*$", release):
        raise site.error(f"expected apt's release selector like 'a=experimental', got {release!r}")


def _word(what: str) -> Callable[[str, Site], None]:
    """A check that a value is one word of the archive's (a suite, a component): `what` names it."""
    def check(value: str, site: Site) -> None:
        if not re.match(r"^[a-z0-9][a-z0-9.-]*$", value):
            raise site.error(f"expected {what}, got {value!r}")
    return check


def _apt_option(option: str, site: Site) -> None:
    if not option.rstrip().endswith(";"):
        raise site.error(f"an apt.conf line ends with ';', got {option!r}")
    if "\n" in option or "\r" in option:
        raise site.error(f"an apt.conf option is one line, got {option!r}")


def _absolute_glob(glob: str, site: Site) -> None:
    if not glob.startswith("/") or "\n" in glob:
        raise site.error(f"expected an absolute path glob, got {glob!r}")


def _no_mirror(mirror: str, site: Site) -> None:
    raise site.error("a package set names no Debian mirror: the root is made from $TOOLKIT_DEBIAN_MIRROR, else the "
                     "first Debian archive in this machine's apt sources; remove this key")


def _set_name(name: str, site: Site) -> None:
    if not _NAME.match(name):
        raise site.error(f"expected the name of another set in {site.file.parent}, got {name!r}")


def _package_names(names: tuple[str, ...], site: Site) -> None:
    for i, name in enumerate(names):
        if not _PACKAGE.match(name):
            raise site.item(i).error(f"not a Debian package name: {name!r}")


@dataclass(frozen=True)
class Pin:
    """[[root.pin]]: apt's preferences for some packages."""

    packages: tuple[str, ...] = field(metadata=doc("Package names or apt globs.", each=_pin_package))
    release: str = field(metadata=doc("apt's release selector, e.g. `a=experimental`.", check=_release))
    priority: int = field(metadata=doc("The pin's priority."))


@dataclass(frozen=True)
class RootKeys:
    """[root], as a set's file gives it: a key left out is the base set's (`extends`), else its default."""

    extends: str | None = field(default=None, metadata=doc("The set this one is based on.", check=_set_name))
    mirror: str | None = field(default=None, metadata=doc("Refused: the mirror is the machine's.", check=_no_mirror))
    suite: str | None = field(default=None, metadata=doc("The suite debootstrap makes the root from.",
                                                         check=_word("a Debian suite name")))
    variant: Literal["minbase", "buildd", "fakechroot", "-"] | None = field(default=None, metadata=doc(
        "debootstrap's variant."))
    apt_suites: tuple[str, ...] | None = field(default=None, metadata=doc(
        "The suites apt installs from.", each=_word("a Debian suite name")))
    components: tuple[str, ...] | None = field(default=None, metadata=doc(
        "The archive's components.", each=_word("a Debian archive component")))
    apt_options: tuple[str, ...] | None = field(default=None, metadata=doc("apt.conf lines.", each=_apt_option))
    pins: tuple[Pin, ...] = field(default=(), metadata=doc("apt's pins, after the base set's.", key="pin"))
    path_exclude: tuple[str, ...] | None = field(default=None, metadata=doc(
        "dpkg --path-exclude globs.", each=_absolute_glob))
    path_include: tuple[str, ...] | None = field(default=None, metadata=doc(
        "dpkg --path-include globs.", each=_absolute_glob))


@dataclass(frozen=True)
class PythonKeys:
    from_root: tuple[str, ...] = field(default=(), metadata=doc(
        "The toolkit's Python dependencies the root provides as Debian packages."))


@dataclass(frozen=True)
class SetFile:
    """A package set's file; `[packages]` may be left to the base set."""

    root: RootKeys = field(metadata=doc("How the root is made."))
    packages: dict[str, tuple[str, ...]] | None = field(default=None, metadata=doc(
        "The packages, by group; a group replaces the base set's of the same name.", each=_package_names))
    python: PythonKeys | None = field(default=None, metadata=doc("The toolkit's venv inside the root."))


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
    given = read(SetFile, load_toml(path))
    keys, at = given.root, Site(path, "root")
    base = _base(keys.extends, path, seen, at.key("extends"))
    if keys.suite is None and base is None:
        raise at.key("suite").error("required, expected a string")
    suite = keys.suite if keys.suite is not None or base is None else base.suite
    assert suite is not None
    groups = dict(base.groups) if base else {}
    if given.packages is None and base is None:
        raise Site(path, "packages").error("required, expected a table")
    groups.update(given.packages or {})
    packages = {pkg for names in groups.values() for pkg in names}
    if not packages:
        raise ToolkitError(f"{path}: [packages] lists no packages", hint='add a group, e.g. tools = ["cmake"]')
    if not _NAME.match(path.stem):
        raise ToolkitError(f"{path}: a root's name (the file's stem) must be letters, digits, '.', '_' or '-'")

    def kept(mine: tuple[str, ...] | None, theirs: tuple[str, ...], default: tuple[str, ...]) -> tuple[str, ...]:
        return mine if mine is not None else theirs if base else default

    return PackageSet(
        path.stem, path, suite, keys.variant or (base.variant if base else "minbase"),
        kept(keys.apt_suites, base.apt_suites if base else (), (suite,)),
        kept(keys.components, base.components if base else (), ("main",)),
        kept(keys.apt_options, base.apt_options if base else (), ()),
        (base.pins if base else ()) + keys.pins,
        kept(keys.path_exclude, base.path_exclude if base else (), ()), tuple(sorted(packages)),
        given.python.from_root if given.python else (base.from_root if base else ()), tuple(sorted(groups.items())),
        base.name if base else None, kept(keys.path_include, base.path_include if base else (), ()))


def _base(name: str | None, path: Path, seen: tuple[Path, ...], site: Site) -> PackageSet | None:
    if name is None:
        return None
    base_path = path.parent / f"{name}.toml"
    if base_path == path or base_path in seen:
        raise site.error(f"{name!r} extends itself (through {' -> '.join(p.stem for p in seen)})")
    if not base_path.is_file():
        known = sorted(p.stem for p in path.parent.glob("*.toml") if p != path)
        raise site.error(f"no package set {base_path.name} beside this file (known: {', '.join(known) or 'none'})")
    return _load(base_path, (*seen, path))
