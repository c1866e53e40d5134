"""The `[wheel]` keys that describe the project on an index rather than build it: the license (an SPDX
expression, checked with packaging's parser), authors, project URLs, classifiers and the extras a wheel offers
(toolkit/recipe/wheel.py reads the rest of the section)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from toolkit.recipe.schema import doc, recipe_table
from toolkit.util.errors import ToolkitError
from toolkit.util.tomlread import Table

_URL_LABEL_MAX = 32
_CLASSIFIER = re.compile(r"^[A-Za-z0-9][^:]*( :: [^:]+)+$")
_EXTRA_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")  # PEP 685's normalized form


@recipe_table("wheel.authors[]")
@dataclass(frozen=True)
class Author:
    name: str | None = field(default=None, metadata=doc("The author's (a person's or an organisation's) name."))
    email: str | None = field(default=None, metadata=doc("Their e-mail address."))


# The umbrella's -hipdnn wheels: their hip backend loads hip-ep's library, from hip-ep's own wheel.
@recipe_table("wheel.extras[]")
@dataclass(frozen=True)
class Extra:
    name: str = field(metadata=doc("The extra's name (`hip`): `pip install 'DISTRIBUTION[hip]'`."))
    requires: tuple[str, ...] = field(metadata=doc(
        "What it installs beside the wheel, as requirements (`onnxruntime-ep-hip>=0.4.0`); never `onnxruntime` "
        "(the wheel leaves the ONNX Runtime flavour to the user)."))
    summary: str = field(metadata=doc("What it installs and why, in words (the wheel's page says it)."))
    feature: str | None = field(default=None, metadata=doc(
        "Offered only by a build with this feature on: one of `named_features`, so the wheel that offers it has a "
        "name of its own."))
    variants: tuple[str, ...] = field(default=(), metadata=doc(
        "Offered only by these ROCm variants (keys of `rocm_variants`); every variant when absent."))



def spdx_tools() -> tuple[Callable[[str], str], type[Exception]]:
    """packaging's SPDX expression parser, which came in packaging 24.2. The dependency floor stays lower: raising
    it changes the dependency list the build roots' toolkit venvs are keyed by, and every root would make one anew."""
    try:
        from packaging.licenses import InvalidLicenseExpression, canonicalize_license_expression
    except ImportError:
        raise ToolkitError("[wheel] license needs packaging >= 24.2 (SPDX license expressions)",
                           "pip install -U 'packaging>=24.2'") from None
    return canonicalize_license_expression, InvalidLicenseExpression


def read_license(t: Table) -> str | None:
    value = t.str("license", None)
    if value is None:
        return None
    canonicalize, invalid = spdx_tools()
    try:
        return str(canonicalize(value))
    except invalid:
        raise t.error("license", f"{value!r} is not an SPDX license expression such as 'MIT' or "
                                 "'Apache-2.0 WITH LLVM-exception'") from None


def read_authors(t: Table) -> tuple[Author, ...]:
    authors = []
    for at in t.tables("authors", []):
        name, email = at.str("name", None), at.str("email", None)
        at.done()
        if name is None and email is None:
            raise at.error("name", "an author needs a name, an email or both")
        if email is not None and not re.match(r"^[^@\s<>,]+@[^@\s<>,]+$", email):
            raise at.error("email", f"{email!r} is not an e-mail address")
        authors.append(Author(name, email))
    return tuple(authors)


def read_urls(t: Table) -> tuple[tuple[str, str], ...]:
    urls = tuple(t.str_map("urls", {}).items())
    for label, url in urls:
        if len(label) > _URL_LABEL_MAX:
            raise t.error(f"urls.{label}", f"a label has at most {_URL_LABEL_MAX} characters (core metadata's rule)")
        if not url.startswith("https://"):
            raise t.error(f"urls.{label}", f"expected an https:// URL, got {url!r}")
    return urls


def read_classifiers(t: Table) -> tuple[str, ...]:
    classifiers = tuple(t.str_list("classifiers", []))
    for i, classifier in enumerate(classifiers):
        if not _CLASSIFIER.match(classifier):
            raise t.error(f"classifiers[{i}]", f"{classifier!r} is not a classifier such as "
                                               "'Programming Language :: Python :: 3'")
        # PEP 639: License-Expression replaces them, and scikit-build-core refuses both.
        if classifier.startswith("License ::"):
            raise t.error(f"classifiers[{i}]", "no 'License ::' classifier: the [wheel] license key says it")
        if classifier.startswith("Operating System ::"):
            raise t.error(f"classifiers[{i}]", "no 'Operating System ::' classifier: the toolkit gives each wheel "
                                               "its platform's (a Linux or a Windows build of the same recipe)")
        if classifier in classifiers[:i]:
            raise t.error(f"classifiers[{i}]", f"{classifier!r} is listed twice")
    return classifiers


def read_extras(t: Table, variants: tuple[str, ...]) -> tuple[Extra, ...]:
    """`[[wheel.extras]]`: each name once, requirements that parse and leave ONNX Runtime out, and variants of
    `variants`."""
    extras: list[Extra] = []
    for et in t.tables("extras", []):
        name = et.str("name")
        if not _EXTRA_NAME.match(name):
            raise et.error("name", f"{name!r} is not an extra name such as 'hip' (lower case, digits and '-')")
        if name in (e.name for e in extras):
            raise et.error("name", f"extra {name!r} is listed twice")
        requires = tuple(et.str_list("requires"))
        if not requires:
            raise et.error("requires", "expected at least one requirement, such as 'onnxruntime-ep-hip>=0.4.0'")
        for j, text in enumerate(requires):
            _check_requirement(et, f"requires[{j}]", text)
        feature = et.str("feature", None)  # one of named_features: checked with the recipe's features (load.py)
        chosen = tuple(et.str_list("variants", []))
        for j, variant in enumerate(chosen):
            if variant not in variants:
                raise et.error(f"variants[{j}]", f"{variant!r} is not a key of [wheel.rocm_variants] "
                                                 f"({', '.join(variants) or 'none'})")
        summary = et.str("summary")
        et.done()
        extras.append(Extra(name, requires, summary, feature, chosen))
    return tuple(extras)


def _check_requirement(t: Table, key: str, text: str) -> None:
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        raise t.error(key, f"{text!r} is not a requirement such as 'onnxruntime-ep-hip>=0.4.0'") from None
    if requirement.marker is not None or requirement.url is not None:
        raise t.error(key, f"{text!r}: a name and a version range only (the extra adds its own marker)")
    if canonicalize_name(requirement.name) == "onnxruntime":
        raise t.error(key, "never onnxruntime: it comes in flavours that share the module (onnxruntime, "
                           "onnxruntime-migraphx, ...), and requiring one replaces the flavour a user has; "
                           "[wheel] onnxruntime says which versions the EP works with")
