"""The recipe's `[release]` section: the build matrix, the shared compile cache and the build container.

    [release]
    axes = ["python", "target_set", "features"]   # the default; a host-only py3-none wheel has no Python or
                                           # GPU-target axis: axes = ["toolchain", "features"]
    python = ["3.11", "3.12"]
    features = [[], ["hipdnn"]]            # each inner list is one feature set of the matrix
    compile_cache = "redis://cache.example:6379"   # optional; env TOOLKIT_COMPILE_CACHE overrides
    public = "glibc2.28"                   # optional: the entries of this local-version label are released under
                                           # the plain version (an index such as PyPI takes no local versions)

    [[release.target_set]]
    name = "cdna"                          # optional; defaults to the targets joined by "_"
    targets = ["gfx90a", "gfx942"]

    [[release.toolchain]]                  # with the "toolchain" axis: one entry per C/C++ toolchain and floor
    name = "glibc2.28"                     # part of the entry id and of the wheel's local version
    toolchain = "zig"                      # "system", "zig" or "mingw" ([build] toolchain)
    glibc_floor = "2.28"                   # zig's glibc floor ([build] glibc_floor)
    root = "debian-sid-windows"            # optional: built in a container of this root (mingw's is this one)

    [[release.rocm]]                       # with the "rocm" axis: one entry per ROCm major, each built in its root
    name = "rocm7"                         # a variant of [wheel.rocm_variants]: the wheel must link its HIP soname
    root = "debian-sid-rocm7"              # the build root (containers/roots/NAME.toml) in whose container it builds

    [release.container]
    root = "debian-sid-rocm"               # run in a container of this build root: both recipes do (podman runs
                                           # the root's folder, no image; docker its image, `root image`); or:
    image = "localhost/NAME:TAG"           # an image of your own,
    containerfile = "../containers/NAME.Containerfile"   # built by `container-image` (relative to the recipe)
    engine = "podman"                      # optional; env TOOLKIT_CONTAINER_ENGINE overrides
    runner = "nox"                         # how a session is started inside: "nox" or "toolkit"
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.container.engine import ENGINES
from toolkit.recipe import packageset
from toolkit.recipe.core import TOOLCHAINS, floor_problem
from toolkit.recipe.schema import doc, recipe_table
from toolkit.util import argcheck
from toolkit.util.errors import ToolkitError
from toolkit.util.tomlread import Table

_PYTHON = re.compile(r"^3\.(\d{1,2})$")
_TARGET = re.compile(r"^gfx[0-9a-f]{3,4}(:[a-z+-]+)*$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.]*$")

RUNNERS = ("nox", "toolkit")
AXES = ("python", "target_set", "rocm", "toolchain", "features")
DEFAULT_AXES = ("python", "target_set", "features")


@recipe_table("release.target_set[]")
@dataclass(frozen=True)
class TargetSet:
    name: str = field(metadata=doc("The set's name, part of the entry id.", default="the targets joined by `_`"))
    targets: tuple[str, ...] = field(metadata=doc("GPU targets, e.g. `gfx90a`."))


@recipe_table("release.toolchain[]")
@dataclass(frozen=True)
class ToolchainSet:
    name: str = field(metadata=doc("The entry's name, part of the entry id and of the wheel's local version."))
    toolchain: str = field(metadata=doc("`system`, `zig` or `mingw` (as `[build] toolchain`)."))
    glibc_floor: str | None = field(default=None, metadata=doc("zig's glibc floor (as `[build] glibc_floor`)."))
    # mingw's compilers and Wine are in their own root (debian-sid-windows), as ROCm 7's are in theirs.
    root: str | None = field(default=None, metadata=doc(
        "The build root (`containers/roots/NAME.toml`) in whose container this set's entries are built, as a "
        "`[[release.rocm]]` root is; default: where the release runs."))


@recipe_table("release.rocm[]")
@dataclass(frozen=True)
class RocmSet:
    name: str = field(metadata=doc(
        "The variant, a key of `[wheel.rocm_variants]` (e.g. `rocm7`): the wheel must link its HIP soname; part "
        "of the entry id."))
    root: str = field(metadata=doc(
        "The build root (`containers/roots/NAME.toml`) in whose container this variant's entries are built: "
        "podman runs the root's folder, docker its image (`root image NAME`); either is made when missing."))


@recipe_table("release.container")
@dataclass(frozen=True)
class ContainerSettings:
    image: str | None = field(default=None, metadata=doc("Image name."))
    containerfile: Path | None = field(default=None, metadata=doc("Its Containerfile, relative to the recipe."))
    engine: str | None = field(default=None, metadata=doc(
        "`podman` or `docker`; `--engine` and `TOOLKIT_CONTAINER_ENGINE` override."))
    runner: str = field(default="nox", metadata=doc(
        "How a session starts inside: `nox` or `toolkit` (`python -m toolkit`)."))
    root: str | None = field(default=None, metadata=doc(
        "A build root the sessions run in, instead of `image`: with podman the root's folder itself is the "
        "container's filesystem (`--rootfs`, an overlay whose writes are discarded; no image to store), with "
        "docker the root's image (`root image NAME`); either is made when missing."))


@recipe_table("release")
@dataclass(frozen=True)
class ReleaseSettings:
    python: tuple[str, ...] = field(default=("3.11", "3.12"), metadata=doc("CPython versions, e.g. \"3.12\"."))
    target_sets: tuple[TargetSet, ...] = field(
        default=(TargetSet("gfx90a_gfx942", ("gfx90a", "gfx942")),), metadata=doc("GPU target sets.", key="target_set"))
    features: tuple[tuple[str, ...], ...] = field(default=((),), metadata=doc(
        "Feature sets, each an array of feature names; `[[]]` is the defaults only."))
    compile_cache: str | None = field(default=None, metadata=doc(
        "Shared ccache storage, `redis://` or `http://`; `TOOLKIT_COMPILE_CACHE` overrides."))
    container: ContainerSettings = field(default_factory=ContainerSettings, metadata=doc(
        "Where release sessions run: a build root's container, or an image."))
    axes: tuple[str, ...] = field(default=DEFAULT_AXES, metadata=doc(
        "The matrix's axes, of `python`, `target_set`, `rocm`, `toolchain`, `features` (always there); a "
        "host-only `py3-none` wheel uses `[\"toolchain\", \"features\"]`, with a ROCm variant per build root "
        "`[\"rocm\", \"toolchain\", \"features\"]`."))
    toolchains: tuple[ToolchainSet, ...] = field(default=(), metadata=doc(
        "With the `toolchain` axis: one entry per C/C++ toolchain and glibc floor.", key="toolchain"))
    rocm: tuple[RocmSet, ...] = field(default=(), metadata=doc(
        "With the `rocm` axis: one entry per ROCm variant, each built in a container of its own build root."))
    # An entry's axes but Python and ROCm make its local-version label.
    public: str | None = field(default=None, metadata=doc(
        "The local-version label (e.g. `glibc2.28`) whose entries are released under the plain version, one "
        "build per distribution; the others keep `VERSION+LABEL`, which PyPI refuses."))


def from_table(t: Table, recipe_dir: Path) -> ReleaseSettings:
    default = ReleaseSettings()
    axes = _axes(t)
    python = tuple(t.str_list("python", list(default.python))) if "python" in axes else ()
    if "python" in axes and not python:
        raise t.error("python", "must list at least one Python version, e.g. [\"3.12\"]")
    for i, version in enumerate(python):
        if not _PYTHON.match(version):
            raise t.error(f"python[{i}]", f"expected a CPython version like \"3.12\", got {version!r}")
    _no_duplicates(t, "python", python)

    target_sets: tuple[TargetSet, ...] = ()
    if "target_set" in axes:
        target_sets = tuple(_target_set(s) for s in t.tables("target_set", [])) or default.target_sets
        _no_duplicates(t, "target_set", [s.name for s in target_sets], what="target set name")
    toolchains: tuple[ToolchainSet, ...] = ()
    if "toolchain" in axes:
        toolchains = tuple(_toolchain_set(s) for s in t.tables("toolchain", []))
        if not toolchains:
            raise t.error("toolchain", "the toolchain axis needs at least one [[release.toolchain]]")
        _no_duplicates(t, "toolchain", [s.name for s in toolchains], what="toolchain name")

    rocm: tuple[RocmSet, ...] = ()
    if "rocm" in axes:
        rocm = tuple(_rocm_set(s) for s in t.tables("rocm", []))
        if not rocm:
            raise t.error("rocm", "the rocm axis needs at least one [[release.rocm]] (name and root)")
        _no_duplicates(t, "rocm", [s.name for s in rocm], what="ROCm variant")

    features = _feature_sets(t)
    compile_cache = t.str("compile_cache", None) or None
    public = t.str("public", None)

    container_table = t.table("container", None)
    container = _container(container_table, recipe_dir) if container_table else ContainerSettings()
    t.done()
    return ReleaseSettings(python, target_sets, features, compile_cache, container, axes, toolchains, rocm, public)


def _axes(t: Table) -> tuple[str, ...]:
    axes = tuple(t.str_list("axes", list(DEFAULT_AXES)))
    for i, axis in enumerate(axes):
        if axis not in AXES:
            raise t.error(f"axes[{i}]", f"unknown matrix axis {axis!r}; the axes are {', '.join(AXES)}")
    _no_duplicates(t, "axes", axes, what="axis")
    if "features" not in axes:
        raise t.error("axes", "the features axis is always there (features = [[]] for one set)")
    for key in ("python", "target_set", "toolchain", "rocm"):
        if key not in axes and t.has(key):
            raise t.error(key, f"given, but {key!r} is not one of the matrix's axes ({', '.join(axes)})")
    return axes


def _toolchain_set(t: Table) -> ToolchainSet:
    toolchain = t.str("toolchain", choices=TOOLCHAINS)
    floor = t.str("glibc_floor", None)
    problem = floor_problem(floor) if floor is not None else None
    if floor is not None and toolchain != "zig":
        problem = f"only the zig toolchain builds for a glibc floor, and this set's toolchain is {toolchain!r}"
    if problem:
        raise t.error("glibc_floor", problem)
    name = t.str("name", toolchain + (f"-glibc{floor}" if floor else ""))
    if not _NAME.match(name):
        raise t.error("name", f"expected lower-case letters, digits, '_' or '.', got {name!r} "
                      "(it becomes part of the matrix entry id and the wheel's local version)")
    root = t.str("root", None)
    if root is not None:
        _check_root(t, root)
    t.done()
    return ToolchainSet(name, toolchain, floor, root)


def _rocm_set(t: Table) -> RocmSet:
    name = t.str("name")
    if not _NAME.match(name):
        raise t.error("name", f"expected a variant name like \"rocm7\", got {name!r}")
    root = t.str("root")
    _check_root(t, root)
    t.done()
    return RocmSet(name, root)


def _check_root(t: Table, root: str) -> None:
    """A `root` key names a build root's package set (containers/roots/NAME.toml)."""
    try:
        packageset.find(root)
    except ToolkitError as exc:
        raise t.error("root", f"{exc.message}; {exc.hint}") from None


