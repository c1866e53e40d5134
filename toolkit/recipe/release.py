"""The recipe's `[release]` section: the build matrix, the shared compile cache and the build container.

    [release]
    axes = ["python", "target_set", "features"]   # the default; a host-only py3-none wheel has no Python or
                                           # GPU-target axis: axes = ["toolchain", "features"]
    python = ["3.11", "3.12"]
    features = [[], ["hipdnn"]]            # each inner list is one feature set of the matrix
    compile_cache = "redis://cache.example:6379"   # optional; env TOOLKIT_COMPILE_CACHE overrides
    public = ["glibc2.28"]                 # optional: the entries of these local-version labels are released under
                                           # the plain version (an index such as PyPI takes no local versions)

    [[release.target_set]]
    name = "cdna"                          # optional; defaults to the targets joined by "_"
    targets = ["gfx90a", "gfx942"]

    [[release.toolchain]]                  # with the "toolchain" axis: one entry per C/C++ toolchain and floor
    name = "glibc2.28"                     # part of the entry id and of the wheel's local version
    toolchain = "zig"                      # "system", "zig" or "mingw" ([build] toolchain)
    glibc_floor = "2.28"                   # zig's glibc floor ([build] glibc_floor)
    root = "debian-sid-windows"            # optional: built in a container of this root (mingw's is this one)

    features = [[]]                        # optional: this toolchain's feature sets, in place of [release]'s
                                           # (a toolchain for another OS than Linux takes no ROCm axis)

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
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, Self, get_args

from toolkit.container.engine import EngineName
from toolkit.recipe import packageset
from toolkit.recipe.core import Toolchain, floor_problem
from toolkit.util import argcheck
from toolkit.util.errors import ToolkitError
from toolkit.util.tomlfields import doc, problem
from toolkit.util.tomlread import Site

_PYTHON = re.compile(r"^3\.(\d{1,2})$")
_TARGET = re.compile(r"^gfx[0-9a-f]{3,4}(:[a-z+-]+)*$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.]*$")

Runner = Literal["nox", "toolkit"]
RUNNERS: tuple[str, ...] = get_args(Runner)
AXES = ("python", "target_set", "rocm", "toolchain", "features")
DEFAULT_AXES = ("python", "target_set", "features")


def _root(root: str, site: Site) -> None:
    """A `root` key names a build root's package set (containers/roots/NAME.toml)."""
    try:
        packageset.find(root)
    except ToolkitError as exc:
        raise site.error(f"{exc.message}; {exc.hint}") from None


def _once(what: str, name: Callable[[object], str] = str) -> Callable[[tuple[object, ...], Site], None]:
    """A check that no item (its `name`) is listed twice."""
    def check(items: tuple[object, ...], site: Site) -> None:
        seen: set[str] = set()
        for item in items:
            if name(item) in seen:
                raise site.error(f"duplicate {what} {name(item)!r}")
            seen.add(name(item))
    return check


def _named(item: object) -> str:
    """An entry's name (TargetSet, ToolchainSet, RocmSet), for the duplicate check of its array."""
    assert isinstance(item, (TargetSet, ToolchainSet, RocmSet))
    return item.name


def _some(said: str) -> Callable[[tuple[object, ...], Site], None]:
    def check(items: tuple[object, ...], site: Site) -> None:
        if not items:
            raise site.error(said)
    return check


def _python(version: str, site: Site) -> None:
    if not _PYTHON.match(version):
        raise site.error(f"expected a CPython version like \"3.12\", got {version!r}")


def _target(target: str, site: Site) -> None:
    if not _TARGET.match(target):
        raise site.error(f"expected a GPU target like \"gfx90a\", got {target!r}")


def _variant(name: str, site: Site) -> None:
    if not _NAME.match(name):
        raise site.error(f"expected a variant name like \"rocm7\", got {name!r}")


def _feature_names(names: tuple[str, ...], site: Site) -> None:
    for name in names:
        if not _NAME.match(name):
            raise site.error(f"feature name {name!r} must be lower-case letters, digits, '_' or '.'")


