"""Which libraries a wheel needs belong to ROCm, to the system, or must be bundled; read on the build machine.

A ROCm library is never bundled: the ROCm install of the machine that runs the wheel provides it, and a
bundled copy would shadow it (and its GPU kernels). Spelling alone cannot say what is ROCm (Debian keeps
MIGraphX's libraries in a private `.../migraphx/lib`, AMD under `/opt/rocm-X.Y`, and new libraries appear with
each release), so three rules, all data in data/libraries.json:

1. the soname: `lib<NAME>.so` or `lib<NAME>.so.<anything>` for a NAME of `rocm_names`;
2. where the build machine resolves it (auditwheel's own resolver: RUNPATH, LD_LIBRARY_PATH, ld.so.conf):
   `/opt/rocm*`, `$ROCM_PATH` or a `--rocm-path` the build was given;
3. which package owns that file, where dpkg exists (`dpkg-query --search`, honouring `DPKG_ROOT`): a package
   whose Maintainer or Homepage is ROCm's.

System libraries are the ones no manylinux wheel may bundle: auditwheel's policy whitelist plus ours. Any
other library is bundled by auditwheel, so it must be found; one that is not fails the repair by name.
"""

from __future__ import annotations

import fnmatch
import json
import os
import posixpath
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.util.errors import ToolkitError
from toolkit.util.process import run
from toolkit.wheel.data import libraries, rocm_excludes, system_libraries

if TYPE_CHECKING:
    from auditwheel.lddtree import DynamicExecutable


def matching(name: str, patterns: Iterable[str]) -> str | None:
    return next((p for p in patterns if fnmatch.fnmatchcase(name, p)), None)


@cache
def _auditwheel_whitelist() -> frozenset[str]:
    # Every manylinux policy's whitelist: the libraries auditwheel never grafts, whatever tag it settles on.
    text = resources.files("auditwheel.policy").joinpath("manylinux-policy.json").read_text(encoding="utf-8")
    return frozenset(lib for policy in json.loads(text) for lib in policy["lib_whitelist"])


def system_reason(soname: str) -> str | None:
    if soname.startswith("ld-linux") or soname in ("ld64.so.1", "ld64.so.2"):
        return "the dynamic loader"
    if soname in _auditwheel_whitelist():
        return "auditwheel's manylinux whitelist"
    pattern = matching(soname, system_libraries())
    return f"system library ({pattern})" if pattern else None


def rocm_path_globs(rocm_paths: Iterable[str | Path] = ()) -> tuple[str, ...]:
    """Path globs of the ROCm installs of this machine: /opt/rocm*, $ROCM_PATH and the given ones."""
    globs = list(libraries()["rocm_path_globs"])
    roots = [os.environ.get("ROCM_PATH", ""), *map(str, rocm_paths)]
    for root in filter(None, roots):
        # A ROCm root is often a symlink (/opt/rocm -> rocm-7.0.2); resolved libraries carry the target.
        for spelling in dict.fromkeys((posixpath.normpath(root), os.path.realpath(root))):
            if spelling != "/":
                globs += [spelling, spelling + "/*"]
    return tuple(dict.fromkeys(globs))