def _target_set(t: Table) -> TargetSet:
    targets = tuple(t.str_list("targets"))
    if not targets:
        raise t.error("targets", "must list at least one GPU target, e.g. [\"gfx90a\"]")
    for i, target in enumerate(targets):
        if not _TARGET.match(target):
            raise t.error(f"targets[{i}]", f"expected a GPU target like \"gfx90a\", got {target!r}")
    name = t.str("name", "_".join(targets))
    if not _NAME.match(name):
        raise t.error("name", f"expected lower-case letters, digits, '_' or '.', got {name!r} "
                      "(it becomes part of the matrix entry id)")
    t.done()
    return TargetSet(name, targets)


def _feature_sets(t: Table) -> tuple[tuple[str, ...], ...]:
    out = []
    for i, item in enumerate(t.str_list_list("features", [[]], item='an array of feature names, e.g. ["hipdnn"]')):
        for name in item:
            if not _NAME.match(name):
                raise t.error(f"features[{i}]", f"feature name {name!r} must be lower-case letters, "
                              "digits, '_' or '.'")
        out.append(tuple(sorted(set(item))))
    if not out:
        raise t.error("features", "must list at least one feature set; use [[]] for none")
    _no_duplicates(t, "features", ["+".join(f) for f in out], what="feature set")
    return tuple(out)


def _container(t: Table, recipe_dir: Path) -> ContainerSettings:
    image = t.str("image", None)
    if image is not None and argcheck.image_problem(image):
        raise t.error("image", f"{image!r} {argcheck.image_problem(image)}; expected {argcheck.IMAGE_FORMS}")
    containerfile = t.str("containerfile", None)
    engine = t.str("engine", None, choices=ENGINES)
    runner = t.str("runner", "nox", choices=RUNNERS)
    root = t.str("root", None)
    if root is not None and image is not None:
        raise t.error("root", "give either root (a build root's container) or image, not both")
    t.done()
    path = (recipe_dir / containerfile).resolve() if containerfile else None
    return ContainerSettings(image, path, engine, runner, root)


def _no_duplicates(t: Table, key: str, values: Iterable[str], what: str = "value") -> None:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise t.error(key, f"duplicate {what} {value!r}")
        seen.add(value)