def _feature_sets(sets: tuple[tuple[str, ...], ...], site: Site) -> None:
    if not sets:
        raise site.error("must list at least one feature set; use [[]] for none")
    _once("feature set")(tuple("+".join(_sorted_set(names)) for names in sets), site)


def _sorted_set(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted(set(names)))


def _axis(axis: str, site: Site) -> None:
    if axis not in AXES:
        raise site.error(f"unknown matrix axis {axis!r}; the axes are {', '.join(AXES)}")


def _axes(axes: tuple[str, ...], site: Site) -> None:
    _once("axis")(axes, site)
    if "features" not in axes:
        raise site.error("the features axis is always there (features = [[]] for one set)")


def _entry_name(name: str, site: Site, becomes: str) -> None:
    if not _NAME.match(name):
        raise site.key("name").error(f"expected lower-case letters, digits, '_' or '.', got {name!r} (it becomes "
                                     f"{becomes})")


@dataclass(frozen=True)
class TargetSet:
    name: str = field(default="", metadata=doc("The set's name, part of the entry id.",
                                               computed="the targets joined by `_`"))
    targets: tuple[str, ...] = field(default=(), metadata=doc(
        "GPU targets, e.g. `gfx90a`.", required=True, each=_target,
        check=_some("must list at least one GPU target, e.g. [\"gfx90a\"]")))

    def validated(self, site: Site) -> Self:
        named = self if self.name else replace(self, name="_".join(self.targets))
        _entry_name(named.name, site, "part of the matrix entry id")
        return named


@dataclass(frozen=True)
class ToolchainSet:
    toolchain: Toolchain = field(metadata=doc("`system`, `zig` or `mingw` (as `[build] toolchain`)."))
    name: str = field(default="", metadata=doc(
        "The entry's name, part of the entry id and of the wheel's local version.",
        computed="the toolchain, and `-glibc` and its floor where it has one (`zig-glibc2.28`)"))
    glibc_floor: str | None = field(default=None, metadata=doc("zig's glibc floor (as `[build] glibc_floor`).",
                                                               check=problem(floor_problem)))
    # mingw's compilers and Wine are in their own root (debian-sid-windows), as ROCm 7's are in theirs.
    root: str | None = field(default=None, metadata=doc(
        "The build root (`containers/roots/NAME.toml`) in whose container this set's entries are built, as a "
        "`[[release.rocm]]` root is; default: where the release runs.", check=_root))
    # The real umbrella on Windows is its DirectX EP alone: the hip backend's feature set needs HIP.
    features: tuple[tuple[str, ...], ...] | None = field(default=None, metadata=doc(
        "The feature sets this toolchain's entries are built with, in place of `[release] features`."))

    def validated(self, site: Site) -> Self:
        if self.glibc_floor is not None and self.toolchain != "zig":
            raise site.key("glibc_floor").error(f"only the zig toolchain builds for a glibc floor, and this set's "
                                                f"toolchain is {self.toolchain!r}")
        named = self if self.name else replace(
            self, name=self.toolchain + (f"-glibc{self.glibc_floor}" if self.glibc_floor else ""))
        _entry_name(named.name, site, "part of the matrix entry id and the wheel's local version")
        return named


@dataclass(frozen=True)
class RocmSet:
    name: str = field(metadata=doc(
        "The variant, a key of `[wheel.rocm_variants]` (e.g. `rocm7`): the wheel must link its HIP soname; part "
        "of the entry id.", check=_variant))
    root: str = field(metadata=doc(
        "The build root (`containers/roots/NAME.toml`) in whose container this variant's entries are built: "
        "podman runs the root's folder, docker its image (`root image NAME`); either is made when missing.",
        check=_root))


def _image(image: str, site: Site) -> None:
    said = argcheck.image_problem(image)
    if said:
        raise site.error(f"{image!r} {said}; expected {argcheck.IMAGE_FORMS}")