class DpkgOwners:
    """Answers 'does a ROCm package own this path?' from dpkg's database; says nothing where dpkg is absent."""

    def __init__(self) -> None:
        self.tool = shutil.which("dpkg-query")
        # dpkg-query reads DPKG_ROOT itself (the root of another system's database); its paths are relative to it.
        self.root = os.path.realpath(os.environ.get("DPKG_ROOT") or "/")
        self._owners: dict[str, tuple[str, ...]] = {}
        self._packages: dict[str, str | None] = {}

    def _as_recorded(self, path: str) -> str | None:
        if self.root == "/":
            return path
        if path == self.root or path.startswith(self.root + "/"):
            return path[len(self.root):] or "/"
        return None

    def _query_owners(self, paths: list[str]) -> None:
        todo = [p for p in dict.fromkeys(paths) if p not in self._owners]
        for p in todo:
            self._owners[p] = ()
        if not todo or self.tool is None:
            return
        # Exit status 1 only means some path has no owner; the ones found are still printed.
        done = run([self.tool, "--search", *todo], "asking dpkg which packages own the libraries", check=False)
        for line in done.stdout.splitlines():
            if line.startswith(("diversion by", "local diversion")) or ": " not in line:
                continue
            owners, _, path = line.partition(": ")
            if path in self._owners:
                self._owners[path] = tuple(o.strip().split(":")[0] for o in owners.split(","))

    def _query_packages(self, packages: list[str]) -> None:
        todo = [p for p in dict.fromkeys(packages) if p not in self._packages]
        if not todo or self.tool is None:
            return
        fmt = "${Package}\t${Maintainer}\t${Homepage}\n"
        done = run([self.tool, "--show", f"--showformat={fmt}", *todo], "asking dpkg who maintains the packages",
                   check=False)
        rules = libraries()["rocm_packages"]
        for p in todo:
            self._packages[p] = None
        for line in done.stdout.splitlines():
            package, maintainer, homepage = (line.split("\t") + ["", ""])[:3]
            if matching(maintainer, rules["maintainer"]) or matching(homepage, rules["homepage"]):
                self._packages[package] = maintainer or homepage

    def rocm_owner(self, *spellings: str) -> str | None:
        """'package (maintainer)' when ROCm packages, and only they, own one of these spellings of a path."""
        return self.rocm_owners([spellings]).get(0)

    def rocm_owners(self, groups: list[Iterable[str]]) -> dict[int, str]:
        """For each group of spellings of one path (index -> owner text), the ones ROCm packages own."""
        recorded = [[r for r in map(self._as_recorded, group) if r] for group in groups]
        if self.tool is None:
            return {}
        self._query_owners([p for group in recorded for p in group])
        self._query_packages([o for group in recorded for p in group for o in self._owners[p]])
        found = {}
        for index, group in enumerate(recorded):
            for path in group:
                owners = self._owners[path]
                if owners and all(self._packages.get(o) for o in owners):
                    found[index] = f"{', '.join(owners)} ({self._packages[owners[0]]})"
                    break
        return found


def _spellings(path: str | None, realpath: str | Path | None) -> tuple[str, ...]:
    # dpkg records the path a package ships (a symlink such as libfoo.so.1, or /lib/... before usrmerge),
    # the loader reports the path it found and its target; ask for each.
    found = [str(p) for p in (path, realpath) if p]
    if path:
        found.append(posixpath.join(os.path.realpath(posixpath.dirname(path)), posixpath.basename(path)))
    return tuple(dict.fromkeys(posixpath.normpath(p) for p in found))


@dataclass(frozen=True)
class Need:
    """One library the wheel's ELF files need (directly or through a library auditwheel would bundle)."""

    soname: str
    kind: str  # "rocm", "system", "bundled" (auditwheel grafts it) or "missing"
    reason: str
    path: str | None  # where this machine resolves it; None when it does not
    needed_by: tuple[str, ...]  # archive paths, or the library that pulled it in


# Why a library is left external that is not ROCm: the start of its Need's reason.
BY_RECIPE = "not ROCm: the recipe's [wheel] excludes"


