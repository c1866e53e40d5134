"""Recipe sections owned by the sources layer: [source], [[fetchcontent]], [ort], [requires].

Each section is a frozen dataclass, read by its fields (toolkit/util/tomlclass.py). Every archive is a PinnedArchive
(toolkit.recipe.pinned: url, sha256, content, paths, strip_components, subdir), its keys those of the table holding
it. A URL
may be written without a pin in a recipe: its checksum then comes from the lock file beside the recipe
(`nox -s lock`), and release builds refuse it while neither holds one.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal, Self, get_args

from toolkit.recipe.confine import confined
from toolkit.recipe.pinned import PinnedArchive, check_subdir
from toolkit.recipe.wheel_metadata import canonical_license
from toolkit.util import argcheck
from toolkit.util.errors import RUN_TOOLKIT, RecipeError
from toolkit.util.redact import redact_text, redact_url, shorten
from toolkit.util.tomlfields import doc, inline
from toolkit.util.tomlread import Site

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
# FetchContent names become part of a CMake variable name (FETCHCONTENT_SOURCE_DIR_<NAME>).
_CONTENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
_PLATFORM = re.compile(r"^[a-z0-9]+-[a-z0-9_]+$")
_CMAKE_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
Component = Literal["ort", "rocm", "migraphx"]
COMPONENTS: tuple[str, ...] = get_args(Component)


def _inside_allowed_folders(path: Path, site: Site) -> None:
    confined(path, site.context.folder, site.where)


def _git_url(url: str, site: Site) -> None:
    problem = argcheck.git_url_problem(url)
    if problem is not None:
        raise site.error(f"{url!r} {problem}; expected a git URL ({argcheck.GIT_URL_FORMS})")


def _commit(commit: str, site: Site) -> None:
    if not _COMMIT.match(commit):
        raise site.error(f"expected a full 40-hex commit id (a branch or tag can move), got {commit!r}")


@dataclass(frozen=True)
class SourceSettings:
    """Where the tree to build comes from: exactly one of a local path, a pinned archive, a git commit.

    `subdir` is the folder inside the tree that is built, for every kind.
    """

    # Its table holds one of these, which says which kind of source it is (checked before its other keys).
    ONE_OF: ClassVar[tuple[str, ...]] = ("path", "url", "git")

    path: Path | None = field(default=None, metadata=doc(
        "A local folder, relative to the recipe. It must lie inside the project, the recipe's own folder (for a "
        "recipe in a `recipes/` folder, that folder's parent too) or the toolkit cache; one elsewhere is "
        "refused. Build a tree elsewhere with `--source PATH`.", check=_inside_allowed_folders))
    # Its keys are the table's own; `subdir` is this class's, for every kind of source.
    archive: PinnedArchive | None = field(default=None, metadata=inline(
        omit=("subdir",),
        url="A pinned archive: `https://`, `file://` or `debian:pool/...` (a file of the Debian archive, fetched "
            "from the Debian mirror).",
        sha256="The archive's sha256 (64 lowercase hex); or pin it with `content`, or let `nox -s lock` write the "
               "lock file.",
        content="The digest of the unpacked tree (or of the files `paths` matches), which upstream's and a "
                "mirror's re-packed archive share.",
        paths="Globs: `content` covers only the files they match."))
    git: str | None = field(default=None, metadata=doc("A git URL (fetched shallow, mirror first).", check=_git_url))
    commit: str | None = field(default=None, metadata=doc(
        "With `git`, and required with it: the full 40-hex commit (a branch or tag can move).", check=_commit))
    submodules: bool = field(default=False, metadata=doc("With `git`: fetch submodules too."))
    subdir: str | None = field(default=None, metadata=doc(
        "The folder inside the tree that is built (any kind of source).", check=check_subdir))

    @property
    def kind(self) -> str:
        return "path" if self.path is not None else "url" if self.archive is not None else "git"

    # The archive's URL and sha256, for readers that record where a tree came from (provenance).
    @property
    def url(self) -> str | None:
        return self.archive.url if self.archive is not None else None

    @property
    def sha256(self) -> str | None:
        return self.archive.sha256 if self.archive is not None else None

    def describe(self) -> str:
        if self.path is not None:
            return f"local path {self.path}"
        if self.archive is not None:
            return f"archive {redact_url(self.archive.url)}"
        return f"git {redact_url(self.git or '')} at {self.commit}"

    def validated(self, site: Site) -> Self:
        if self.git is not None and self.commit is None:
            raise site.key("commit").error("required, expected a string")
        for key in ("commit", "submodules"):
            if self.git is None and site.has(key):
                raise site.key(key).error(f"only with 'git'; this source is a {self.kind}")
        return self


def source_from_argument(value: str) -> SourceSettings:
    """--source PATH | URL[#sha256=HEX] | git+URL@COMMIT: another tree built with the same recipe."""
    shown = shorten(redact_text(value))
    if value.startswith("git+"):
        url, sep, commit = value[4:].rpartition("@")
        if not sep or not _COMMIT.match(commit):
            raise RecipeError(f"--source {shown}: a git source is written git+URL@COMMIT with a full 40-hex commit")
        argcheck.git_url(url, "--source git+URL@COMMIT: URL")
        return SourceSettings(git=url, commit=commit, submodules=True)
    if re.match(r"^(https?|file)://", value):
        url, _, fragment = value.partition("#")
        sha = None
        if fragment:
            key, _, sha = fragment.partition("=")
            if key != "sha256" or not argcheck.is_sha256(sha):
                raise RecipeError(f"--source {shown}: expected URL#sha256=<64 hex>, got fragment "
                                  f"{shorten(fragment, 80)!r}")
        return SourceSettings(archive=PinnedArchive(url, sha256=sha))
    path = Path(value).expanduser().resolve()
    if path.is_file():
        raise _not_a_tree(path, shown)
    if not path.is_dir():
        raise RecipeError(f"--source {shown}: no such folder",
                          hint="give a source tree folder, an archive URL or git+URL@COMMIT")
    return SourceSettings(path=path)


def _not_a_tree(path: Path, shown: str) -> RecipeError:
    """--source names a file: what kind, and what to give instead."""
    name = path.name.lower()
    if name.endswith(".whl"):
        return RecipeError(f"--source {shown}: a wheel is a built package, not a source tree to build",
                           hint=f"give the source tree's folder, archive URL or git+URL@COMMIT; to try the wheel, "
                                f"run: {RUN_TOOLKIT} smoke {path}")
    if name.endswith((".tar.gz", ".tgz", ".tar.xz", ".tar.bz2", ".tar", ".zip")):
        return RecipeError(f"--source {shown}: an archive file is given by URL, not by path",
                           hint=f"pass --source file://{path}#sha256=<its sha256>, or unpack it "
                                "and give the folder")
    return RecipeError(f"--source {shown}: a file, not a folder",
                       hint="give the source tree's folder, an archive URL or git+URL@COMMIT")


def _content_name(name: str, site: Site) -> None:
    if not _CONTENT_NAME.match(name):
        raise site.error(f"expected a FetchContent name (letters, digits, _ . + -), got {name!r}")


def _cmake_target(target: str, site: Site) -> None:
    if not _CONTENT_NAME.match(target):
        raise site.error(f"expected a CMake target name, got {target!r}")


def _cmake_variable(name: str, site: Site) -> None:
    if not _CMAKE_VARIABLE.match(name):
        raise site.error(f"expected a CMake variable name, got {name!r}")


def _platform(platform: str, site: Site) -> None:
    if not _PLATFORM.match(platform):
        raise site.error(f"expected OS-ARCH such as 'linux-x64', got {platform!r}")


def _platforms_once(packages: tuple[OrtPackage, ...], site: Site) -> None:
    platforms = [p.platform for p in packages]
    for i, name in enumerate(platforms):
        if name in platforms[:i]:
            raise site.item(i).key("platform").error(f"platform {name!r} is listed twice")


@dataclass(frozen=True)
class HostTool:
    """A program a dependency builds that a cross build runs while it builds (protobuf's protoc, which ONNX runs to
    generate its sources): built for the build machine from the same verified source, before the tree configures."""

    target: str = field(metadata=doc("The dependency's CMake target that builds it, e.g. `protoc`.",
                                     check=_cmake_target))
    define: str = field(metadata=doc("The tree's CMake variable given the program's path, e.g. "
                                     "`ONNX_CUSTOM_PROTOC_EXECUTABLE`.", check=_cmake_variable))
    defines: dict[str, str] = field(default_factory=dict, metadata=doc(
        "CMake defines for the dependency's own build of it, e.g. `{ protobuf_BUILD_TESTS = \"OFF\" }`."))


@dataclass(frozen=True)
class FetchContentDep:
    """A third-party CMake dependency the source tree declares with FetchContent_Declare(name ...).

    Its archive is pinned by `sha256` (upstream's bytes, when known) and/or `content`, the digest of the
    unpacked tree, which GitHub's tag archive and a mirror's re-packed archive of the same tag share.
    """

    name: str = field(metadata=doc("The name the tree's `FetchContent_Declare` uses.", check=_content_name))
    archive: PinnedArchive = field(metadata=inline(
        sha256="The archive's sha256 (where upstream's is known).",
        content="The digest of the unpacked tree; or let `nox -s lock` write it.",
        subdir="The folder inside the archive that is the dependency's source."))
    # A feature name: mirrored only when that feature is on (e.g. DML-only deps).
    when: str | None = field(default=None, metadata=doc("Only when this feature is on."))
    # protobuf asks for absl.
    asked_by: str | None = field(default=None, metadata=doc(
        "The dependency whose own CMake asks for this one (for the dry run)."))
    # For a tree that tries the system's copy first, then falls back to FetchContent.
    find_package: bool = field(default=False, metadata=doc(
        "Also answer `find_package(<name>)` with not-found, so the tree falls back to this pinned source."))
    # morphizen's Microsoft.GSL: found with find_package first, then REQUIRED after its own FetchContent_Declare, which
    # a disabled find_package cannot answer.
    serves_find_package: bool = field(default=False, metadata=doc(
        "Also answer `find_package(<name>)` with this pinned source (made available, found through the config "
        "FetchContent writes), so the tree never finds a system copy of another version."))
    # hash-library: a folder of sources the tree compiles itself; FetchContent_MakeAvailable only populates it.
    files_only: bool = field(default=False, metadata=doc(
        "The dependency is files the tree reads (no CMakeLists.txt of its own): its top is not checked for one."))
    host_tool: HostTool | None = field(default=None, metadata=doc(
        "A program of this dependency that a cross build (`--toolchain mingw`) runs: built for this machine first."))
    # Its code ends up inside the wheel's libraries (linked, or compiled in from its headers), so the wheel carries
    # its license files and names its license, as for a library repair bundles.
    license: str | None = field(default=None, metadata=doc(
        "The SPDX license of its code, e.g. `Apache-2.0`. A wheel of the build carries its license files (those at the "
        "top of its tree) in `.dist-info/licenses/linked/<name>/` and joins this to its License-Expression; the "
        "wheel stage refuses a dependency without one, unless `in_wheel = false`.", convert=canonical_license))
    # boostorg/mp11 has no LICENSE file of its own; its README says which license.
    license_files: tuple[str, ...] = field(default=(), metadata=doc(
        "The files inside its tree that state its license, where it has no LICENSE, COPYING or NOTICE file at its "
        "top."))
    in_wheel: bool = field(default=True, metadata=doc(
        "False for files the build reads but does not put into its libraries: a license text, or a DLL that a "
        "`[[wheel.components]]` entry carries with its own license."))

    @property
    def define(self) -> str:
        # CMake upper-cases the content name for this variable (FetchContent_Populate docs).
        return f"FETCHCONTENT_SOURCE_DIR_{self.name.upper()}"

    def validated(self, site: Site) -> Self:
        if (self.license or self.license_files) and not self.in_wheel:
            raise site.key("in_wheel").error("a dependency that is not in the wheel has no license for the wheel to "
                                             "carry: drop `license` and `license_files`, or `in_wheel = false`")
        if self.find_package and self.serves_find_package:
            raise site.key("serves_find_package").error(
                "give `find_package` (answered not-found) or `serves_find_package` (answered with the pin), not both")
        return self


def active_deps(deps: Iterable[FetchContentDep], enabled_features: Collection[str]) -> tuple[FetchContentDep, ...]:
    """The dependencies a build with these features needs."""
    return tuple(d for d in deps if d.when is None or d.when in enabled_features)


def once_each(deps: tuple[FetchContentDep, ...], site: Site) -> None:
    """[[fetchcontent]]: each name once (CMake names ignore case)."""
    seen: dict[str, int] = {}
    for i, dep in enumerate(deps):
        key = dep.name.upper()
        if key in seen:
            raise site.item(i).key("name").error(
                f"{dep.name!r} is listed twice (also fetchcontent[{seen[key]}]); CMake names ignore case")
        seen[key] = i


@dataclass(frozen=True)
class OrtWindowsDll:
    """ORT's Windows DLL, which a Windows build links: PyPI's win_amd64 wheels carry it, without the headers or the
    CMake config the package beside it provides."""

    # Its keys are the table's own; the DLL is one file of the archive, named by `path`, not a folder of it.
    archive: PinnedArchive = field(metadata=inline(
        omit=("subdir",),
        url="An archive holding ORT's Windows DLL: PyPI's `onnxruntime` win_amd64 wheel."))
    path: str = field(metadata=doc("The DLL's path inside the archive, e.g. `onnxruntime/capi/onnxruntime.dll`."))


@dataclass(frozen=True)
class OrtPackage:
    """ORT's package for one platform: a release archive or a .deb; archive.subdir is the install prefix
    inside the unpacked package ("usr" for a .deb)."""

    platform: str = field(metadata=doc("`OS-ARCH`, e.g. `linux-x64`.", check=_platform))
    archive: PinnedArchive = field(metadata=inline(
        url="The package: a release archive or `debian:pool/...` .deb.",
        subdir="The install prefix inside the unpacked package (`usr` for a .deb)."))
    windows_dll: OrtWindowsDll | None = field(default=None, metadata=doc(
        "A `windows-x64` package's DLL, where the package itself has the headers only (Debian's .deb): the toolkit "
        "puts the two together with a CMake config for find_package(onnxruntime)."))


@dataclass(frozen=True)
class OrtSettings:
    """ORT's release packages (headers, libraries, CMake config), one per platform."""

    version: str = field(metadata=doc("The ORT version they hold."))
    packages: tuple[OrtPackage, ...] = field(default=(), metadata=doc(
        "One package per platform.", key="package", check=_platforms_once))

    def package_for(self, platform: str) -> OrtPackage | None:
        return next((p for p in self.packages if p.platform == platform), None)


@dataclass(frozen=True)
class Requirements:
    """Which installed components a build needs, as data: always, and per enabled feature.

    [requires]
    always = ["ort"]
    features = { migraphx = ["rocm", "migraphx"], hipdnn = ["rocm"] }
    """

    always: tuple[Component, ...] = field(default=(), metadata=doc("Needed by every build."))
    features: tuple[tuple[str, tuple[Component, ...]], ...] = field(default=(), metadata=doc(
        "Needed per feature that is on: `{ FEATURE = [\"rocm\"] }`."))

    def needed(self, enabled_features: list[str] | tuple[str, ...] | set[str]) -> list[str]:
        wanted = set(self.always)
        for feature, components in self.features:
            if feature in enabled_features:
                wanted.update(components)
        return [c for c in COMPONENTS if c in wanted]
