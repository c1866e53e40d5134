"""The checks of the `[wheel]` keys that describe the project on an index rather than build it: the license (an SPDX
expression, checked with packaging's parser), authors, project URLs and classifiers; and the extras a wheel offers
(toolkit/recipe/wheel.py declares the section)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Self

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from toolkit.util.errors import ToolkitError
from toolkit.util.tomlfields import doc
from toolkit.util.tomlread import Site

_URL_LABEL_MAX = 32
_CLASSIFIER = re.compile(r"^[A-Za-z0-9][^:]*( :: [^:]+)+$")
_EXTRA_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")  # PEP 685's normalized form


@dataclass(frozen=True)
class Author:
    name: str | None = field(default=None, metadata=doc("The author's (a person's or an organisation's) name."))
    email: str | None = field(default=None, metadata=doc("Their e-mail address."))

    def validated(self, site: Site) -> Self:
        if self.name is None and self.email is None:
            raise site.key("name").error("an author needs a name, an email or both")
        if self.email is not None and not re.match(r"^[^@\s<>,]+@[^@\s<>,]+$", self.email):
            raise site.key("email").error(f"{self.email!r} is not an e-mail address")
        return self


def spdx_tools() -> tuple[Callable[[str], str], type[Exception]]:
    """packaging's SPDX expression parser, which came in packaging 24.2. The dependency floor stays lower: raising
    it changes the dependency list the build roots' toolkit venvs are keyed by, and every root would make one anew."""
    try:
        from packaging.licenses import InvalidLicenseExpression, canonicalize_license_expression
    except ImportError:
        raise ToolkitError("[wheel] license needs packaging >= 24.2 (SPDX license expressions)",
                           "pip install -U 'packaging>=24.2'") from None
    return canonicalize_license_expression, InvalidLicenseExpression


def canonical_license(value: str, site: Site) -> str:
    canonicalize, invalid = spdx_tools()
    try:
        return str(canonicalize(value))
    except invalid:
        raise site.error(f"{value!r} is not an SPDX license expression such as 'MIT' or "
                         "'Apache-2.0 WITH LLVM-exception'") from None


def check_url(url: str, site: Site) -> None:
    """A project URL, `site.name` its label."""
    if len(site.name) > _URL_LABEL_MAX:
        raise site.error(f"a label has at most {_URL_LABEL_MAX} characters (core metadata's rule)")
    if not url.startswith("https://"):
        raise site.error(f"expected an https:// URL, got {url!r}")


def check_classifiers(classifiers: tuple[str, ...], site: Site) -> None:
    for i, classifier in enumerate(classifiers):
        at = site.item(i)
        if not _CLASSIFIER.match(classifier):
            raise at.error(f"{classifier!r} is not a classifier such as 'Programming Language :: Python :: 3'")
        # PEP 639: License-Expression replaces them, and scikit-build-core refuses both.
        if classifier.startswith("License ::"):
            raise at.error("no 'License ::' classifier: the [wheel] license key says it")
        if classifier.startswith("Operating System ::"):
            raise at.error("no 'Operating System ::' classifier: the toolkit gives each wheel its platform's (a Linux "
                           "or a Windows build of the same recipe)")
        if classifier in classifiers[:i]:
            raise at.error(f"{classifier!r} is listed twice")


def _extra_name(name: str, site: Site) -> None:
    if not _EXTRA_NAME.match(name):
        raise site.error(f"{name!r} is not an extra name such as 'hip' (lower case, digits and '-')")


def _some_requirements(requires: tuple[str, ...], site: Site) -> None:
    if not requires:
        raise site.error("expected at least one requirement, such as 'onnxruntime-ep-hip>=0.4.0'")


def _requirement(text: str, site: Site) -> None:
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        raise site.error(f"{text!r} is not a requirement such as 'onnxruntime-ep-hip>=0.4.0'") from None
    if requirement.marker is not None or requirement.url is not None:
        raise site.error(f"{text!r}: a name and a version range only (the extra adds its own marker)")
    if canonicalize_name(requirement.name) == "onnxruntime":
        raise site.error("never onnxruntime: it comes in flavours that share the module (onnxruntime, "
                         "onnxruntime-migraphx, ...), and requiring one replaces the flavour a user has; "
                         "[wheel] onnxruntime says which versions the EP works with")


# The umbrella's -hipdnn wheels: their hip backend loads hip-ep's library, from hip-ep's own wheel.
@dataclass(frozen=True)
class Extra:
    name: str = field(metadata=doc("The extra's name (`hip`): `pip install 'DISTRIBUTION[hip]'`.",
                                   check=_extra_name))
    requires: tuple[str, ...] = field(metadata=doc(
        "What it installs beside the wheel, as requirements (`onnxruntime-ep-hip>=0.4.0`); never `onnxruntime` "
        "(the wheel leaves the ONNX Runtime flavour to the user).", each=_requirement, check=_some_requirements))
    summary: str = field(metadata=doc("What it installs and why, in words (the wheel's page says it)."))
    # One of named_features, checked once named_features are known to be features (toolkit/recipe/load.py); variants
    # are keys of rocm_variants, checked with the rest of [wheel] (WheelSettings.validated).
    feature: str | None = field(default=None, metadata=doc(
        "Offered only by a build with this feature on: one of `named_features`, so the wheel that offers it has a "
        "name of its own."))
    variants: tuple[str, ...] = field(default=(), metadata=doc(
        "Offered only by these ROCm variants (keys of `rocm_variants`); every variant when absent."))


def extras_once(extras: tuple[Extra, ...], site: Site) -> None:
    """`[[wheel.extras]]`: each name once."""
    for i, extra in enumerate(extras):
        if extra.name in (e.name for e in extras[:i]):
            raise site.item(i).key("name").error(f"extra {extra.name!r} is listed twice")


def check_variants(extras: tuple[Extra, ...], variants: tuple[str, ...], site: Site) -> None:
    """Each extra's variants are keys of `variants` ([wheel.rocm_variants]); `site` is [wheel]'s. (Its feature is
    checked with the recipe's features: toolkit/recipe/load.py.)"""
    for i, extra in enumerate(extras):
        for j, variant in enumerate(extra.variants):
            if variant not in variants:
                raise site.key("extras").item(i).key("variants").item(j).error(
                    f"{variant!r} is not a key of [wheel.rocm_variants] ({', '.join(variants) or 'none'})")