class Resolver:
    """Classifies what a wheel's ELF files need, the way auditwheel will resolve it on this machine."""

    def __init__(self, extra_patterns: Iterable[str] = (), rocm_paths: Iterable[str | Path] = ()) -> None:
        self.patterns = tuple(dict.fromkeys((*rocm_excludes(), *extra_patterns)))
        # The recipe's own excludes are left external as ROCm is, but are not ROCm.
        self.recipe_patterns = frozenset(extra_patterns) - set(rocm_excludes())
        self.path_globs = rocm_path_globs(rocm_paths)
        self.dpkg = DpkgOwners()

    def rocm_directory(self, directory: str) -> str | None:
        """Why a RUNPATH directory outside the wheel is a ROCm install, or None."""
        if not directory.startswith("/"):
            return None  # relative to the working directory: nothing to do with an install
        directory = posixpath.normpath(directory)
        glob = matching(directory, self.path_globs) or matching(os.path.realpath(directory), self.path_globs)
        if glob:
            return f"inside a ROCm install ({glob})"
        owner = self.dpkg.rocm_owner(directory, os.path.realpath(directory))
        return f"owned by ROCm package {owner}" if owner else None

    def classify(self, tree_root: Path, members: Iterable[str]) -> list[Need]:
        from auditwheel import lddtree

        # auditwheel caches the loader's search path per process (LD_LIBRARY_PATH included); a repair
        # must see this moment's environment, as the auditwheel it runs next will.
        for cached in (lddtree.load_ld_paths, lddtree.parse_ld_paths):
            getattr(cached, "cache_clear", lambda: None)()
        trees = {m: lddtree.ldd(tree_root / m) for m in members}
        inside = tuple(dict.fromkeys((str(tree_root.absolute()), str(tree_root.resolve()))))
        rocm_by_owner: dict[str, str] = {}
        asked: set[str] = set()
        while True:
            needs = self._walk(trees, inside, rocm_by_owner)
            pending = [n for n in needs if n.kind == "bundled" and n.soname not in asked]
            if not pending:
                return needs
            asked.update(n.soname for n in pending)
            libs = {n.soname: next(t.libraries[n.soname] for t in trees.values() if n.soname in t.libraries)
                    for n in pending}
            owners = self.dpkg.rocm_owners([_spellings(libs[n.soname].path, libs[n.soname].realpath)
                                            for n in pending])
            if not owners:
                return needs
            for index, owner in owners.items():
                rocm_by_owner[pending[index].soname] = f"owned by ROCm package {owner}"

    def _walk(self, trees: dict[str, DynamicExecutable], inside: tuple[str, ...],
              rocm_by_owner: dict[str, str]) -> list[Need]:
        found: dict[str, Need] = {}
        for member, tree in trees.items():
            queue = [(soname, member) for soname in tree.needed]
            while queue:
                soname, user = queue.pop(0)
                if soname in found:
                    if user not in found[soname].needed_by:
                        need = found[soname]
                        found[soname] = Need(need.soname, need.kind, need.reason, need.path,
                                             (*need.needed_by, user))
                    continue
                lib = tree.libraries.get(soname)
                real = str(lib.realpath) if lib is not None and lib.realpath is not None else None
                if real is not None and any(real == i or real.startswith(i + "/") for i in inside):
                    continue  # a file of the wheel itself, checked as a member of its own
                kind, reason = self._kind(soname, lib.path if lib else None, real, rocm_by_owner)
                found[soname] = Need(soname, kind, reason, real, (user,))
                if kind == "bundled":
                    queue.extend((dep, soname) for dep in lib.needed)
        return sorted(found.values(), key=lambda n: n.soname)

    def _kind(self, soname: str, path: str | None, real: str | None,
              rocm_by_owner: dict[str, str]) -> tuple[str, str]:
        pattern = matching(soname, self.patterns)
        if pattern in self.recipe_patterns:
            return "rocm", f"{BY_RECIPE} ({pattern})"
        if pattern:
            return "rocm", f"ROCm by name ({pattern})"
        system = system_reason(soname)
        if system:
            return "system", system
        if real is None:
            return "missing", "not found on this machine"
        glob = next((g for s in _spellings(path, real) if (g := matching(s, self.path_globs))), None)
        if glob:
            return "rocm", f"resolves inside a ROCm install ({real} matches {glob})"
        if soname in rocm_by_owner:
            return "rocm", f"{real} is {rocm_by_owner[soname]}"
        return "bundled", f"found at {real}"


def missing_error(needs: list[Need]) -> ToolkitError | None:
    missing = [n for n in needs if n.kind == "missing"]
    if not missing:
        return None
    lines = "\n".join(f"  {n.soname}, needed by {', '.join(n.needed_by)}" for n in missing)
    return ToolkitError(
        f"cannot repair: these libraries are neither ROCm nor system libraries, so the wheel must bundle them, "
        f"but this machine does not have them:\n{lines}",
        "install them on the build machine (or put their folder on LD_LIBRARY_PATH); if the target system "
        "provides one, add its soname to the recipe's [wheel] excludes",
    )