@dataclass(frozen=True)
class ContainerSettings:
    image: str | None = field(default=None, metadata=doc("Image name.", check=_image))
    containerfile: Path | None = field(default=None, metadata=doc("Its Containerfile, relative to the recipe."))
    engine: EngineName | None = field(default=None, metadata=doc(
        "`podman` or `docker`; `--engine` and `TOOLKIT_CONTAINER_ENGINE` override."))
    runner: Runner = field(default="nox", metadata=doc(
        "How a session starts inside: `nox` or `toolkit` (`python -m toolkit`)."))
    root: str | None = field(default=None, metadata=doc(
        "A build root the sessions run in, instead of `image`: with podman the root's folder itself is the "
        "container's filesystem (`--rootfs`, an overlay whose writes are discarded; no image to store), with "
        "docker the root's image (`root image NAME`); either is made when missing."))

    def validated(self, site: Site) -> Self:
        if self.root is not None and self.image is not None:
            raise site.key("root").error("give either root (a build root's container) or image, not both")
        return self


@dataclass(frozen=True)
class ReleaseSettings:
    python: tuple[str, ...] = field(default=("3.11", "3.12"), metadata=doc(
        "CPython versions, e.g. \"3.12\".", each=_python, check=_once("value")))
    target_sets: tuple[TargetSet, ...] = field(
        default=(TargetSet("gfx90a_gfx942", ("gfx90a", "gfx942")),), metadata=doc(
            "GPU target sets.", key="target_set", check=_once("target set name", _named)))
    features: tuple[tuple[str, ...], ...] = field(default=((),), metadata=doc(
        "Feature sets, each an array of feature names; `[[]]` is the defaults only.",
        item="an array of feature names, e.g. [\"hipdnn\"]", each=_feature_names, check=_feature_sets,
        convert=lambda sets, site: tuple(_sorted_set(names) for names in sets)))
    compile_cache: str | None = field(default=None, metadata=doc(
        "Shared ccache storage, `redis://` or `http://`; `TOOLKIT_COMPILE_CACHE` overrides.",
        convert=lambda value, site: value or None))
    container: ContainerSettings = field(default_factory=ContainerSettings, metadata=doc(
        "Where release sessions run: a build root's container, or an image."))
    axes: tuple[str, ...] = field(default=DEFAULT_AXES, metadata=doc(
        "The matrix's axes, of `python`, `target_set`, `rocm`, `toolchain`, `features` (always there); a "
        "host-only `py3-none` wheel uses `[\"toolchain\", \"features\"]`, with a ROCm variant per build root "
        "`[\"rocm\", \"toolchain\", \"features\"]`.", each=_axis, check=_axes))
    toolchains: tuple[ToolchainSet, ...] = field(default=(), metadata=doc(
        "With the `toolchain` axis: one entry per C/C++ toolchain and glibc floor.", key="toolchain",
        check=_once("toolchain name", _named)))
    rocm: tuple[RocmSet, ...] = field(default=(), metadata=doc(
        "With the `rocm` axis: one entry per ROCm variant, each built in a container of its own build root.",
        check=_once("ROCm variant", _named)))
    # An entry's axes but Python and ROCm make its local-version label.
    public: tuple[str, ...] = field(default=(), metadata=doc(
        "The local-version labels (e.g. `glibc2.28`) whose entries are released under the plain version, one "
        "build per distribution; the others keep `VERSION+LABEL`, which PyPI refuses."))

    def validated(self, site: Site) -> Self:
        """Each axis's entries, those of an axis the matrix does not have refused."""
        for key in ("python", "target_set", "toolchain", "rocm"):
            if key not in self.axes and site.has(key):
                raise site.key(key).error(f"given, but {key!r} is not one of the matrix's axes "
                                          f"({', '.join(self.axes)})")
        if "python" in self.axes and not self.python:
            raise site.key("python").error("must list at least one Python version, e.g. [\"3.12\"]")
        if "toolchain" in self.axes and not self.toolchains:
            raise site.key("toolchain").error("the toolchain axis needs at least one [[release.toolchain]]")
        if "rocm" in self.axes and not self.rocm:
            raise site.key("rocm").error("the rocm axis needs at least one [[release.rocm]] (name and root)")
        return replace(self, python=self.python if "python" in self.axes else (),
                       target_sets=(self.target_sets or ReleaseSettings.target_sets) if "target_set" in self.axes
                       else ())
