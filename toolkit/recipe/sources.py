"""Recipe sections owned by the sources layer: [source], [[fetchcontent]], [ort], [requires].

Each section is a frozen dataclass read strictly through tomlread.Table. Every archive is a PinnedArchive
(toolkit.recipe.pinned: url, sha256, content, paths, strip_components, subdir, read in one place). A URL
may be written without a pin in a recipe: its checksum then comes from the lock file beside the recipe
(`nox -s lock`), and release builds refuse it while neither holds one.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.recipe.pinned import ARCHIVE_KEYS, PinnedArchive, read_subdir
from toolkit.recipe.schema import doc, recipe_table
from toolkit.util import argcheck
from toolkit.util.errors import RUN_TOOLKIT, RecipeError
from toolkit.util.redact import redact_text, redact_url, shorten
from toolkit.util.tomlread import Table

_COMMIT = re.compile(r"^[0-9a-f]{40}$")
# FetchContent names become part of a CMake variable name (FETCHCONTENT_SOURCE_DIR_<NAME>).
_CONTENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
_PLATFORM = re.compile(r"^[a-z0-9]+-[a-z0-9_]+$")
COMPONENTS = ("ort", "rocm", "migraphx")


@recipe_table("source", keys={
    **ARCHIVE_KEYS,
    "url": "A pinned archive: `https://`, `file://` or `debian:pool/...` (a file of the Debian archive, fetched "
           "from the Debian mirror).",
    "sha256": "The archive's sha256 (64 lowercase hex); or pin it with `content`, or let `nox -s lock` write the "
              "lock file.",
    "content": "The digest of the unpacked tree (or of the files `paths` matches), which upstream's and a "
               "mirror's re-packed archive share.",
    "paths": "Globs: `content` covers only the files they match.",
})
@dataclass(frozen=True)
class SourceSettings:
    """Where the tree to build comes from: exactly one of a local path, a pinned archive, a git commit.

    `subdir` is the folder inside the tree that is built, for every kind.
    """

    path: Path | None = field(default=None, metadata=doc(
        "A local folder, relative to the recipe. It must lie inside the project, the recipe's own folder (for a "
        "recipe in a `recipes/` folder, that folder's parent too) or the toolkit cache; one elsewhere is "
        "refused. Build a tree elsewhere with `--source PATH`."))
    archive: PinnedArchive | None = None   # its keys are the table's own (see recipe_table above)
    git: str | None = field(default=None, metadata=doc("A git URL (fetched shallow, mirror first)."))
    commit: str | None = field(default=None, metadata=doc(
        "With `git`: the full 40-hex commit (a branch or tag can move)."))
    submodules: bool = field(default=False, metadata=doc("With `git`: fetch submodules too."))
    subdir: str | None = field(default=None, metadata=doc(
        "The folder inside the tree that is built (any kind of source)."))

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

    @classmethod
    def from_table(cls, t: Table, recipe_dir: Path) -> SourceSettings:
        given = [k for k in ("path", "url", "git") if t.has(k)]
        if len(given) != 1:
            raise RecipeError(
                f"{t.file}: table '{t.prefix or 'source'}': expected exactly one of 'path', 'url', 'git', "
                f"got {', '.join(repr(g) for g in given) or 'none'}"
            )
        kind = given[0]
        if kind == "path":
            from toolkit.recipe.confine import confined

            where = f"{t.file}: key '{t.key_path('path')}'"
            path = confined(recipe_dir / t.str("path"), recipe_dir, where)
            subdir = read_subdir(t)
            t.done()
            return cls(path=path, subdir=subdir)
        if kind == "url":
            value = cls(archive=PinnedArchive.from_table(t, subdir=False), subdir=read_subdir(t))
            t.done()
            return value
        git = t.str("git")
        problem = argcheck.git_url_problem(git)
        if problem is not None:
            raise t.error("git", f"{git!r} {problem}; expected a git URL ({argcheck.GIT_URL_FORMS})")
        commit = t.str("commit")
        if not _COMMIT.match(commit):
            raise t.error("commit", f"expected a full 40-hex commit id (a branch or tag can move), got {commit!r}")
        value = cls(git=git, commit=commit, submodules=t.bool("submodules", False), subdir=read_subdir(t))
        t.done()
        return value


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


@recipe_table("fetchcontent[].host_tool")
@dataclass(frozen=True)
class HostTool:
    """A program a dependency builds that a cross build runs while it builds (protobuf's protoc, which ONNX runs to
    generate its sources): built for the build machine from the same verified source, before the tree configures."""

    target: str = field(metadata=doc("The dependency's CMake target that builds it, e.g. `protoc`."))
    define: str = field(metadata=doc("The tree's CMake variable given the program's path, e.g. "
                                     "`ONNX_CUSTOM_PROTOC_EXECUTABLE`."))
    defines: dict[str, str] = field(default_factory=dict, metadata=doc(
        "CMake defines for the dependency's own build of it, e.g. `{ protobuf_BUILD_TESTS = \"OFF\" }`."))

    @classmethod
    def from_table(cls, t: Table) -> HostTool:
        value = cls(target=t.str("target"), define=t.str("define"), defines=t.str_map("defines", {}))
        if not _CONTENT_NAME.match(value.target):
            raise t.error("target", f"expected a CMake target name, got {value.target!r}")
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", value.define):
            raise t.error("define", f"expected a CMake variable name, got {value.define!r}")
        t.done()
        return value


@recipe_table("fetchcontent[]", keys={
    **ARCHIVE_KEYS,
    "sha256": "The archive's sha256 (where upstream's is known).",
    "content": "The digest of the unpacked tree; or let `nox -s lock` write it.",
    "subdir": "The folder inside the archive that is the dependency's source.",
})
@dataclass(frozen=True)
class FetchContentDep:
    """A third-party CMake dependency the source tree declares with FetchContent_Declare(name ...).

    Its archive is pinned by `sha256` (upstream's bytes, when known) and/or `content`, the digest of the
    unpacked tree, which GitHub's tag archive and a mirror's re-packed archive of the same tag share.
    """

    name: str = field(metadata=doc("The name the tree's `FetchContent_Declare` uses."))
    archive: PinnedArchive
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

    @property
    def define(self) -> str:
        # CMake upper-cases the content name for this variable (FetchContent_Populate docs).
        return f"FETCHCONTENT_SOURCE_DIR_{self.name.upper()}"

    @classmethod
    def from_table(cls, t: Table, recipe_dir: Path) -> FetchContentDep:
        name = t.str("name")
        if not _CONTENT_NAME.match(name):
            raise t.error("name", f"expected a FetchContent name (letters, digits, _ . + -), got {name!r}")
        value = cls(name=name, archive=PinnedArchive.from_table(t), when=t.str("when", None),
                    asked_by=t.str("asked_by", None), find_package=t.bool("find_package", False),
                    files_only=t.bool("files_only", False), serves_find_package=t.bool("serves_find_package", False),
                    host_tool=HostTool.from_table(tool) if (tool := t.table("host_tool", None)) is not None else None)
        if value.find_package and value.serves_find_package:
            raise t.error("serves_find_package", "give `find_package` (answered not-found) or `serves_find_package` "
                          "(answered with the pin), not both")
        t.done()
        return value


def active_deps(deps: Iterable[FetchContentDep], enabled_features: Collection[str]) -> tuple[FetchContentDep, ...]:
    """The dependencies a build with these features needs."""
    return tuple(d for d in deps if d.when is None or d.when in enabled_features)


def fetchcontent_from_tables(tables: list[Table], recipe_dir: Path) -> tuple[FetchContentDep, ...]:
    deps: list[FetchContentDep] = []
    seen: dict[str, int] = {}
    for i, t in enumerate(tables):
        dep = FetchContentDep.from_table(t, recipe_dir)
        key = dep.name.upper()
        if key in seen:
            raise t.error("name",
                          f"{dep.name!r} is listed twice (also fetchcontent[{seen[key]}]); CMake names ignore case")
        seen[key] = i
        deps.append(dep)
    return tuple(deps)


@recipe_table("ort.package[].windows_dll", keys={
    **ARCHIVE_KEYS,
    "url": "An archive holding ORT's Windows DLL: PyPI's `onnxruntime` win_amd64 wheel.",
})
@dataclass(frozen=True)
class OrtWindowsDll:
    """ORT's Windows DLL, which a Windows build links: PyPI's win_amd64 wheels carry it, without the headers or the
    CMake config the package beside it provides."""

    archive: PinnedArchive
    path: str = field(metadata=doc("The DLL's path inside the archive, e.g. `onnxruntime/capi/onnxruntime.dll`."))

    @classmethod
    def from_table(cls, t: Table) -> OrtWindowsDll:
        value = cls(archive=PinnedArchive.from_table(t, subdir=False), path=t.str("path"))
        t.done()
        return value


@recipe_table("ort.package[]", keys={
    **ARCHIVE_KEYS,
    "url": "The package: a release archive or `debian:pool/...` .deb.",
    "subdir": "The install prefix inside the unpacked package (`usr` for a .deb).",
})
@dataclass(frozen=True)
class OrtPackage:
    """ORT's package for one platform: a release archive or a .deb; archive.subdir is the install prefix
    inside the unpacked package ("usr" for a .deb)."""

    platform: str = field(metadata=doc("`OS-ARCH`, e.g. `linux-x64`."))
    archive: PinnedArchive
    windows_dll: OrtWindowsDll | None = field(default=None, metadata=doc(
        "A `windows-x64` package's DLL, where the package itself has the headers only (Debian's .deb): the toolkit "
        "puts the two together with a CMake config for find_package(onnxruntime)."))

    @classmethod
    def from_table(cls, t: Table, recipe_dir: Path) -> OrtPackage:
        platform = t.str("platform")
        if not _PLATFORM.match(platform):
            raise t.error("platform", f"expected OS-ARCH such as 'linux-x64', got {platform!r}")
        dll = t.table("windows_dll", None)
        value = cls(platform=platform, archive=PinnedArchive.from_table(t),
                    windows_dll=OrtWindowsDll.from_table(dll) if dll is not None else None)
        t.done()
        return value


@recipe_table("ort")
@dataclass(frozen=True)
class OrtSettings:
    """ORT's release packages (headers, libraries, CMake config), one per platform."""

    version: str = field(metadata=doc("The ORT version they hold."))
    packages: tuple[OrtPackage, ...] = field(metadata=doc("One package per platform.", key="package"))

    def package_for(self, platform: str) -> OrtPackage | None:
        return next((p for p in self.packages if p.platform == platform), None)

    @classmethod
    def from_table(cls, t: Table, recipe_dir: Path) -> OrtSettings:
        version = t.str("version")
        packages = tuple(OrtPackage.from_table(p, recipe_dir) for p in t.tables("package", []))
        platforms = [p.platform for p in packages]
        for i, name in enumerate(platforms):
            if name in platforms[:i]:
                raise t.error(f"package[{i}].platform", f"platform {name!r} is listed twice")
        t.done()
        return cls(version=version, packages=packages)


@recipe_table("requires", keys={"features.<feature>": "The installs this feature needs."})
@dataclass(frozen=True)
class Requirements:
    """Which installed components a build needs, as data: always, and per enabled feature.

    [requires]
    always = ["ort"]
    features = { migraphx = ["rocm", "migraphx"], hipdnn = ["rocm"] }
    """

    always: tuple[str, ...] = field(default=(), metadata=doc("Needed by every build."))
    features: tuple[tuple[str, tuple[str, ...]], ...] = field(default=(), metadata=doc(
        "Needed per feature that is on."))

    def needed(self, enabled_features: list[str] | tuple[str, ...] | set[str]) -> list[str]:
        wanted = set(self.always)
        for feature, components in self.features:
            if feature in enabled_features:
                wanted.update(components)
        return [c for c in COMPONENTS if c in wanted]

    @classmethod
    def from_table(cls, t: Table, recipe_dir: Path) -> Requirements:
        always = t.str_list("always", [])
        for i, name in enumerate(always):
            if name not in COMPONENTS:
                raise t.error(f"always[{i}]", f"expected one of {', '.join(COMPONENTS)}, got {name!r}")
        per_feature = []
        ft = t.table("features", None)
        if ft is not None:
            for feature in ft.keys():
                components = ft.str_list(feature)
                for i, name in enumerate(components):
                    if name not in COMPONENTS:
                        raise ft.error(f"{feature}[{i}]", f"expected one of {', '.join(COMPONENTS)}, got {name!r}")
                per_feature.append((feature, tuple(components)))
            ft.done()
        t.done()
        return cls(always=tuple(always), features=tuple(per_feature))

