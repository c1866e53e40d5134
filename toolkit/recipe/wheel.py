"""The recipe's `[wheel]` section, frozen dataclasses read by their fields (`[smoke]`: toolkit/recipe/smoke.py).

    [wheel]
    distribution = "onnxruntime-ep-amdgpu"      # default
    import_package = "onnxruntime_ep_amdgpu"    # default
    version = "0.1.0"
    summary = "..."
    onnxruntime = ">=1.24"                      # the ORT it works with: checked at run time, never a dependency
    trace_env = "AMDGPU_EP_VERBOSE"             # optional: the variable (=1) that makes the EP say what it does
    excludes = ["libhsakmt.so.*"]               # repair excludes beyond the ROCm list
    named_features = ["hipdnn"]                 # optional: a build with one on is <distribution>[-<variant>]-hipdnn
    [[wheel.components]]
    library = "amdgpu-ep"                       # the file lib<library>.so in the build's lib/
    ep_name = "AMDGPUExecutionProvider"         # optional: only registrable EP libraries have one
    feature = "hipdnn"                          # optional: packaged only when that feature is on
    runpath = "$ORIGIN"                         # optional: RUNPATH repair gives it ($ORIGIN-relative entries)
    loads = ["migraphx-backend"]                # optional: components it dlopens by bare name; repair
                                                # checks its RUNPATH finds them inside the wheel
    runtime = "MIGraphX and HIP from ROCm"      # optional: what it needs at run time (the wheel's description)
    dlopens = ["libhipgpu.so"]                  # optional: libraries outside the wheel it loads by bare name at
                                                # run time; the self-check looks for them
    license = "MIT"                             # optional: the EP's SPDX license expression (License-Expression)
    authors = [{ name = "...", email = "..." }] # optional, as pyproject's [project] authors
    classifiers = ["Programming Language :: Python :: 3"]
    [wheel.urls]                                # optional: the index page's links, label = URL
    Source = "https://..."
    [wheel.rocm_variants]                       # optional: one distribution per ROCm major, by HIP soname:
    rocm6 = "libamdhip64.so.6"                  # a build linking it is <distribution>-rocm6; `meta-wheel`
    rocm7 = "libamdhip64.so.7"                  # writes <distribution>, which installs the newest (rocm7)
    [wheel.platform_variants]                   # optional: one distribution per other operating system:
    windows = "directml"                        # a Windows build is <distribution>-directml, which
                                                # <distribution> installs on Windows
    [[wheel.extras]]                            # optional: `pip install 'DISTRIBUTION[hip]'` installs these too
    name = "hip"
    requires = ["onnxruntime-ep-hip>=0.4.0"]
    summary = "..."
    feature = "hipdnn"                          # optional: only the wheels of builds with this named feature on
    variants = ["rocm7"]                        # optional: only these ROCm variants
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal, Self

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from toolkit.recipe.core import SYS_PLATFORMS, library_file
from toolkit.recipe.wheel_metadata import (
    Author,
    Extra,
    canonical_license,
    check_classifiers,
    check_url,
    check_variants,
    extras_once,
)
from toolkit.util.argcheck import IDENTIFIER
from toolkit.util.errors import ToolkitError
from toolkit.util.tomlfields import doc
from toolkit.util.tomlread import Site

DEFAULT_DISTRIBUTION = "onnxruntime-ep-amdgpu"
DEFAULT_IMPORT_PACKAGE = "onnxruntime_ep_amdgpu"

_DIST_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")
_LIBRARY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
_VARIANT = re.compile(r"^[a-z][a-z0-9]*$")
_SONAME = re.compile(r"^lib[A-Za-z0-9._+-]+\.so\.\d+$")
_DLOPEN_NAME = re.compile(r"^lib[A-Za-z0-9._+-]+\.so(\.[0-9.]+)?$")
# A file inside a fetched dependency: its name, then a relative path that never climbs out of it.
_LICENSE_REF = re.compile(r"^(?!\.\.?/)[A-Za-z0-9_.-]+(/(?!\.\.?(/|$))[A-Za-z0-9_.+ -]+)+$")


def _matching(pattern: re.Pattern[str], said: str) -> Callable[[str, Site], None]:
    """A check that the value matches `pattern`; `said` is the error, `{value!r}` in it the value."""
    def check(value: str, site: Site) -> None:
        if not pattern.match(value):
            raise site.error(said.format(value=value))
    return check


def _library(library: str, site: Site) -> None:
    if not _LIBRARY_NAME.match(library) or library.startswith("lib") and library.endswith(".so"):
        raise site.error(f"expected a library name such as 'amdgpu-ep' (file libamdgpu-ep.so), got {library!r}")


def _runpath(value: str, site: Site) -> None:
    # Only $ORIGIN-relative entries: an absolute folder of the build machine means nothing where the wheel
    # is installed. Whether an entry stays inside the wheel is checked by repair, which sees the layout.
    for entry in value.split(":"):
        if entry not in ("$ORIGIN", "${ORIGIN}") and not entry.startswith(("$ORIGIN/", "${ORIGIN}/")):
            raise site.error(f"entry {entry!r} is not $ORIGIN or $ORIGIN/<folder>: a wheel's libraries may only "
                             "search inside the wheel")


def _version(version: str, site: Site) -> None:
    try:
        Version(version)
    except InvalidVersion:
        raise site.error(f"{version!r} is not a PEP 440 version") from None


def _version_range(value: str, site: Site) -> None:
    try:
        SpecifierSet(value)
        Requirement(f"onnxruntime{value}")
    except (InvalidSpecifier, InvalidRequirement):
        raise site.error(f"{value!r} is not a version range such as '>=1.24' or '~=1.24.0'") from None


def _rocm_variant(soname: str, site: Site) -> None:
    if not _VARIANT.match(site.name):
        raise site.error("expected a lower-case name such as 'rocm6'")
    if not _SONAME.match(soname):
        raise site.error(f"expected a versioned soname such as 'libamdhip64.so.6', got {soname!r}")


def _platform_variant(variant: str, site: Site) -> None:
    if site.name not in SYS_PLATFORMS or site.name == "linux":
        others = ", ".join(p for p in SYS_PLATFORMS if p != "linux")
        raise site.error(f"expected an operating system other than Linux ({others}); Linux builds are "
                         "[wheel.rocm_variants]")
    if not _VARIANT.match(variant):
        raise site.error(f"expected a lower-case name such as 'directml', got {variant!r}")


def _variables(env: tuple[tuple[str, str], ...], site: Site) -> None:
    if not env or not all(IDENTIFIER.match(name) for name, _ in env):
        raise site.error("expected at least one variable, such as { MORPHIZEN_EP_ENABLE_CPU_DEVICE = \"1\" }")


@dataclass(frozen=True)
class Component:
    library: str = field(metadata=doc("The library (`amdgpu-ep` for `libamdgpu-ep.so` in the build's lib/).",
                                      check=_library))
    ep_name: str | None = field(default=None, metadata=doc("The EP name it registers, for a library ORT registers."))
    feature: str | None = field(default=None, metadata=doc("Packaged only when this feature is on."))
    # Entries, each "$ORIGIN" or "$ORIGIN/<folder inside the wheel>".
    runpath: tuple[str, ...] = field(default=(), metadata=doc(
        "RUNPATH repair gives it (`$ORIGIN`-relative entries only).", toml=str, check=_runpath,
        convert=lambda value, site: tuple(value.split(":"))))
    loads: tuple[str, ...] = field(default=(), metadata=doc(
        "Components it `dlopen`s by bare name; repair checks its RUNPATH finds them in the wheel.",
        each=_matching(_LIBRARY_NAME, "expected a component's library name such as 'migraphx-backend', got "
                                      "{value!r}")))
    runtime: str | None = field(default=None, metadata=doc(
        "What it needs at run time, in words (the wheel's description and `get_runtime_needs()`)."))
    dlopens: tuple[str, ...] = field(default=(), metadata=doc(
        "Libraries outside the wheel it loads by bare name at run time (`libhipgpu.so`); the self-check looks for "
        "them, loads them and carries over their own wheel's verdict.",
        each=_matching(_DLOPEN_NAME, "expected a library file name such as 'libhipgpu.so', got {value!r}")))
    # hip-ep's GPU kernel libraries, which only its real runtime (mock off) builds.
    unless: str | None = field(default=None, metadata=doc("Packaged only when this feature is off."))
    # hip-ep's libhip-compiler.so: a library the EP loads, not an EP.
    plugin: bool = field(default=True, metadata=doc(
        "It exports ORT's plugin EP entry points (CreateEpFactories, ReleaseEpFactory), which the wheel build "
        "checks; false for a helper library an EP loads (hip-ep's `hip-compiler`)."))
    # DirectML.dll: a library the tree takes from elsewhere and installs beside its own, so the wheel carries it.
    license: str | None = field(default=None, metadata=doc(
        "For a library the wheel carries but the tree did not write (`DirectML.dll`): its license, an SPDX expression "
        "(`LicenseRef-<name>` for terms SPDX does not list), added to the wheel's License-Expression.",
        convert=canonical_license))
    license_files: tuple[str, ...] = field(default=(), metadata=doc(
        "Its license texts, each `<[[fetchcontent]] name>/<path inside it>`; they go to "
        "`.dist-info/licenses/bundled/<its file>/`.", each=_matching(
            _LICENSE_REF, "expected '<fetchcontent name>/<path inside it>' without '..', got {value!r}")))

    @property
    def filename(self) -> str:
        return library_file(self.library)

    def file(self, platform: str) -> str:
        """Its file on `platform` (recipe.core.LIBRARY_AFFIXES): libNAME.so, or NAME.dll for Windows."""
        return library_file(self.library, platform)

    def wanted(self, features: frozenset[str]) -> bool:
        return (self.feature is None or self.feature in features) and self.unless not in features

    def validated(self, site: Site) -> Self:
        if bool(self.license) != bool(self.license_files):
            raise site.key("license" if self.license_files else "license_files").error(
                "a library the wheel carries but the tree did not write needs both its license expression and its "
                "license_files")
        if self.ep_name is not None and not self.plugin:
            raise site.key("plugin").error("a component ORT registers (it has an ep_name) exports the plugin entry "
                                           "points")
        return self


def _exclusive(a: Component, b: Component) -> bool:
    return (a.unless is not None and a.unless == b.feature) or (b.unless is not None and b.unless == a.feature)


def _components(components: tuple[Component, ...], site: Site) -> None:
    """`[[wheel.components]]`: each library once, each EP name once, `loads` naming components of this wheel."""
    if not components:
        raise site.error("at least one component is required")
    libraries = [c.library for c in components]
    eps: list[str] = []
    for i, c in enumerate(components):
        if c.library in libraries[:i]:
            raise site.item(i).key("library").error(f"library {c.library!r} is listed twice")
        if c.ep_name is not None:
            # One build never packages two components of which one is `unless` the other's feature.
            if any(o.ep_name == c.ep_name and not _exclusive(o, c) for o in components[:i]):
                raise site.item(i).key("ep_name").error(f"EP name {c.ep_name!r} is listed twice")
            eps.append(c.ep_name)
    for i, c in enumerate(components):
        unknown = [name for name in c.loads if name not in libraries]
        if unknown:
            raise site.item(i).key("loads").error(f"{unknown[0]!r} is not the library of a component of this wheel "
                                                  f"(components: {', '.join(sorted(libraries))})")
    if not eps:
        raise site.error("no component has an ep_name: the wheel would hold no registrable EP library")


# hip-ep offers AMD GPUs only and its CPU device (which its tests run sessions on) is off unless a variable is set:
# a self-check that says "0 devices" must say why, and what turns a device on.
@dataclass(frozen=True)
class NoDevice:
    why: str = field(metadata=doc("Why the EP may register and offer no device (the self-check says it beside a "
                                  "registration with zero devices)."))
    env: tuple[tuple[str, str], ...] = field(metadata=doc(
        "The variables that turn a device on (`{ MORPHIZEN_EP_ENABLE_CPU_DEVICE = \"1\" }`); the self-check says "
        "whether each is set.", check=_variables))
    enables: str = field(metadata=doc("What they turn on, in words (`its CPU device`)."))

    def to_json(self) -> dict[str, object]:
        return {"why": self.why, "env": dict(self.env), "enables": self.enables}


@dataclass(frozen=True)
class WheelSettings:
    version: str = field(metadata=doc("The wheel's version (PEP 440); `--local-version` appends `+LABEL`.",
                                      check=_version))
    components: tuple[Component, ...] = field(metadata=doc(
        "The libraries packaged; at least one has an `ep_name`.", check=_components))
    onnxruntime: str = field(default=">=1.24", metadata=doc(
        "The ONNX Runtime versions the EP works with; never a dependency (ORT's flavours share the `onnxruntime` "
        "module): the self-check checks the one imported, the wheel's description names it, the smoke tests its "
        "ends.", check=_version_range))
    distribution: str = field(default=DEFAULT_DISTRIBUTION, metadata=doc("The distribution name.", check=_matching(
        _DIST_NAME, "{value!r} is not a valid distribution name")))
    import_package: str = field(default=DEFAULT_IMPORT_PACKAGE, metadata=doc("The import package.", check=_matching(
        IDENTIFIER, "{value!r} is not a Python identifier")))
    summary: str = field(default="AMD GPU plugin execution provider for ONNX Runtime", metadata=doc(
        "The wheel's one-line summary."))
    excludes: tuple[str, ...] = field(default=(), metadata=doc(
        "Libraries auditwheel leaves out beyond the ROCm rules."))
    # (variant, HIP soname); `<distribution>` itself becomes a meta-package installing the newest (default_variant).
    rocm_variants: tuple[tuple[str, str], ...] = field(default=(), metadata=doc(
        "One distribution per ROCm major: variant = HIP soname (`rocm6 = \"libamdhip64.so.6\"`); the soname the "
        "libraries link makes the wheel `<distribution>-<variant>`, and `meta-wheel` writes `<distribution>`, "
        "which installs the newest (the highest HIP soname version).", each=_rocm_variant))
    platform_variants: tuple[tuple[str, str], ...] = field(default=(), metadata=doc(
        "One distribution per other operating system: platform = variant (`windows = \"directml\"`); a build for it "
        "is `<distribution>-<variant>`, which the meta-package installs there (a `sys_platform` marker), as it "
        "installs the newest ROCm variant on Linux.", each=_platform_variant))
    variant: str | None = None  # the variant this wheel is (set by for_linked)
    # A build with an opt-in feature holds other libraries under the same version: were it named as the plain build,
    # a wheelhouse, an index and pip could not tell the two apart (a build tag or a local version would make pip
    # pick one of them for the plain name). Its own distribution name keeps both installable by name.
    named_features: tuple[str, ...] = field(default=(), metadata=doc(
        "Features whose builds are distributions of their own: with one on, the wheel is "
        "`<distribution>[-<variant>]-<feature>` (`onnxruntime-ep-amdgpu-rocm7-hipdnn`), so it never has the plain "
        "build's file name; the meta-package installs the plain build only."))
    feature_suffix: str | None = None  # the named features this wheel carries, "-"-joined (set by for_features)
    no_device: NoDevice | None = field(default=None, metadata=doc(
        "Why the EP may offer no device and what turns one on (`why`, `env`, `enables`): the self-check's report "
        "and verdict say it when the EP registers with zero devices."))
    trace_env: str | None = field(default=None, metadata=doc(
        "The variable that, set to 1, makes the EP print what it does; the self-check's hints name it.",
        check=_matching(IDENTIFIER, "{value!r} is not an environment variable name")))
    # hip-ep: built in sid against LLVM 22, its compiler needs GLIBC_2.43, newer than auditwheel's newest policy.
    platform: Literal["manylinux", "linux"] = field(default="manylinux", metadata=doc(
        "`manylinux`: repair tags the wheel with the manylinux policy its libraries' glibc symbols allow (where "
        "they need a glibc newer than auditwheel's newest policy, the toolkit bundles what they link and computes "
        "`manylinux_X_Y` itself); `linux`: repaired the same way but tagged `linux_<arch>`, which an index of your "
        "own takes and PyPI refuses."))
    # hip-ep's mock runtime: a build for tests, which must never reach a user as if it ran models.
    test_only: dict[str, str] = field(default_factory=dict, metadata=doc(
        "Features whose build is for tests only, each with why: `{ mock = \"...\" }`. A wheel built with one on "
        "says so in its build facts and its self-check's verdict, and a release refuses it."))
    license: str | None = field(default=None, metadata=doc(
        "The EP's license, an SPDX expression (`MIT`): the wheel's `License-Expression`; the source tree's LICENSE, "
        "LICENSE.*, COPYING and LICENSES/ files go into the wheel beside it (`License-File`), and repair adds the "
        "licenses of the libraries it bundles.", convert=canonical_license))
    authors: tuple[Author, ...] = field(default=(), metadata=doc(
        "The wheel's authors, as pyproject's `[project] authors`: `[{ name = \"...\", email = \"...\" }]`."))
    urls: tuple[tuple[str, str], ...] = field(default=(), metadata=doc(
        "The index page's links, label = URL (`Source = \"https://...\"`), as pyproject's `[project.urls]`.",
        each=check_url))
    classifiers: tuple[str, ...] = field(default=(), metadata=doc(
        "Trove classifiers (`Programming Language :: Python :: 3`); no `License ::` one (`license` says it) and no "
        "`Operating System ::` one (each wheel gets its platform's).", check=check_classifiers))

    extras: tuple[Extra, ...] = field(default=(), metadata=doc(
        "Extras the wheel offers (`name`, `requires`, `summary`, optionally `feature` and `variants`): what "
        "`pip install 'DISTRIBUTION[NAME]'` installs beside it, written as Provides-Extra and Requires-Dist.",
        check=extras_once))
    # No index has a release of hip-ep's wheel: a test build's verdict gives the command that builds the real one.
    real_build: str | None = field(default=None, metadata=doc(
        "The command that builds the wheel users run (every `test_only` feature off), for a recipe whose default is "
        "a test build: a test build's self-check gives it."))

    def validated(self, site: Site) -> Self:
        for name in self.test_only if self.real_build is not None else ():
            if f"--without-{name}" not in (self.real_build or "").split():
                raise site.key("real_build").error(f"the command must build without the test-only feature {name!r} "
                                                   f"(--without-{name})")
        names = [name for _, name in self.platform_variants]
        clash = sorted(set(names) & {name for name, _ in self.rocm_variants})
        if clash:
            raise site.key("platform_variants").error(f"{', '.join(clash)}: a name of [wheel.rocm_variants] too; "
                                                      "each variant is a distribution of its own")
        check_variants(self.extras, tuple(self.variant_names), site)
        return self

    @property
    def variant_names(self) -> list[str]:
        return [name for name, _ in self.rocm_variants] + [name for _, name in self.platform_variants]

    def test_build(self, features: frozenset[str] | set[str] | tuple[str, ...]) -> dict[str, str]:
        """The test-only features among `features`, with why each is."""
        return {name: why for name, why in self.test_only.items() if name in features}

    @property
    def default_variant(self) -> str | None:
        """The variant `<distribution>` itself installs: the newest ROCm major (the highest HIP soname version)."""
        if not self.rocm_variants:
            return None
        return max(self.rocm_variants, key=lambda item: int(item[1].rsplit(".", 1)[1]))[0]

    @property
    def base_distribution(self) -> str:
        """The distribution without the variant's and the named features' suffixes (the meta-package's name)."""
        name = self.distribution.removesuffix(f"-{self.feature_suffix}") if self.feature_suffix else self.distribution
        return name.removesuffix(f"-{self.variant}") if self.variant else name

    def _named(self, variant: str | None, suffix: str | None) -> str:
        return "-".join(part for part in (self.base_distribution, variant, suffix) if part)

    def install_name(self, variant: str) -> str:
        """What `pip install` names to get `variant`: the meta-package for the default one (which installs the plain
        build only), else the variant's own distribution."""
        if variant == self.default_variant and not self.feature_suffix:
            return self.base_distribution
        return self._named(variant, self.feature_suffix)

    def for_features(self, features: frozenset[str] | set[str] | tuple[str, ...]) -> WheelSettings:
        """These settings for a build with `features` on: named `<distribution>[-<variant>]-<feature>` when one of
        them is a named feature (unchanged otherwise), offering the extras of the features on."""
        suffix = "-".join(name for name in self.named_features if name in features) or None
        extras = tuple(e for e in self.extras if e.feature is None or e.feature in features)
        return replace(self, distribution=self._named(self.variant, suffix), feature_suffix=suffix, extras=extras)

    def for_linked(self, sonames: tuple[str, ...], where: str, platform: str = "linux") -> WheelSettings:
        """These settings for the variant of a build for `platform`: elsewhere than Linux its platform variant, on
        Linux the ROCm variant whose soname the libraries link (unchanged without variants), offering the extras of
        that variant."""
        if not self.rocm_variants and not self.platform_variants:
            return self
        if platform != "linux":
            variant = dict(self.platform_variants).get(platform)
            if variant is None:
                raise ToolkitError(f"{where}: a build for {platform} is a variant of its own, which no "
                                   "[wheel.platform_variants] entry names",
                                   hint=f"add {platform} = \"<variant>\" to [wheel.platform_variants]")
            return self._variant(variant)
        chosen = [(name, soname) for name, soname in self.rocm_variants if soname in sonames]
        if len(chosen) != 1:
            listed = ", ".join(f"{n} = {s!r}" for n, s in self.rocm_variants)
            raise ToolkitError(f"{where}: the libraries link {', '.join(sonames) or 'no ROCm library'}, which "
                               f"{'no' if not chosen else 'more than one'} [wheel.rocm_variants] entry names "
                               f"({listed})", hint="add the ROCm major these libraries were built for")
        return self._variant(chosen[0][0])

    def _variant(self, variant: str) -> WheelSettings:
        extras = tuple(e for e in self.extras if not e.variants or variant in e.variants)
        return replace(self, distribution=self._named(variant, self.feature_suffix), variant=variant, extras=extras)

    def components_for(self, features: frozenset[str]) -> tuple[Component, ...]:
        return tuple(c for c in self.components if c.wanted(features))
